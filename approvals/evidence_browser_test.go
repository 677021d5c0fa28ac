package approvals_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/internal/browsertest"
)

// TestBrowserCallbackEvidence: the call-back evidence, read at desktop and
// phone widths, lists the bank-detail change with who called, names every
// control, and does not scroll sideways at 390 pixels (its table scrolls
// in its own box); with -screenshots DIR it is photographed.
func TestBrowserCallbackEvidence(t *testing.T) {
	b := browsertest.Start(t)
	f, sk := callbackFixture(t)
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log}); err != nil {
		t.Fatal(err)
	}
	if p := f.signedIn("alice").postCallback(goodForm()); p.code != http.StatusSeeOther && p.code != http.StatusOK {
		t.Fatalf("record: %d", p.code)
	}
	cb := sk.entries()[0]
	op := intent.Operation{Action: "ap.change_vendor_bank", MandateID: "m-emma", Owner: "emma",
		Args: intent.Args{"vendor": intent.Str("v1"), "iban": intent.Str(cb.IBAN)}}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	f.request(approval.Request{Operation: op, Hash: h, Level: intent.LevelFourEyes,
		Resolved: []intent.Resolved{{Param: "iban", Value: cb.IBAN, Sent: cb.IBAN, Provenance: intent.Provenance{Source: "registry:callbacks", RecordID: cb.ID}}}})
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			ctx := browsertest.Tab(t, b)
			do(t, ctx, w.set, chromedp.Navigate(f.ts.URL+"/audit/callbacks"), chromedp.WaitVisible(chromedp.ID("passcode")),
				chromedp.SendKeys(chromedp.ID("approver"), "alice"), chromedp.SendKeys(chromedp.ID("passcode"), passcodes["alice"]),
				chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("evidence")))
			if got := text(t, ctx, "#evidence"); !strings.Contains(got, "ACME Supplies (v1)") || !strings.Contains(got, "+49 30 1234567") || !strings.Contains(got, "requested") {
				t.Errorf("evidence reads %q", got)
			}
			if w.name == "phone" {
				if sw, cw := eval[int](t, ctx, `document.documentElement.scrollWidth`), eval[int](t, ctx, `document.documentElement.clientWidth`); sw > cw {
					t.Errorf("scrolls sideways at 390 px (%d > %d)", sw, cw)
				}
			}
			if problems := eval[[]string](t, ctx, a11yJS); len(problems) > 0 {
				t.Errorf("%q", problems)
			}
			photograph(t, ctx, w.name+"-callback-evidence")
		})
	}
}
