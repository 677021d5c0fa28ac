package approvals_test

import (
	"context"
	"flag"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/internal/browsertest"
)

var screenshot = flag.Bool("screenshot", false, "write docs/approval-page.png and docs/audit-view.png from the browser tests")

func do(t *testing.T, ctx context.Context, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := browsertest.Do(ctx, steps...); err != nil {
		t.Fatal(err)
	}
}

func text(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	s, err := browsertest.Run(ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		t.Fatalf("text of %s: %v", sel, err)
	}
	return s
}

// textContent returns the text of the first element sel selects, shown or
// not (an element in a closed disclosure is not visible, so chromedp.Text
// would wait for it).
func textContent(t *testing.T, ctx context.Context, sel string) string {
	t.Helper()
	return eval[string](t, ctx, fmt.Sprintf("document.querySelector(%q).textContent", sel))
}

func eval[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := browsertest.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

// waitLoaded waits until the tab shows a page whose query contains query
// and which has loaded; evaluations that fail while the tab navigates are
// tried again, for up to a minute.
func waitLoaded(t *testing.T, ctx context.Context, query string) {
	t.Helper()
	js := fmt.Sprintf("location.search.includes(%q) && document.readyState === 'complete'", query)
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok, err := browsertest.Run(ctx, chromedp.Evaluate[bool](js)); err == nil && ok {
			return
		}
	}
	t.Fatalf("no page with %q loaded", query)
}

// openAs opens url, is sent to the sign-in page, signs in as name and lands
// back on url.
func openAs(t *testing.T, ctx context.Context, url, name string) {
	t.Helper()
	do(t, ctx,
		chromedp.Navigate(url),
		chromedp.WaitVisible(chromedp.ID("passcode")),
		chromedp.SendKeys(chromedp.ID("approver"), name),
		chromedp.SendKeys(chromedp.ID("passcode"), passcodes[name]),
		chromedp.Click(chromedp.ID("signin")),
		chromedp.WaitReady(chromedp.CSS("body#page-request, body#page-list")),
	)
}

