package main_test

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestCheckOptionalArgs (issue 24): --check refuses a proxied tool whose
// optional parameter the policy's schema requires, naming the parameter
// at its line, the policy that reads it and both fixes; every call
// without it would otherwise be "the policy could not decide". The fixes
// it names pass --check, and the calls it warned about then decide. The
// packs the example mounts (ap) have no such finding: --check prints no
// warning about arguments.
func TestCheckOptionalArgs(t *testing.T) {
	t.Parallel()
	check := func(e *env) (string, error) {
		out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
		return string(out), err
	}
	const readsRef = `
@id("no-cash-reference")
@reason("a reference saying cash")
forbid (principal, action == Action::"bank.send_money", resource)
when { context.args.reference == "cash" };
`
	// optional makes send_money's reference optional and adds a policy
	// reading it; it returns the parameter's line.
	optional := func(t *testing.T, e *env) int {
		cfg := readFile(t, e.config)
		opt := strings.Replace(cfg, "[tools.send_money.params.reference]\n", "[tools.send_money.params.reference]\nrequired = false\n", 1)
		if opt == cfg {
			t.Fatal("the example's reference parameter moved; update this test")
		}
		writeFile(t, e.config, opt)
		pol := filepath.Join(e.dir, "policy", "policy.cedar")
		writeFile(t, pol, readFile(t, pol)+readsRef)
		return 1 + strings.Count(opt[:strings.Index(opt, "[tools.send_money.params.reference]")], "\n")
	}
	t.Run("example", func(t *testing.T) {
		t.Parallel()
		out, err := check(newEnv(t))
		if err != nil || strings.Contains(out, "context.args") {
			t.Fatalf("--check: %v\n%s", err, out)
		}
	})
	t.Run("optional but required by the schema", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		line := optional(t, e)
		out, err := check(e)
		for _, want := range []string{
			fmt.Sprintf(`intentplane.toml:%d: parameter "reference" is optional (the tool may omit it), but the schema requires context.args.reference of bank.send_money, so every call without it is refused as undecidable; policy "no-cash-reference" (policy.cedar:`, line),
			"Make the parameter required (required = true), or declare it optional in the schema (reference?: String) and guard each read with `context.args has reference`",
		} {
			if err == nil || !strings.Contains(out, want) {
				t.Errorf("--check: %v\n%s\nwant %q", err, out, want)
			}
		}
	})
	t.Run("guarded with has", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		optional(t, e)
		sch := filepath.Join(e.dir, "policy", "schema.cedarschema")
		s := readFile(t, sch)
		writeFile(t, sch, strings.Replace(s, "reference: String }", "reference?: String }", 1))
		pol := filepath.Join(e.dir, "policy", "policy.cedar")
		p := readFile(t, pol)
		writeFile(t, pol, strings.Replace(p, `context.args.reference == "cash"`, `context.args has reference && context.args.reference == "cash"`, 1))
		if out, err := check(e); err != nil {
			t.Fatalf("--check: %v\n%s", err, out)
		}
		c := e.start(mcp.ProtocolVersion20251125, nil)
		r := call(t, c, "send_money", `{"recipient_iban":"`+ibanOnFile+`","amount":"10.00","reference":"cash"}`)
		wantError(t, r, "a reference saying cash")
		wantReason(t, r, "policy.denied", "deny")
		// Without the reference the gateway decides (allows); the demo
		// bank, which requires it, refuses.
		r = call(t, c, "send_money", `{"recipient_iban":"`+ibanOnFile+`","amount":"10.00"}`)
		if strings.Contains(text(r), "could not decide") {
			t.Errorf("without the optional reference: %q", text(r))
		}
	})
	t.Run("undeclared and mistyped", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		sch := filepath.Join(e.dir, "policy", "schema.cedarschema")
		s := readFile(t, sch)
		writeFile(t, sch, strings.Replace(s, "amount: Long, reference: String }", "amount: String, note: String }", 1))
		out, err := check(e)
		for _, want := range []string{
			`parameter "amount" is amount with at most 2 decimals, but the schema's context.args.amount of bank.send_money is not Long`,
			`parameter "reference" is not in the schema's context.args of bank.send_money, so every call giving it is refused as undecidable: declare it there (reference: String)`,
			`the schema requires context.args.note of bank.send_money, which no parameter gives`,
		} {
			if err == nil || !strings.Contains(out, want) {
				t.Errorf("--check: %v\n%s\nwant %q", err, out, want)
			}
		}
	})
}

// TestCheckAmountScale (issue 24): --check refuses a proxied payment tool
// whose amount scale is not the minor unit of the mandate's budget
// currency, at the scale's line: under a JPY budget a scale of 2 would
// count ¥100 as 10000 yen.
func TestCheckAmountScale(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := readFile(t, e.config)
	jpy := strings.Replace(cfg, `budget = "EUR 12000.00"`, `budget = "JPY 1200000"`, 1)
	if jpy == cfg {
		t.Fatal("the example's budget moved; update this test")
	}
	writeFile(t, e.config, jpy)
	out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
	line := 1 + strings.Count(jpy[:strings.Index(jpy, "[tools.send_money.params.amount]")], "\n") + 2
	want := fmt.Sprintf(`intentplane.toml:%d: the amount "amount" is read with 2 decimals, but the mandate's budget is in JPY, which has 0 (ISO 4217): every call would be refused. Set scale = 0`, line)
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("--check: %v\n%s\nwant %q", err, out, want)
	}
}
