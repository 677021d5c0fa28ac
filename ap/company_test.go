package ap_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// TestCrossCompany: another company's vendor, bill or bank account is
// never resolved, and the refusal is word for word the one for a record
// that does not exist: it leaks neither the record's existence nor its
// data.
func TestCrossCompany(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	other := e.bill(ap.DemoOtherCompany, ap.DemoOtherBill)
	globex := e.vendor(ap.DemoOtherCompany, ap.DemoOtherVendor)
	tests := []struct {
		name           string
		param          string
		foreign, ghost map[string]any
	}{
		{"vendor by name", "vendor",
			pay(ap.DemoOtherVendor, "INV-2290", ap.DemoIBAN, "10.00"),
			pay("Hooli Parts", "INV-2290", ap.DemoIBAN, "10.00")},
		{"vendor by id", "vendor",
			pay(globex.ID, "INV-2290", ap.DemoIBAN, "10.00"),
			pay("999", "INV-2290", ap.DemoIBAN, "10.00")},
		{"bill by reference", "bill",
			pay("ACME Supplies", ap.DemoOtherBill, ap.DemoIBAN, "10.00"),
			pay("ACME Supplies", "INV-7002", ap.DemoIBAN, "10.00")},
		{"bill by id", "bill",
			pay("ACME Supplies", other.ID, ap.DemoIBAN, "10.00"),
			pay("ACME Supplies", "998", ap.DemoIBAN, "10.00")},
		{"bank account", "iban",
			pay("ACME Supplies", "INV-2290", ap.DemoOtherIBAN, "10.00"),
			pay("ACME Supplies", "INV-2290", "BE68539007547034", "10.00")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := e.decide(tok, ap.ActionPayBill, tt.foreign)
			g := e.decide(tok, ap.ActionPayBill, tt.ghost)
			if code(f) != intent.CodeNotTrusted || code(g) != intent.CodeNotTrusted {
				t.Fatalf("codes %s and %s, want %s for both", code(f), code(g), intent.CodeNotTrusted)
			}
			sentF, sentG := tt.foreign[tt.param].(string), tt.ghost[tt.param].(string)
			if diff := cmp.Diff(strings.ReplaceAll(message(g), sentG, "<sent>"), strings.ReplaceAll(message(f), sentF, "<sent>")); diff != "" {
				t.Errorf("refusals differ (-nonexistent, +other company's):\n%s", diff)
			}
			if len(f.Resolved) >= 3 || f.Facts != nil {
				t.Errorf("resolved %+v facts %v for another company's record", f.Resolved, f.Facts)
			}
			for _, leak := range []string{"southwind", "Globex", "BILL/", "990", other.ID} {
				if !strings.Contains(sentF, leak) && strings.Contains(message(f), leak) {
					t.Errorf("refusal leaks %q: %s", leak, message(f))
				}
			}
		})
	}
	// The other company's bill number is also a bill number here: it
	// resolves to this company's own bill, never to the other's.
	d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "BILL/2026/11/0001", ap.DemoIBAN, "850.00"))
	if !d.Executed || d.Operation.Args["bill"] != intent.Str(e.bill(ap.DemoCompany, ap.DemoBill).ID) {
		t.Fatalf("own bill by number: %s %s", d.Verdict, message(d))
	}
	if b := e.bill(ap.DemoOtherCompany, ap.DemoOtherBill); b.Residual != 99000 || len(e.payments(ap.DemoOtherCompany)) != 0 {
		t.Errorf("the other company's bill changed: %+v", b)
	}
	// Reads are scoped too.
	list := e.decide(tok, ap.ActionListOpenBills, map[string]any{})
	if list.Verdict != intent.Allow || strings.Contains(list.Output, "Globex") || strings.Contains(list.Output, "INV-7001") || !strings.Contains(list.Output, "INV-2291") {
		t.Errorf("list_open_bills: %s %s", message(list), list.Output)
	}
	if g := e.decide(tok, ap.ActionGetVendor, map[string]any{"vendor": ap.DemoOtherVendor}); code(g) != intent.CodeNotTrusted {
		t.Errorf("get_vendor of another company's vendor: %s %s", g.Verdict, g.Output)
	}
	if c := e.decide(tok, ap.ActionChangeVendorBank, map[string]any{"vendor": ap.DemoOtherVendor, "iban": ap.DemoOtherIBAN}); code(c) != intent.CodeNotTrusted {
		t.Errorf("bank change of another company's vendor: %s %s", c.Verdict, message(c))
	}
}

