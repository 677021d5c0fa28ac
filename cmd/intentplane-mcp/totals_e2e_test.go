package main_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// sendMoney is send_money's arguments: amount to the payee iban.
func sendMoney(iban, amount, ref string) string {
	return fmt.Sprintf(`{"recipient_iban":%q,"amount":%q,"reference":%q}`, iban, amount, ref)
}

// TestProxiedTotals is issue 24's split payment through a proxied tool:
// two payments of 600.00 to one payee, each under the example's
// confirmation threshold of 1,000.00, both executed where one payment of
// 1,200.00 asks the user. With the example's [[tools.send_money.totals]]
// the second asks as the single one does (the threshold applies to this
// payment plus what the payee was sent today), declined it never reaches
// the bank, and the approval asked names the total.
func TestProxiedTotals(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := readFile(t, e.config)
	on := strings.Replace(cfg, `# refuse_above = "10000.00"`, `refuse_above = "10000.00"`, 1)
	if on == cfg {
		t.Fatal("the example's commented refuse_above moved; update this test")
	}
	writeFile(t, e.config, on)
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionDecline, false)}
	c := e.start(mcp.ProtocolVersion20251125, el)

	wantOK(t, call(t, c, "send_money", sendMoney(ibanOnFile, "600.00", "INV-1")))
	if el.count() != 0 {
		t.Fatalf("600.00 alone asked the user: %q", el.messages)
	}
	// The same payee spelled otherwise shares the total: it is the
	// trusted value on file that is added up.
	r := call(t, c, "send_money", sendMoney(ibanSpaced, "600.00", "INV-2"))
	wantError(t, r, "declined")
	if el.count() != 1 {
		t.Fatalf("the second 600.00 to one payee asked %d times, want once (600.00 + 600.00 is above 1,000.00)", el.count())
	}
	if msg := el.messages[0]; !strings.Contains(msg, "today 600.00 EUR") || !strings.Contains(msg, "above 1000.00 today, this one included") {
		t.Errorf("the confirmation does not show the payee's total: %q", msg)
	}
	if got := e.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("the bank executed %d payments, want 1: %q", len(got), got)
	}

	// Accepted, it executes; then the payee's day holds 1,200.00 and
	// even 0.01 more asks.
	el.mu.Lock()
	el.answer = answer(mcp.ElicitationResponseActionAccept, true)
	el.mu.Unlock()
	// (Another bill: the declined operation itself stays declined.)
	wantOK(t, call(t, c, "send_money", sendMoney(ibanOnFile, "600.00", "INV-5")))
	el.mu.Lock()
	el.answer = answer(mcp.ElicitationResponseActionDecline, false)
	el.mu.Unlock()
	wantError(t, call(t, c, "send_money", sendMoney(ibanOnFile, "0.01", "INV-3")), "declined")
	if el.count() != 3 {
		t.Fatalf("asked %d times, want 3", el.count())
	}
	// Past the refusal threshold of the day (refuse_above, commented out
	// in the example) nothing executes, confirmed or not: 1,200.00 +
	// 8,800.01 is above 10,000.00, although 8,800.01 alone is not.
	r = call(t, c, "send_money", sendMoney(ibanOnFile, "8800.01", "INV-4"))
	wantError(t, r, "10000.00")
	wantReason(t, r, "policy.denied", "deny")
	if got := e.bankCalls("send_money"); len(got) != 2 {
		t.Fatalf("the bank executed %d payments, want 2: %q", len(got), got)
	}
}

// TestProxiedTotalsAcrossReplicas: the totals of a proxied tool are kept
// in the store, so two replicas sharing one PostgreSQL database add up
// each other's payments: 600.00 through one and 600.00 to the same payee
// through the other is a step-up (neither client can confirm), not two
// payments.
func TestProxiedTotalsAcrossReplicas(t *testing.T) {
	t.Parallel()
	e, _, _ := newPostgresEnv(t)
	a, _ := e.startReplica()
	b, _ := e.startReplica()
	wantOK(t, call(t, a, "send_money", sendMoney(ibanOnFile, "600.00", "INV-1")))
	r := call(t, b, "send_money", sendMoney(ibanOnFile, "600.00", "INV-2"))
	wantReason(t, r, "approval.required", "step_up")
	if !strings.Contains(text(r), "today 600.00 EUR") {
		t.Errorf("the step-up does not name the payee's total: %q", text(r))
	}
	if got := e.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("the bank executed %d payments, want 1: %q", len(got), got)
	}
}

// TestCheckPaymentToolTotals: --check refuses a payment tool (an amount to
// a payee on file) without running totals, at the tool's line, unless
// no_totals says why; and a total whose fact the schema does not declare,
// which would make every call undecidable, at the total's line.
func TestCheckPaymentToolTotals(t *testing.T) {
	t.Parallel()
	check := func(t *testing.T, e *env) (string, error) {
		out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
		return string(out), err
	}
	withoutTotals := func(t *testing.T, e *env) string {
		cfg := readFile(t, e.config)
		i := strings.Index(cfg, "[[tools.send_money.totals]]")
		j := strings.Index(cfg, "[tools.read_inbox]")
		if i < 0 || j < i {
			t.Fatal("the example's send_money totals moved; update this test")
		}
		cfg = cfg[:i] + cfg[j:]
		writeFile(t, e.config, cfg)
		return cfg
	}
	t.Run("refused without totals", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		cfg := withoutTotals(t, e)
		out, err := check(t, e)
		line := 1 + strings.Count(cfg[:strings.Index(cfg, "[tools.send_money]")], "\n")
		want := fmt.Sprintf(`intentplane.toml:%d: tool "send_money" pays (the amount "amount" to the "recipient_iban" on file) without running totals`, line)
		if err == nil || !strings.Contains(out, want) {
			t.Fatalf("--check: %v\n%s\nwant %q", err, out, want)
		}
	})
	t.Run("accepted with a reason", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		cfg := withoutTotals(t, e)
		cfg = strings.Replace(cfg, "budget = \"amount\"\n", "budget = \"amount\"\nno_totals = \"the bank caps each payee at 500.00 a day itself\"\n", 1)
		writeFile(t, e.config, cfg)
		if out, err := check(t, e); err != nil {
			t.Fatalf("--check refused a stated reason: %v\n%s", err, out)
		}
	})
	t.Run("fact missing from the schema", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		sch := filepath.Join(e.dir, "policy", "schema.cedarschema")
		s := readFile(t, sch)
		writeFile(t, sch, strings.Replace(s, "paid_payee_day: Long, ", "", 1))
		cfg := readFile(t, e.config)
		line := 1 + strings.Count(cfg[:strings.Index(cfg, "[[tools.send_money.totals]]")], "\n")
		out, err := check(t, e)
		want := fmt.Sprintf(`intentplane.toml:%d: the thresholds of total "paid_payee_day" do not validate against the policy's schema: declare the total as a fact of bank.send_money`, line)
		if err == nil || !strings.Contains(out, want) {
			t.Fatalf("--check: %v\n%s\nwant %q", err, out, want)
		}
	})
}
