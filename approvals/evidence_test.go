package approvals_test

import (
	"encoding/csv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// TestCallbackEvidence (issue 25): alice records a call-back; the
// bank-detail change that relies on it is requested, approved by bob and
// carol on the page and executed; the call-back evidence lists it, in the
// view and the CSV: who called which number when, who requested (the
// mandate), who approved, executed when, which receipt. An approver of
// another owner sees none of it. The view verifies at most 5 receipts of
// a chain, and 12 later receipts follow the execution: the evidence is
// found all the same, read through the store's index, not from a window
// of the newest receipts.
func TestCallbackEvidence(t *testing.T) {
	t.Parallel()
	f, sk := callbackFixture(t)
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log, MaxReceipts: 5}); err != nil {
		t.Fatal(err)
	}
	alice := f.signedIn("alice")
	if p := alice.postCallback(goodForm()); p.code != http.StatusSeeOther && p.code != http.StatusOK {
		t.Fatalf("record: %d %.300s", p.code, p.body)
	}
	cb := sk.entries()[0]
	op := intent.Operation{Action: "ap.change_vendor_bank", MandateID: "m-emma", Owner: "emma",
		Args: intent.Args{"vendor": intent.Str("v1"), "iban": intent.Str(cb.IBAN)}}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	resolved := []intent.Resolved{{Param: "iban", Sent: cb.IBAN, Value: cb.IBAN, Provenance: intent.Provenance{Source: "registry:callbacks", RecordID: cb.ID}}}
	tk := f.request(approval.Request{Operation: op, Hash: h, Level: intent.LevelFourEyes, Resolved: resolved})
	for _, who := range []string{"bob", "carol"} {
		if p := f.signedIn(who).decide(tk.ID, true); p.code != http.StatusSeeOther {
			t.Fatalf("%s approves: %d", who, p.code)
		}
	}
	if _, err := f.log.Append(t.Context(), receipt.Receipt{Owner: "emma", Time: t0, MandateID: "m-emma", Action: op.Action, Args: op.Args,
		Resolved: resolved, Verdict: intent.Allow, Result: receipt.ResultExecuted, Operation: h.String(),
		Approvals: []receipt.Evidence{{ID: "a1", Approver: "bob", Level: "four_eyes"}, {ID: "a2", Approver: "carol", Level: "four_eyes"}}}); err != nil {
		t.Fatal(err)
	}
	for i := range 12 {
		if _, err := f.log.Append(t.Context(), receipt.Receipt{Owner: "emma", Time: t0.Add(time.Duration(i+1) * time.Minute), MandateID: "m-emma",
			Action: "ap.pay_invoice", Args: intent.Args{"vendor": intent.Str("v1")}, Verdict: intent.Deny, Result: receipt.ResultNotExecuted}); err != nil {
			t.Fatal(err)
		}
	}

	p := alice.do("GET", "/audit/callbacks", nil, nil)
	for _, want := range []string{"ACME Supplies (v1)", "DE89 3704 0044 0532 0130 00", "alice", "&#43;49 30 1234567", "m-emma", "bob, carol", "executed", cb.ID} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the evidence lacks %q", want)
		}
	}
	p = alice.do("GET", "/audit/callbacks.csv", nil, nil)
	rows, err := csv.NewReader(strings.NewReader(p.body)).ReadAll()
	if err != nil || len(rows) != 2 {
		t.Fatalf("CSV: %v, %d rows: %s", err, len(rows), p.body)
	}
	got := map[string]string{}
	for i, k := range rows[0] {
		got[k] = rows[1][i]
	}
	for k, want := range map[string]string{"owner": "emma", "callback": cb.ID, "called_by": "alice", "phone_dialled": "'+49 30 1234567", // as a spreadsheet must not run it

		"mandate": "m-emma", "approvers": "bob, carol", "status": "executed", "operation": h.String(), "new_account": "DE89 3704 0044 0532 0130 00"} {
		if got[k] != want {
			t.Errorf("CSV %s = %q, want %q", k, got[k], want)
		}
	}
	// An approver scoped to another owner sees nothing of it.
	f.restart(func(c *approvals.Config) { c.Approvers[2].Owners = []intent.Owner{"globex"} })
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log}); err != nil {
		t.Fatal(err)
	}
	if p := f.signedIn("carol").do("GET", "/audit/callbacks", nil, nil); strings.Contains(p.body, cb.ID) || !strings.Contains(p.body, `id="none"`) {
		t.Error("an approver of another owner sees the call-back evidence")
	}
}