// TestReads: the read-only actions show the company's open bills and a
// vendor's current account, and nothing else.
func TestReads(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionListOpenBills, map[string]any{"vendor": "acme supplies"})
	if d.Verdict != intent.Allow {
		t.Fatalf("list: %s", message(d))
	}
	var list struct {
		Bills []struct{ Number, Ref, VendorName, Currency, Total, Residual, Due, PaymentState string }
	}
	if err := json.Unmarshal([]byte(d.Output), &list); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, b := range list.Bills {
		got = append(got, strings.Join([]string{b.Number, b.Ref, b.Currency, b.Total, b.Residual, b.Due}, " "))
	}
	want := []string{"BILL/2026/11/0001 INV-2290 EUR 850.00 850.00 2026-12-01", "BILL/2026/11/0002 INV-2291 EUR 2400.00 2400.00 2026-12-15"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("open bills (-want, +got):\n%s", diff)
	}
	if d.Receipt.Output != "2 open bills from 0" {
		t.Errorf("receipt output %q", d.Receipt.Output)
	}
	v := e.decide(tok, ap.ActionGetVendor, map[string]any{"vendor": "ACME Supplies"})
	var vendor struct {
		Name           string
		CurrentAccount struct{ IBAN string } `json:"current_account"`
	}
	if err := json.Unmarshal([]byte(v.Output), &vendor); err != nil || vendor.Name != ap.DemoVendor || vendor.CurrentAccount.IBAN != "DE89 3704 0044 0532 0130 00" {
		t.Errorf("get_vendor: %s %v", v.Output, err)
	}
	if strings.Contains(v.Output, "NL91") {
		t.Errorf("get_vendor shows the archived account: %s", v.Output)
	}
}