func TestBrowser(t *testing.T) {
	b := browsertest.Start(t)
	f := newFixture(t, nil)

	t.Run("log in and approve", func(t *testing.T) {
		tk := f.request(pending(t, 150000, "March rent", intent.LevelConfirm))
		ctx := browsertest.Tab(t, b)
		do(t, ctx, chromedp.Navigate(f.ts.URL+"/requests"), chromedp.WaitVisible(chromedp.ID("passcode")))
		// A wrong passcode first.
		do(t, ctx,
			chromedp.SendKeys(chromedp.ID("approver"), "alice"),
			chromedp.SendKeys(chromedp.ID("passcode"), "not-her-passcode"),
			chromedp.Click(chromedp.ID("signin")),
			chromedp.WaitVisible(chromedp.ID("error")),
		)
		if got := text(t, ctx, "#error"); !strings.Contains(got, "Wrong approver name or passcode") {
			t.Fatalf("error %q", got)
		}
		f.clock.Advance(2 * time.Second) // past the back-off
		openAs(t, ctx, tk.URL, "alice")
		if got := text(t, ctx, "#amount-amount"); got != "1,500.00 EUR" {
			t.Fatalf("amount shown %q", got)
		}
		if got := textContent(t, ctx, "#trusted"); !strings.Contains(got, "registry:beneficiaries") || !strings.Contains(got, "gb 29") {
			t.Fatalf("trusted values %q", got)
		}
		do(t, ctx, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
		if got := text(t, ctx, "#status"); !strings.Contains(got, "Approved") {
			t.Fatalf("status %q", got)
		}
		if out := f.outcome(tk.ID); out.Status != approvals.StatusApproved || len(out.Approvals) != 1 || out.Approvals[0].Approver != "alice" {
			t.Fatalf("outcome %+v", out)
		}
		do(t, ctx, chromedp.Navigate(f.ts.URL+"/requests"), chromedp.WaitVisible(chromedp.ID("recent")))
		if got := text(t, ctx, "#recent"); !strings.Contains(got, "approved") || !strings.Contains(got, "emma #") {
			t.Fatalf("recent decisions %q", got)
		}
	})

	t.Run("reject", func(t *testing.T) {
		tk := f.request(pending(t, 250000, "", intent.LevelConfirm))
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, tk.URL, "bob")
		do(t, ctx, chromedp.Click(chromedp.ID("reject")), chromedp.WaitVisible(chromedp.ID("confirm-reject")))
		if out := f.outcome(tk.ID); len(out.Votes) != 0 {
			t.Fatal("one click on Reject decided")
		}
		// The browser itself refuses an empty reason (required); the
		// reason typed is recorded.
		do(t, ctx, chromedp.Click(chromedp.ID("confirm-reject")))
		if got := eval[string](t, ctx, `document.body.id`); got != "page-reject" {
			t.Fatalf("an empty reason left the confirmation step: %s", got)
		}
		do(t, ctx, chromedp.SendKeys(chromedp.ID("reason"), "wrong account"),
			chromedp.Click(chromedp.ID("confirm-reject")), chromedp.WaitVisible(chromedp.ID("decided")))
		if got := text(t, ctx, "#reject-reason"); !strings.Contains(got, "wrong account") {
			t.Fatalf("reason shown %q", got)
		}
		if out := f.outcome(tk.ID); out.Status != approvals.StatusRejected || len(out.Approvals) != 0 || out.Votes[0].Reason != "wrong account" {
			t.Fatalf("outcome %+v", out)
		}
	})

	t.Run("tampered request", func(t *testing.T) {
		p := pending(t, 1500, "", intent.LevelConfirm)
		_, real := operation(t, 150000, "")
		p.Hash = real
		tk, err := f.srv.Request(context.Background(), p)
		if err == nil {
			t.Fatal("tampered request accepted")
		}
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, tk.URL, "alice")
		do(t, ctx, chromedp.WaitVisible(chromedp.ID("refused")))
		if eval[bool](t, ctx, `document.querySelector('#approve') !== null`) {
			t.Fatal("a tampered request offers an approve button")
		}
		// Forge the form anyway, with a valid token (DevTools can).
		do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			const f = document.createElement('form'); f.method = 'post'; f.action = '/requests/%s/approve';
			for (const [k, v] of [['csrf', document.querySelector('input[name=csrf]').value], ['operation', '%s']]) {
				const i = document.createElement('input'); i.type = 'hidden'; i.name = k; i.value = v; f.appendChild(i);
			}
			document.body.appendChild(f); f.submit();
		})()`, tk.ID, real)), chromedp.WaitVisible(chromedp.CSS("body#page-message")))
		if got := text(t, ctx, "#title"); got != "Refused" {
			t.Fatalf("forged approval of a tampered request: %q", got)
		}
		if out := f.outcome(tk.ID); len(out.Approvals) != 0 {
			t.Fatal("tampered request approved")
		}
	})

	t.Run("expired request", func(t *testing.T) {
		p := pending(t, 160000, "", intent.LevelConfirm)
		p.ExpiresAt = f.clock.Now().Add(time.Minute)
		tk := f.request(p)
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, tk.URL, "alice")
		f.clock.Advance(2 * time.Minute) // the approver was slow
		do(t, ctx, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.CSS("body#page-message")))
		if got := text(t, ctx, "#title"); got != "Expired" {
			t.Fatalf("approving an expired request: %q", got)
		}
		if out := f.outcome(tk.ID); out.Status != approvals.StatusExpired || len(out.Approvals) != 0 {
			t.Fatalf("outcome %+v", out)
		}
	})

	t.Run("replayed approval", func(t *testing.T) {
		tk := f.request(pending(t, 170000, "", intent.LevelConfirm))
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, tk.URL, "alice")
		form := eval[string](t, ctx, `document.querySelector('#approve').form.outerHTML`)
		do(t, ctx, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
		// Post the very same form again.
		do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`(() => {
			document.body.insertAdjacentHTML('beforeend', %q);
			const fs = document.forms; fs[fs.length - 1].submit();
		})()`, form)), chromedp.WaitVisible(chromedp.CSS("body#page-message")))
		if got := text(t, ctx, "#title"); got != "Already decided" {
			t.Fatalf("replayed approval: %q", got)
		}
		if out := f.outcome(tk.ID); len(out.Approvals) != 1 || len(out.Votes) != 1 {
			t.Fatalf("replay added a decision: %+v", out)
		}
	})

	t.Run("cross-site form post", func(t *testing.T) {
		tk := f.request(pending(t, 180000, "", intent.LevelConfirm))
		hash := f.outcome(tk.ID).Hash
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, tk.URL, "alice") // signed in: the cookie exists
		csrf := eval[string](t, ctx, `document.querySelector('input[name=csrf]').value`)
		// Another site, even one that somehow knows the token, posts the
		// approve form from the signed-in browser.
		evil := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<!doctype html><form method="post" action="%s/requests/%s/approve">
<input type="hidden" name="csrf" value="%s"><input type="hidden" name="operation" value="%s"></form>
<script>document.forms[0].submit()</script>`, f.ts.URL, tk.ID, html.EscapeString(csrf), hash)
		}))
		defer evil.Close()
		_, port, _ := net.SplitHostPort(evil.Listener.Addr().String())
		do(t, ctx, chromedp.Navigate("http://localhost:"+port+"/"), chromedp.WaitVisible(chromedp.CSS("body#page-message")))
		if got := text(t, ctx, "#title"); got != "Refused" {
			t.Fatalf("cross-site post: %q", got)
		}
		if out := f.outcome(tk.ID); len(out.Votes) != 0 {
			t.Fatalf("cross-site post decided: %+v", out)
		}
	})

	t.Run("script payload shown inert", func(t *testing.T) {
		payload := `<script>document.title='pwned'</script><img src=x onerror="document.title='pwned'"><b>bold</b>`
		p := pending(t, 190000, payload, intent.LevelConfirm)
		tk := f.request(p)
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, tk.URL, "alice")
		time.Sleep(200 * time.Millisecond) // give any injected handler a chance
		if got := eval[string](t, ctx, `document.title`); got == "pwned" {
			t.Fatal("the payload ran")
		}
		if n := eval[int](t, ctx, `document.scripts.length + document.images.length + document.querySelectorAll('#other-memo b').length`); n != 0 {
			t.Fatalf("the payload became %d elements", n)
		}
		if got := text(t, ctx, "#other-memo"); !strings.Contains(got, payload) {
			t.Fatalf("the payload is not shown literally: %q", got)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		p := apPending(t)
		tk := f.request(p)
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, tk.URL, "bob")
		do(t, ctx, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
		ctx2 := browsertest.Tab(t, b)
		openAs(t, ctx2, tk.URL, "alice")
		// The IBAN in groups of four; the agent's spacing is the same value;
		// names on file next to the ids that execute.
		trusted := textContent(t, ctx2, "#trusted")
		for _, want := range []string{"DE89 3704 0044 0532 0130 00", "ACME Supplies GmbH", "INV-2290"} {
			if !strings.Contains(trusted, want) {
				t.Errorf("trusted values lack %q: %q", want, trusted)
			}
		}
		if iban := eval[string](t, ctx2, `[...document.querySelectorAll('#trusted tbody tr')].find(r => r.querySelector('th').textContent === 'iban').textContent`); strings.Contains(iban, "differs") || !strings.Contains(iban, "same") {
			t.Errorf("a spacing-only difference is shown as differing: %q", iban)
		}
		shoot(t, ctx2, "") // docs/approval-page.png is TestBrowserPageStates'  pending payment
	})
}

