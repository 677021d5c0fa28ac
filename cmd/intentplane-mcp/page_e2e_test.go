// End-to-end tests of the approval page behind intentplane-mcp: the built
// proxy and bank server, an MCP client without elicitation, and a person
// who approves in headless Chromium.
package main_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/embedded"
)

const chromiumPath = "/usr/bin/chromium"

// passcodes of the page approvers. carol may approve only for another
// owner than the session's.
var passcodes = map[string]string{"alice": "alice-passcode-1", "bob": "bob-passcode-22", "carol": "carol-passcode-333"}

// testPolicyFourEyes makes transfers above 5,000.00 need two people.
const testPolicyFourEyes = `
@id("four-eyes-above-5000")
@approval("four_eyes")
@reason("transfers above 5,000.00 need the approval of two people")
forbid (principal, action == Action::"bank.send_money", resource)
when { context.amount > 500000 }
unless { context.approval.four_eyes };
`

var linkRE = regexp.MustCompile(`http://127\.0\.0\.1:\d+/requests/[0-9a-f]{32}`)

// pageEnv is an env whose proxy serves the approval page.
type pageEnv struct {
	*env
	base string
}

// newPageEnv configures the approval page with alice, bob (both for the
// session's owner, northwind) and carol (for globex only), waiting wait
// seconds for a decision; extra is added to the configuration.
func newPageEnv(t *testing.T, wait int, extra string) *pageEnv {
	t.Helper()
	e := newEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	pol := filepath.Join(e.dir, "policy", "policy.cedar")
	writeFile(t, pol, readFile(t, pol)+testPolicyFourEyes)

	cfg := readFile(t, e.config)
	cfg = strings.Replace(cfg, "max_pending = 16\n", fmt.Sprintf("max_pending = 16\nlisten = %q\nwait = %d\nrequest_ttl = \"5m\"\n", addr, wait), 1)
	for _, a := range []struct{ name, owner string }{{"alice", "northwind"}, {"bob", ""}, {"carol", "globex"}} {
		_, priv, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(e.dir, a.name+".key"), mandate.EncodePrivateKey(priv)+"\n")
		h, err := approvals.HashPasscode(passcodes[a.name], approvals.PasscodeParams{LogN: 10}, nil)
		if err != nil {
			t.Fatal(err)
		}
		cfg += fmt.Sprintf("\n[[approvals.approvers]]\nname = %q\npasscode_hash = %q\nkey = %q\n", a.name, h, a.name+".key")
		if a.owner != "" {
			cfg += fmt.Sprintf("owners = [%q]\n", a.owner)
		}
	}
	writeFile(t, e.config, cfg+extra)
	return &pageEnv{env: e, base: "http://" + addr}
}

// browser starts headless Chromium, with the flags of approvals' browser
// tests. Without Chromium the test is skipped, unless CI=true.
func browser(t *testing.T) context.Context {
	t.Helper()
	if _, err := os.Stat(chromiumPath); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("chromium is not installed at %s, and CI=true: .ci/run installs it", chromiumPath)
		}
		t.Skipf("chromium is not installed at %s: skipping the approval page tests (apt-get install -y chromium chromium-driver)", chromiumPath)
	}
	actx, cancel := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromiumPath),
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

// person is one approver in their own browser context (their own cookies).
type person struct {
	t    *testing.T
	ctx  context.Context
	name string
}

func newPerson(t *testing.T, b context.Context, name string) *person {
	t.Helper()
	ctx, cancel := chromedp.NewContext(b, chromedp.WithNewBrowserContext())
	t.Cleanup(cancel)
	ctx, cancel2 := context.WithTimeout(ctx, 30*time.Second)
	t.Cleanup(cancel2)
	return &person{t: t, ctx: ctx, name: name}
}

func (p *person) do(steps ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	if err := chromedp.Do(p.ctx, steps...); err != nil {
		p.t.Fatalf("%s: %v", p.name, err)
	}
}

func (p *person) text(sel string) string {
	p.t.Helper()
	s, err := chromedp.Run(p.ctx, chromedp.Text(chromedp.CSS(sel)))
	if err != nil {
		p.t.Fatalf("%s: text of %s: %v", p.name, sel, err)
	}
	return s
}

