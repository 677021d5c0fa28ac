package banking_test

import (
	"slices"
	"testing"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// TestPhrase: a transfer reads as one sentence in the approver's words,
// and why a person is asked as amounts, not minor units.
func TestPhrase(t *testing.T) {
	t.Parallel()
	r := approval.Request{
		Operation: intent.Operation{Action: banking.ActionSendMoney, Args: intent.Args{
			"recipient": intent.Str("GB29NWBK60161331926819"), "amount": intent.AmountValue(150000, 2),
			"subject": intent.Str("March rent"), "date": intent.Str("2026-12-05"),
		}},
		Currency: "EUR", Policies: []string{"confirm-above-1000", "confirm-first-payment"},
		Facts: map[string]intent.Value{"paid_today": intent.Int(0)},
	}
	p, ok := banking.Phraser().Phrase(r)
	if !ok {
		t.Fatal("send_money not phrased")
	}
	if want := `Send 1,500.00 EUR to GB29 NWBK 6016 1331 9268 19 on 5 Dec 2026, subject "March rent"`; p.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", p.Summary, want)
	}
	if want := []string{"The payment is above 1,000.00 EUR, which one person confirms.",
		"This account was never paid before, and it was not named for this session."}; !slices.Equal(p.Why, want) {
		t.Errorf("why %q", p.Why)
	}
	r.Policies = []string{"four-eyes-above-5000-today"}
	r.Facts["paid_today"] = intent.Int(450000)
	if p, _ := banking.Phraser().Phrase(r); !slices.Equal(p.Why, []string{"With 4,500.00 EUR already sent to this account today, this payment brings it to 6,000.00 EUR: above 5,000.00 EUR, so two people must approve it."}) {
		t.Errorf("why %q", p.Why)
	}
	if _, ok := banking.Phraser().Phrase(approval.Request{Operation: intent.Operation{Action: "ap.pay_bill"}}); ok {
		t.Error("phrased another pack's action")
	}
}
