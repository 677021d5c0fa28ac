package travel

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// ErrUnknownOwner is returned for an owner Mem holds no travel state for.
var ErrUnknownOwner = errors.New("travel: no travel state for this owner")

// User is the owner's profile, as AgentDojo's travel suite holds it. The
// numbers are personal data (see PersonalData).
type User struct {
	FirstName   string `json:"first_name"`
	LastName    string `json:"last_name"`
	IDNumber    string `json:"ID_number"`
	Email       string `json:"email"`
	Phone       string `json:"phone_number"`
	Address     string `json:"address"`
	Passport    string `json:"passport_number"`
	BankAccount string `json:"bank_account_number"`
	CreditCard  string `json:"credit_card_number"`
}

// Hotel is one hotel of the catalogue; prices are per night, in the
// suite's unnamed currency.
type Hotel struct {
	Name     string   `json:"name"`
	City     string   `json:"city"`
	Rating   float64  `json:"rating"`
	PriceMin float64  `json:"price_min"`
	PriceMax float64  `json:"price_max"`
	Address  string   `json:"address"`
	Reviews  []string `json:"reviews"`
}

// Restaurant is one restaurant of the catalogue; the price is per person.
type Restaurant struct {
	Name           string   `json:"name"`
	City           string   `json:"city"`
	Address        string   `json:"address"`
	Rating         float64  `json:"rating"`
	PricePerPerson float64  `json:"price_per_person"`
	OperatingHours string   `json:"operating_hours"`
	Reviews        []string `json:"reviews"`
	Contact        string   `json:"contact_information"`
	Cuisine        string   `json:"cuisine_type"`
	Dietary        string   `json:"dietary_restrictions"`
}

// Company is one car rental company of the catalogue; the price is per
// day.
type Company struct {
	Name        string   `json:"name"`
	City        string   `json:"city"`
	Address     string   `json:"address"`
	Rating      float64  `json:"rating"`
	PricePerDay float64  `json:"price_per_day"`
	Reviews     []string `json:"reviews"`
	Contact     string   `json:"contact_information"`
	CarTypes    []string `json:"car_types_available"`
	FuelOptions []string `json:"fuel_options"`
}

// Flight is one flight of the catalogue; times are "YYYY-MM-DD HH:MM:SS".
type Flight struct {
	Airline   string  `json:"airline"`
	Number    string  `json:"flight_number"`
	From      string  `json:"departure_city"`
	To        string  `json:"arrival_city"`
	Departure string  `json:"departure_time"`
	Arrival   string  `json:"arrival_time"`
	Price     float64 `json:"price"`
	Contact   string  `json:"contact_information"`
}

// Reservation is the single reservation the suite keeps: the last one
// made overwrites it. Type is "hotel", "restaurant", "car" or "" (none);
// times are "YYYY-MM-DD HH:MM".
type Reservation struct {
	Type    string `json:"reservation_type"`
	Title   string `json:"title"`
	Start   string `json:"start_time"`
	End     string `json:"end_time"`
	Contact string `json:"contact_information"`
}

// Event is a calendar event; times are "YYYY-MM-DD HH:MM", Status
// "confirmed" or "canceled".
type Event struct {
	ID           string   `json:"id_"`
	Title        string   `json:"title"`
	Description  string   `json:"description"`
	Start        string   `json:"start_time"`
	End          string   `json:"end_time"`
	Location     string   `json:"location"`
	Participants []string `json:"participants"`
	AllDay       bool     `json:"all_day"`
	Status       string   `json:"status"`
}

// Email is an e-mail of the inbox; Status is "sent", "received" or
// "draft"; Timestamp "YYYY-MM-DD HH:MM:SS".
type Email struct {
	ID          string   `json:"id_"`
	Sender      string   `json:"sender"`
	Recipients  []string `json:"recipients"`
	CC          []string `json:"cc"`
	BCC         []string `json:"bcc"`
	Subject     string   `json:"subject"`
	Body        string   `json:"body"`
	Status      string   `json:"status"`
	Read        bool     `json:"read"`
	Timestamp   string   `json:"timestamp"`
	Attachments []string `json:"attachments"`
}

// Travel is one owner's travel state: the profile, the catalogue
// (hotels, restaurants, car rental companies, flights), the reservation,
// the calendar (Events by id, Today "YYYY-MM-DD") and the inbox (Emails
// by id, Account the owner's address). Clock gives the timestamps of
// e-mails sent; nil means the start of Today.
type Travel struct {
	User        User
	Hotels      []Hotel
	Restaurants []Restaurant
	Companies   []Company
	Flights     []Flight
	Reservation Reservation
	Account     string
	Today       string
	Events      map[string]*Event
	Emails      map[string]*Email
	Clock       func() time.Time
}

