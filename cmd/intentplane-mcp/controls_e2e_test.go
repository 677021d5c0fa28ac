package main_test

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestPackControls: [servers.erp.controls] changes the mounted ap pack's
// controls (issue 17). With confirm_above raised to 3,000.00, the
// 2,400.00 bill that asks for a confirmation by default (TestPackMount)
// executes without one; with max_amount lowered to 2,000.00 it is refused,
// and the refusal names the setting to change.
func TestPackControls(t *testing.T) {
	t.Parallel()
	pay := fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2291","iban":%q,"amount":"2400.00","currency":"EUR"}`, ibanOnFile)
	for _, tc := range []struct {
		name, controls string
		refused        bool
	}{
		{"confirm_above raised", `confirm_above = "3000.00"`, false},
		{"max_amount lowered", `max_amount = "2000.00"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := readFile(t, e.config)
			const mount = "[servers.erp]\npack = \"ap\"\nerp = \"demo\"\nprefix = \"ap_\"\n"
			if !strings.Contains(cfg, mount) {
				t.Fatal("the example's [servers.erp] changed; update this test")
			}
			writeFile(t, e.config, strings.Replace(cfg, mount, mount+"\n[servers.erp.controls]\n"+tc.controls+"\n", 1))
			el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
			c := e.start(mcp.ProtocolVersion20251125, el)
			r := call(t, c, "ap_pay_bill", pay)
			if tc.refused {
				wantError(t, r, "limit for the assistant", "[servers.NAME.controls] max_amount")
				wantReason(t, r, "policy.denied", "deny")
			} else {
				wantOK(t, r)
			}
			if el.count() != 0 {
				t.Errorf("2,400.00 asked for %d confirmation(s): %q", el.count(), el.messages)
			}
		})
	}
}

// TestPackControlsCheck: --check refuses a bad setting at its line.
func TestPackControlsCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cfg := readFile(t, e.config)
	const mount = "prefix = \"ap_\"\n"
	cfg = strings.Replace(cfg, mount, mount+"\n[servers.erp.controls]\ntime_zone = \"Europe/Atlantis\"\n", 1)
	writeFile(t, e.config, cfg)
	line := 1 + strings.Count(cfg[:strings.Index(cfg, "time_zone =")], "\n")
	out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
	want := fmt.Sprintf("intentplane.toml:%d: time_zone \"Europe/Atlantis\" is not an IANA time zone", line)
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("--check: %v\n%s\nwant %q", err, out, want)
	}
}
