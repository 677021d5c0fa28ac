package ap_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// phraseOf is what the approval page reads: the step-up as a front door
// submits it, phrased by the pack.
func phraseOf(t *testing.T, d gateway.Decision) approval.Phrase {
	t.Helper()
	if d.Verdict != intent.StepUp {
		t.Fatalf("not a step-up: %s %s", d.Verdict, message(d))
	}
	p, ok := ap.Phraser().Phrase(approval.Request{Operation: *d.Operation, Hash: d.OperationHash, Level: d.Level,
		Resolved: d.Resolved, Facts: d.Facts, Policies: d.Policies})
	if !ok {
		t.Fatalf("%s not phrased", d.Operation.Action)
	}
	return p
}

func sectionText(p approval.Phrase) string {
	var b strings.Builder
	for _, s := range p.Sections {
		b.WriteString(s.Title + "\n")
		for _, f := range s.Facts {
			b.WriteString(f.Label + ": " + f.Value + "\n")
		}
	}
	return b.String()
}

// TestPhrasePayment: the payment of issue 25 reads as one sentence in the
// approver's words, the threshold as an amount, with no minor units.
func TestPhrasePayment(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	p := phraseOf(t, e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "2400.00")))
	const want = "Pay 2,400.00 EUR to ACME Supplies for bill INV-2291 (BILL/2026/11/0002, due 15 Dec 2026), to DE89 3704 0044 0532 0130 00, the account on file since 3 Mar 2025"
	if p.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", p.Summary, want)
	}
	if !slices.Equal(p.Why, []string{"The payment is above the 1,000.00 EUR confirmation threshold."}) {
		t.Errorf("why %q", p.Why)
	}
	secs := sectionText(p)
	for _, want := range []string{"Due: 15 Dec 2026", "Still owed: 2,400.00 EUR", "On file since: 3 Mar 2025 (637 days ago)", "Bank's country: Germany (DE)"} {
		if !strings.Contains(secs, want) {
			t.Errorf("sections lack %q:\n%s", want, secs)
		}
	}
	if strings.Contains(secs, "240000") {
		t.Errorf("minor units in the sections:\n%s", secs)
	}
	if !slices.Equal(p.Names["vendor"], []string{"ACME Supplies"}) || !slices.Equal(p.Names["bill"], []string{"INV-2291", "BILL/2026/11/0002"}) {
		t.Errorf("names %q", p.Names)
	}
}

// TestPhraseBankChange: a bank-detail change says from which account to
// which, since when the old one is on file, the country of each and the
// call-back; the payment after it says why two people are asked.
func TestPhraseBankChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	called := e.clock.Now().Add(-time.Hour)
	if err := e.callbacks.Record(t.Context(), ap.Callback{ID: "cb", Company: ap.DemoCompany, Vendor: acme.ID, Number: ap.DemoEmailIBAN, Phone: ap.DemoVendorPhone, CalledBy: "dana", At: called}); err != nil {
		t.Fatal(err)
	}
	change := map[string]any{"vendor": "ACME Supplies", "iban": ap.DemoEmailIBAN}
	d := e.decide(tok, ap.ActionChangeVendorBank, change)
	p := phraseOf(t, d)
	const want = "Change ACME Supplies' bank account from DE89 3704 0044 0532 0130 00 (Germany, on file since 3 Mar 2025) to LT12 1000 0111 0100 1000 (Lithuania)"
	if p.Summary != want {
		t.Errorf("summary\n got %q\nwant %q", p.Summary, want)
	}
	if len(p.Why) != 2 || !strings.Contains(p.Why[0], "two people") || !strings.Contains(p.Why[1], "Lithuania, but ACME Supplies is in Germany") {
		t.Errorf("why %q", p.Why)
	}
	secs := sectionText(p)
	for _, want := range []string{"From: DE89 3704 0044 0532 0130 00, Germany (DE)", "On file since: 3 Mar 2025", "To: LT12 1000 0111 0100 1000, Lithuania (LT)",
		"Called by: dana", "Number dialled: +49 30 1234567 (the vendor's number on file)", "When: " + approval.FormatTime(called)} {
		if !strings.Contains(secs, want) {
			t.Errorf("sections lack %q:\n%s", want, secs)
		}
	}
	if d = e.decide(tok, ap.ActionChangeVendorBank, change, e.approve("alice", d), e.approve("bob", d)); !d.Executed {
		t.Fatalf("change: %s", message(d))
	}
	e.clock.Advance(48 * time.Hour)
	p = phraseOf(t, e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00")))
	if len(p.Why) != 2 || !strings.Contains(p.Why[0], "in Lithuania, but ACME Supplies is in Germany") || !strings.Contains(p.Why[1], "bank account changed 2 days ago") {
		t.Errorf("why %q", p.Why)
	}
}

// TestPhraseRunningTotal: a payment asked about because of the vendor's
// total for the day says what was paid already and the total, in money.
func TestPhraseRunningTotal(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	if d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00")); !d.Executed {
		t.Fatalf("first: %s %s", d.Verdict, message(d))
	}
	p := phraseOf(t, e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2291", ap.DemoIBAN, "400.00")))
	if !slices.ContainsFunc(p.Why, func(w string) bool {
		return strings.Contains(w, "With 850.00 EUR already paid to ACME Supplies today, this payment brings it to 1,250.00 EUR: above the 1,000.00 EUR confirmation threshold.")
	}) {
		t.Errorf("why %q", p.Why)
	}
	if secs := sectionText(p); !strings.Contains(secs, "Today: 850.00 EUR") {
		t.Errorf("sections:\n%s", secs)
	}
}

// TestPhraseOtherAction: the pack phrases only its step-up actions.
func TestPhraseOtherAction(t *testing.T) {
	t.Parallel()
	if _, ok := ap.Phraser().Phrase(approval.Request{Operation: intent.Operation{Action: "banking.send_money"}}); ok {
		t.Fatal("phrased another pack's action")
	}
}
