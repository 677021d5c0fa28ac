package approvals_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/webauthn"
	"github.com/chromedp/chromedp"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/internal/browsertest"
)

// virtualAuthenticator gives the tab a platform authenticator (DevTools
// protocol, WebAuthn domain) that verifies its user and is present at
// once, as a phone's fingerprint reader would be.
func virtualAuthenticator(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
	if _, err := cdp.Call(ctx, tg, webauthn.Enable, webauthn.EnableParams{}); err != nil {
		return chromedp.Void{}, err
	}
	_, err := cdp.Call(ctx, tg, webauthn.AddVirtualAuthenticator, webauthn.AddVirtualAuthenticatorParams{Options: &webauthn.VirtualAuthenticatorOptions{
		Protocol: webauthn.AuthenticatorProtocolCtap2, Ctap2version: webauthn.Ctap2versionCtap21, Transport: webauthn.AuthenticatorTransportInternal,
		HasResidentKey: true, HasUserVerification: true, IsUserVerified: true, AutomaticPresenceSimulation: true,
	}})
	return chromedp.Void{}, err
}

// otherOperationJS approves the request of the page's form with an
// assertion the authenticator gave for request other: it asks the page
// for this request's options (so that its ceremony is open), then for
// other's, has the passkey sign other's challenge and posts that.
const otherOperationJS = `(async () => {
	const f = document.getElementById('approve-form');
	const dec = s => Uint8Array.from(atob(s.replace(/-/g, '+').replace(/_/g, '/')), c => c.charCodeAt(0));
	const enc = b => btoa(String.fromCharCode(...new Uint8Array(b))).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
	const options = async url => (await (await fetch(url, {method: 'POST', body: new URLSearchParams(new FormData(f))})).json()).publicKey;
	await options(f.dataset.passkey);
	const pk = await options('/requests/%s/passkey');
	pk.challenge = dec(pk.challenge);
	pk.allowCredentials.forEach(c => c.id = dec(c.id));
	const c = await navigator.credentials.get({publicKey: pk});
	f.elements.assertion.value = JSON.stringify({id: c.id, rawId: enc(c.rawId), type: c.type, response: {
		authenticatorData: enc(c.response.authenticatorData), clientDataJSON: enc(c.response.clientDataJSON), signature: enc(c.response.signature)},
		clientExtensionResults: {}});
	f.submit();
	return true;
})()`