// apPending is an accounts-payable payment awaiting four eyes, as the
// screenshot shows it.
func apPending(t *testing.T) approval.Request {
	t.Helper()
	op := intent.Operation{
		Action: "ap.pay_bill", MandateID: "m-acme-2026-11", Owner: "acme-gmbh",
		Args: intent.Args{
			"vendor": intent.Str("V-0042"), "bill": intent.Str("INV-2290"),
			"iban": intent.Str("DE89370400440532013000"), "amount": intent.AmountValue(1250000, 2),
			"memo": intent.Str("Invoice INV-2290, November"),
		},
	}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	at := t0.Add(-200 * 24 * time.Hour)
	return approval.Request{
		Operation: op, Hash: h, Level: intent.LevelFourEyes, Currency: "EUR",
		Reason: "payments above 10,000.00 need two people", Requester: "alice",
		Facts: map[string]intent.Value{"vendor_name": intent.Str("ACME Supplies GmbH"), "bill_ref": intent.Str("INV-2290")},
		Resolved: []intent.Resolved{
			{Param: "vendor", Sent: "ACME Supplies", Value: "V-0042", Provenance: intent.Provenance{Source: "registry:vendors", RecordID: "res.partner/42", Version: "7", At: at}},
			{Param: "bill", Sent: "INV-2290", Value: "INV-2290", Provenance: intent.Provenance{Source: "registry:open_bills", RecordID: "account.move/2290", Version: "3", At: t0.Add(-9 * 24 * time.Hour)}},
			{Param: "iban", Sent: "DE89 3704 0044 0532 0130 00", Value: "DE89370400440532013000", Provenance: intent.Provenance{Source: "registry:vendor_bank_accounts", RecordID: "res.partner.bank/17", Version: "2", At: at}},
		},
	}
}

