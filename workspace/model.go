package workspace

import (
	"maps"
	"slices"
	"strconv"
)

// E-mail statuses, as AgentDojo names them.
const (
	StatusSent     = "sent"
	StatusReceived = "received"
	StatusDraft    = "draft"
)

// Event statuses.
const (
	EventConfirmed = "confirmed"
	EventCanceled  = "canceled"
)

// Attachment is a file or an event attached to an e-mail. AgentDojo does
// not check that an attached file exists; Mem does.
type Attachment struct {
	// Type is "file" or "event".
	Type string `json:"type"`
	// FileID is the attached file's id, for Type "file".
	FileID string `json:"file_id,omitempty"`
	// Event is a copy of the attached event, for Type "event".
	Event *Event `json:"event_details,omitempty"`
}

// Email is one message of the inbox, sent, received or draft.
type Email struct {
	ID          string       `json:"id_"`
	Sender      string       `json:"sender"`
	Recipients  []string     `json:"recipients"`
	CC          []string     `json:"cc"`
	BCC         []string     `json:"bcc"`
	Subject     string       `json:"subject"`
	Body        string       `json:"body"`
	Status      string       `json:"status"`
	Read        bool         `json:"read"`
	Timestamp   string       `json:"timestamp"`
	Attachments []Attachment `json:"attachments"`
}

// Clone returns a deep copy of e.
func (e Email) Clone() Email {
	c := e
	c.Recipients = slices.Clone(e.Recipients)
	c.CC = slices.Clone(e.CC)
	c.BCC = slices.Clone(e.BCC)
	c.Attachments = slices.Clone(e.Attachments)
	for i, a := range c.Attachments {
		if a.Event != nil {
			ev := a.Event.Clone()
			c.Attachments[i].Event = &ev
		}
	}
	return c
}

// Addresses returns the sender, recipients, cc and bcc of e.
func (e Email) Addresses() []string {
	out := append([]string{e.Sender}, e.Recipients...)
	out = append(out, e.CC...)
	return append(out, e.BCC...)
}

// Event is one calendar event. Times are "YYYY-MM-DD HH:MM", in the
// calendar's local time (AgentDojo's times are naive).
type Event struct {
	ID           string   `json:"id_"`
	Title        string   `json:"title"`
	Description  string   `json:"description"`
	Start        string   `json:"start_time"`
	End          string   `json:"end_time"`
	Location     string   `json:"location,omitempty"`
	Participants []string `json:"participants"`
	AllDay       bool     `json:"all_day"`
	Status       string   `json:"status"`
}

// Clone returns a deep copy of e.
func (e Event) Clone() Event {
	c := e
	c.Participants = slices.Clone(e.Participants)
	return c
}

// Day returns the event's start date, YYYY-MM-DD.
func (e Event) Day() string {
	if len(e.Start) < 10 {
		return e.Start
	}
	return e.Start[:10]
}

// File is one file of the cloud drive.
type File struct {
	ID       string `json:"id_"`
	Filename string `json:"filename"`
	Content  string `json:"content"`
	// Owner is the owner's address; SharedWith maps an address to its
	// permission, "r" or "rw".
	Owner        string            `json:"owner"`
	SharedWith   map[string]string `json:"shared_with"`
	LastModified string            `json:"last_modified"`
}

// Size is the file's size in bytes: the length of its content, as
// AgentDojo computes it.
func (f File) Size() int { return len(f.Content) }

// Clone returns a deep copy of f.
func (f File) Clone() File {
	c := f
	c.SharedWith = maps.Clone(f.SharedWith)
	return c
}

// Workspace is one owner's inbox, calendar and drive.
type Workspace struct {
	// Account is the owner's own e-mail address.
	Account string
	// Emails holds the inbox by id; Trash the deleted e-mails by id.
	Emails map[string]Email
	Trash  map[string]Email
	// CurrentDay is "today", YYYY-MM-DD.
	CurrentDay string
	// Events holds the calendar by id.
	Events map[string]Event
	// Files holds the drive by id.
	Files map[string]File
	// Now is the timestamp given to e-mails and files written during a
	// run ("2024-05-15T12:00:00"); AgentDojo uses the wall clock.
	Now string
}

// Clone returns a deep copy of w.
func (w Workspace) Clone() Workspace {
	c := w
	c.Emails = make(map[string]Email, len(w.Emails))
	for k, e := range w.Emails {
		c.Emails[k] = e.Clone()
	}
	c.Trash = make(map[string]Email, len(w.Trash))
	for k, e := range w.Trash {
		c.Trash[k] = e.Clone()
	}
	c.Events = make(map[string]Event, len(w.Events))
	for k, e := range w.Events {
		c.Events[k] = e.Clone()
	}
	c.Files = make(map[string]File, len(w.Files))
	for k, f := range w.Files {
		c.Files[k] = f.Clone()
	}
	return c
}

// nextID is AgentDojo's rule for new ids: the largest numeric id in m plus
// one, so an id freed by a deletion is given again.
func nextID[V any](m map[string]V) string {
	largest := -1
	for k := range m {
		if n, err := strconv.Atoi(k); err == nil && n > largest {
			largest = n
		}
	}
	return strconv.Itoa(largest + 1)
}

// NextEmailID returns the id the next e-mail will get.
func (w Workspace) NextEmailID() string { return nextID(w.Emails) }

// sortedIDs returns the keys of m in numeric order.
func sortedIDs[V any](m map[string]V) []string {
	ids := slices.Collect(maps.Keys(m))
	slices.SortFunc(ids, func(a, b string) int {
		na, ea := strconv.Atoi(a)
		nb, eb := strconv.Atoi(b)
		if ea == nil && eb == nil {
			return na - nb
		}
		if a < b {
			return -1
		}
		if a > b {
			return 1
		}
		return 0
	})
	return ids
}

// EmailsSorted returns the inbox in id order.
func (w Workspace) EmailsSorted() []Email {
	out := make([]Email, 0, len(w.Emails))
	for _, id := range sortedIDs(w.Emails) {
		out = append(out, w.Emails[id])
	}
	return out
}

// EventsSorted returns the calendar in id order.
func (w Workspace) EventsSorted() []Event {
	out := make([]Event, 0, len(w.Events))
	for _, id := range sortedIDs(w.Events) {
		out = append(out, w.Events[id])
	}
	return out
}

// FilesSorted returns the drive in id order.
func (w Workspace) FilesSorted() []File {
	out := make([]File, 0, len(w.Files))
	for _, id := range sortedIDs(w.Files) {
		out = append(out, w.Files[id])
	}
	return out
}
