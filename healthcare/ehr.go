package healthcare

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/normalize"
)

// Patient is a person with a record in the EHR.
type Patient struct {
	// ID identifies the patient ("P-1001"); it is its own normal form
	// under normalize.Identifier.
	ID string
	// Name is the patient's full name.
	Name string
	// BirthDate is the date of birth, written YYYY-MM-DD.
	BirthDate string
}

// Note is one entry of a record's notes.
type Note struct {
	// Author is who wrote the note: the clinician who signed it, or the
	// channel it came through ("patient-portal").
	Author string
	// At is when the note was added, in UTC.
	At time.Time
	// Text is the note as written: free text, never trusted.
	Text string
	// Ref is the idempotency key the note was added under (an operation
	// hash); empty for notes added outside the gateway.
	Ref string
}

// Record is a patient's health record.
type Record struct {
	// Patient is whose record it is.
	Patient Patient
	// Diagnoses are free-text diagnoses, oldest first.
	Diagnoses []string
	// Notes are the record's notes, oldest first.
	Notes []Note
	// Restricted marks a record that needs the clinician's confirmation
	// before it is opened (psychiatric, HIV...).
	Restricted bool
}

// Status is the state of an encounter.
type Status string

// The states of an encounter.
const (
	StatusActive Status = "active" // care is ongoing: the record may be annotated
	StatusClosed Status = "closed" // care has ended: the record may only be read
)

// Encounter is a period of care of one patient by one clinician.
type Encounter struct {
	// ID identifies the encounter ("E-2001").
	ID string
	// Clinician is the clinician in charge, as named in mandates
	// ("dr-grey").
	Clinician string
	// Patient is the patient's ID.
	Patient string
	// Start is when the encounter began, in UTC.
	Start time.Time
	// End is when it ended, in UTC; zero while it is active.
	End time.Time
	// Status is StatusActive or StatusClosed.
	Status Status
}

// Errors of Mem's clinician-scoped methods.
var (
	// ErrNotFound is returned when the clinician has no encounter with the
	// patient, whether the patient exists or not: the two cases are
	// indistinguishable by design.
	ErrNotFound = errors.New("healthcare: no such patient in the clinician's encounters")
	// ErrEncounterClosed is returned by Annotate when the clinician's
	// encounters with the patient are all closed.
	ErrEncounterClosed = errors.New("healthcare: the encounter with this patient is closed")
	// ErrInvalid is wrapped by the errors of AddRecord, AddEncounter,
	// CloseEncounter and Annotate for data they refuse.
	ErrInvalid = errors.New("healthcare: invalid data")
)

// Mem is an in-memory EHR for demos and tests; it must only ever hold
// fictional data. The zero value is not usable; call NewMem. It is safe for
// concurrent use.
//
// AddRecord, AddEncounter and CloseEncounter are the hospital's own
// administration and are not scoped. Every other method is scoped to one
// clinician and answers only about the patients of that clinician's
// encounters.
type Mem struct {
	now func() time.Time

	mu         sync.RWMutex
	records    map[string]*Record    // by patient ID
	encounters map[string]*Encounter // by encounter ID
}

// NewMem returns an empty EHR. now stamps the notes Annotate adds; nil
// means time.Now.
func NewMem(now func() time.Time) *Mem {
	if now == nil {
		now = time.Now
	}
	return &Mem{now: now, records: map[string]*Record{}, encounters: map[string]*Encounter{}}
}

func invalid(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalid, fmt.Sprintf(format, a...))
}

// checkID refuses an identifier that normalize.Identifier would change or
// refuse, so that every stored ID can be reached by its exact spelling.
func checkID(what, id string) error {
	if n, err := normalize.Identifier(id); err != nil || n != id {
		return invalid("%s %q is not a plain identifier", what, id)
	}
	return nil
}

// AddRecord adds a patient with their record; r.Patient.ID must be new.
// It keeps a copy of r. It returns an error wrapping ErrInvalid for an ID
// that is not a plain identifier (see normalize.Identifier) or already
// used, an empty name, or a birth date not written YYYY-MM-DD.
func (m *Mem) AddRecord(r Record) error {
	p := r.Patient
	if err := checkID("patient ID", p.ID); err != nil {
		return err
	}
	if p.Name == "" {
		return invalid("patient %s has no name", p.ID)
	}
	if _, err := time.Parse(time.DateOnly, p.BirthDate); err != nil {
		return invalid("patient %s: birth date %q is not YYYY-MM-DD", p.ID, p.BirthDate)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, dup := m.records[p.ID]; dup {
		return invalid("patient %s already exists", p.ID)
	}
	c := cloneRecord(r)
	m.records[p.ID] = &c
	return nil
}

// AddEncounter adds an encounter of an existing patient. A zero Status
// means StatusActive when End is zero and StatusClosed otherwise. It
// returns an error wrapping ErrInvalid for an ID that is not a plain
// identifier or already used, an empty clinician, an unknown patient, a
// zero Start, an End before Start, or a Status that does not agree with
// End (an active encounter has no end, a closed one has).
func (m *Mem) AddEncounter(e Encounter) error {
	if err := checkID("encounter ID", e.ID); err != nil {
		return err
	}
	if e.Status == "" {
		e.Status = StatusActive
		if !e.End.IsZero() {
			e.Status = StatusClosed
		}
	}
	switch {
	case e.Clinician == "":
		return invalid("encounter %s has no clinician", e.ID)
	case e.Start.IsZero():
		return invalid("encounter %s has no start", e.ID)
	case !e.End.IsZero() && e.End.Before(e.Start):
		return invalid("encounter %s ends before it starts", e.ID)
	case e.Status == StatusActive && !e.End.IsZero(), e.Status == StatusClosed && e.End.IsZero():
		return invalid("encounter %s: status %q does not agree with its end", e.ID, e.Status)
	case e.Status != StatusActive && e.Status != StatusClosed:
		return invalid("encounter %s: unknown status %q", e.ID, e.Status)
	}
	e.Start, e.End = e.Start.UTC(), e.End.UTC()
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.records[e.Patient]; !ok {
		return invalid("encounter %s: unknown patient %q", e.ID, e.Patient)
	}
	if _, dup := m.encounters[e.ID]; dup {
		return invalid("encounter %s already exists", e.ID)
	}
	m.encounters[e.ID] = &e
	return nil
}

// CloseEncounter closes the active encounter id at end. It returns an
// error wrapping ErrInvalid if there is no such encounter, if it is
// already closed, or if end is before its start.
func (m *Mem) CloseEncounter(id string, end time.Time) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.encounters[id]
	switch {
	case !ok:
		return invalid("no encounter %q", id)
	case e.Status == StatusClosed:
		return invalid("encounter %s is already closed", id)
	case end.Before(e.Start):
		return invalid("encounter %s would end before it starts", id)
	}
	e.Status, e.End = StatusClosed, end.UTC()
	return nil
}