// Clone returns a deep copy of t (the catalogue's slices are shared: no
// tool changes them).
func (t *Travel) Clone() *Travel {
	c := *t
	c.Events = make(map[string]*Event, len(t.Events))
	for id, e := range t.Events {
		ce := *e
		ce.Participants = slices.Clone(e.Participants)
		c.Events[id] = &ce
	}
	c.Emails = make(map[string]*Email, len(t.Emails))
	for id, e := range t.Emails {
		ce := *e
		ce.Recipients, ce.CC, ce.BCC = slices.Clone(e.Recipients), slices.Clone(e.CC), slices.Clone(e.BCC)
		ce.Attachments = slices.Clone(e.Attachments)
		c.Emails[id] = &ce
	}
	return &c
}

// Mem holds the travel state of each owner in memory. It is safe for
// concurrent use.
type Mem struct {
	mu     sync.Mutex
	owners map[intent.Owner]*Travel
}

// NewMem returns an empty Mem.
func NewMem() *Mem { return &Mem{owners: map[intent.Owner]*Travel{}} }

// Open gives owner the travel state t (a copy), replacing any. It refuses
// a state without an account or with a malformed Today.
func (m *Mem) Open(owner intent.Owner, t *Travel) error {
	if t == nil || t.Account == "" {
		return fmt.Errorf("travel: a travel state needs the owner's account address")
	}
	if _, err := time.Parse(time.DateOnly, t.Today); err != nil {
		return fmt.Errorf("travel: today %q is not YYYY-MM-DD", t.Today)
	}
	c := t.Clone()
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owners[owner] = c
	return nil
}

// Travel returns a copy of owner's travel state.
func (m *Mem) Travel(owner intent.Owner) (*Travel, error) {
	var c *Travel
	err := m.with(owner, func(t *Travel) error { c = t.Clone(); return nil })
	return c, err
}

func (m *Mem) with(owner intent.Owner, f func(*Travel) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.owners[owner]
	if !ok {
		return ErrUnknownOwner
	}
	return f(t)
}

// nextID is the largest numeric key of ids plus one, as AgentDojo numbers
// e-mails and events.
func nextID[V any](ids map[string]V) string {
	n := -1
	for k := range ids {
		if i, err := strconv.Atoi(k); err == nil && i > n {
			n = i
		}
	}
	return strconv.Itoa(n + 1)
}

func (t *Travel) now() string {
	if t.Clock != nil {
		return t.Clock().Format(time.DateTime)
	}
	return t.Today + " 00:00:00"
}

// send adds a sent e-mail from the account and returns it.
func (t *Travel) send(to, cc, bcc []string, subject, body string, attachments []string) *Email {
	e := &Email{
		ID: nextID(t.Emails), Sender: t.Account, Recipients: slices.Clone(to), CC: slices.Clone(cc), BCC: slices.Clone(bcc),
		Subject: subject, Body: body, Status: "sent", Read: true, Timestamp: t.now(), Attachments: attachments,
	}
	if e.Recipients == nil {
		e.Recipients = []string{}
	}
	t.Emails[e.ID] = e
	return e
}

// SendEmail sends an e-mail from the owner's account and returns it.
func (m *Mem) SendEmail(owner intent.Owner, to, cc, bcc []string, subject, body string) (Email, error) {
	var out Email
	err := m.with(owner, func(t *Travel) error {
		out = *t.send(to, cc, bcc, subject, body, nil)
		return nil
	})
	return out, err
}

// named reports whether names holds name, compared exactly, as
// AgentDojo's tools compare catalogue names.
func named(names []string, name string) bool { return slices.Contains(names, name) }

// Reserve makes the reservation of kind ("hotel", "restaurant", "car")
// at title from start to end, both "YYYY-MM-DD HH:MM" (end "" for a car,
// whose end AgentDojo sets to its start; a restaurant's end is two hours
// after its start), with the user's phone as contact. It returns
// AgentDojo's confirmation text. The name is not checked against the
// catalogue, as upstream's tools do not check it; the pack's policy does.
func (m *Mem) Reserve(owner intent.Owner, kind, title, start, end string) (string, error) {
	st, err := parseTime(start)
	if err != nil {
		return "", err
	}
	var out string
	err = m.with(owner, func(t *Travel) error {
		r := Reservation{Type: kind, Title: title, Start: st.Format(layoutMinute), Contact: t.User.Phone}
		switch kind {
		case "hotel":
			et, err := parseTime(end)
			if err != nil {
				return err
			}
			r.End = et.Format(layoutMinute)
			out = fmt.Sprintf("Reservation for %s from %s to %s has been made successfully.", title, start, end)
		case "restaurant":
			et := st.Add(2 * time.Hour)
			r.End = et.Format(layoutMinute)
			out = fmt.Sprintf("Reservation for %s from %s to %s on %s has been made successfully.", title, st.Format("15:04"), et.Format("15:04"), st.Format(time.DateOnly))
		case "car":
			r.End = r.Start
			out = fmt.Sprintf("Reservation for a car at %s from %s to %s has been made successfully.", title, start, end)
		default:
			return fmt.Errorf("travel: unknown reservation kind %q", kind)
		}
		t.Reservation = r
		return nil
	})
	return out, err
}

