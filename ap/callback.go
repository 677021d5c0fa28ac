package ap

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/normalize"
)

// Callback is the evidence of a call-back before a bank-detail change: a
// person of the company called the vendor at the phone number on file and
// the vendor confirmed the new bank account. It is recorded on the approval
// channel, which the agent cannot reach; never from a message the agent
// read.
type Callback struct {
	// ID identifies the record.
	ID string
	// Company is the company (the mandate's owner) it was made for.
	Company string
	// Vendor is the ERP ID of the vendor called.
	Vendor string
	// Number is the IBAN the vendor confirmed, in electronic format
	// (normalize.IBAN).
	Number string
	// Phone is the number that was dialled, as typed. The pack checks it
	// against the vendor's phone on file.
	Phone string
	// CalledBy names the person who made the call.
	CalledBy string
	// At is when the call-back was recorded, in UTC.
	At time.Time
}

// ErrNoCallback is returned by Callbacks.Callback when no call-back
// confirms the number for the company.
var ErrNoCallback = errors.New("ap: no call-back confirms this bank account")

// Callbacks gives the call-backs recorded on the approval channel.
// Callback returns the most recent call-back of company that confirmed
// number (an electronic-format IBAN), or an error wrapping ErrNoCallback;
// any other error means the records could not be read. It must never
// return another company's call-back. Called concurrently.
type Callbacks interface {
	Callback(ctx context.Context, company, number string) (Callback, error)
}

var _ Callbacks = (*CallbackMem)(nil)

// CallbackMem is an in-memory Callbacks, for demos and tests until the
// approval page records call-backs durably. The zero value is empty and
// ready to use; it is safe for concurrent use.
type CallbackMem struct {
	mu  sync.Mutex
	cbs []Callback
}

// Record stores a call-back. It normalizes Number with normalize.IBAN and
// refuses, with an error wrapping normalize.ErrInvalid or describing what
// is missing, a record without ID, Company, Vendor, Phone, CalledBy or At,
// or with a number that is not a valid IBAN.
func (m *CallbackMem) Record(ctx context.Context, cb Callback) error {
	cb, err := cb.checked()
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.cbs = append(m.cbs, cb)
	return nil
}

// checked returns cb with Number normalized and At in UTC, or the error
// CallbackMem.Record documents.
func (cb Callback) checked() (Callback, error) {
	if cb.ID == "" || cb.Company == "" || cb.Vendor == "" || strings.TrimSpace(cb.Phone) == "" || cb.CalledBy == "" || cb.At.IsZero() {
		return cb, errors.New("ap: a call-back needs an ID, a company, a vendor, the phone dialled, who called and when")
	}
	n, err := normalize.IBAN(cb.Number)
	if err != nil {
		return cb, fmt.Errorf("ap: call-back: %w", err)
	}
	cb.Number, cb.At = n, cb.At.UTC()
	return cb, nil
}

// Callback implements Callbacks.
func (m *CallbackMem) Callback(ctx context.Context, company, number string) (Callback, error) {
	if err := ctx.Err(); err != nil {
		return Callback{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var best *Callback
	for i := range m.cbs {
		cb := &m.cbs[i]
		if cb.Company == company && cb.Number == number && (best == nil || !cb.At.Before(best.At)) {
			best = cb
		}
	}
	if best == nil {
		return Callback{}, ErrNoCallback
	}
	return *best, nil
}

// SamePhone reports whether dialled is the phone number onFile: the same
// digits in the same form (international with "+" or "00", or national as
// written), at least 6 digits, and nothing but ASCII digits and the usual
// separators in either (see phoneDigits). A number written with a letter or
// a look-alike digit never matches; a number dialled in another form than
// the one on file (+49 30 … for 030 …) does not match either: the person
// must dial the number as it is on file.
// It is the check the pack makes of a call-back (phone_on_file), for a
// channel that records call-backs to refuse one made to another number
// before it is recorded.
func SamePhone(dialled, onFile string) bool {
	d := phoneDigits(onFile)
	return d != "" && d == phoneDigits(dialled)
}

// phoneDigits reduces a phone number to a comparable form: "+" and its
// digits for an international number (a leading "+" or "00"), "0"-led
// digits as written for a national one, so that a national number never
// equals an international one by accident. Only ASCII digits, spaces and
// the separators - . ( ) / are allowed besides the leading "+": a letter, a
// non-ASCII digit (full-width, Arabic-Indic) or any other character makes
// the number incomparable, and "" is returned, so it never matches. It also
// returns "" when there are fewer than 6 digits.
func phoneDigits(s string) string {
	s = strings.TrimSpace(s)
	intl := strings.HasPrefix(s, "+")
	if intl {
		s = s[1:]
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case '0' <= c && c <= '9':
			b.WriteByte(c)
		case c == ' ' || c == '-' || c == '.' || c == '(' || c == ')' || c == '/':
		default:
			return ""
		}
	}
	d := b.String()
	if !intl && strings.HasPrefix(d, "00") {
		intl, d = true, d[2:]
	}
	if len(d) < 6 {
		return ""
	}
	if intl {
		return "+" + d
	}
	return d
}
