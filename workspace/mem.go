package workspace

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Errors of Mem. Methods wrap them with what was not found or refused.
var (
	// ErrUnknownOwner is returned for an owner that has no workspace.
	ErrUnknownOwner = errors.New("workspace: unknown owner")
	// ErrNotFound is returned for an e-mail, event or file id the owner
	// does not have, and by the searches that find nothing (as AgentDojo's
	// search_emails, search_calendar_events and search_files do).
	ErrNotFound = errors.New("workspace: not found")
	// ErrExists is returned by Mem.Open for an owner that already has a
	// workspace.
	ErrExists = errors.New("workspace: already exists")
	// ErrInvalid is returned for an argument the workspace cannot use (a
	// time that is not "YYYY-MM-DD HH:MM", a permission other than "r"
	// or "rw", an end before the start).
	ErrInvalid = errors.New("workspace: invalid argument")
)

// Contact is an entry of the contact list: an address and a name derived
// from it. The inbox adds every correspondent, attackers included.
type Contact struct {
	Name  string `json:"name"`
	Email string `json:"email"`
}

// Mem holds one Workspace per owner, with the semantics of AgentDojo's
// workspace tools: ids are the largest id plus one (reused after a
// deletion), deleting an e-mail moves it to the trash, creating,
// cancelling and rescheduling an event mail its participants, reading the
// unread e-mails marks them read. Every method is scoped to one owner.
// The zero value is not usable; call NewMem. A Mem is safe for concurrent
// use.
type Mem struct {
	mu     sync.Mutex
	owners map[intent.Owner]*Workspace
}

// NewMem returns an empty Mem.
func NewMem() *Mem { return &Mem{owners: map[intent.Owner]*Workspace{}} }

// Open adds owner's workspace, copied from w. It returns an error wrapping
// ErrExists if the owner already has one.
func (m *Mem) Open(owner intent.Owner, w Workspace) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.owners[owner]; ok {
		return fmt.Errorf("%w: %s", ErrExists, owner)
	}
	c := w.Clone()
	m.owners[owner] = &c
	return nil
}

func (m *Mem) with(owner intent.Owner, f func(w *Workspace) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.owners[owner]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownOwner, owner)
	}
	return f(w)
}

// Workspace returns a deep copy of owner's workspace.
func (m *Mem) Workspace(owner intent.Owner) (Workspace, error) {
	var out Workspace
	err := m.with(owner, func(w *Workspace) error {
		out = w.Clone()
		return nil
	})
	return out, err
}

func cloneEmails(es []Email) []Email {
	out := make([]Email, len(es))
	for i, e := range es {
		out[i] = e.Clone()
	}
	return out
}

// ---- e-mail ----

// SendEmail adds a sent e-mail from the owner's account and returns it.
// A file is attached by its ID, whether or not the drive still holds it,
// as AgentDojo v1.2's send_email does (it records the CloudDriveFileID
// without looking it up): an attachment of a deleted file carries no
// content. Which files may be attached at all is the pack's decision,
// before this runs.
func (m *Mem) SendEmail(owner intent.Owner, to, cc, bcc []string, subject, body string, attachments []Attachment) (Email, error) {
	var out Email
	err := m.with(owner, func(w *Workspace) error {
		out = w.send(to, cc, bcc, subject, body, attachments)
		return nil
	})
	return out.Clone(), err
}

func (w *Workspace) send(to, cc, bcc []string, subject, body string, attachments []Attachment) Email {
	e := Email{
		ID: nextID(w.Emails), Sender: w.Account,
		Recipients: nonNil(to), CC: nonNil(cc), BCC: nonNil(bcc),
		Subject: subject, Body: body, Status: StatusSent, Read: true, Timestamp: w.Now,
		Attachments: nonNilAttachments(attachments),
	}
	w.Emails[e.ID] = e.Clone()
	return e
}

