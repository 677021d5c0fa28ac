package approvals_test

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/approvals/passkey/passkeytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// removeWith posts the removal of passkey removed, confirmed by auth's
// answer to the challenge the page draws for the removal of drawnFor.
func (c *client) removeWith(auth *passkeytest.Authenticator, removed, drawnFor []byte) page {
	c.t.Helper()
	csrf := csrfOf(c.t, c.do("GET", "/passkeys", nil, nil))
	b64 := base64.RawURLEncoding.EncodeToString
	ch := c.challengeOf("/passkeys/remove/options", url.Values{"csrf": {csrf}, "id": {b64(drawnFor)}})
	return c.do("POST", "/passkeys/remove", url.Values{"csrf": {csrf}, "id": {b64(removed)}, "assertion": {string(passkeytest.AssertionJSON(auth.Assert(ch)))}}, nil)
}

// registerConfirmed registers auth as c's passkey, confirmed by by, one
// they have.
func (c *client) registerConfirmed(auth, by *passkeytest.Authenticator) page {
	c.t.Helper()
	csrf := csrfOf(c.t, c.do("GET", "/passkeys", nil, nil))
	confirm := string(passkeytest.AssertionJSON(by.Assert(c.challengeOf("/passkeys/add/options", url.Values{"csrf": {csrf}}))))
	ch := c.challengeOf("/passkeys/options", url.Values{"csrf": {csrf}, "assertion": {confirm}})
	return c.do("POST", "/passkeys", url.Values{"csrf": {csrf}, "credential": {string(auth.Register(ch))}, "name": {" backup\x00 key \n"}}, nil)
}

// TestPasskeyAddition: an approver who has a passkey adds another only
// with its confirmation: the passcode alone (a thief's) registers none,
// nor does another approver's passkey, nor a registration drawn before
// the first passkey was registered in another sign-in.
func TestPasskeyAddition(t *testing.T) {
	t.Parallel()
	f, rp := passkeyFixture(t, approvals.PasskeysRegistered)
	ctx := context.Background()
	alice, thief := f.signedIn("alice"), f.signedIn("alice")
	phone, key, stolen := passkeytest.New(rp, "alice-phone"), passkeytest.New(rp, "alice-key"), passkeytest.New(rp, "thief")
	csrf := csrfOf(t, thief.do("GET", "/passkeys", nil, nil))
	early := thief.challengeOf("/passkeys/options", url.Values{"csrf": {csrf}})
	if p := alice.register(phone); p.code != http.StatusSeeOther {
		t.Fatalf("register the phone: %d %.300s", p.code, p.body)
	}
	if p := thief.do("POST", "/passkeys", url.Values{"csrf": {csrf}, "credential": {string(stolen.Register(early))}}, nil); p.code != http.StatusForbidden || !strings.Contains(p.body, "passcode alone does not add one") {
		t.Fatalf("registration drawn before the phone's, finished after: %d %.300s", p.code, p.body)
	}
	if p := thief.do("POST", "/passkeys/options", url.Values{"csrf": {csrf}}, nil); p.code != http.StatusForbidden {
		t.Fatalf("registration options without confirmation: %d %.300s", p.code, p.body)
	}
	bob := f.signedIn("bob")
	bobKey := passkeytest.New(rp, "bob-key")
	if p := bob.register(bobKey); p.code != http.StatusSeeOther {
		t.Fatalf("register bob: %d", p.code)
	}
	ch := thief.challengeOf("/passkeys/add/options", url.Values{"csrf": {csrf}})
	bobs := string(passkeytest.AssertionJSON(bobKey.Assert(ch)))
	if p := thief.do("POST", "/passkeys/options", url.Values{"csrf": {csrf}, "assertion": {bobs}}, nil); p.code != http.StatusForbidden {
		t.Fatalf("registration confirmed by bob's passkey: %d %.300s", p.code, p.body)
	}
	if creds, err := approvals.Passkeys(ctx, f.st, "alice"); err != nil || len(creds) != 1 {
		t.Fatalf("alice's passkeys after refused additions: %d, %v; want the phone alone", len(creds), err)
	}
	if p := alice.registerConfirmed(key, phone); p.code != http.StatusSeeOther {
		t.Fatalf("register the key, confirmed by the phone: %d %.300s", p.code, p.body)
	}
	if creds, err := approvals.Passkeys(ctx, f.st, "alice"); err != nil || len(creds) != 2 {
		t.Fatalf("alice's passkeys: %d, %v; want 2", len(creds), err)
	}
}

