package approvals_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/internal/browsertest"
)

var shotsDir = flag.String("screenshots", "", "write a screenshot of each state of the approval page, at desktop and phone widths, to this directory")

// A width the page is read at: a desktop browser, and a phone 390 CSS
// pixels wide (an iPhone 12 to 15) with mobile emulation, so that the
// page's viewport meta applies.
type width struct {
	name string
	set  chromedp.Action[chromedp.Void]
}

var widths = []width{
	{"desktop", chromedp.EmulateViewport(1100, 1300)},
	{"phone", chromedp.EmulateViewport(390, 844, chromedp.EmulateScale(2), chromedp.EmulateMobile)},
}

// acmeFacts are the facts the ap pack gives for issue 25's payment of
// ACME Supplies' bill INV-2291 (ap.TestPhrasePayment decides it).
func acmeFacts() map[string]intent.Value {
	return map[string]intent.Value{
		"amount_company": intent.Int(240000), "bill_already_paid": intent.Bool(false), "bill_credit": intent.Int(0),
		"bill_credit_notes": intent.Str(""), "bill_currency": intent.Str("EUR"), "bill_currency_supported": intent.Bool(true),
		"bill_due": intent.Str("2026-12-15"), "bill_duplicate_settled": intent.Bool(false), "bill_duplicates": intent.Int(0),
		"bill_net_due": intent.Int(240000), "bill_number": intent.Str("BILL/2026/11/0002"), "bill_ref": intent.Str("INV-2291"),
		"bill_residual": intent.Int(240000), "bill_state": intent.Str("posted"), "bill_total": intent.Int(240000),
		"bill_vendor": intent.Str("1"), "budget_currency": intent.Str("EUR"), "company_currency": intent.Str("EUR"),
		"confirm_above": intent.Int(100000), "duplicate_of": intent.Str(""), "four_eyes_daily_above": intent.Int(500000),
		"iban_active": intent.Bool(true), "iban_age_days": intent.Int(637), "iban_cooling_off": intent.Bool(false),
		"iban_country": intent.Str("DE"), "iban_current": intent.Bool(true), "iban_trusted": intent.Bool(true),
		"iban_vendor": intent.Str("1"), "max_amount": intent.Int(1000000), "paid_bill": intent.Int(0), "paid_today": intent.Int(0),
		"paid_week": intent.Int(0), "paid_mandate": intent.Int(0), "rate": intent.Str(""), "vendor_active": intent.Bool(true),
		"vendor_country": intent.Str("DE"), "vendor_first_payment": intent.Bool(false), "vendor_name": intent.Str("ACME Supplies"),
	}
}

// acmePayment is issue 25's payment as the ap pack's step-up submits it.
func acmePayment(t *testing.T) approval.Request {
	t.Helper()
	p := acmeRequest(t, "ACME Supplies")
	p.Facts = acmeFacts()
	return p
}

// acmeChange is a bank-detail change of ACME Supplies to a Lithuanian
// account, confirmed by dana's call-back, as the ap pack submits it.
func acmeChange(t *testing.T) approval.Request {
	t.Helper()
	op := intent.Operation{Action: "ap.change_vendor_bank", MandateID: "m-b40fbbee", Owner: "emma",
		Args: intent.Args{"vendor": intent.Str("1"), "iban": intent.Str("LT121000011101001000")}}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	called := t0.Add(-time.Hour)
	return approval.Request{
		Operation: op, Hash: h, Level: intent.LevelFourEyes, Policies: []string{"four-eyes-bank-change"},
		Reason: "This operation needs the approval of two different people (four eyes) before it can execute: a bank-detail change needs the approval of two people. Nothing was done yet.",
		Facts: map[string]intent.Value{
			"vendor_name": intent.Str("ACME Supplies"), "vendor_phone": intent.Str("+49 30 1234567"), "vendor_country": intent.Str("DE"),
			"current_iban": intent.Str("DE89370400440532013000"), "current_iban_since": intent.Str("2025-03-03"), "current_iban_country": intent.Str("DE"),
			"iban_called_by": intent.Str("dana"), "iban_phone_dialled": intent.Str("+49 30 1234567"), "iban_phone_on_file": intent.Bool(true),
			"iban_called_at": intent.Str(called.Format(time.RFC3339)), "iban_fresh": intent.Bool(true), "iban_vendor": intent.Str("1"),
			"iban_on_other_vendor": intent.Bool(false), "vendor_active": intent.Bool(true),
		},
		Resolved: []intent.Resolved{
			{Param: "vendor", Sent: "ACME Supplies", Value: "1", Provenance: intent.Provenance{Source: "registry:vendors", RecordID: "1"}},
			{Param: "iban", Sent: "LT12 1000 0111 0100 1000", Value: "LT121000011101001000", Provenance: intent.Provenance{Source: "registry:callbacks", RecordID: "cb-7", At: called}},
		},
	}
}