const layoutMinute = "2006-01-02 15:04"

// parseTime reads "YYYY-MM-DD", "YYYY-MM-DD HH:MM" or
// "YYYY-MM-DDTHH:MM[:SS]", as Python's datetime.fromisoformat does for
// these shapes.
func parseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, l := range []string{time.DateOnly, layoutMinute, "2006-01-02T15:04", time.DateTime, "2006-01-02T15:04:05"} {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("time %q is not YYYY-MM-DD or YYYY-MM-DD HH:MM", clip(s))
}

// CreateEvent creates an event with the owner among its participants and
// mails an invitation (subject "Invitation: <title>", the description as
// body, the event attached) to the participants given, as AgentDojo's
// calendar does. Times are "YYYY-MM-DD HH:MM".
func (m *Mem) CreateEvent(owner intent.Owner, title, start, end, description string, participants []string, location string) (Event, error) {
	st, err := time.Parse(layoutMinute, strings.TrimSpace(start))
	if err != nil {
		return Event{}, fmt.Errorf("start %q is not YYYY-MM-DD HH:MM", clip(start))
	}
	et, err := time.Parse(layoutMinute, strings.TrimSpace(end))
	if err != nil {
		return Event{}, fmt.Errorf("end %q is not YYYY-MM-DD HH:MM", clip(end))
	}
	var out Event
	err = m.with(owner, func(t *Travel) error {
		ps := append(slices.Clone(participants), t.Account)
		slices.Sort(ps)
		e := &Event{ID: nextID(t.Events), Title: title, Description: description, Start: st.Format(layoutMinute), End: et.Format(layoutMinute),
			Location: location, Participants: slices.Compact(ps), Status: "confirmed"}
		t.Events[e.ID] = e
		t.send(participants, nil, nil, "Invitation: "+title, description, []string{e.ID})
		out = *e
		return nil
	})
	return out, err
}

// CancelEvent marks the event canceled and mails its participants.
func (m *Mem) CancelEvent(owner intent.Owner, id string) error {
	return m.with(owner, func(t *Travel) error {
		e, ok := t.Events[id]
		if !ok {
			return fmt.Errorf("event with ID '%s' not found", clip(id))
		}
		e.Status = "canceled"
		t.send(e.Participants, nil, nil, "Canceled: '"+e.Title+"'", "The event has been canceled.", []string{id})
		return nil
	})
}

// DayEvents returns the events starting on day ("YYYY-MM-DD"), by id.
func (m *Mem) DayEvents(owner intent.Owner, day string) ([]Event, error) {
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return nil, fmt.Errorf("day %q is not YYYY-MM-DD", clip(day))
	}
	return m.events(owner, func(e *Event) bool { return strings.HasPrefix(e.Start, day) })
}

// SearchEvents returns the events whose title or description contains
// query (case-insensitive), on day if it is not "".
func (m *Mem) SearchEvents(owner intent.Owner, query, day string) ([]Event, error) {
	if day != "" {
		if _, err := time.Parse(time.DateOnly, day); err != nil {
			return nil, fmt.Errorf("date %q is not YYYY-MM-DD", clip(day))
		}
	}
	q := strings.ToLower(query)
	out, err := m.events(owner, func(e *Event) bool {
		return strings.HasPrefix(e.Start, day) &&
			(strings.Contains(strings.ToLower(e.Title), q) || strings.Contains(strings.ToLower(e.Description), q))
	})
	if err == nil && len(out) == 0 {
		return nil, errors.New("no events found; try with a different query")
	}
	return out, err
}

func (m *Mem) events(owner intent.Owner, keep func(*Event) bool) ([]Event, error) {
	var out []Event
	err := m.with(owner, func(t *Travel) error {
		for _, id := range slices.SortedFunc(maps.Keys(t.Events), byNumber) {
			if e := t.Events[id]; keep(e) {
				out = append(out, *e)
			}
		}
		return nil
	})
	return out, err
}

func byNumber(a, b string) int {
	x, _ := strconv.Atoi(a)
	y, _ := strconv.Atoi(b)
	if x != y {
		return x - y
	}
	return strings.Compare(a, b)
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
