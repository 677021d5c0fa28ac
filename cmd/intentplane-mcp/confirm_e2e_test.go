package main_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestConfirmOnPageOnly: with confirm = "page" on a tool, a client that
// accepts every confirmation by itself (an agent controlling its client)
// is never asked: the payment waits on the approval page, and executes
// only once a person approves it there.
func TestConfirmOnPageOnly(t *testing.T) {
	t.Parallel()
	e := newPageEnv(t, 0, "")
	cfg := readFile(t, e.config)
	on := strings.Replace(cfg, "[tools.send_money]\n", "[tools.send_money]\nconfirm = \"page\"\n", 1)
	if on == cfg {
		t.Fatal("the example has no [tools.send_money]; update this test")
	}
	writeFile(t, e.config, on)
	yes := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
	c := e.start(mcp.ProtocolVersion20251125, yes)

	pay := fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.00","reference":"INV-2291"}`, ibanOnFile)
	url := link(t, call(t, c, "send_money", pay))
	if yes.count() != 0 {
		t.Fatalf("the client was asked %d times to confirm a page-only tool", yes.count())
	}
	if got := e.bankCalls("send_money"); len(got) != 0 {
		t.Fatalf("the bank received %v before anyone approved", got)
	}
	signIn(t, e.base, "alice").decide(url, true)
	wantOK(t, call(t, c, "send_money", pay), "Transfer TX-0001")
	if yes.count() != 0 {
		t.Fatalf("the client was asked %d times", yes.count())
	}
}

// TestConfirmConfigErrors: confirm takes "client" or "page", and "page"
// needs page approvers.
func TestConfirmConfigErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ value, want string }{
		{`"browser"`, `confirm "browser" is not "client"`},
		{`"page"`, "has no [[approvals.approvers]]"},
	} {
		e := newEnv(t)
		cfg := readFile(t, e.config)
		writeFile(t, e.config, strings.Replace(cfg, "[tools.send_money]\n", "[tools.send_money]\nconfirm = "+c.value+"\n", 1))
		out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
		if err == nil || !strings.Contains(string(out), c.want) {
			t.Errorf("confirm = %s: %v\n%s\nwant an error saying %q", c.value, err, out, c.want)
		}
	}
}