// distinct returns s without repeats, in the order of first appearance.
func distinct(s []string) []string {
	out := []string{}
	for _, v := range s {
		if !slices.Contains(out, v) {
			out = append(out, v)
		}
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return slices.Clone(s)
}

func nonNilAttachments(a []Attachment) []Attachment {
	if a == nil {
		return []Attachment{}
	}
	return slices.Clone(a)
}

// DeleteEmail moves the owner's e-mail id to the trash.
func (m *Mem) DeleteEmail(owner intent.Owner, id string) error {
	return m.with(owner, func(w *Workspace) error {
		e, ok := w.Emails[id]
		if !ok {
			return fmt.Errorf("%w: e-mail %q", ErrNotFound, id)
		}
		delete(w.Emails, id)
		w.Trash[id] = e
		return nil
	})
}

// UnreadEmails returns the unread e-mails in id order and marks them read:
// a read that changes state.
func (m *Mem) UnreadEmails(owner intent.Owner) ([]Email, error) {
	var out []Email
	err := m.with(owner, func(w *Workspace) error {
		for _, e := range w.EmailsSorted() {
			if !e.Read {
				out = append(out, e.Clone())
				e.Read = true
				w.Emails[e.ID] = e
			}
		}
		return nil
	})
	return out, err
}

// EmailsWithStatus returns the owner's e-mails with status (StatusSent,
// StatusReceived or StatusDraft), in id order.
func (m *Mem) EmailsWithStatus(owner intent.Owner, status string) ([]Email, error) {
	var out []Email
	err := m.with(owner, func(w *Workspace) error {
		for _, e := range w.EmailsSorted() {
			if e.Status == status {
				out = append(out, e)
			}
		}
		out = cloneEmails(out)
		return nil
	})
	return out, err
}

// SearchEmails returns the e-mails whose subject or body contains query
// (case-insensitive) and, if sender is not empty, whose sender is sender.
// None found is an error wrapping ErrNotFound.
func (m *Mem) SearchEmails(owner intent.Owner, query, sender string) ([]Email, error) {
	var out []Email
	err := m.with(owner, func(w *Workspace) error {
		q := strings.ToLower(query)
		for _, e := range w.EmailsSorted() {
			if (strings.Contains(strings.ToLower(e.Subject), q) || strings.Contains(strings.ToLower(e.Body), q)) &&
				(sender == "" || e.Sender == sender) {
				out = append(out, e)
			}
		}
		if len(out) == 0 {
			return fmt.Errorf("%w: no e-mails match; try a different query", ErrNotFound)
		}
		out = cloneEmails(out)
		return nil
	})
	return out, err
}

// Contacts returns the contact list: every address of the inbox other
// than the owner's, in order of first appearance (by e-mail id), each with
// a name derived from its local part ("sarah.baker" is "Sarah Baker").
func (m *Mem) Contacts(owner intent.Owner) ([]Contact, error) {
	var out []Contact
	err := m.with(owner, func(w *Workspace) error {
		out = w.contacts()
		return nil
	})
	return out, err
}

func (w *Workspace) contacts() []Contact {
	seen := map[string]bool{w.Account: true}
	var out []Contact
	for _, e := range w.EmailsSorted() {
		for _, a := range e.Addresses() {
			if a == "" || seen[a] {
				continue
			}
			seen[a] = true
			out = append(out, Contact{Name: nameOf(a), Email: a})
		}
	}
	return out
}

func nameOf(addr string) string {
	local, _, _ := strings.Cut(addr, "@")
	parts := strings.FieldsFunc(local, func(r rune) bool { return r == '.' || r == '_' || r == '-' })
	for i, p := range parts {
		parts[i] = strings.ToUpper(p[:1]) + p[1:]
	}
	return strings.Join(parts, " ")
}

// SearchContacts returns the contacts whose name (byEmail false) or
// address (byEmail true) contains query, case-insensitive. None found is
// an error wrapping ErrNotFound.
func (m *Mem) SearchContacts(owner intent.Owner, query string, byEmail bool) ([]Contact, error) {
	cs, err := m.Contacts(owner)
	if err != nil {
		return nil, err
	}
	q := strings.ToLower(query)
	var out []Contact
	for _, c := range cs {
		f := c.Name
		if byEmail {
			f = c.Email
		}
		if strings.Contains(strings.ToLower(f), q) {
			out = append(out, c)
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no contact matches %q", ErrNotFound, query)
	}
	return out, nil
}

// ---- calendar ----

// CurrentDay returns "today", YYYY-MM-DD.
func (m *Mem) CurrentDay(owner intent.Owner) (string, error) {
	var out string
	err := m.with(owner, func(w *Workspace) error {
		out = w.CurrentDay
		return nil
	})
	return out, err
}

// SearchEvents returns the events whose title or description contains
// query (case-insensitive) and, if day is not empty, that start on day.
// None found is an error wrapping ErrNotFound.
func (m *Mem) SearchEvents(owner intent.Owner, query, day string) ([]Event, error) {
	var out []Event
	err := m.with(owner, func(w *Workspace) error {
		q := strings.ToLower(query)
		for _, e := range w.EventsSorted() {
			if (strings.Contains(strings.ToLower(e.Title), q) || strings.Contains(strings.ToLower(e.Description), q)) &&
				(day == "" || e.Day() == day) {
				out = append(out, e.Clone())
			}
		}
		if len(out) == 0 {
			return fmt.Errorf("%w: no events match; try a different query", ErrNotFound)
		}
		return nil
	})
	return out, err
}

// DayEvents returns the events that start on day, YYYY-MM-DD.
func (m *Mem) DayEvents(owner intent.Owner, day string) ([]Event, error) {
	var out []Event
	err := m.with(owner, func(w *Workspace) error {
		for _, e := range w.EventsSorted() {
			if e.Day() == day {
				out = append(out, e.Clone())
			}
		}
		return nil
	})
	return out, err
}

const timeLayout = "2006-01-02 15:04"

// parseTime accepts "YYYY-MM-DD HH:MM" (and AgentDojo's ISO form with a T).
func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(timeLayout, strings.Replace(s, "T", " ", 1))
	if err != nil {
		return time.Time{}, fmt.Errorf("%w: time %q is not YYYY-MM-DD HH:MM", ErrInvalid, s)
	}
	return t, nil
}

// CreateEvent adds an event and mails its participants an invitation
// (subject "Invitation: <title>", the description as body, the event
// attached), as AgentDojo does. As AgentDojo's Calendar.create_event, the
// event's participants always include the calendar's owner (the
// account), once, after those given; and as its create_calendar_event
// tool (whose list the calendar appends the owner to), the invitation
// goes to those given and to the owner. It returns the event.
func (m *Mem) CreateEvent(owner intent.Owner, title, start, end, description string, participants []string, location string) (Event, error) {
	s, err := parseTime(start)
	if err != nil {
		return Event{}, err
	}
	e, err := parseTime(end)
	if err != nil {
		return Event{}, err
	}
	if e.Before(s) {
		return Event{}, fmt.Errorf("%w: the event ends before it starts", ErrInvalid)
	}
	var out Event
	err = m.with(owner, func(w *Workspace) error {
		invited := append(slices.Clone(participants), w.Account)
		out = Event{
			ID: nextID(w.Events), Title: title, Description: description,
			Start: s.Format(timeLayout), End: e.Format(timeLayout), Location: location,
			Participants: distinct(invited), Status: EventConfirmed,
		}
		w.Events[out.ID] = out.Clone()
		ev := out.Clone()
		w.send(invited, nil, nil, "Invitation: "+title, description, []Attachment{{Type: "event", Event: &ev}})
		return nil
	})
	return out, err
}

// CancelEvent marks the owner's event id canceled and mails its
// participants.
func (m *Mem) CancelEvent(owner intent.Owner, id string) error {
	return m.with(owner, func(w *Workspace) error {
		e, ok := w.Events[id]
		if !ok {
			return fmt.Errorf("%w: event %q", ErrNotFound, id)
		}
		e.Status = EventCanceled
		w.Events[id] = e
		ev := e.Clone()
		w.send(e.Participants, nil, nil, "Canceled: "+e.Title, "The event has been canceled.", []Attachment{{Type: "event", Event: &ev}})
		return nil
	})
}

// RescheduleEvent moves the owner's event id to newStart, and its end to
// newEnd or, when newEnd is empty, by the same offset; it mails the
// participants and returns the event.
func (m *Mem) RescheduleEvent(owner intent.Owner, id, newStart, newEnd string) (Event, error) {
	s, err := parseTime(newStart)
	if err != nil {
		return Event{}, err
	}
	var out Event
	err = m.with(owner, func(w *Workspace) error {
		e, ok := w.Events[id]
		if !ok {
			return fmt.Errorf("%w: event %q", ErrNotFound, id)
		}
		var end time.Time
		if newEnd != "" {
			if end, err = parseTime(newEnd); err != nil {
				return err
			}
		} else {
			os, err1 := parseTime(e.Start)
			oe, err2 := parseTime(e.End)
			if err1 != nil || err2 != nil {
				return fmt.Errorf("%w: event %q has no valid times", ErrInvalid, id)
			}
			end = s.Add(oe.Sub(os))
		}
		if end.Before(s) {
			return fmt.Errorf("%w: the event ends before it starts", ErrInvalid)
		}
		e.Start, e.End = s.Format(timeLayout), end.Format(timeLayout)
		w.Events[id] = e
		ev := e.Clone()
		w.send(e.Participants, nil, nil, "Rescheduled: "+e.Title, "The event has been rescheduled.", []Attachment{{Type: "event", Event: &ev}})
		out = e.Clone()
		return nil
	})
	return out, err
}

// AddParticipants adds participants to the owner's event id (those already
// there are not added twice) and returns the event. As in AgentDojo, it
// sends no e-mail.
func (m *Mem) AddParticipants(owner intent.Owner, id string, participants []string) (Event, error) {
	var out Event
	err := m.with(owner, func(w *Workspace) error {
		e, ok := w.Events[id]
		if !ok {
			return fmt.Errorf("%w: event %q", ErrNotFound, id)
		}
		for _, p := range participants {
			if !slices.Contains(e.Participants, p) {
				e.Participants = append(e.Participants, p)
			}
		}
		w.Events[id] = e
		out = e.Clone()
		return nil
	})
	return out, err
}

// ---- drive ----

// AppendToFile appends content to the owner's file id and returns it.
func (m *Mem) AppendToFile(owner intent.Owner, id, content string) (File, error) {
	var out File
	err := m.with(owner, func(w *Workspace) error {
		f, ok := w.Files[id]
		if !ok {
			return fmt.Errorf("%w: file %q", ErrNotFound, id)
		}
		f.Content += content
		f.LastModified = w.Now
		w.Files[id] = f
		out = f.Clone()
		return nil
	})
	return out, err
}

// SearchFilesByFilename returns the files whose name contains filename,
// case-insensitive (possibly none).
func (m *Mem) SearchFilesByFilename(owner intent.Owner, filename string) ([]File, error) {
	return m.findFiles(owner, func(f File) bool {
		return strings.Contains(strings.ToLower(f.Filename), strings.ToLower(filename))
	}, false)
}

// SearchFiles returns the files whose content contains query,
// case-insensitive. None found is an error wrapping ErrNotFound.
func (m *Mem) SearchFiles(owner intent.Owner, query string) ([]File, error) {
	return m.findFiles(owner, func(f File) bool {
		return strings.Contains(strings.ToLower(f.Content), strings.ToLower(query))
	}, true)
}

// ListFiles returns every file of the owner's drive.
func (m *Mem) ListFiles(owner intent.Owner) ([]File, error) {
	return m.findFiles(owner, func(File) bool { return true }, false)
}

func (m *Mem) findFiles(owner intent.Owner, match func(File) bool, required bool) ([]File, error) {
	var out []File
	err := m.with(owner, func(w *Workspace) error {
		for _, f := range w.FilesSorted() {
			if match(f) {
				out = append(out, f.Clone())
			}
		}
		if required && len(out) == 0 {
			return fmt.Errorf("%w: no files match; try a different query", ErrNotFound)
		}
		return nil
	})
	return out, err
}

// File returns the owner's file id.
func (m *Mem) File(owner intent.Owner, id string) (File, error) {
	var out File
	err := m.with(owner, func(w *Workspace) error {
		f, ok := w.Files[id]
		if !ok {
			return fmt.Errorf("%w: file %q", ErrNotFound, id)
		}
		out = f.Clone()
		return nil
	})
	return out, err
}

// CreateFile adds a file owned by the owner and returns it.
func (m *Mem) CreateFile(owner intent.Owner, filename, content string) (File, error) {
	var out File
	err := m.with(owner, func(w *Workspace) error {
		out = File{ID: nextID(w.Files), Filename: filename, Content: content, Owner: w.Account, SharedWith: map[string]string{}, LastModified: w.Now}
		w.Files[out.ID] = out.Clone()
		return nil
	})
	return out, err
}

// DeleteFile removes the owner's file id and returns it.
func (m *Mem) DeleteFile(owner intent.Owner, id string) (File, error) {
	var out File
	err := m.with(owner, func(w *Workspace) error {
		f, ok := w.Files[id]
		if !ok {
			return fmt.Errorf("%w: file %q", ErrNotFound, id)
		}
		delete(w.Files, id)
		out = f
		return nil
	})
	return out, err
}

// ShareFile shares the owner's file id with email, permission "r" or
// "rw", and returns the file.
func (m *Mem) ShareFile(owner intent.Owner, id, email, permission string) (File, error) {
	if permission != "r" && permission != "rw" {
		return File{}, fmt.Errorf("%w: permission %q is not \"r\" or \"rw\"", ErrInvalid, permission)
	}
	var out File
	err := m.with(owner, func(w *Workspace) error {
		f, ok := w.Files[id]
		if !ok {
			return fmt.Errorf("%w: file %q", ErrNotFound, id)
		}
		if f.SharedWith == nil {
			f.SharedWith = map[string]string{}
		}
		f.SharedWith[email] = permission
		f.LastModified = w.Now
		w.Files[id] = f
		out = f.Clone()
		return nil
	})
	return out, err
}

// Reset replaces owner's workspace with a copy of w, whether or not the
// owner had one: a replay reuses one Mem, and the gateway over it, for
// many runs.
func (m *Mem) Reset(owner intent.Owner, w Workspace) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := w.Clone()
	m.owners[owner] = &c
}