// TestPasskeyRemoval: an approver removes a passkey on the page only with
// a passkey of theirs confirming it (the one removed or another), never
// with the passcode alone; the removal is recorded in a receipt naming
// who, which credential, when and the confirming passkey; the removed
// passkey no longer approves and `receipts verify` refuses an assertion
// made with it after the receipt; once no passkey remains, the default
// rule lets the passcode approve again.
func TestPasskeyRemoval(t *testing.T) {
	t.Parallel()
	f, rp := passkeyFixture(t, approvals.PasskeysRegistered)
	ctx := context.Background()
	alice := f.signedIn("alice")
	phone, key := passkeytest.New(rp, "alice-phone"), passkeytest.New(rp, "alice-key")
	if p := alice.register(phone); p.code != http.StatusSeeOther {
		t.Fatalf("register the phone: %d %.300s", p.code, p.body)
	}
	if p := alice.registerConfirmed(key, phone); p.code != http.StatusSeeOther {
		t.Fatalf("register the key: %d %.300s", p.code, p.body)
	}
	p := alice.do("GET", "/passkeys", nil, nil)
	if strings.Count(p.body, `class="passkey-remove"`) != 2 || !strings.Contains(p.body, "your passcode alone does not remove one") {
		t.Fatalf("passkeys page lists no removal forms: %.2000s", p.body)
	}
	before := f.request(pending(t, 250000, "invoice 1", intent.LevelConfirm))
	if p := alice.approveWith(phone, before.ID, before.ID); p.code != http.StatusSeeOther {
		t.Fatalf("approval with the phone: %d %.300s", p.code, p.body)
	}
	p = alice.do("GET", "/passkeys", nil, nil)
	if !strings.Contains(p.body, "<strong>backup key</strong>") || !strings.Contains(p.body, "last used "+f.clock.Now().UTC().Format("2006-01-02 15:04 UTC")) || !strings.Contains(p.body, "last used never") {
		t.Fatalf("passkeys page does not show the key's name and the phone's last use: %.3000s", p.body)
	}
	if regs := f.log.all(""); len(regs) != 2 || regs[1].Facts["passkey.name"].Str != "backup key" {
		t.Fatalf("registration receipts %+v, want the key's name in the second", regs)
	}
	kept := func() int {
		t.Helper()
		creds, err := approvals.Passkeys(ctx, f.st, "alice")
		if err != nil {
			t.Fatal(err)
		}
		return len(creds)
	}

	// The passcode alone, a confirmation drawn for another passkey, and
	// bob's passkey remove nothing.
	csrf := csrfOf(t, alice.do("GET", "/passkeys", nil, nil))
	if p := alice.do("POST", "/passkeys/remove", url.Values{"csrf": {csrf}, "id": {base64.RawURLEncoding.EncodeToString(phone.ID)}}, nil); p.code != http.StatusForbidden || !strings.Contains(p.body, "ask an operator") {
		t.Fatalf("removal with the passcode alone: %d %.300s", p.code, p.body)
	}
	if p := alice.removeWith(key, phone.ID, key.ID); p.code != http.StatusBadRequest {
		t.Fatalf("removal confirmed for another passkey: %d %.300s", p.code, p.body)
	}
	bob := f.signedIn("bob")
	bobKey := passkeytest.New(rp, "bob-key")
	if p := bob.register(bobKey); p.code != http.StatusSeeOther {
		t.Fatalf("register bob: %d", p.code)
	}
	if p := alice.removeWith(bobKey, phone.ID, phone.ID); p.code != http.StatusForbidden {
		t.Fatalf("removal confirmed by bob's passkey: %d %.300s", p.code, p.body)
	}
	if n := kept(); n != 2 {
		t.Fatalf("%d passkeys kept after refused removals, want 2", n)
	}

	// The phone is lost: the key confirms its removal.
	f.clock.Advance(time.Minute)
	removedAt := f.clock.Now().UTC()
	if p := alice.removeWith(key, phone.ID, phone.ID); p.code != http.StatusSeeOther || p.loc != "/passkeys?removed=1" {
		t.Fatalf("removal confirmed by the key: %d %s %.300s", p.code, p.loc, p.body)
	}
	if n := kept(); n != 1 {
		t.Fatalf("%d passkeys kept after the removal, want 1", n)
	}
	var rev *receipt.Receipt
	for _, r := range f.log.all("") {
		if r.Action == passkey.ActionRevoke {
			rev = &r
		}
	}
	b64 := base64.RawURLEncoding.EncodeToString
	if rev == nil || !rev.Time.Equal(removedAt) || rev.Facts["passkey.approver"].Str != "alice" || rev.Facts["passkey.credential"].Str != b64(phone.ID) ||
		rev.Facts["passkey.revoked_by"].Str != "alice" || rev.Facts["passkey.means"].Str != passkey.MeansPage || rev.Facts["passkey.confirmed_with"].Str != b64(key.ID) {
		t.Fatalf("removal receipt %+v", rev)
	}
	if p := alice.do("POST", "/passkeys/remove/options", url.Values{"csrf": {csrf}, "id": {b64(phone.ID)}}, nil); p.code != http.StatusNotFound {
		t.Fatalf("second removal of the phone: %d %.300s", p.code, p.body)
	}

	// The phone no longer approves; the passcode alone neither, while the
	// key remains.
	after := f.request(pending(t, 260000, "invoice 2", intent.LevelConfirm))
	if p := alice.approveWith(phone, after.ID, after.ID); p.code != http.StatusForbidden {
		t.Fatalf("approval with the removed phone: %d %.300s", p.code, p.body)
	}
	if p := alice.decide(after.ID, true); p.code != http.StatusForbidden || !strings.Contains(p.body, "needs your passkey") {
		t.Fatalf("approval with the passcode while the key remains: %d %.300s", p.code, p.body)
	}
	if out := f.outcome(after.ID); out.Status != approvals.StatusPending {
		t.Fatalf("request %s after refused approvals", out.Status)
	}

	// The receipts: the phone's approval before its removal verifies; one
	// made with it afterwards (as a cloned phone would) does not.
	all := append(f.log.all(""), f.log.all("emma")...)
	if n, ps := passkey.Check(all, nil); n != 1 || len(ps) != 0 {
		t.Fatalf("Check(receipts) = %d, %v; want the phone's earlier approval to verify", n, ps)
	}
	op := f.outcome(after.ID).Hash
	forged := receipt.Receipt{Owner: "emma", Time: removedAt.Add(time.Minute), Action: "ap.pay_bill", Verdict: intent.Allow, Result: receipt.ResultExecuted, Operation: op.String(),
		Approvals: []receipt.Evidence{{ID: "a-late", Approver: "alice", Level: "confirm", Channel: receipt.ChannelPasskey, IssuedAt: removedAt.Add(time.Minute), Passkey: phone.Assert(passkey.Challenge(op, "a-late"))}}}
	if _, ps := passkey.Check(append(all, forged), nil); len(ps) != 1 || !errors.Is(ps[0].Err, passkey.ErrRevoked) {
		t.Fatalf("Check(assertion after the removal) = %v; want it refused as revoked", ps)
	}

	// The key removes itself; with no passkey left, the default rule lets
	// the passcode approve again.
	if p := alice.removeWith(key, key.ID, key.ID); p.code != http.StatusSeeOther {
		t.Fatalf("the key removing itself: %d %.300s", p.code, p.body)
	}
	if p := alice.do("GET", "/passkeys?removed=1", nil, nil); !strings.Contains(p.body, "You have no passkey yet") || !strings.Contains(p.body, "no longer approves") {
		t.Fatalf("passkeys page after removing both: %.1500s", p.body)
	}
	if p := alice.decide(after.ID, true); p.code != http.StatusSeeOther {
		t.Fatalf("passcode approval with no passkey left: %d %.300s", p.code, p.body)
	}
	if out := f.outcome(after.ID); out.Status != approvals.StatusApproved || out.Approvals[0].Channel != receipt.ChannelPage {
		t.Fatalf("outcome %s %+v, want approved on channel page", out.Status, out.Approvals)
	}
}

