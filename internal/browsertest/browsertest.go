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

// Tab opens a tab of browser b with its own cookies (a fresh browser
// context); each step run in it times out after 30s in all.
func Tab(t *testing.T, b context.Context) context.Context {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel2)
	return ctx
}
