package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/internal/browsertest"
)

// newIBAN is ACME Supplies' new account in the test: on file nowhere.
const newIBAN = "GB29 NWBK 6016 1331 9268 19"

// recordCallback has p record a call-back for ACME Supplies on the page,
// to phone, confirming newIBAN; it returns the page's error text, or "" when
// it was recorded (and then checks the IBAN shown back).
func (p *person) recordCallback(base, phone string) string {
	p.t.Helper()
	p.open(base + "/requests")
	p.do(chromedp.Click(chromedp.ID("callbacks-link")), chromedp.WaitVisible(chromedp.ID("callback-form")),
		chromedp.SetValue(chromedp.ID("vendor"), "ACME Supplies"),
		chromedp.SetValue(chromedp.ID("iban"), strings.ToLower(newIBAN)),
		chromedp.SetValue(chromedp.ID("phone"), phone),
		chromedp.SetValue(chromedp.ID("note"), "Called back; Jane in accounts read the new IBAN twice."),
		chromedp.Click(chromedp.ID("record")),
		chromedp.WaitVisible(chromedp.CSS("#recorded, #error")),
	)
	if e, err := browsertest.Run(p.ctx, chromedp.Evaluate[string](`(document.querySelector('#error') || {textContent: ''}).textContent`)); err != nil {
		p.t.Fatal(err)
	} else if e != "" {
		return e
	}
	if got := p.text("#recorded-iban"); got != newIBAN {
		p.t.Fatalf("IBAN shown back %q, want %q", got, newIBAN)
	}
	return ""
}

// TestCallbackOnPage: the agent's bank-detail change is refused until a
// person records a call-back to the vendor's phone on file on the approval
// page; it then needs two approvers on the page other than the one who
// called, executes, and payments to the new account need four eyes during
// its cooling-off period.
func TestCallbackOnPage(t *testing.T) {
	t.Parallel()
	b := browsertest.Start(t)
	e := newPageEnv(t, 0, "")
	c := e.start(mcp.ProtocolVersion20251125, nil)
	change := fmt.Sprintf(`{"vendor":"ACME Supplies","iban":%q}`, newIBAN)

	// No call-back: refused, and no request on the page.
	r := call(t, c, "ap_change_vendor_bank", change)
	wantError(t, r, "called the vendor back", "No call-back confirms this number")
	if linkRE.MatchString(text(r)) {
		t.Fatalf("a change without call-back reached the page: %s", text(r))
	}

	// alice records the call-back: first to the number in the email
	// (refused), then to the phone on file.
	alice := newPerson(t, b, "alice")
	if msg := alice.recordCallback(e.base, "+44 20 7946 0000"); !strings.Contains(msg, "not this vendor's phone number on file") {
		t.Fatalf("call-back to another number: %q", msg)
	}
	if msg := alice.recordCallback(e.base, ap.DemoVendorPhone); msg != "" {
		t.Fatalf("call-back to the phone on file refused: %q", msg)
	}

	// Now the change steps up to four eyes on the page.
	l := link(t, call(t, c, "ap_change_vendor_bank", change))
	alice.open(l)
	if got := alice.text("#status"); !strings.Contains(got, "Four eyes") {
		t.Fatalf("status %q", got)
	}
	trusted := alice.text("#trusted")
	if !strings.Contains(trusted, "GB29 NWBK 6016 1331 9268 19") || !strings.Contains(trusted, "registry:callbacks") {
		t.Fatalf("trusted values %q", trusted)
	}
	// Beside the bare vendor id, the approver sees the vendor's name on
	// file, the account replaced and the call-back: who, which number.
	facts := alice.text("#facts")
	for _, want := range []string{"vendor_name", ap.DemoVendor, "current_iban", ap.DemoIBAN,
		"iban_phone_dialled", ap.DemoVendorPhone, "vendor_phone", "iban_called_by", "alice", "iban_called_at"} {
		if !strings.Contains(facts, want) {
			t.Errorf("facts %q lack %q", facts, want)
		}
	}
	if !strings.Contains(alice.text("#facts-hint"), "Facts read from the systems of record when the request was made") {
		t.Error("the facts are not said to come from the systems of record")
	}
	// The call-back's record id on the request is the one the call-back
	// page lists.
	alice.open(e.base + "/callbacks")
	id := alice.text("#recent-callbacks code.record")
	if len(id) != 32 || !strings.Contains(trusted, id) {
		t.Errorf("call-back %q listed; the request names %q", id, trusted)
	}
	// alice recorded the call-back: she is not one of the two approvers.
	alice.open(l)
	if got := alice.text("#not-approver"); !strings.Contains(got, "You may not approve this request") {
		t.Fatalf("the recorder is offered to approve: %q", got)
	}
	newPerson(t, b, "bob").decide(l, true)
	wantError(t, call(t, c, "ap_change_vendor_bank", change)) // one approver is not enough
	newPerson(t, b, "dave").decide(l, true)
	wantOK(t, call(t, c, "ap_change_vendor_bank", change))

	// The ERP shows the new current account, in its cooling-off period.
	wantOK(t, call(t, c, "ap_get_vendor", `{"vendor":"ACME Supplies"}`), newIBAN, `"in_cooling_off":true`)

	// A payment to it needs four eyes.
	pay := fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2291","iban":%q,"amount":"2400.00","currency":"EUR"}`, newIBAN)
	lp := link(t, call(t, c, "ap_pay_bill", pay))
	if lp == l {
		t.Fatal("the payment reused the change's request")
	}
	alice.open(lp)
	if got := alice.text("#status"); !strings.Contains(got, "Four eyes") {
		t.Fatalf("payment's status %q", got)
	}
	if got := alice.text(".reason"); !strings.Contains(got, "cooling-off") {
		t.Fatalf("payment's reason %q", got)
	}
}
