// Package browsertest starts headless Chromium for the tests that drive the
// approval page in a real browser. It is imported only by _test.go files,
// and never by core.
package browsertest

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

// ChromiumPath is where Debian's chromium package installs the browser.
const ChromiumPath = "/usr/bin/chromium"

// Start starts headless Chromium for t, with the flags this machine's
// closed network needs and a fresh profile, and stops it when t ends.
// Without Chromium the test is skipped, unless CI=true, where it fails.
func Start(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(ChromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed at %s, and CI=true: .ci/run installs it", ChromiumPath)
		}
		t.Skipf("chromium is not installed at %s: skipping the browser tests (apt-get install -y chromium chromium-driver)", ChromiumPath)
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(ChromiumPath),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1100, 1300),
	)
	t.Cleanup(cancel)
	bctx, bcancel := chromedp.NewContext(actx)
	t.Cleanup(bcancel)
	if err := chromedp.Do(bctx); err != nil {
		t.Fatalf("starting chromium: %v", err)
	}
	return bctx
}

// StepTimeout bounds one step run with Do or Run: a navigation, a click
// and its wait, one evaluation. A test may take many steps; under load the
// steps together may well take longer than any one should.
const StepTimeout = 30 * time.Second

// Tab opens a tab of browser b with its own cookies (a fresh browser
// context), and closes it when t ends. The tab has no overall time limit:
// run its steps with Do and Run, which bound each step by StepTimeout.
func Tab(t *testing.T, b context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	// The tab is created here, on the tab's own context: a step's deadline
	// must never become the tab's.
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("opening a tab: %v", err)
	}
	return ctx
}

// Do runs steps in tab ctx (from Tab), within StepTimeout in all. It
// returns chromedp's error, or context.DeadlineExceeded when the steps
// overran.
func Do(ctx context.Context, steps ...chromedp.Action[chromedp.Void]) error {
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	return chromedp.Do(sctx, steps...)
}

// Run runs the action a (chromedp.Text, chromedp.Evaluate, ...) in tab ctx
// within StepTimeout and returns its value.
func Run[T any](ctx context.Context, a chromedp.Action[T]) (T, error) {
	sctx, cancel := context.WithTimeout(ctx, StepTimeout)
	defer cancel()
	return chromedp.Run(sctx, a)
}
