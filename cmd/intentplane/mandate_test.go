package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 14: keygen silently overwrote a private key.
func TestKeygenRefusesExisting(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "issuer.key")
	if out, err := runCLI(t, "mandate", "keygen", "--out", key); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	first, _ := os.ReadFile(key)
	out, err := runCLI(t, "mandate", "keygen", "--out", key)
	if err == nil || !strings.Contains(err.Error(), "never overwritten without --force") {
		t.Fatalf("second keygen: %v\n%s", err, out)
	}
	if again, _ := os.ReadFile(key); string(again) != string(first) {
		t.Fatal("the key was overwritten")
	}
	// Only the .pub exists: refused too.
	if err := os.Remove(key); err != nil {
		t.Fatal(err)
	}
	if _, err := runCLI(t, "mandate", "keygen", "--out", key); err == nil {
		t.Fatal("keygen overwrote the .pub file")
	}
	if out, err := runCLI(t, "mandate", "keygen", "--out", key, "--force"); err != nil {
		t.Fatalf("keygen --force: %v\n%s", err, out)
	}
	if again, _ := os.ReadFile(key); len(again) == 0 || string(again) == string(first) {
		t.Fatal("--force did not write a new key")
	}
}

// Issue 14: mandate issue accepted a scope typo, an invalid IBAN claim and
// no budget (EUR 0.00).
func TestMandateIssueValidates(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "issuer.key")
	if out, err := runCLI(t, "mandate", "keygen", "--out", key); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	base := []string{"mandate", "issue", "--key", key, "--issuer", "bank-app", "--owner", "emma"}
	for _, tc := range []struct {
		name string
		args []string
		want string // "" means accepted
	}{
		{"valid", []string{"--scope", "banking.send_money", "--budget", "EUR 100.00", "--claim", "payees=gb29 nwbk 6016 1331 9268 19"}, ""},
		{"scope typo", []string{"--scope", "banking.send_mony", "--budget", "EUR 100.00"}, `scope "banking.send_mony": no known action`},
		{"invalid IBAN claim", []string{"--scope", "banking.send_money", "--budget", "EUR 100.00", "--claim", "payees=GB29NWBK60161331926818"}, "claim payees=GB29NWBK60161331926818"},
		{"no budget", []string{"--scope", "banking.send_money"}, "--budget"},
		{"budgets in two currencies", []string{"--scope", "banking.send_money", "--budget", "EUR 100.00", "--budget", "USD 50.00"}, ""},
		{"two budgets in one currency", []string{"--scope", "banking.send_money", "--budget", "EUR 100.00", "--budget", "USD 50.00", "--budget", "EUR 20.00"},
			"--budget: two budgets in EUR (100.00 and 20.00)"},
		{"bad second budget", []string{"--scope", "banking.send_money", "--budget", "EUR 100.00", "--budget", "usd 50"}, `--budget "usd 50"`},
		{"operator action without --policy", []string{"--scope", "bank.send_money", "--budget", "EUR 100.00"}, `scope "bank.send_money"`},
		{"operator action with --policy", []string{"--scope", "bank.send_money", "--budget", "EUR 100.00", "--policy", "../../examples/mcp/policy"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runCLI(t, append(append([]string{}, base...), tc.args...)...)
			if tc.want == "" {
				if err != nil || !strings.HasPrefix(out, "ipm1.") {
					t.Fatalf("refused: %v\n%s", err, out)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error()+out, tc.want) {
				t.Fatalf("got %v\n%s\nwant %q", err, out, tc.want)
			}
		})
	}
}

// The claims are normalized before signing: the IBAN as the registries
// hold it.
func TestMandateIssueNormalizesClaims(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "issuer.key")
	if out, err := runCLI(t, "mandate", "keygen", "--out", key); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	tok, err := runCLI(t, "mandate", "issue", "--key", key, "--issuer", "bank-app", "--owner", "emma", "--scope", "banking.send_money",
		"--budget", "EUR 100.00", "--budget", "USD 50.00", "--budget", "CHF 0.00", "--claim", "payees=gb29 nwbk 6016 1331 9268 19")
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "mandate", "show", "--pub", "bank-app="+key+".pub", strings.TrimSpace(tok))
	if err != nil || !strings.Contains(out, "claim:  payees = GB29NWBK60161331926819") || !strings.Contains(out, "budget: EUR 100.00, CHF 0.00, USD 50.00\n") {
		t.Fatalf("show: %v\n%s", err, out)
	}
}

// TestMandateShowExponents (issue 24): budgets are shown with their
// currency's minor unit: "JPY 100" is not "JPY 1.00", "KWD 100.000" not
// "KWD 1000.00".
func TestMandateShowExponents(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "issuer.key")
	if out, err := runCLI(t, "mandate", "keygen", "--out", key); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	tok, err := runCLI(t, "mandate", "issue", "--key", key, "--issuer", "bank-app", "--owner", "emma", "--scope", "banking.send_money",
		"--budget", "JPY 100", "--budget", "KWD 100.000", "--budget", "EUR 12.50")
	if err != nil {
		t.Fatal(err)
	}
	out, err := runCLI(t, "mandate", "show", "--pub", "bank-app="+key+".pub", strings.TrimSpace(tok))
	if err != nil || !strings.Contains(out, "budget: JPY 100, EUR 12.50, KWD 100.000\n") {
		t.Fatalf("show: %v\n%s", err, out)
	}
	_, err = runCLI(t, "mandate", "issue", "--key", key, "--issuer", "bank-app", "--owner", "emma", "--scope", "banking.send_money",
		"--budget", "JPY 100", "--budget", "JPY 5")
	if err == nil || !strings.Contains(err.Error(), "two budgets in JPY (100 and 5)") {
		t.Fatalf("two JPY budgets: %v", err)
	}
}

// An operator's policy directory is tested and mutation-checked like a
// pack's; one without tests is refused.
func TestPolicyDir(t *testing.T) {
	out, err := runCLI(t, "policy", "test", "--dir", "../../examples/mcp/policy")
	if err != nil || !strings.Contains(out, "0 failures") {
		t.Fatalf("policy test --dir: %v\n%s", err, out)
	}
	out, err = runCLI(t, "policy", "mutate", "--dir", "../../examples/mcp/policy")
	if err != nil || !strings.Contains(out, "0 survived") {
		t.Fatalf("policy mutate --dir: %v\n%s", err, out)
	}
	dir := t.TempDir()
	for _, f := range []string{"policy.cedar", "schema.cedarschema"} {
		b, err := os.ReadFile(filepath.Join("../../examples/mcp/policy", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if out, err := runCLI(t, "policy", "test", "--dir", dir); err == nil || !strings.Contains(err.Error(), "has no tests") {
		t.Fatalf("a policy without tests: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "policy", "test", "--dir", dir, "--pack", "banking"); err == nil {
		t.Fatal("--dir and --pack together were accepted")
	}
}

func TestShowClaimEscapesLookAlikes(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ in, want string }{
		{"GB29NWBK60161331926819", "GB29NWBK60161331926819"},
		{"GB29NWBK6016133192681\u0412", "GB29NWBK6016133192681\u0412 [not plain ASCII: \"GB29NWBK6016133192681\\u0412\"]"},
		{"M\u00fcller GmbH", "M\u00fcller GmbH [not plain ASCII: \"M\\u00fcller GmbH\"]"},
	} {
		if got := showClaim(tt.in); got != tt.want {
			t.Errorf("showClaim(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