// TestBrowserPasskey (issue 25): in Chromium with a virtual authenticator,
// at desktop and phone widths, an approver registers a passkey and
// approves a payment and a payment run (one line unticked) with it; the
// receipts hold the assertions and verify (chain and passkey); an assertion the passkey gave for another
// operation is refused. With -screenshots DIR each state is photographed.
func TestBrowserPasskey(t *testing.T) {
	b := browsertest.Start(t)
	f, _ := passkeyFixture(t, approvals.PasskeysRegistered)
	f.restart(func(c *approvals.Config) { c.Phrasers = []approval.Phraser{ap.Phraser()} })
	for i, w := range widths {
		who := []string{"alice", "bob"}[i]
		t.Run(w.name, func(t *testing.T) {
			ctx := browsertest.Tab(t, b)
			do(t, ctx, w.set, virtualAuthenticator)
			check := func(state string) {
				t.Helper()
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
			do(t, ctx, chromedp.Navigate(f.base+"/passkeys"), chromedp.WaitVisible(chromedp.ID("passcode")),
				chromedp.SendKeys(chromedp.ID("approver"), who), chromedp.SendKeys(chromedp.ID("passcode"), passcodes[who]),
				chromedp.Click(chromedp.ID("signin")), chromedp.WaitVisible(chromedp.ID("register")))
			check("passkey-none")
			do(t, ctx, chromedp.Click(chromedp.ID("register")), chromedp.WaitVisible(chromedp.ID("registered")))
			check("passkey-registered")
			if got := textContent(t, ctx, "#passkeys"); !strings.Contains(got, "registered") {
				t.Fatalf("passkeys listed: %q", got)
			}

			pay, other := f.request(acmePayment(t)), f.request(acmePayment(t))
			do(t, ctx, chromedp.Navigate(pay.URL), chromedp.WaitVisible(chromedp.ID("passkey-status")))
			check("passkey-approve")
			do(t, ctx, chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
			check("passkey-approved")
			out := f.outcome(pay.ID)
			if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 || out.Approvals[0].Channel != receipt.ChannelPasskey {
				t.Fatalf("approved with the passkey: %s %+v", out.Status, out.Approvals)
			}
			verifyLog(t, f)

			// A payment run: the ticked lines go with the passkey's
			// challenge (the page's script posts the form's boxes).
			run := f.request(dayRun(t))
			do(t, ctx, chromedp.Navigate(run.URL), chromedp.WaitVisible(chromedp.ID("passkey-status")),
				chromedp.Click(chromedp.ID("tick-1")), chromedp.Click(chromedp.ID("approve")), chromedp.WaitVisible(chromedp.ID("decided")))
			check("passkey-run-approved")
			if out := f.outcome(run.ID); out.Status != approvals.StatusApproved || len(out.Approvals) != 1 || len(out.Approvals[0].Lines) != 2 ||
				out.Approvals[0].Channel != receipt.ChannelPasskey {
				t.Fatalf("run approved with the passkey, the first line unticked: %s %+v", out.Status, out.Approvals)
			}
			verifyLog(t, f)

			// An assertion the passkey gave for another operation.
			third := f.request(dayRun(t).Lines[2]) // Initech's bill: another operation
			if third.ID == other.ID || f.outcome(third.ID).Hash == f.outcome(other.ID).Hash {
				t.Fatal("the other operation has the same hash")
			}
			do(t, ctx, chromedp.Navigate(other.URL), chromedp.WaitVisible(chromedp.ID("approve")))
			if _, err := browsertest.Run(ctx, chromedp.Evaluate[bool](fmt.Sprintf(otherOperationJS, third.ID), chromedp.EvalAwaitPromise)); err != nil {
				t.Fatalf("approving with another operation's assertion: %v", err)
			}
			do(t, ctx, chromedp.WaitVisible(chromedp.CSS("body#page-message")))
			check("passkey-other-operation")
			if got := text(t, ctx, "#text"); !strings.Contains(got, "another operation") {
				t.Errorf("refusal reads %q", got)
			}
			if out := f.outcome(other.ID); out.Status != approvals.StatusPending || len(out.Approvals) != 0 {
				t.Fatalf("approved with another operation's assertion: %s", out.Status)
			}

			// The approver removes the passkey, confirming with it.
			f.clock.Advance(time.Minute)
			do(t, ctx, chromedp.Navigate(f.base+"/passkeys"), chromedp.WaitVisible(chromedp.CSS("form.passkey-remove button")))
			check("passkey-remove")
			do(t, ctx, chromedp.Click(chromedp.CSS("form.passkey-remove button")), chromedp.WaitVisible(chromedp.ID("no-passkeys")))
			check("passkey-removed")
			if got := textContent(t, ctx, "#registered"); !strings.Contains(got, "no longer approves") {
				t.Errorf("after the removal the page reads %q", got)
			}
			if creds, err := approvals.Passkeys(context.Background(), f.st, who); err != nil || len(creds) != 0 {
				t.Fatalf("%s's passkeys after the removal: %d, %v", who, len(creds), err)
			}
			verifyLog(t, f)
		})
	}
}

// verifyLog checks f's receipts as `receipts verify` does: every chain
// links, and every passkey assertion verifies under the passkey its
// approver registered before (passkey.Check).
func verifyLog(t *testing.T, f *fixture) {
	t.Helper()
	var all []receipt.Receipt
	for _, o := range []intent.Owner{"", "emma"} {
		all = append(all, f.log.all(o)...)
	}
	var b bytes.Buffer
	if err := receipt.WriteJSONL(&b, all); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(&b, nil); err != nil {
		t.Fatalf("the receipts do not verify: %v", err)
	}
	n, problems := passkey.Check(all, nil)
	if n == 0 || len(problems) > 0 {
		t.Fatalf("passkey.Check() = %d checked, %v", n, problems)
	}
}