func TestBrowserAudit(t *testing.T) {
	b := browsertest.Start(t)
	f := auditFixture(t)
	f.log.checkpoint(t, "emma")

	t.Run("scope", func(t *testing.T) {
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, f.ts.URL+"/requests", "alice")
		do(t, ctx, chromedp.Click(chromedp.ID("audit-link")), chromedp.WaitVisible(chromedp.ID("decisions")))
		list := text(t, ctx, "#decisions")
		if !strings.Contains(list, "ACME Supplies GmbH") || strings.Contains(list, "Bob Secret") {
			t.Fatalf("alice's decisions %q", list)
		}
		if got := text(t, ctx, "#chains"); !strings.Contains(got, "anchored by a signed checkpoint at #3") || strings.Contains(got, "bob") {
			t.Fatalf("chains %q", got)
		}
		do(t, ctx, chromedp.Navigate(f.ts.URL+"/audit/decision?owner=bob&seq=1"), chromedp.WaitVisible(chromedp.ID("title")))
		if got := text(t, ctx, "#title"); got != "No such decision" {
			t.Fatalf("bob's decision by id: %q", got)
		}
	})

	t.Run("filter and open", func(t *testing.T) {
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, f.ts.URL+"/requests", "carol")
		do(t, ctx, chromedp.Navigate(f.ts.URL+"/audit"), chromedp.WaitVisible(chromedp.ID("filters")),
			chromedp.SetValue(chromedp.ID("verdict"), "allow"),
			chromedp.SendKeys(chromedp.ID("min"), "10000"),
			chromedp.Click(chromedp.ID("apply")))
		// The old page's list is visible until the filtered one loads:
		// wait for the filtered page first.
		waitLoaded(t, ctx, "min=10000")
		do(t, ctx, chromedp.WaitVisible(chromedp.ID("decisions")))
		if n := eval[int](t, ctx, `document.querySelectorAll('#decisions tbody tr').length`); n != 1 {
			t.Fatalf("%d decisions allowed from 10,000, want 1", n)
		}
		if href := eval[string](t, ctx, `document.querySelector('#export').getAttribute('href')`); href != "/audit.csv?verdict=allow&min=10000" {
			t.Fatalf("export link %q", href)
		}
		do(t, ctx, chromedp.Click(chromedp.CSS("#decisions tbody a")), chromedp.WaitVisible(chromedp.ID("provenance")))
		if got := text(t, ctx, "#provenance"); !strings.Contains(got, "registry:vendor_bank_accounts") || !strings.Contains(got, "DE89 3704 0044 0532 0130 00") {
			t.Fatalf("provenance %q", got)
		}
		if got := text(t, ctx, "#result"); !strings.Contains(got, "executed") {
			t.Fatalf("result %q", got)
		}
	})

	t.Run("screenshot", func(t *testing.T) {
		ctx := browsertest.Tab(t, b)
		openAs(t, ctx, f.ts.URL+"/requests", "carol")
		do(t, ctx, chromedp.Navigate(f.ts.URL+"/audit"), chromedp.WaitVisible(chromedp.ID("decisions")))
		shoot(t, ctx, "../docs/audit-view.png")
	})
}

// shoot takes a full-page screenshot of tab ctx, at most 300 KB, and
// writes it to path with -screenshot (not when path is "").
func shoot(t *testing.T, ctx context.Context, path string) {
	t.Helper()
	// A tab opened while another renders may not be laid out yet on a
	// loaded machine (Chromium then refuses a screenshot "with 0 width"):
	// wait for the body and try again a few times.
	var png []byte
	var err error
	for try := 0; try < 5; try++ {
		if err = browsertest.Do(ctx, chromedp.WaitVisible("body")); err == nil {
			png, err = browsertest.Run(ctx, chromedp.FullScreenshot(100))
		}
		if err == nil || !strings.Contains(err.Error(), "0 width") {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	if err != nil {
		t.Fatal(err)
	}
	if len(png) > 300<<10 {
		t.Fatalf("screenshot is %d bytes, over 300 KB", len(png))
	}
	if *screenshot && path != "" {
		if err := os.WriteFile(path, png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}