// agentWords are what the page must not show outside Details: text
// written for the agent, codes, minor units.
var agentWords = []string{"minor units", "ap.pay_bill", "ap.change_vendor_bank", "m-b40fbbee", "Nothing was done yet", "approval channel", "agent", "240000", "set unknown"}

// leadJS returns the page's text outside Details and hidden fields.
const leadJS = `(() => {
	const c = document.body.cloneNode(true);
	c.querySelectorAll('details, input[type=hidden]').forEach(e => e.remove());
	return c.textContent;
})()`

// a11yJS lists what a keyboard or screen-reader user would miss: no
// language, not one h1, a field without label, a control without name,
// text with a contrast under 4.5:1 (WCAG AA) against its background.
const a11yJS = `(() => {
	const out = [];
	if (!document.documentElement.lang) out.push('no lang');
	const h1 = document.querySelectorAll('h1').length;
	if (h1 !== 1) out.push(h1 + ' h1');
	for (const el of document.querySelectorAll('input:not([type=hidden]), select, textarea'))
		if (!(el.labels && el.labels.length) && !el.getAttribute('aria-label')) out.push('unlabelled ' + (el.id || el.name));
	for (const el of document.querySelectorAll('button, a, summary'))
		if (!el.textContent.trim() && !el.getAttribute('aria-label')) out.push('nameless ' + el.outerHTML.slice(0, 60));
	const lum = c => {
		const [r, g, b] = c.match(/[\d.]+/g).slice(0, 3).map(Number).map(v => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
		return 0.2126 * r + 0.7152 * g + 0.0722 * b;
	};
	const bg = el => {
		for (let e = el; e; e = e.parentElement) {
			const m = getComputedStyle(e).backgroundColor.match(/[\d.]+/g);
			if (m && (m.length < 4 || Number(m[3]) > 0)) return getComputedStyle(e).backgroundColor;
		}
		return 'rgb(255, 255, 255)';
	};
	for (const el of document.querySelectorAll('body *')) {
		if (el.closest('details:not([open])') && el.tagName !== 'SUMMARY') continue;
		if (![...el.childNodes].some(n => n.nodeType === 3 && n.textContent.trim())) continue;
		if (!el.getBoundingClientRect().width) continue;
		const a = lum(getComputedStyle(el).color), b = lum(bg(el));
		const ratio = (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);
		if (ratio < 4.5) out.push('contrast ' + ratio.toFixed(2) + ' ' + el.tagName + ': ' + el.textContent.trim().slice(0, 40));
	}
	return out;
})()`

