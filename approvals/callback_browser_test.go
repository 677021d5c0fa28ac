package approvals_test

import (
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/intentplane/intentplane/internal/browsertest"
)

// TestBrowserCallback: a person signs in, follows the link to the
// call-back form, records a call-back, and reads the IBAN back normalized;
// a call-back to another number is refused in the page's words.
func TestBrowserCallback(t *testing.T) {
	b := browsertest.Start(t)
	f, sk := callbackFixture(t)
	ctx := browsertest.Tab(t, b)
	openAs(t, ctx, f.ts.URL+"/requests", "alice")
	do(t, ctx, chromedp.Click(chromedp.ID("callbacks-link")), chromedp.WaitVisible(chromedp.ID("callback-form")))
	if got := eval[string](t, ctx, `document.querySelector('#company').tagName + ':' + document.querySelector('#company').value`); got != "SELECT:emma" {
		t.Fatalf("company field %q", got)
	}
	// The number to call is the one on file, shown before the call.
	do(t, ctx, chromedp.SendKeys(chromedp.ID("lookup-vendor"), "acme"),
		chromedp.Click(chromedp.ID("lookup")), chromedp.WaitVisible(chromedp.ID("phone-on-file")))
	if got := text(t, ctx, "#phone-on-file"); got != "+49 30 1234567" {
		t.Fatalf("phone on file %q", got)
	}
	if got := eval[string](t, ctx, `document.querySelector('#phone').value + '|' + document.querySelector('#vendor').value`); got != "|acme" {
		t.Fatalf("after the look-up, phone|vendor fields %q: the dialled number must be typed", got)
	}
	do(t, ctx, chromedp.Evaluate[chromedp.Void](`document.querySelector('#vendor').value = ''`))

	// The number from the email first: refused, nothing recorded.
	do(t, ctx,
		chromedp.SendKeys(chromedp.ID("vendor"), "acme"),
		chromedp.SendKeys(chromedp.ID("iban"), "de89 3704 0044 0532 0130 00"),
		chromedp.SendKeys(chromedp.ID("phone"), "+44 20 7946 0000"),
		chromedp.Click(chromedp.ID("record")),
		chromedp.WaitVisible(chromedp.ID("error")),
	)
	if got := text(t, ctx, "#error"); !strings.Contains(got, "Not the phone on file") {
		t.Fatalf("error %q", got)
	}
	if len(sk.entries()) != 0 {
		t.Fatal("recorded a call-back to another number")
	}

	// The number on file: recorded, shown back in groups of four.
	do(t, ctx,
		chromedp.SetValue(chromedp.ID("phone"), "+49 30 1234567"),
		chromedp.SendKeys(chromedp.ID("note"), "Jane in accounts <b>read it twice</b>"),
		chromedp.Click(chromedp.ID("record")),
		chromedp.WaitVisible(chromedp.ID("recorded")),
	)
	if got := text(t, ctx, "#recorded-iban"); got != "DE89 3704 0044 0532 0130 00" {
		t.Fatalf("IBAN shown back %q", got)
	}
	if got := text(t, ctx, "#recent-callbacks"); !strings.Contains(got, "alice") || !strings.Contains(got, "<b>read it twice</b>") || !strings.Contains(got, "emma #") {
		t.Fatalf("recent call-backs %q", got)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll('#recent-callbacks b').length`); n != 0 {
		t.Fatal("the note became markup")
	}
	if got := sk.entries(); len(got) != 1 || got[0].CalledBy != "alice" || got[0].IBAN != "DE89370400440532013000" {
		t.Fatalf("recorded %+v", got)
	}
}