// open opens url and signs in when the page asks.
func (p *person) open(url string) {
	p.t.Helper()
	p.do(chromedp.Navigate(url), chromedp.WaitReady(chromedp.CSS("body")))
	login, err := chromedp.Run(p.ctx, chromedp.Evaluate[bool](`document.querySelector('#passcode') !== null`))
	if err != nil {
		p.t.Fatal(err)
	}
	if login {
		p.do(
			chromedp.SendKeys(chromedp.ID("approver"), p.name),
			chromedp.SendKeys(chromedp.ID("passcode"), passcodes[p.name]),
			chromedp.Click(chromedp.ID("signin")),
			chromedp.WaitReady(chromedp.CSS("body#page-request, body#page-list")),
		)
	}
}

// decide opens the request at url and approves (or rejects) it.
func (p *person) decide(url string, approve bool) {
	p.t.Helper()
	p.open(url)
	button := "reject"
	if approve {
		button = "approve"
	}
	p.do(chromedp.Click(chromedp.ID(button)), chromedp.WaitVisible(chromedp.ID("decided")))
}

// pending waits until the page lists a pending request and returns its
// link, as a person who was told "check the approval page" finds it.
func (p *person) pending(base string) string {
	p.t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		p.open(base + "/requests")
		href, err := chromedp.Run(p.ctx, chromedp.Evaluate[string](`(document.querySelector('#pending a') || {href: ''}).href`))
		if err != nil {
			p.t.Fatal(err)
		}
		if href != "" {
			return href
		}
	}
	p.t.Fatal("no request appeared on the approval page")
	return ""
}

func link(t *testing.T, r *mcp.CallToolResult) string {
	t.Helper()
	l := linkRE.FindString(text(r))
	if !r.IsError || l == "" {
		t.Fatalf("want a tool error with the approval link, got %q", text(r))
	}
	return l
}

// TestApprovalPageWaitZero: a client without elicitation gets the link at
// once; a person approves on the page; the client calls again and the
// transfer executes once, with the IBAN on file. A rejection is final for
// its request; an approver for another owner cannot approve.
func TestApprovalPageWaitZero(t *testing.T) {
	t.Parallel()
	b := browser(t)
	e := newPageEnv(t, 0, "")
	c := e.start(mcp.ProtocolVersion20251125, nil)
	args := fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.00","reference":"INV-2291"}`, ibanSpaced)

	r := call(t, c, "send_money", args)
	l := link(t, r)
	wantError(t, r, "1,000.00", "approval page", "call the tool again with exactly the same arguments")
	if !strings.HasPrefix(l, e.base+"/requests/") {
		t.Fatalf("link %s is not on %s", l, e.base)
	}
	// Asking again before anyone decided gives the same link.
	if l2 := link(t, call(t, c, "send_money", args)); l2 != l {
		t.Fatalf("second call got another link %s, want %s", l2, l)
	}
	if got := e.bankCalls("send_money"); len(got) != 0 {
		t.Fatalf("bank received %v before approval", got)
	}

	alice := newPerson(t, b, "alice")
	alice.open(l)
	if got := alice.text("#amount-amount"); got != "2,400.00 EUR" {
		t.Errorf("amount shown %q", got)
	}
	if got := alice.text("#trusted"); !strings.Contains(got, "registry:payees") || !strings.Contains(got, "de89 3704") {
		t.Errorf("trusted values shown %q", got)
	}
	alice.decide(l, true)

	wantOK(t, call(t, c, "send_money", args), "Transfer TX-0001")
	want := `{"amount":2400.00,"recipient_iban":"DE89370400440532013000","reference":"INV-2291"}`
	if got := e.bankCalls("send_money"); len(got) != 1 || got[0] != want {
		t.Fatalf("bank received %v, want [%s]", got, want)
	}
	// Once.
	wantError(t, call(t, c, "send_money", args), "already")
	if got := e.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("bank received %d transfers", len(got))
	}

	// One cent more is another operation, with its own request; bob
	// rejects it.
	more := fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.01","reference":"INV-2291"}`, ibanOnFile)
	l3 := link(t, call(t, c, "send_money", more))
	if l3 == l {
		t.Fatal("one cent more reused the approved request")
	}
	newPerson(t, b, "bob").decide(l3, false)
	wantError(t, call(t, c, "send_money", more), "rejected", "Nothing was done")

	// carol approves only for globex: her approval does not count here.
	other := fmt.Sprintf(`{"recipient_iban":%q,"amount":"1200.00","reference":"INV-2292"}`, ibanOnFile)
	l4 := link(t, call(t, c, "send_money", other))
	newPerson(t, b, "carol").decide(l4, true)
	wantError(t, call(t, c, "send_money", other), "may not approve for this user")
	if got := e.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("bank received %d transfers", len(got))
	}
}

