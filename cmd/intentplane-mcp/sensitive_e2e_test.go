package main_test

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/embedded"
)

// secretRef is a secret the agent passes in send_money's reference, which
// the tests below declare sensitive.
const secretRef = "tok-5ecret-4711-do-not-keep"

// sensitiveReference declares send_money's reference sensitive in cfg.
func sensitiveReference(t *testing.T, cfg string) string {
	t.Helper()
	const ref = "[tools.send_money.params.reference]\ntype = \"string\"\nmax_length = 140\n"
	out := strings.Replace(cfg, ref, ref+"sensitive = true\n", 1)
	if out == cfg {
		t.Fatal("the example's reference parameter changed; update this test")
	}
	return out
}

// TestSensitiveParameter is issue 24's secret argument of a proxied tool:
// with sensitive = true it reaches the downstream server (and the policy),
// but no receipt (so no export, audit view or CSV, which read receipts),
// no log line, even at debug level, and no confirmation shown to the user
// holds it: receipts keep its SHA-256 digest instead.
func TestSensitiveParameter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, e.config, sensitiveReference(t, readFile(t, e.config)))
	logs := &lockedBuffer{t: t}
	e.stderr, e.args = logs, []string{"--log-level", "debug", "--log-format", "json"}
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionDecline, false)}
	c := e.start(mcp.ProtocolVersion20251125, el)

	wantOK(t, call(t, c, "send_money", sendMoney(ibanOnFile, "100.00", secretRef)))
	wantError(t, call(t, c, "send_money", sendMoney(ibanOnFile, "2400.00", secretRef)), "declined")
	wantError(t, call(t, c, "send_money", sendMoney(ibanFromEmail, "10.00", secretRef)), "on file")
	if got := e.bankCalls("send_money"); len(got) != 1 || !strings.Contains(got[0], secretRef) {
		t.Fatalf("the bank got %q, want one call with the secret", got)
	}
	if el.count() != 1 {
		t.Fatalf("%d confirmations, want 1", el.count())
	}
	if msg := el.messages[0]; strings.Contains(msg, secretRef) || !strings.Contains(msg, "reference: sha256:") {
		t.Errorf("the confirmation shows the secret, or not its digest: %q", msg)
	}
	_ = c.Close()

	// The proxy releases the store at exit.
	var st *embedded.Store
	var err error
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		st, err = embedded.Open(filepath.Join(e.dir, "intentplane.db"), embedded.Options{})
		if err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ctx := context.Background()
	owners, err := st.Owners(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var all []byte
	n := 0
	for _, o := range owners {
		rs, err := st.Receipts(ctx, o, 0, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			b, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, b...)
			n++
		}
	}
	if n < 3 {
		t.Fatalf("%d receipts, want at least 3", n)
	}
	if strings.Contains(string(all), secretRef) {
		t.Errorf("a receipt holds the secret:\n%s", all)
	}
	if !strings.Contains(string(all), receipt.Digest(secretRef)) {
		t.Errorf("no receipt holds the secret's digest %s", receipt.Digest(secretRef))
	}
	if strings.Contains(logs.String(), secretRef) {
		t.Errorf("the logs hold the secret:\n%s", logs.String())
	}
}

// TestSensitiveNeverOnThePage: a step-up of an operation carrying a
// secret is never put on the approval page (where it would be shown, kept
// with the request and posted to a webhook): a client that cannot confirm
// gets a refusal naming the secret argument, not a link.
func TestSensitiveNeverOnThePage(t *testing.T) {
	t.Parallel()
	pe := newPageEnv(t, 0, "")
	writeFile(t, pe.config, sensitiveReference(t, readFile(t, pe.config)))
	c := pe.start(mcp.ProtocolVersion20251125, nil)
	r := call(t, c, "send_money", sendMoney(ibanOnFile, "2400.00", secretRef))
	wantError(t, r, "secret argument (reference)", "never shown on the approval page")
	if strings.Contains(text(r), pe.base) {
		t.Errorf("the refusal links to the page: %q", text(r))
	}
	// Without the secret, the same step-up goes to the page.
	r = call(t, c, "send_money", `{"recipient_iban":"`+ibanOnFile+`","amount":"2400.00","reference":""}`)
	if !strings.Contains(text(r), pe.base) {
		t.Errorf("a step-up without the secret argument does not link to the page: %q", text(r))
	}
}