// TestBrowserPageStates (issue 25): each state of the approval page, read
// at desktop and phone widths, leads with the pack's sentence, shows no
// minor units, codes or text for the agent outside Details, fits 390
// pixels without scrolling sideways, and names every control; with
// -screenshots DIR each state is photographed, and with -screenshot the
// pending payment becomes docs/approval-page.png.
func TestBrowserPageStates(t *testing.T) {
	b := browsertest.Start(t)
	f := newFixture(t, func(c *approvals.Config) { c.Phrasers = []approval.Phraser{ap.Phraser()} })
	const paySentence = "Pay 2,400.00 EUR to ACME Supplies for bill INV-2291 (BILL/2026/11/0002, due 15 Dec 2026), to DE89 3704 0044 0532 0130 00, the account on file since 3 Mar 2025"
	const changeSentence = "Change ACME Supplies' bank account from DE89 3704 0044 0532 0130 00 (Germany, on file since 3 Mar 2025) to LT12 1000 0111 0100 1000 (Lithuania)"

	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			pay, change, rejected := f.request(acmePayment(t)), f.request(acmeChange(t)), f.request(acmePayment(t))
			ctx := browsertest.Tab(t, b)
			do(t, ctx, w.set)
			check := func(state, summary string) {
				t.Helper()
				index := state == "list" // an index of requests, codes and all (issue 25: left)
				if summary != "" {
					if got := strings.TrimSpace(text(t, ctx, "#summary")); got != summary {
						t.Errorf("%s: leads with %q, want %q", state, got, summary)
					}
				}
				top := eval[string](t, ctx, leadJS)
				for _, not := range agentWords {
					if !index && strings.Contains(top, not) {
						t.Errorf("%s: shows %q outside Details", state, not)
					}
				}
				if n := eval[int](t, ctx, `[...document.querySelectorAll('th')].filter(th => !th.closest('details') && th.textContent === 'Kind').length`); n != 0 {
					t.Errorf("%s: a column of kinds outside Details", state)
				}
				if w.name == "phone" {
					if sw, cw := eval[int](t, ctx, `document.documentElement.scrollWidth`), eval[int](t, ctx, `document.documentElement.clientWidth`); sw > cw {
						t.Errorf("%s: scrolls sideways at 390 px (%d > %d)", state, sw, cw)
					}
				}
				if problems := eval[[]string](t, ctx, a11yJS); len(problems) > 0 {
					t.Errorf("%s: %q", state, problems)
				}
				photograph(t, ctx, w.name+"-"+state)
			}

			do(t, ctx, chromedp.Navigate(pay.URL), chromedp.WaitVisible(chromedp.ID("passcode")))
			check("sign-in", "")
			do(t, ctx, chromedp.SendKeys(chromedp.ID("approver"), "alice"), chromedp.SendKeys(chromedp.ID("passcode"), passcodes["alice"]),
				chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("summary")))
			check("payment-pending", paySentence)
			if got := text(t, ctx, "#why"); !strings.Contains(got, "The payment is above the 1,000.00 EUR confirmation threshold.") {
				t.Errorf("why %q", got)
			}
			if w.name == "desktop" && *screenshot {
				writeShot(t, ctx, "../docs/approval-page.png")
			}

			// Details open for the auditor, with the raw facts.
			do(t, ctx, chromedp.Click(chromedp.CSS("#details > summary")), chromedp.WaitVisible(chromedp.ID("facts")))
			if got := text(t, ctx, "#facts"); !strings.Contains(got, "amount_company") {
				t.Errorf("Details' facts %q", got)
			}
			photograph(t, ctx, w.name+"-payment-details")

			// By keyboard alone: Tab to Approve, Enter.
			do(t, ctx, chromedp.Navigate(pay.URL), chromedp.WaitVisible(chromedp.ID("approve")))
			for i := 0; i < 20 && eval[string](t, ctx, `document.activeElement.id`) != "approve"; i++ {
				do(t, ctx, chromedp.KeyEvent("\t"))
			}
			if got := eval[string](t, ctx, `document.activeElement.id`); got != "approve" {
				t.Fatalf("Tab never reached Approve (at %q)", got)
			}
			do(t, ctx, chromedp.KeyEvent("\r"), chromedp.WaitVisible(chromedp.ID("decided")))
			if out := f.outcome(pay.ID); out.Status != approvals.StatusApproved {
				t.Fatalf("approved by keyboard: %s", out.Status)
			}
			check("payment-approved", paySentence)

			do(t, ctx, chromedp.Navigate(rejected.URL), chromedp.WaitVisible(chromedp.ID("reject")),
				chromedp.Click(chromedp.ID("reject")), chromedp.WaitVisible(chromedp.ID("confirm-reject")))
			check("reject-confirm", paySentence)
			if got := text(t, ctx, "#final"); !strings.Contains(got, "A rejection is final.") {
				t.Errorf("reject page %q", got)
			}
			do(t, ctx, chromedp.SendKeys(chromedp.ID("reason"), "not due yet"),
				chromedp.Click(chromedp.ID("confirm-reject")), chromedp.WaitVisible(chromedp.ID("reject-reason")))
			check("payment-rejected", paySentence)

			do(t, ctx, chromedp.Navigate(change.URL), chromedp.WaitVisible(chromedp.ID("summary")))
			check("bank-change-pending", changeSentence)
			body := text(t, ctx, "main")
			for _, want := range []string{"From", "DE89 3704 0044 0532 0130 00, Germany (DE)", "On file since", "3 Mar 2025",
				"LT12 1000 0111 0100 1000, Lithuania (LT)", "Called by", "dana", "+49 30 1234567 (the vendor's number on file)"} {
				if !strings.Contains(body, want) {
					t.Errorf("bank change lacks %q", want)
				}
			}
			do(t, ctx, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
			check("bank-change-one-of-two", changeSentence)

			do(t, ctx, chromedp.Navigate(f.ts.URL+"/requests"), chromedp.WaitVisible(chromedp.CSS("body#page-list")))
			check("list", "")
		})
	}
}

// photograph writes a full-page screenshot of tab ctx as NAME.png to the
// -screenshots directory, when one is given.
func photograph(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *shotsDir == "" {
		return
	}
	writeShot(t, ctx, filepath.Join(*shotsDir, name+".png"))
}

func writeShot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	png, err := browsertest.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, png, 0o644); err != nil {
		t.Fatal(err)
	}
}
