package approvals_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/approvals/passkey/passkeytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// passkeyFixture is a fixture whose page is at http://localhost:port, an
// address that can be a WebAuthn RP ID, with rule.
func passkeyFixture(t *testing.T, rule approvals.PasskeyRule) (*fixture, passkey.RP) {
	t.Helper()
	f := newFixture(t, nil)
	f.base = strings.Replace(f.ts.URL, "127.0.0.1", "localhost", 1)
	f.restart(func(c *approvals.Config) { c.BaseURL, c.Passkeys = f.base, rule })
	rp, err := passkey.RPOf(f.base)
	if err != nil {
		t.Fatal(err)
	}
	return f, rp
}

// challengeOf posts form to path and returns the challenge of the
// WebAuthn options it answers.
func (c *client) challengeOf(path string, form url.Values) []byte {
	c.t.Helper()
	p := c.do("POST", path, form, nil)
	var o struct {
		PublicKey struct {
			Challenge string `json:"challenge"`
		} `json:"publicKey"`
	}
	if p.code != http.StatusOK || json.Unmarshal([]byte(p.body), &o) != nil {
		c.t.Fatalf("POST %s: %d %.300s", path, p.code, p.body)
	}
	ch, err := base64.RawURLEncoding.DecodeString(o.PublicKey.Challenge)
	if err != nil {
		c.t.Fatal(err)
	}
	return ch
}

// register registers auth as c's passkey.
func (c *client) register(auth *passkeytest.Authenticator) page {
	c.t.Helper()
	csrf := csrfOf(c.t, c.do("GET", "/passkeys", nil, nil))
	ch := c.challengeOf("/passkeys/options", url.Values{"csrf": {csrf}})
	return c.do("POST", "/passkeys", url.Values{"csrf": {csrf}, "credential": {string(auth.Register(ch))}}, nil)
}

// approveWith approves request id with auth's answer to the challenge
// the page draws for request challengeFor (id itself, normally).
func (c *client) approveWith(auth *passkeytest.Authenticator, id, challengeFor string) page {
	c.t.Helper()
	p := c.do("GET", "/requests/"+id, nil, nil)
	csrf := csrfOf(c.t, p)
	hash := c.f.outcome(id).Hash.String()
	ch := c.challengeOf("/requests/"+challengeFor+"/passkey", url.Values{"csrf": {csrf}, "operation": {c.f.outcome(challengeFor).Hash.String()}})
	if challengeFor != id {
		c.challengeOf("/requests/"+id+"/passkey", url.Values{"csrf": {csrf}, "operation": {hash}})
	}
	a := auth.Assert(ch)
	return c.do("POST", "/requests/"+id+"/approve", url.Values{"csrf": {csrf}, "operation": {hash}, "assertion": {string(passkeytest.AssertionJSON(a))}}, nil)
}

// TestPasskeyApproval: an approver registers a passkey (recorded in a
// receipt with its public key); from then on their approvals need it,
// carry its assertion over the operation hash and the approval ID into
// the receipt, and an assertion drawn for another operation is refused.
func TestPasskeyApproval(t *testing.T) {
	t.Parallel()
	f, rp := passkeyFixture(t, approvals.PasskeysRegistered)
	alice := f.signedIn("alice")
	auth := passkeytest.New(rp, "alice-phone")
	if p := alice.register(auth); p.code != http.StatusSeeOther || p.loc != "/passkeys?registered=1" {
		t.Fatalf("register: %d %s %.300s", p.code, p.loc, p.body)
	}
	regs := f.log.all("")
	if len(regs) != 1 || regs[0].Action != approvals.ActionRegisterPasskey || regs[0].Facts["passkey.credential"].Str != base64.RawURLEncoding.EncodeToString(auth.ID) ||
		regs[0].Facts["passkey.public_key"].Str != base64.RawURLEncoding.EncodeToString(auth.PublicKey()) || regs[0].Facts["passkey.rp_id"].Str != "localhost" {
		t.Fatalf("registration receipts %+v", regs)
	}
	f.restart(nil) // the passkey is kept in the store, as the sign-in is

	tk := f.request(pending(t, 250000, "invoice 1", intent.LevelConfirm))
	if p := alice.decide(tk.ID, true); p.code != http.StatusForbidden || !strings.Contains(p.body, "needs your passkey") {
		t.Fatalf("approval without the passkey: %d %.300s", p.code, p.body)
	}
	// Bob has no passkey: his passcode still approves (the default rule).
	other := f.request(pending(t, 260000, "invoice 2", intent.LevelConfirm))
	third := f.request(pending(t, 270000, "invoice 3", intent.LevelConfirm))
	if p := alice.approveWith(auth, other.ID, third.ID); p.code != http.StatusForbidden || !strings.Contains(p.body, "another operation") {
		t.Fatalf("assertion for another operation: %d %.300s", p.code, p.body)
	}
	if out := f.outcome(other.ID); out.Status != approvals.StatusPending {
		t.Fatalf("request approved with another operation's assertion: %s", out.Status)
	}
	if p := f.signedIn("bob").decide(other.ID, true); p.code != http.StatusSeeOther {
		t.Fatalf("bob, without a passkey: %d %.300s", p.code, p.body)
	}
	if out := f.outcome(other.ID); len(out.Approvals) != 1 || out.Approvals[0].Channel != receipt.ChannelPage || !out.Approvals[0].Passkey.IsZero() {
		t.Fatalf("bob's approval %+v, want channel page without an assertion", out.Approvals)
	}

	if p := alice.approveWith(auth, tk.ID, tk.ID); p.code != http.StatusSeeOther {
		t.Fatalf("approval with the passkey: %d %.300s", p.code, p.body)
	}
	out := f.outcome(tk.ID)
	if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 {
		t.Fatalf("outcome %+v", out)
	}
	ap := out.Approvals[0]
	if ap.Channel != receipt.ChannelPasskey || passkey.Verify(auth.Credential("alice", t0), out.Hash, ap.ID, ap.Passkey) != nil {
		t.Fatalf("approval %+v: want channel passkey with an assertion over the hash and its ID", ap)
	}
	var ev *receipt.Evidence
	for _, r := range f.log.all("emma") {
		if len(r.Approvals) == 1 && r.Approvals[0].ID == ap.ID {
			ev = &r.Approvals[0]
		}
	}
	if ev == nil || ev.Channel != receipt.ChannelPasskey || !ev.Passkey.Equal(ap.Passkey) {
		t.Fatalf("the vote's receipt evidence %+v, want the assertion", ev)
	}
}

