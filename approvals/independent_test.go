package approvals_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
)

// TestCallbackRecorderIsNotAnApprover: the person who recorded the
// call-back a bank-detail change relies on (named by a fact in
// Config.NotApprovers) cannot be one of its approvers: the page offers
// them no approve button and refuses a forged form; two other people
// approve it. They may still reject.
func TestCallbackRecorderIsNotAnApprover(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *approvals.Config) { c.NotApprovers = []string{"iban_called_by"} })
	change := func(memo string) approvals.Ticket {
		p := pending(t, 0, memo, intent.LevelFourEyes)
		p.Facts = map[string]intent.Value{"iban_called_by": intent.Str("alice"), "vendor_name": intent.Str("ACME Supplies")}
		return f.request(p)
	}
	tk := change("change")
	alice := f.signedIn("alice")
	if p := alice.do("GET", "/requests/"+tk.ID, nil, nil); !strings.Contains(p.body, `id="not-approver"`) || strings.Contains(p.body, `id="approve"`) {
		t.Fatalf("the recorder is offered to approve: %.3000s", p.body)
	}
	if p := alice.decide(tk.ID, true); p.code != http.StatusConflict || !strings.Contains(p.body, "Not yours to approve") {
		t.Fatalf("the recorder's approval: %d %.300s", p.code, p.body)
	}
	if out := f.outcome(tk.ID); len(out.Votes) != 0 || out.Status != approvals.StatusPending {
		t.Fatalf("after the recorder's refused approval: %+v", out)
	}
	for _, who := range []string{"bob", "carol"} {
		if p := f.signedIn(who).decide(tk.ID, true); p.code != http.StatusSeeOther {
			t.Fatalf("%s: %d %.300s", who, p.code, p.body)
		}
	}
	if out := f.outcome(tk.ID); out.Status != approvals.StatusApproved || len(out.Approvals) != 2 {
		t.Fatalf("two other approvers: %+v", out)
	}
	for _, a := range f.outcome(tk.ID).Approvals {
		if a.Approver == "alice" {
			t.Fatal("the recorder signed an approval")
		}
	}
	// The recorder may reject.
	other := change("other")
	if p := alice.decide(other.ID, false); p.code != http.StatusSeeOther {
		t.Fatalf("the recorder's rejection: %d %.300s", p.code, p.body)
	}
	if out := f.outcome(other.ID); out.Status != approvals.StatusRejected {
		t.Fatalf("after the recorder's rejection: %s", out.Status)
	}
	// Without the setting, or for a fact naming someone else, nothing changes.
	plain := newFixture(t, nil)
	p := pending(t, 0, "change", intent.LevelFourEyes)
	p.Facts = map[string]intent.Value{"iban_called_by": intent.Str("alice")}
	tk2, err := plain.srv.Request(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	if r := plain.signedIn("alice").decide(tk2.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("without NotApprovers: %d", r.code)
	}
}