// TestBankChange: the "we changed banks" email never changes anything on
// the agent's word. With a call-back to the phone on file and two
// approvers it does; the new account then needs four eyes for every
// payment during the cooling-off period, and the old one is no longer paid.
func TestBankChange(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	change := map[string]any{"vendor": "ACME Supplies", "iban": "LT12 1000 0111 0100 1000"}

	d := e.decide(tok, ap.ActionChangeVendorBank, change)
	if code(d) != intent.CodeNotTrusted || !strings.Contains(message(d), "call-back") {
		t.Fatalf("change without a call-back: %s %s", d.Verdict, message(d))
	}

	record := func(id, vendor, phone string, at time.Time) {
		t.Helper()
		if err := e.callbacks.Record(t.Context(), ap.Callback{ID: id, Company: ap.DemoCompany, Vendor: vendor, Number: ap.DemoEmailIBAN, Phone: phone, CalledBy: "dana", At: at}); err != nil {
			t.Fatal(err)
		}
	}
	// Each step records a call-back more recent than the previous ones: the
	// most recent call-back for a number is the one that counts.
	steps := []struct {
		name          string
		vendor, phone string
		at            time.Time
		verdict       intent.Verdict
		code          intent.Code
		mention       string
		approvers     []string
		wantExecuted  bool
	}{
		{name: "stale call-back", vendor: acme.ID, phone: ap.DemoVendorPhone, at: t0.Add(-4 * 24 * time.Hour),
			verdict: intent.Deny, code: intent.CodePolicyDenied, mention: "too old", approvers: []string{"alice", "bob"}},
		{name: "call-back to the number in the email", vendor: acme.ID, phone: "+44 20 7946 0000", at: t0.Add(-2 * time.Hour),
			verdict: intent.Deny, code: intent.CodePolicyDenied, mention: "phone number on file", approvers: []string{"alice", "bob"}},
		{name: "call-back recorded for another vendor", vendor: "424242", phone: ap.DemoVendorPhone, at: t0.Add(-time.Hour),
			verdict: intent.Deny, code: intent.CodePolicyDenied, mention: "another vendor", approvers: []string{"alice", "bob"}},
		{name: "call-back, no approval", vendor: acme.ID, phone: "0049 30 123 4567", at: t0.Add(-time.Minute),
			verdict: intent.StepUp, code: intent.CodeApprovalRequired, mention: "two people"},
		{name: "call-back, one approver", vendor: acme.ID, phone: "0049 30 123 4567", at: t0.Add(-time.Minute),
			verdict: intent.StepUp, code: intent.CodeApprovalRequired, mention: "two people", approvers: []string{"alice"}},
		{name: "call-back, four eyes", vendor: acme.ID, phone: "0049 30 123 4567", at: t0.Add(-time.Minute),
			verdict: intent.Allow, approvers: []string{"alice", "bob"}, wantExecuted: true},
	}
	for i, s := range steps {
		record(s.name, s.vendor, s.phone, s.at)
		e.clock.Advance(time.Second) // new approvals for each step
		d := e.decide(tok, ap.ActionChangeVendorBank, change)
		if len(s.approvers) > 0 && d.Operation != nil {
			var as []approvalT
			for _, who := range s.approvers {
				as = append(as, e.approve(who, d))
			}
			d = e.decide(tok, ap.ActionChangeVendorBank, change, as...)
		}
		if d.Verdict != s.verdict || code(d) != s.code || d.Executed != s.wantExecuted {
			t.Fatalf("step %d (%s): %s %s %s executed=%v", i, s.name, d.Verdict, code(d), message(d), d.Executed)
		}
		if !strings.Contains(message(d), s.mention) {
			t.Errorf("step %d (%s): message %q does not mention %q", i, s.name, message(d), s.mention)
		}
	}
	all, _ := e.erp.BankAccounts(t.Context(), ap.DemoCompany, erp.BankAccountQuery{Vendor: acme.ID})
	cur, _ := erp.Current(all, acme.ID)
	if cur.Sanitized != ap.DemoEmailIBAN || !cur.SetAt.Equal(e.clock.Now()) {
		t.Fatalf("current account after the change: %+v", cur)
	}

	// Cooling-off: four eyes for every payment to the new account, even
	// below the confirmation threshold; the old account is refused.
	p := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00"))
	if p.Verdict != intent.StepUp || p.Level != intent.LevelFourEyes || !strings.Contains(message(p), "cooling-off") {
		t.Fatalf("payment during cooling-off: %s %s %s", p.Verdict, p.Level, message(p))
	}
	if one := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00"), e.approve("alice", p)); one.Executed || one.Level != intent.LevelFourEyes {
		t.Fatalf("one approver during cooling-off: %s %s", one.Verdict, message(one))
	}
	if old := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00")); code(old) != intent.CodeNotTrusted || !strings.Contains(message(old), "archived") {
		t.Fatalf("payment to the previous account: %s %s", old.Verdict, message(old))
	}
	e.clock.Advance(ap.DefaultCoolingOff - 2*time.Second)
	if still := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00")); still.Level != intent.LevelFourEyes {
		t.Fatalf("one second before the end of cooling-off: %s %s", still.Verdict, message(still))
	}
	e.clock.Advance(2 * time.Second)
	// After it, the new account is at a bank in Lithuania while ACME is in
	// Germany: a person confirms (confirm-bank-country), no more.
	after := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00"))
	if after.Verdict != intent.StepUp || after.Level != intent.LevelConfirm || !strings.Contains(message(after), "another country (LT) than the vendor's country on file (DE)") {
		t.Fatalf("after cooling-off: %s %s %s; want the bank country confirmed", after.Verdict, after.Level, message(after))
	}
	if after = e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00"), e.approve("alice", after)); !after.Executed {
		t.Fatalf("after cooling-off, confirmed: %s %s", after.Verdict, message(after))
	}
	e.verifyReceipts(ap.DemoCompany)
}

