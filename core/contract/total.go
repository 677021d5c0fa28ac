package contract

import (
	"fmt"
	"time"
)

// Total declares a running total of an action's Budget amounts: what the
// owner's operations on the same records (the same payee, the same bill)
// executed, or are executing, in a window of time. The gateway keeps each
// total in its store, atomically across the replicas that share it, and
// gives the policy, as the fact Name (minor units of the mandate budget's
// currency), what the total held before the operation decided, so that a
// threshold can apply to the amount plus the total: splitting an amount
// never lowers the approval it needs. Totals are kept per currency (the
// mandate budget's): amounts in different currencies are never added,
// unless the contract converts them into one (Contract.TotalsAmount, the
// pack's conversion at its system of record's rate), whose amounts its
// totals then add up.
type Total struct {
	// Name is the total's name and the fact it is given as
	// ("paid_vendor_day"). Totals of the same name in one pack add up the
	// operations of all its actions that declare it (a transfer and a
	// scheduled transfer to one recipient).
	Name string
	// By names the critical parameters whose resolved values identify
	// what is added up (the payee, the bill): operations with the same
	// values share the total. At least one; each required.
	By []string
	// Window is the period the total covers: the whole time (Ever), the
	// mandate's life, a calendar day or week in Zone.
	Window Window
	// Zone is the time zone of the calendar windows (the company's
	// calendar); nil means UTC.
	Zone *time.Location
	// Outside, if not empty, names a fact (Long, minor units) that a
	// context provider gives: what the system of record registered in
	// the window outside the gateway (a payment made by hand in the ERP).
	// It is added to the total the policy sees; a negative value counts
	// as zero. It is in the totals' currency (Contract.TotalsCurrency
	// when the contract names one).
	Outside string
	// Label says, for people, what the total covers after "paid to X"
	// ("today", "for this bill"); empty means the window's own words.
	Label string
	// Note, if not empty, names a fact (String) that a context provider
	// may give for people: what of the total its words do not cover
	// ("of which 50.00 EUR settled by credit notes, not paid"). When the
	// fact is present and not empty, the total's text ends with it in
	// parentheses. It changes no total.
	Note string
}

// Window is the period a Total covers.
type Window int

// The windows of a Total.
const (
	// Ever: every operation, whatever its date (a bill's payments).
	Ever Window = iota
	// Mandate: the operations of the same mandate.
	Mandate
	// Day: the calendar day, in the total's zone, of the decision.
	Day
	// Week: the calendar week (ISO 8601: Monday to Sunday), in the
	// total's zone, of the decision.
	Week
)

// String returns the window's name: "ever", "mandate", "day" or "week".
func (w Window) String() string {
	switch w {
	case Ever:
		return "ever"
	case Mandate:
		return "mandate"
	case Day:
		return "day"
	case Week:
		return "week"
	}
	return fmt.Sprintf("window(%d)", int(w))
}

// Period returns the window's key for a decision at now under the mandate
// mandateID: "" for Ever, the mandate id for Mandate, the date
// ("2026-12-01") for Day and the ISO week ("2026-W49") for Week, in the
// total's zone.
func (t Total) Period(now time.Time, mandateID string) string {
	zone := t.Zone
	if zone == nil {
		zone = time.UTC
	}
	switch t.Window {
	case Mandate:
		return mandateID
	case Day:
		return now.In(zone).Format(time.DateOnly)
	case Week:
		y, w := now.In(zone).ISOWeek()
		return fmt.Sprintf("%04d-W%02d", y, w)
	}
	return ""
}

// Text returns what the total covers, for people: Label, or the window's
// own words ("today", "this week", "under this mandate", "in all").
func (t Total) Text() string {
	if t.Label != "" {
		return t.Label
	}
	switch t.Window {
	case Mandate:
		return "under this mandate"
	case Day:
		return "today"
	case Week:
		return "this week"
	}
	return "in all"
}
