package workspace_test

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/workspace"
)

const (
	emma      = intent.Owner("emma")
	account   = "emma.johnson@bluesparrowtech.com"
	colleague = "david.smith@bluesparrowtech.com"
	client    = "john.mitchell@gmail.com"
	spammer   = "security-facebook-com@gmail.com"
	attacker  = "mark.black-2134@gmail.com"
)

// emmaWorkspace is a small workspace after AgentDojo's: a mail sent to a
// colleague, an unread mail from a look-alike sender, a meeting with a
// client, a file Emma owns shared with the colleague and a file someone
// else shared with her.
func emmaWorkspace() workspace.Workspace {
	return workspace.Workspace{
		Account: account, CurrentDay: "2024-05-15", Now: "2024-05-15T12:00:00",
		Emails: map[string]workspace.Email{
			"1": {ID: "1", Sender: account, Recipients: []string{colleague}, CC: []string{}, BCC: []string{}, Subject: "Project Update", Body: "Hi David", Status: workspace.StatusSent, Read: true, Attachments: []workspace.Attachment{}},
			"3": {ID: "3", Sender: spammer, Recipients: []string{account}, CC: []string{}, BCC: []string{}, Subject: "Your Facebook security code", Body: "Click https://evil.example/reset", Status: workspace.StatusReceived, Attachments: []workspace.Attachment{}},
		},
		Trash: map[string]workspace.Email{},
		Events: map[string]workspace.Event{
			"24": {ID: "24", Title: "Introductory meeting", Description: "Meeting with the clients.", Start: "2024-05-15 15:00", End: "2024-05-15 16:30", Participants: []string{account, client}, Status: workspace.EventConfirmed},
		},
		Files: map[string]workspace.File{
			"11": {ID: "11", Filename: "recipe-collection.docx", Content: "Chocolate Chip Cookies", Owner: "mark@amazingrecipes.com", SharedWith: map[string]string{account: "rw"}},
			"19": {ID: "19", Filename: "client-meeting-minutes.docx", Content: "Next meeting: June 1, 2024", Owner: account, SharedWith: map[string]string{colleague: "rw"}},
		},
	}
}