// TestBankChangeCoolingOffConfigured: the cooling-off period comes from
// ap.Config.
func TestBankChangeCoolingOffConfigured(t *testing.T) {
	t.Parallel()
	e := newEnvConfig(t, ap.Config{CoolingOff: time.Hour})
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
	if err := e.callbacks.Record(t.Context(), ap.Callback{ID: "cb", Company: ap.DemoCompany, Vendor: acme.ID, Number: ap.DemoEmailIBAN, Phone: ap.DemoVendorPhone, CalledBy: "dana", At: t0}); err != nil {
		t.Fatal(err)
	}
	change := map[string]any{"vendor": "ACME Supplies", "iban": ap.DemoEmailIBAN}
	d := e.decide(tok, ap.ActionChangeVendorBank, change)
	// What the approvers are shown besides the operation: the vendor on
	// file, the account replaced and the call-back.
	for k, want := range map[string]intent.Value{
		"vendor_name": intent.Str(ap.DemoVendor), "vendor_phone": intent.Str(ap.DemoVendorPhone), "current_iban": intent.Str(ap.DemoIBAN),
		"iban_called_by": intent.Str("dana"), "iban_phone_dialled": intent.Str(ap.DemoVendorPhone), "iban_called_at": intent.Str(t0.Format(time.RFC3339)),
	} {
		if d.Facts[k] != want {
			t.Errorf("fact %s = %v, want %v", k, d.Facts[k], want)
		}
	}
	if d = e.decide(tok, ap.ActionChangeVendorBank, change, e.approve("alice", d), e.approve("bob", d)); !d.Executed {
		t.Fatalf("change: %s", message(d))
	}
	if p := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00")); p.Level != intent.LevelFourEyes {
		t.Fatalf("within the hour: %s %s", p.Verdict, message(p))
	}
	e.clock.Advance(time.Hour)
	if p := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoEmailIBAN, "850.00")); p.Level != intent.LevelConfirm {
		t.Fatalf("after the hour: %s %s; want only the bank country's confirmation", p.Verdict, message(p))
	}
}

// TestBankChangeNumberOfOtherVendor: a number already on file for another
// vendor is never given to this one, call-back or not, also when the other
// vendor's account is archived (the property test's oracle found that an
// archived one let the change through with two approvals).
func TestBankChangeNumberOfOtherVendor(t *testing.T) {
	t.Parallel()
	for _, active := range []bool{true, false} {
		e := newEnv(t)
		e.addVendor(ap.DemoCompany, "Initech")
		e.addAccount(ap.DemoCompany, "Initech", ap.DemoEmailIBAN, true, active, 10)
		acme := e.vendor(ap.DemoCompany, ap.DemoVendor)
		if err := e.callbacks.Record(t.Context(), ap.Callback{ID: "cb", Company: ap.DemoCompany, Vendor: acme.ID, Number: ap.DemoEmailIBAN, Phone: ap.DemoVendorPhone, CalledBy: "dana", At: t0}); err != nil {
			t.Fatal(err)
		}
		tok := e.mandate("m-1", ap.DemoCompany, "EUR")
		d := e.decide(tok, ap.ActionChangeVendorBank, map[string]any{"vendor": "ACME Supplies", "iban": ap.DemoEmailIBAN})
		if code(d) != intent.CodePolicyDenied || !strings.Contains(message(d), "already on file for another vendor") {
			t.Fatalf("the other vendor's account active %v: %s %s", active, d.Verdict, message(d))
		}
	}
}