// TestPasskeyRules: PasskeysFourEyes asks a passkey of a four-eyes
// approval (not of a confirmation), PasskeysAll of every approval; an
// address that cannot be an RP ID refuses a rule that needs passkeys.
func TestPasskeyRules(t *testing.T) {
	t.Parallel()
	f, _ := passkeyFixture(t, approvals.PasskeysFourEyes)
	four := f.request(pending(t, 2500000, "big", intent.LevelFourEyes))
	if p := f.signedIn("bob").decide(four.ID, true); p.code != http.StatusForbidden || !strings.Contains(p.body, "needs your passkey") {
		t.Fatalf("four eyes without a passkey: %d %.300s", p.code, p.body)
	}
	confirm := f.request(pending(t, 250000, "small", intent.LevelConfirm))
	if p := f.signedIn("bob").decide(confirm.ID, true); p.code != http.StatusSeeOther {
		t.Fatalf("confirm without a passkey under four_eyes: %d %.300s", p.code, p.body)
	}
	g, _ := passkeyFixture(t, approvals.PasskeysAll)
	one := g.request(pending(t, 250000, "small", intent.LevelConfirm))
	if p := g.signedIn("bob").decide(one.ID, true); p.code != http.StatusForbidden {
		t.Fatalf("confirm without a passkey under all: %d %.300s", p.code, p.body)
	}
	cfg := g.cfg
	cfg.BaseURL = g.ts.URL // 127.0.0.1: not an RP ID
	if _, err := approvals.New(cfg, g.log, g.st); err == nil {
		t.Fatal("New(PasskeysAll at an IP address) gave no error")
	}
	cfg.Passkeys = "sometimes"
	cfg.BaseURL = g.base
	if _, err := approvals.New(cfg, g.log, g.st); err == nil {
		t.Fatal("New(Passkeys \"sometimes\") gave no error")
	}
}

// TestPasskeyRun: a payment run approved with a passkey is approved over
// the run of the lines ticked, the assertion's challenge drawn from that
// run's hash: ticking other lines after the passkey signed is refused, and
// the receipts name the run the assertion is over.
func TestPasskeyRun(t *testing.T) {
	t.Parallel()
	f, rp := passkeyFixture(t, approvals.PasskeysRegistered)
	alice := f.signedIn("alice")
	auth := passkeytest.New(rp, "alice-phone")
	if p := alice.register(auth); p.code != http.StatusSeeOther {
		t.Fatalf("register: %d", p.code)
	}
	run := dayRun(t)
	tk := f.request(run)
	csrf := csrfOf(t, alice.do("GET", "/requests/"+tk.ID, nil, nil))
	form := func(lines ...int) url.Values {
		v := url.Values{"csrf": {csrf}, "operation": {f.outcome(tk.ID).Hash.String()}, "run": {"1"}}
		for _, i := range lines {
			v.Add("line", run.Lines[i].Hash.String())
		}
		return v
	}
	approve := func(signed, posted []int) page {
		t.Helper()
		a := auth.Assert(alice.challengeOf("/requests/"+tk.ID+"/passkey", form(signed...)))
		v := form(posted...)
		v.Set("assertion", string(passkeytest.AssertionJSON(a)))
		return alice.do("POST", "/requests/"+tk.ID+"/approve", v, nil)
	}
	if p := approve([]int{1, 2}, []int{1}); p.code != http.StatusForbidden || !strings.Contains(p.body, "another operation") {
		t.Fatalf("lines changed after the passkey signed: %d %.300s", p.code, p.body)
	}
	if p := approve([]int{1, 2}, []int{1, 2}); p.code != http.StatusSeeOther {
		t.Fatalf("run approved with the passkey: %d %.300s", p.code, p.body)
	}
	out := f.outcome(tk.ID)
	if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 || len(out.Approvals[0].Lines) != 2 || out.Approvals[0].Channel != receipt.ChannelPasskey {
		t.Fatalf("outcome %s %+v", out.Status, out.Approvals)
	}
	all := append(f.log.all(""), f.log.all("emma")...)
	var runs int
	for _, r := range all {
		for _, ev := range r.Approvals {
			if ev.Run == out.Approvals[0].Operation.String() {
				runs++
			}
		}
	}
	if n, problems := passkey.Check(all, nil); runs != 1 || n != 1 || len(problems) != 0 {
		t.Fatalf("receipts: %d naming the run, %d assertions checked, %v", runs, n, problems)
	}
}