// TestApprovalPageWait: with wait = N the call waits for the decision and
// completes once approved; four eyes takes two distinct page approvers and
// is never asked of the client, even one that can elicit. Receipts of the
// page land in the embedded store's chain, with a signed checkpoint.
func TestApprovalPageWait(t *testing.T) {
	t.Parallel()
	b := browser(t)
	e := newPageEnv(t, 30, "")
	_, ck, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(e.dir, "checkpoint.key"), mandate.EncodePrivateKey(ck)+"\n")
	cfg := strings.Replace(readFile(t, e.config), "[store]\nkind = \"mem\"\n",
		"[store]\nkind = \"embedded\"\npath = \"state.db\"\ncheckpoint_key = \"checkpoint.key\"\ncheckpoint_key_id = \"e2e\"\n", 1)
	if !strings.Contains(cfg, `path = "state.db"`) {
		t.Fatal("no [store] section to replace")
	}
	writeFile(t, e.config, cfg)
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
	c := e.start(mcp.ProtocolVersion20251125, el)

	// 6,000.00 needs four eyes: the client is not asked; the call waits.
	args := fmt.Sprintf(`{"recipient_iban":%q,"amount":6000,"reference":"INV-2293"}`, ibanSpaced)
	done := make(chan *mcp.CallToolResult, 1)
	go func() { done <- callAsync(c, "send_money", args) }()
	alice, bob := newPerson(t, b, "alice"), newPerson(t, b, "bob")
	l := alice.pending(e.base)
	alice.decide(l, true)
	select {
	case r := <-done:
		t.Fatalf("one approval of four eyes ended the call: %q", text(r))
	case <-time.After(300 * time.Millisecond):
	}
	bob.decide(l, true)
	var r *mcp.CallToolResult
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("the call did not complete after the approvals")
	}
	if r == nil {
		t.Fatal("call failed")
	}
	wantOK(t, r, "Transfer TX-0001")
	if el.count() != 0 {
		t.Errorf("the client was asked %d times for four eyes", el.count())
	}
	if got := e.bankCalls("send_money"); len(got) != 1 || !strings.Contains(got[0], `"amount":6000.00`) || !strings.Contains(got[0], ibanOnFile) {
		t.Fatalf("bank received %v", got)
	}

	// The proxy exits when the client goes; the store holds the chain.
	if err := c.Close(); err != nil {
		t.Logf("close: %v", err)
	}
	st, err := embedded.Open(filepath.Join(e.dir, "state.db"), embedded.Options{LockTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	rs, err := st.Receipts(ctx, "northwind", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var msgs []string
	for _, r := range rs {
		msgs = append(msgs, string(r.Decision)+": "+r.Message)
	}
	all := strings.Join(msgs, "\n")
	for _, s := range []string{"Approval requested (four_eyes)", "approved by alice on the page channel (1 of 2", "approved by bob on the page channel (2 of 2", "allow: "} {
		if !strings.Contains(all, s) {
			t.Errorf("chain lacks %q:\n%s", s, all)
		}
	}
	cs, err := st.Checkpoints(ctx, "northwind")
	if err != nil || len(cs) == 0 {
		t.Fatalf("checkpoints %v %v", cs, err)
	}
	last := cs[len(cs)-1]
	if last.Seq != rs[len(rs)-1].Seq || last.KeyID != "e2e" {
		t.Errorf("checkpoint at %d by %q, chain head %d", last.Seq, last.KeyID, rs[len(rs)-1].Seq)
	}
	if err := last.Verify(receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{"e2e": ck.Public().(ed25519.PublicKey)})); err != nil {
		t.Errorf("checkpoint: %v", err)
	}
}

// callAsync calls a tool, returning nil on a transport error.
func callAsync(c *client.Client, tool, args string) *mcp.CallToolResult {
	ctx, cancel := context.WithTimeout(context.Background(), 45*time.Second)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = json.RawMessage(args)
	res, err := c.CallTool(ctx, req)
	if err != nil {
		return nil
	}
	return res
}
