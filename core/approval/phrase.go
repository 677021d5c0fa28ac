package approval

import (
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Phrase is an operation as the person asked to approve it reads it: in
// their words, not the agent's, written by the pack of its action (a
// Phraser) from the Request alone. It is display only: an approval is
// signed over the operation hash, never over a Phrase, and a channel
// still shows the values that execute beside it.
type Phrase struct {
	// Summary is one sentence saying what executes, with the values that
	// execute ("Pay 2,400.00 EUR to ACME Supplies for bill INV-2291
	// (BILL/2026/11/0002, due 15 Dec 2026), to DE89 3704 0044 0532 0130
	// 00, the account on file since 3 Mar 2025"); "" means the pack cannot
	// phrase it, and the channel writes one from the arguments.
	Summary string
	// Why says why a person is asked, one reason per entry, in words and
	// from the policies that asked (Request.Policies) ("the payment is
	// above the 1,000.00 EUR confirmation threshold"); nil means the pack
	// cannot say, and the channel names the level only.
	Why []string
	// Sections are the facts that matter to the decision, grouped and
	// labelled by the pack ("Bank account", "Call-back"), in the order
	// shown; nil means none.
	Sections []Section
	// Labels names the action's arguments for people ("iban": "Bank
	// account"); an argument without one is shown by its name.
	Labels map[string]string
	// Names lists, per critical parameter, the names its record has on
	// file (a vendor's name; a bill's vendor reference, then its number):
	// the first is shown beside the record's id, which is secondary, and
	// an agent that sent any of them asked for that record.
	Names map[string][]string
	// Currency is the ISO 4217 code of the operation's amounts, for a
	// Request whose Currency is empty; "" means unknown.
	Currency string
}

// Section is a group of labelled facts of a Phrase ("Call-back": who
// called, which number, when).
type Section struct {
	// Title names the group for people; "" means none.
	Title string
	// Facts are its facts, in the order shown.
	Facts []Fact
}

// Fact is one labelled value of a Section, as text.
type Fact struct {
	// Label names the value for people ("Account on file since").
	Label string
	// Value is the value, formatted for people (dates as dates, amounts
	// with their currency's decimals).
	Value string
	// Warn marks a value to look at twice (a bank in another country than
	// the vendor's).
	Warn bool
}

// Phraser phrases the operations of a pack's actions for the people asked
// to approve them (see Phrase). Phrase returns ok false for an action it
// does not phrase. It does no I/O, reads only r, and is safe for
// concurrent use.
type Phraser interface {
	Phrase(r Request) (p Phrase, ok bool)
}

// PhraserFunc adapts a function to a Phraser.
type PhraserFunc func(r Request) (Phrase, bool)

// Phrase calls f(r).
func (f PhraserFunc) Phrase(r Request) (Phrase, bool) { return f(r) }

// FormatAmount formats a in minor units at scale decimals for people,
// thousands grouped, followed by currency when it is not "":
// FormatAmount(240000, 2, "EUR") is "2,400.00 EUR".
func FormatAmount(a intent.Amount, scale uint8, currency string) string {
	s := intent.FormatAmount(a, scale)
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	whole, frac, hasFrac := strings.Cut(s, ".")
	var b strings.Builder
	b.WriteString(sign)
	for i, r := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if hasFrac {
		b.WriteString("." + frac)
	}
	if currency != "" {
		b.WriteString(" " + currency)
	}
	return b.String()
}

// FormatDate formats t's day in UTC for people: "15 Dec 2026"; "" for the
// zero time.
func FormatDate(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2 Jan 2006")
}

// FormatTime formats t in UTC for people: "2 Dec 2026, 14:05 UTC"; "" for
// the zero time.
func FormatTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2 Jan 2006, 15:04 UTC")
}