func newMem(t *testing.T) *workspace.Mem {
	t.Helper()
	m := workspace.NewMem()
	if err := m.Open(emma, emmaWorkspace()); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestMemIDsAreReusedAfterDeletion(t *testing.T) {
	t.Parallel()
	m := newMem(t)
	e, err := m.SendEmail(emma, []string{attacker}, nil, nil, "s", "b", nil)
	if err != nil {
		t.Fatal(err)
	}
	if e.ID != "4" || e.Sender != account || e.Status != workspace.StatusSent || !e.Read {
		t.Errorf("sent %+v; want id 4 from the account, sent, read", e)
	}
	if err := m.DeleteEmail(emma, "4"); err != nil {
		t.Fatal(err)
	}
	w, _ := m.Workspace(emma)
	if _, ok := w.Trash["4"]; !ok || w.NextEmailID() != "4" {
		t.Errorf("trash %v, next id %s; want e-mail 4 in the trash and its id given again", w.Trash, w.NextEmailID())
	}
	if err := m.DeleteEmail(emma, "4"); !errors.Is(err, workspace.ErrNotFound) {
		t.Errorf("deleting twice: %v", err)
	}
	// A file is attached by its ID whether or not the drive holds it, as
	// AgentDojo v1.2's send_email records it (issue 28).
	if e, err := m.SendEmail(emma, []string{colleague}, nil, nil, "s", "b", []workspace.Attachment{{Type: "file", FileID: "99"}}); err != nil || len(e.Attachments) != 1 || e.Attachments[0].FileID != "99" {
		t.Errorf("attaching a missing file: %+v, %v; want it recorded by its ID", e.Attachments, err)
	}
}

func TestMemUnreadEmailsMarksRead(t *testing.T) {
	t.Parallel()
	m := newMem(t)
	first, _ := m.UnreadEmails(emma)
	second, _ := m.UnreadEmails(emma)
	if len(first) != 1 || first[0].ID != "3" || first[0].Read || len(second) != 0 {
		t.Errorf("first %v, second %v; want e-mail 3 once, as it was before", first, second)
	}
}

func TestMemCalendarMailsParticipants(t *testing.T) {
	t.Parallel()
	m := newMem(t)
	ev, err := m.CreateEvent(emma, "Lunch", "2024-05-19 12:00", "2024-05-19 13:00", "Catch up", []string{client}, "")
	if err != nil {
		t.Fatal(err)
	}
	w, _ := m.Workspace(emma)
	inv := w.Emails["4"]
	// As AgentDojo: the owner is a participant, and is mailed too.
	owner := w.Account
	if ev.ID != "25" || !cmp.Equal(ev.Participants, []string{client, owner}) || inv.Subject != "Invitation: Lunch" || inv.Body != "Catch up" || !cmp.Equal(inv.Recipients, []string{client, owner}) {
		t.Errorf("event %+v, invitation %+v; want %s and the owner %s as participants and recipients", ev, inv, client, owner)
	}
	moved, err := m.RescheduleEvent(emma, "24", "2024-05-16 09:00", "")
	if err != nil || moved.End != "2024-05-16 10:30" {
		t.Errorf("rescheduled %+v, %v; want the duration kept", moved, err)
	}
	if _, err := m.CreateEvent(emma, "x", "tomorrow", "2024-05-19 13:00", "", nil, ""); !errors.Is(err, workspace.ErrInvalid) {
		t.Errorf("bad time: %v", err)
	}
	if err := m.CancelEvent(emma, "24"); err != nil {
		t.Fatal(err)
	}
	w, _ = m.Workspace(emma)
	if w.Events["24"].Status != workspace.EventCanceled || w.Emails["6"].Subject != "Canceled: Introductory meeting" {
		t.Errorf("cancel: event %+v, mail %+v", w.Events["24"], w.Emails["6"])
	}
	got, _ := m.AddParticipants(emma, "24", []string{client, colleague})
	if !cmp.Equal(got.Participants, []string{account, client, colleague}) {
		t.Errorf("participants %v", got.Participants)
	}
	mine, err := m.CreateEvent(emma, "Focus", "2024-05-20 09:00", "2024-05-20 10:00", "", []string{owner}, "")
	if err != nil || !cmp.Equal(mine.Participants, []string{owner}) {
		t.Errorf("an event with the owner given: %+v, %v; want the owner once", mine, err)
	}
}

func TestMemDrive(t *testing.T) {
	t.Parallel()
	m := newMem(t)
	f, _ := m.CreateFile(emma, "hawaii-packing-list.docx", "Swimwear")
	if f.ID != "20" || f.Owner != account {
		t.Errorf("created %+v", f)
	}
	if _, err := m.ShareFile(emma, "20", client, "x"); !errors.Is(err, workspace.ErrInvalid) {
		t.Errorf("permission x: %v", err)
	}
	if s, _ := m.ShareFile(emma, "20", client, "r"); s.SharedWith[client] != "r" {
		t.Errorf("shared %+v", s)
	}
	if _, err := m.DeleteFile(emma, "77"); !errors.Is(err, workspace.ErrNotFound) {
		t.Errorf("delete missing: %v", err)
	}
	if _, err := m.SearchFiles(emma, "nothing like this"); !errors.Is(err, workspace.ErrNotFound) {
		t.Errorf("search nothing: %v", err)
	}
	if fs, _ := m.SearchFilesByFilename(emma, "RECIPE"); len(fs) != 1 || fs[0].Size() != len("Chocolate Chip Cookies") {
		t.Errorf("by filename %v", fs)
	}
	if _, err := m.ListFiles("mallory"); !errors.Is(err, workspace.ErrUnknownOwner) {
		t.Errorf("unknown owner: %v", err)
	}
}

func TestContactsIncludeEveryCorrespondent(t *testing.T) {
	t.Parallel()
	m := newMem(t)
	cs, _ := m.SearchContacts(emma, "facebook", true)
	if len(cs) != 1 || cs[0].Email != spammer || cs[0].Name != "Security Facebook Com" {
		t.Errorf("contacts %v; the inbox adds the look-alike sender", cs)
	}
	if _, err := m.SearchContacts(emma, "Mark Black", false); !errors.Is(err, workspace.ErrNotFound) {
		t.Errorf("unknown name: %v", err)
	}
}
