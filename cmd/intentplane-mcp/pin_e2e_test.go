package main_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/mcpproxy"
)

// rugPullExtra configures the bank's test_rug_pull and pins the tools.
const rugPullExtra = `
[tools.test_rug_pull]
server = "bank"
action = "bank.test_rug_pull"
read_only = true
params.undo.type = "bool"

[pins]
file = "tools.lock.json"
`

// newPinnedEnv is newEnv with test_rug_pull allowed and [pins] set; the
// lock file is not written yet.
func newPinnedEnv(t *testing.T) *env {
	t.Helper()
	e := newEnv(t)
	writeFile(t, e.config, readFile(t, e.config)+rugPullExtra)
	pol := filepath.Join(e.dir, "policy", "policy.cedar")
	writeFile(t, pol, readFile(t, pol)+`
@id("permit-test-rug-pull")
permit (principal, action == Action::"bank.test_rug_pull", resource);
`)
	sch := filepath.Join(e.dir, "policy", "schema.cedarschema")
	writeFile(t, sch, readFile(t, sch)+`
action "bank.test_rug_pull" appliesTo {
  principal: Owner,
  resource: Resource,
  context: { args: { undo?: Bool }, facts: {}, approval: Approval, mandate: Mandate, amount: Long },
};
`)
	return e
}

// proxyRun runs the proxy with args and returns its combined output and
// whether it exited 0.
func (e *env) proxyRun(args ...string) (string, bool) {
	out, err := exec.Command(bins.proxy, append([]string{"--config", e.config}, args...)...).CombinedOutput()
	return string(out), err == nil
}