// Encounters returns the clinician's encounters, oldest first (by start,
// then ID); none is an empty slice and no error. The error is only ever
// the context's.
func (m *Mem) Encounters(ctx context.Context, clinician string) ([]Encounter, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := []Encounter{}
	for _, e := range m.encounters {
		if e.Clinician == clinician {
			out = append(out, *e)
		}
	}
	slices.SortFunc(out, func(a, b Encounter) int {
		return cmp.Or(a.Start.Compare(b.Start), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Encounter returns the clinician's encounter with the patient: the
// active one if there is one, otherwise the one that started last. It
// returns ErrNotFound if the clinician has none, whether or not the
// patient exists.
func (m *Mem) Encounter(ctx context.Context, clinician, patient string) (Encounter, error) {
	if err := ctx.Err(); err != nil {
		return Encounter{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.care(clinician, patient)
	if !ok {
		return Encounter{}, ErrNotFound
	}
	return *e, nil
}

// care finds the clinician's encounter with the patient (see Encounter).
// m.mu must be held.
func (m *Mem) care(clinician, patient string) (*Encounter, bool) {
	var best *Encounter
	for _, e := range m.encounters {
		if e.Clinician != clinician || e.Patient != patient {
			continue
		}
		if best == nil || better(e, best) {
			best = e
		}
	}
	return best, best != nil
}

// better reports whether encounter a is a better answer than b: active
// before closed, then the later start, then the greater ID (so that the
// choice does not depend on map order).
func better(a, b *Encounter) bool {
	if (a.Status == StatusActive) != (b.Status == StatusActive) {
		return a.Status == StatusActive
	}
	if c := a.Start.Compare(b.Start); c != 0 {
		return c > 0
	}
	return a.ID > b.ID
}

// Record returns a copy of the patient's record if the clinician has an
// encounter with the patient, active or closed. It returns ErrNotFound
// otherwise, whether or not the patient exists.
func (m *Mem) Record(ctx context.Context, clinician, patient string) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	if _, ok := m.care(clinician, patient); !ok {
		return Record{}, ErrNotFound
	}
	return cloneRecord(*m.records[patient]), nil
}

// Annotate appends a note signed by the clinician to the patient's record
// and returns it. ref is an idempotency key (the gateway passes the
// operation hash): if the record already has a note with the same non-empty
// ref, that note is returned and nothing is appended.
//
// It returns ErrNotFound if the clinician has no encounter with the
// patient (whether or not the patient exists), ErrEncounterClosed if the
// clinician's encounter with the patient is closed, and an error wrapping
// ErrInvalid for empty text.
func (m *Mem) Annotate(ctx context.Context, clinician, patient, text, ref string) (Note, error) {
	if err := ctx.Err(); err != nil {
		return Note{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.care(clinician, patient)
	if !ok {
		return Note{}, ErrNotFound
	}
	r := m.records[patient]
	if ref != "" {
		for _, n := range r.Notes {
			if n.Ref == ref {
				return n, nil
			}
		}
	}
	if e.Status != StatusActive {
		return Note{}, ErrEncounterClosed
	}
	if text == "" {
		return Note{}, invalid("the note is empty")
	}
	n := Note{Author: clinician, At: m.now().UTC(), Text: text, Ref: ref}
	r.Notes = append(r.Notes, n)
	return n, nil
}

// lookup returns the clinician's encounter with the patient (see
// Encounter) and whether the patient's record is restricted, read
// together. It returns ErrNotFound if the clinician has no encounter with
// the patient.
func (m *Mem) lookup(ctx context.Context, clinician, patient string) (Encounter, bool, error) {
	if err := ctx.Err(); err != nil {
		return Encounter{}, false, err
	}
	m.mu.RLock()
	defer m.mu.RUnlock()
	e, ok := m.care(clinician, patient)
	if !ok {
		return Encounter{}, false, ErrNotFound
	}
	return *e, m.records[patient].Restricted, nil
}

func cloneRecord(r Record) Record {
	r.Diagnoses = slices.Clone(r.Diagnoses)
	r.Notes = slices.Clone(r.Notes)
	return r
}
