package main

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestScript plays the demo against the built proxy and bank server and
// checks each step's outcome.
func TestScript(t *testing.T) {
	dir := t.TempDir()
	for _, b := range []struct{ out, pkg string }{
		{"intentplane-mcp", "../../../cmd/intentplane-mcp"},
		{"bankserver", "../bankserver"},
	} {
		if out, err := exec.Command("go", "build", "-o", filepath.Join(dir, b.out), b.pkg).CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", b.pkg, err, out)
		}
	}
	for _, f := range []string{"payees.json", "policy/policy.cedar", "policy/schema.cedarschema"} {
		b, err := os.ReadFile(filepath.Join("..", f))
		if err != nil {
			t.Fatal(err)
		}
		_ = os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755)
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg, err := os.ReadFile("../intentplane.toml")
	if err != nil {
		t.Fatal(err)
	}
	c := strings.Replace(string(cfg), `command = "bin/bankserver"`, `command = "./bankserver"`, 1)
	if c == string(cfg) {
		t.Fatal("the example's server command changed; update this test")
	}
	if err := os.WriteFile(filepath.Join(dir, "intentplane.toml"), []byte(c), 0o644); err != nil {
		t.Fatal(err)
	}
	play := func() string {
		var out, errs bytes.Buffer
		if err := run(context.Background(), []string{"-proxy", filepath.Join(dir, "intentplane-mcp"), "-config", filepath.Join(dir, "intentplane.toml")}, &out, &errs); err != nil {
			t.Fatalf("%v\n%s\n%s", err, out.String(), errs.String())
		}
		return out.String()
	}
	got := play()
	for _, want := range []string{
		"2. Obeying the email",
		`← REFUSED: The recipient_iban you gave ("LT12 1000 0111 0100 1000") is neither`,
		`← EXECUTED: Transfer TX-0001 of EUR 850.00 to DE89370400440532013000`,
		"the client asks the user",
		`← EXECUTED: Transfer TX-0002 of EUR 2400.00 to DE89370400440532013000`,
		"above 10,000.00 are never executed",
		"exceeds what remains of the budget",
		`"id":"TX-0002"`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("transcript lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "TX-0003") {
		t.Errorf("a third transfer executed:\n%s", got)
	}

	// Run again, as a newcomer does: the gateway's store and the bank's
	// ledger both remember the first run, so the payments are refused as
	// already executed and the bank lists the two transfers of the first
	// run, no more and no fewer.
	again := play()
	if n := strings.Count(again, "← EXECUTED: Transfer"); n != 0 {
		t.Errorf("the second run sent %d transfers:\n%s", n, again)
	}
	if n := strings.Count(again, "has already executed"); n != 2 {
		t.Errorf("the second run refused %d payments as already executed, want 2:\n%s", n, again)
	}
	for _, want := range []string{`"id":"TX-0001"`, `"id":"TX-0002"`} {
		if !strings.Contains(again, want) {
			t.Errorf("the bank of the second run forgot %s:\n%s", want, again)
		}
	}
	if strings.Contains(again, "TX-0003") {
		t.Errorf("a third transfer in the second run:\n%s", again)
	}
}
