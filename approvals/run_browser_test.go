package approvals_test

import (
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

// payLine is a line of a payment run as the ap pack's DecideRun gives it:
// a bill of a vendor paid to its account on file, at level.
type payLine struct {
	vendor, name, bill, ref, number, due, iban, country, currency string
	amount, paidToday                                             intent.Amount
	level                                                         intent.Level
	policies                                                      []string
}

func (l payLine) request(t *testing.T) approval.Request {
	t.Helper()
	op := intent.Operation{Action: "ap.pay_bill", MandateID: "m-b40fbbee", Owner: "emma",
		Args: intent.Args{"vendor": intent.Str(l.vendor), "bill": intent.Str(l.bill), "iban": intent.Str(l.iban),
			"amount": intent.AmountValue(l.amount, 2), "currency": intent.Str(l.currency)}}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return approval.Request{
		Operation: op, Hash: h, Level: l.level, Policies: l.policies, Currency: l.currency,
		Facts: map[string]intent.Value{
			"vendor_name": intent.Str(l.name), "bill_ref": intent.Str(l.ref), "bill_number": intent.Str(l.number), "bill_due": intent.Str(l.due),
			"amount_company": intent.Int(int64(l.amount)), "confirm_above": intent.Int(100000), "four_eyes_daily_above": intent.Int(500000),
			"bill_residual": intent.Int(int64(l.amount)), "iban_country": intent.Str(l.country), "vendor_country": intent.Str(l.country),
			"bill_currency": intent.Str(l.currency), "company_currency": intent.Str("EUR"), "paid_today": intent.Int(int64(l.paidToday)),
			"bill_already_paid": intent.Bool(false), "iban_age_days": intent.Int(600),
		},
		Resolved: []intent.Resolved{
			{Param: "vendor", Sent: l.name, Value: l.vendor, Provenance: intent.Provenance{Source: "registry:vendors", RecordID: l.vendor}},
			{Param: "bill", Sent: l.ref, Value: l.bill, Provenance: intent.Provenance{Source: "registry:bills", RecordID: l.bill}},
			{Param: "iban", Sent: l.iban, Value: l.iban, Provenance: intent.Provenance{Source: "registry:bank_accounts", RecordID: "a-" + l.vendor,
				At: time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)}},
		},
	}
}

// dayRun is a day's payment run: two bills of ACME Supplies (the first
// needs no one alone, the second is above the threshold) and one of a
// US vendor in USD.
func dayRun(t *testing.T) approval.Request {
	t.Helper()
	lines := []approval.Request{
		payLine{vendor: "1", name: "ACME Supplies", bill: "4", ref: "INV-2290", number: "BILL/2026/11/0001", due: "2026-12-01",
			iban: "DE89370400440532013000", country: "DE", currency: "EUR", amount: 85000, level: intent.LevelAuto}.request(t),
		payLine{vendor: "1", name: "ACME Supplies", bill: "5", ref: "INV-2291", number: "BILL/2026/11/0002", due: "2026-12-15",
			iban: "DE89370400440532013000", country: "DE", currency: "EUR", amount: 240000, paidToday: 85000, level: intent.LevelConfirm,
			policies: []string{"confirm-above-threshold", "confirm-daily-total"}}.request(t),
		payLine{vendor: "7", name: "Initech Inc.", bill: "12", ref: "US-448", number: "BILL/2026/11/0009", due: "2026-12-10",
			iban: "GB29NWBK60161331926819", country: "GB", currency: "USD", amount: 120000, level: intent.LevelConfirm,
			policies: []string{"confirm-above-threshold"}}.request(t),
	}
	return runOf(t, intent.LevelConfirm, lines...)
}

// TestBrowserRunPage (issue 25): a payment run's page, at desktop and
// phone widths, lists the payments per vendor with the totals per
// currency, every line with a labelled box; unticking one and approving
// signs the others, and the one left out is shown rejected; a run's
// rejection is final for all its lines. With -screenshots DIR each state
// is photographed, and with -screenshot the pending run becomes
// docs/approval-run.png.
func TestBrowserRunPage(t *testing.T) {
	b := browsertest.Start(t)
	f := newFixture(t, func(c *approvals.Config) { c.Phrasers = []approval.Phraser{ap.Phraser()} })
	const summary = "Pay a run of 3 payments to 2 payees: 3,250.00 EUR and 1,200.00 USD in all"
	for _, w := range widths {
		t.Run(w.name, func(t *testing.T) {
			run := dayRun(t)
			approve, reject := f.request(run), f.request(run)
			ctx := browsertest.Tab(t, b)
			do(t, ctx, w.set)
			check := func(state string) {
				t.Helper()
				if got := strings.TrimSpace(text(t, ctx, "#summary")); got != summary {
					t.Errorf("%s: leads with %q, want %q", state, got, summary)
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
			do(t, ctx, chromedp.Navigate(approve.URL), chromedp.WaitVisible(chromedp.ID("passcode")),
				chromedp.SendKeys(chromedp.ID("approver"), "alice"), chromedp.SendKeys(chromedp.ID("passcode"), passcodes["alice"]),
				chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("summary")))
			check("run-pending")
			body := text(t, ctx, "main")
			for _, want := range []string{"ACME Supplies · 3,250.00 EUR", "Initech Inc. · 1,200.00 USD",
				"Pay 850.00 EUR to ACME Supplies for bill INV-2290", "as a line of this run it asks no one on its own",
				"as a line of this run it asks one person", "A payment you untick is rejected, finally"} {
				if !strings.Contains(body, want) {
					t.Errorf("the run's page lacks %q", want)
				}
			}
			if w.name == "desktop" && *screenshot {
				writeShot(t, ctx, "../docs/approval-run.png")
			}

			// Untick the first payment, approve the others.
			do(t, ctx, chromedp.Click(chromedp.ID("tick-1")), chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
			out := f.outcome(approve.ID)
			if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 || len(out.Approvals[0].Lines) != 2 ||
				len(out.Votes[0].Left) != 1 || out.Votes[0].Left[0] != run.Lines[0].Hash {
				t.Fatalf("approved with the first unticked: %s, %+v", out.Status, out.Votes)
			}
			check("run-approved-one-left-out")
			if got := text(t, ctx, "#line-1"); !strings.Contains(got, "Left out by alice: rejected") {
				t.Errorf("the line left out reads %q", got)
			}
			if got := text(t, ctx, "#run-totals"); got != "In all, without the 1 left out: 2,400.00 EUR, 1,200.00 USD" {
				t.Errorf("the totals read %q", got)
			}

			do(t, ctx, chromedp.Navigate(reject.URL), chromedp.WaitVisible(chromedp.ID("reject")),
				chromedp.Click(chromedp.ID("reject")), chromedp.WaitVisible(chromedp.ID("confirm-reject")))
			check("run-reject-confirm")
			do(t, ctx, chromedp.SendKeys(chromedp.ID("reason"), "INV-2291 is disputed"),
				chromedp.Click(chromedp.ID("confirm-reject")), chromedp.WaitVisible(chromedp.ID("reject-reason")))
			check("run-rejected")
			if out := f.outcome(reject.ID); out.Status != approvals.StatusRejected || len(out.Approvals) != 0 {
				t.Fatalf("rejected run: %s with %d approvals", out.Status, len(out.Approvals))
			}
		})
	}
}