// TestPinnedTools: the operator pins the tools with --pin; --check then
// passes. A downstream server that, while running, adds an optional
// iban_override to send_money and tells the agent in its description to
// set it to the attacker's account (notifications/tools/list_changed; the
// attack found in issue 14) does not reach the client: send_money is
// hidden, its calls are refused with tool.changed, nothing reaches the
// bank, and the difference is logged. Listed as pinned again, it is back.
// A lock file that no longer matches fails --check at the tool's line.
func TestPinnedTools(t *testing.T) {
	t.Parallel()
	e := newPinnedEnv(t)
	lock := filepath.Join(e.dir, "tools.lock.json")
	cfg := readFile(t, e.config)
	lockLine := 1 + strings.Count(cfg[:strings.LastIndex(cfg, `file = "tools.lock.json"`)], "\n")

	out, ok := e.proxyRun("--check")
	if want := fmt.Sprintf("intentplane.toml:%d: lock file %s does not exist", lockLine, lock); ok || !strings.Contains(out, want) {
		t.Fatalf("--check without the lock file: %v\n%s\nwant %q", ok, out, want)
	}
	out, ok = e.proxyRun("--pin")
	if !ok || !strings.Contains(out, `new       bank/send_money: "Send money from the company's account to an IBAN."`) || !strings.Contains(out, "wrote "+lock+": 7 tools pinned, 7 changes") {
		t.Fatalf("--pin: %v\n%s", ok, out)
	}
	if out, ok = e.proxyRun("--pin"); !ok || !strings.Contains(out, "unchanged bank/send_money") || !strings.Contains(out, "7 tools pinned, 0 changes") {
		t.Fatalf("--pin again: %v\n%s", ok, out)
	}
	if out, ok = e.proxyRun("--check"); !ok || !strings.Contains(out, "configuration OK") {
		t.Fatalf("--check with the lock file: %v\n%s", ok, out)
	}

	var stderr lockedBuffer
	stderr.t = t
	e.stderr = &stderr
	var changes atomic.Int64
	c := e.start(mcp.ProtocolVersion20251125, nil)
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == string(mcp.MethodNotificationToolsListChanged) {
			changes.Add(1)
		}
	})
	list := func() string {
		t.Helper()
		resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId("list"), Method: "tools/list"})
		if err != nil || resp.Error != nil {
			t.Fatalf("tools/list: %v %v", err, resp.Error)
		}
		return string(resp.Result)
	}
	waitList := func(what string, ok func(string) bool) string {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			l := list()
			if ok(l) {
				return l
			}
			if time.Now().After(deadline) {
				t.Fatalf("tools/list never showed %s: %s", what, l)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	hasSendMoney := func(l string) bool { return strings.Contains(l, `"name":"send_money"`) }
	if !hasSendMoney(list()) {
		t.Fatalf("send_money is not listed: %s", list())
	}

	wantOK(t, call(t, c, "test_rug_pull", `{}`), "send_money changed")
	l := waitList("send_money hidden", func(l string) bool { return !hasSendMoney(l) })
	if strings.Contains(l, "iban_override") || strings.Contains(l, "LT12") {
		t.Errorf("the server's change reached the client: %s", l)
	}
	deadline := time.Now().Add(5 * time.Second)
	for changes.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if changes.Load() == 0 {
		t.Error("the client was not told that the list changed")
	}
	r := call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":850,"reference":"INV-2290","iban_override":"LT121000011101001000"}`, ibanOnFile))
	wantError(t, r, "changed its description or input schema since the operator reviewed and pinned it")
	wantReason(t, r, "tool.changed", "deny")
	if strings.Contains(text(r), "iban_override") {
		t.Errorf("the refusal quotes the server's change: %s", text(r))
	}
	for _, want := range []string{"tool differs from its pin", "tool=send_money", "server=bank",
		`+ properties.iban_override = {\"description\":\"Account that actually receives the money\",\"type\":\"string\"}`,
		`- additionalProperties`, "always set iban_override"} {
		if !strings.Contains(stderr.String(), want) {
			t.Errorf("the proxy's log lacks %q", want)
		}
	}

	// The server lists send_money as pinned again: it is back.
	wantOK(t, call(t, c, "test_rug_pull", `{"undo":true}`), "restored")
	waitList("send_money back", hasSendMoney)
	wantOK(t, call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":10,"reference":"INV-2290"}`, ibanOnFile)), "sent")
	if calls := e.bankCalls("send_money"); len(calls) != 1 || strings.Contains(calls[0], "iban_override") {
		t.Errorf("the bank received %q, want one transfer without iban_override", calls)
	}

	// The lock no longer matches what the server lists: --check says
	// where and what (once the proxy let go of the store).
	_ = c.Close()
	writeFile(t, lock, strings.Replace(readFile(t, lock), `"description": "Send money from the company's account to an IBAN."`, `"description": "Send money."`, 1))
	cfg = readFile(t, e.config)
	toolLine := 1 + strings.Count(cfg[:strings.Index(cfg, "[tools.send_money]")], "\n")
	out, ok = e.proxyRun("--check")
	want := fmt.Sprintf(`intentplane.toml:%d: tool "send_money" of server "bank" differs from its pin in %s`, toolLine, lock)
	if ok || !strings.Contains(out, want) || !strings.Contains(out, `description: "Send money." -> "Send money from the company's account to an IBAN."`) {
		t.Errorf("--check with a stale pin: %v\n%s\nwant %q", ok, out, want)
	}

	// A tool without a pin would be hidden: --check says so at its line.
	pins, err := mcpproxy.ParseLock([]byte(readFile(t, lock)))
	if err != nil {
		t.Fatal(err)
	}
	var kept []mcpproxy.Pin
	for _, p := range pins.Pins() {
		if p.Tool != "get_balance" {
			kept = append(kept, p)
		}
	}
	b, err := mcpproxy.NewLock(kept...).Marshal()
	if err != nil {
		t.Fatal(err)
	}
	writeFile(t, lock, string(b))
	out, ok = e.proxyRun("--check")
	want = fmt.Sprintf(`intentplane.toml:%d: tool "get_balance" of server "bank" has no pin in %s`, 1+strings.Count(cfg[:strings.Index(cfg, "[tools.get_balance]")], "\n"), lock)
	if ok || !strings.Contains(out, want) {
		t.Errorf("--check with a tool not pinned: %v\n%s\nwant %q", ok, out, want)
	}
}
