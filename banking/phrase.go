package banking

import (
	"fmt"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

// Phraser says how the pack's payments and standing orders read for the
// person asked to approve them (approval.Phraser): one sentence with the
// values that execute ("Send 1,500.00 EUR to GB29 NWBK 6016 1331 9268 19
// on 5 Dec 2026, subject "March rent""), and why a person is asked, in
// words, from the approval guards that asked (the policy's @id). It reads
// only the request.
func Phraser() approval.Phraser { return approval.PhraserFunc(phrase) }

var labels = map[string]string{
	"recipient": "Recipient's account", "amount": "Amount", "subject": "Subject", "date": "Date",
	"recurring": "Recurring", "id": "Standing order", "street": "Street", "city": "City",
	"first_name": "First name", "last_name": "Last name",
}

func phrase(r approval.Request) (approval.Phrase, bool) {
	a := r.Operation.Args
	money := func(name string) string {
		v, ok := a[name]
		if !ok || v.Kind != intent.KindAmount {
			return ""
		}
		return approval.FormatAmount(intent.Amount(v.Int), v.Scale, r.Currency)
	}
	str := func(name string) string {
		if v, ok := a[name]; ok && v.Kind == intent.KindString {
			return v.Str
		}
		return ""
	}
	day := func(name string) string {
		t, err := time.Parse(time.DateOnly, str(name))
		if err != nil {
			return str(name)
		}
		return approval.FormatDate(t)
	}
	recipient := normalize.FormatIBAN(str("recipient"))
	subject := ""
	if s := str("subject"); s != "" {
		subject = fmt.Sprintf(", subject %q", s)
	}
	p := approval.Phrase{Labels: labels, Currency: r.Currency}
	switch r.Operation.Action {
	case ActionSendMoney:
		p.Summary = fmt.Sprintf("Send %s to %s on %s%s", money("amount"), recipient, day("date"), subject)
	case ActionScheduleTransaction:
		kind := "a one-off payment"
		if v, ok := a["recurring"]; ok && v.Kind == intent.KindBool && v.Bool {
			kind = "a recurring payment"
		}
		p.Summary = fmt.Sprintf("Schedule %s of %s to %s from %s%s", kind, money("amount"), recipient, day("date"), subject)
	case ActionUpdateScheduledTransaction:
		var what []string
		if m := money("amount"); m != "" {
			what = append(what, "amount "+m)
		}
		if recipient != "" {
			what = append(what, "to "+recipient)
		}
		if d := day("date"); d != "" {
			what = append(what, "next on "+d)
		}
		if v, ok := a["recurring"]; ok && v.Kind == intent.KindBool && v.Bool {
			what = append(what, "recurring")
		}
		p.Summary = fmt.Sprintf("Change standing order %s: %s", a["id"].String(), strings.Join(what, ", "))
	case ActionUpdateUserInfo:
		p.Summary = profileSummary(a)
	default:
		return approval.Phrase{}, false
	}
	p.Why = why(r)
	return p, true
}

// profileSummary is a change of the user's details in words: each field
// given, with its exact new value.
func profileSummary(a intent.Args) string {
	var what []string
	for _, f := range []string{"first_name", "last_name", "street", "city"} {
		if v, ok := a[f]; ok && v.Kind == intent.KindString && v.Str != "" {
			what = append(what, fmt.Sprintf("%s %q", strings.ToLower(labels[f]), v.Str))
		}
	}
	return "Change your details: " + strings.Join(what, ", ")
}

// why says why a person is asked, one entry per approval guard that asked.
func why(r approval.Request) []string {
	amount := r.Operation.Args["amount"]
	total := func(fact string) (string, string) {
		v := r.Facts[fact]
		return approval.FormatAmount(intent.Amount(v.Int), 2, r.Currency), approval.FormatAmount(intent.Amount(amount.Int+v.Int), 2, r.Currency)
	}
	limit := func(l int64) string { return approval.FormatAmount(intent.Amount(l), 2, r.Currency) }
	window := func(fact, when string, l int64, who string) string {
		paid, sum := total(fact)
		return fmt.Sprintf("With %s already sent to this account %s, this payment brings it to %s: above %s, %s.", paid, when, sum, limit(l), who)
	}
	const one, two = "which one person confirms", "so two people must approve it"
	var out []string
	for _, id := range r.Policies {
		switch id {
		case "confirm-above-1000":
			out = append(out, fmt.Sprintf("The payment is above %s, %s.", limit(100000), one))
		case "four-eyes-above-5000":
			out = append(out, fmt.Sprintf("The payment is above %s, %s.", limit(500000), two))
		case "confirm-above-1000-today":
			out = append(out, window("paid_today", "today", 100000, one))
		case "confirm-above-1000-week":
			out = append(out, window("paid_week", "this week", 100000, one))
		case "confirm-above-1000-mandate":
			out = append(out, window("paid_mandate", "under this mandate", 100000, one))
		case "four-eyes-above-5000-today":
			out = append(out, window("paid_today", "today", 500000, two))
		case "four-eyes-above-5000-week":
			out = append(out, window("paid_week", "this week", 500000, two))
		case "four-eyes-above-5000-mandate":
			out = append(out, window("paid_mandate", "under this mandate", 500000, two))
		case "confirm-first-payment":
			out = append(out, "This account was never paid before, and it was not named for this session.")
		case "confirm-standing-order-change":
			out = append(out, "It changes a standing order's amount, recurrence or date: future payments this session's budget does not cover.")
		case "confirm-new-recurring":
			out = append(out, "It is a recurring payment: it repeats beyond this session's budget.")
		case "confirm-standing-order-redirect":
			out = append(out, "It sends a standing order to an account that was not named for this session.")
		case "confirm-payee-read-by-agent":
			out = append(out, "The assistant read this account (in a bill, a message or your history); it is not on file and you did not name it. Check it against the source you trust.")
		case "confirm-address-read-by-agent":
			out = append(out, "The assistant read this address (in a file or a message); you did not give it. Check it before it replaces yours.")
		}
	}
	return out
}