// TestPasskeyRemovalUnderRuleAll: with Config.Passkeys "all", removing
// an approver's last passkey leaves them unable to approve until they
// register another.
func TestPasskeyRemovalUnderRuleAll(t *testing.T) {
	t.Parallel()
	f, rp := passkeyFixture(t, approvals.PasskeysAll)
	alice := f.signedIn("alice")
	phone := passkeytest.New(rp, "alice-phone")
	if p := alice.register(phone); p.code != http.StatusSeeOther {
		t.Fatalf("register: %d", p.code)
	}
	if p := alice.removeWith(phone, phone.ID, phone.ID); p.code != http.StatusSeeOther {
		t.Fatalf("removal: %d %.300s", p.code, p.body)
	}
	tk := f.request(pending(t, 250000, "invoice 1", intent.LevelConfirm))
	if p := alice.decide(tk.ID, true); p.code != http.StatusForbidden || !strings.Contains(p.body, "needs your passkey") {
		t.Fatalf("passcode approval under rule all, no passkey left: %d %.300s", p.code, p.body)
	}
}

// TestRevokePasskeyByOperator: an operator's revocation (RevokePasskey,
// as `intentplane approvals passkeys revoke` calls it on the page's store)
// takes effect on the running page: the revoked passkey no longer
// approves and, none left, the default rule lets the passcode approve.
// Revoking a passkey the approver does not have records nothing.
func TestRevokePasskeyByOperator(t *testing.T) {
	t.Parallel()
	f, rp := passkeyFixture(t, approvals.PasskeysRegistered)
	ctx := context.Background()
	alice := f.signedIn("alice")
	phone := passkeytest.New(rp, "alice-phone")
	if p := alice.register(phone); p.code != http.StatusSeeOther {
		t.Fatalf("register: %d", p.code)
	}
	err := approvals.RevokePasskey(ctx, f.st, f.log, passkey.Revocation{Approver: "alice", ID: []byte("none"), At: f.clock.Now(), By: "ops", Means: passkey.MeansOperator})
	if !errors.Is(err, approvals.ErrNoPasskey) || len(f.log.all("")) != 1 {
		t.Fatalf("RevokePasskey(unknown) = %v, %d receipts; want ErrNoPasskey and the registration's alone", err, len(f.log.all("")))
	}
	tk := f.request(pending(t, 250000, "invoice 1", intent.LevelConfirm))
	if p := alice.decide(tk.ID, true); p.code != http.StatusForbidden {
		t.Fatalf("passcode approval with a passkey registered: %d", p.code)
	}
	if err := approvals.RevokePasskey(ctx, f.st, f.log, passkey.Revocation{Approver: "alice", ID: phone.ID, At: f.clock.Now(), By: "ops", Means: passkey.MeansOperator}); err != nil {
		t.Fatal(err)
	}
	csrf := csrfOf(t, alice.do("GET", "/requests/"+tk.ID, nil, nil))
	if p := alice.do("POST", "/requests/"+tk.ID+"/passkey", url.Values{"csrf": {csrf}, "operation": {f.outcome(tk.ID).Hash.String()}}, nil); p.code != http.StatusConflict {
		t.Fatalf("passkey approval after the revocation: %d %.300s; want no passkey to ask", p.code, p.body)
	}
	if p := alice.decide(tk.ID, true); p.code != http.StatusSeeOther {
		t.Fatalf("passcode approval after the revocation: %d %.300s", p.code, p.body)
	}
}
