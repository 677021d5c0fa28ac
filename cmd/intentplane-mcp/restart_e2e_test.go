package main_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestRestartsContinueTheMandate is issue 11's "the same payment ran again
// after each of three restarts": the example configuration keeps its state
// and the mandate issued at start in the embedded store beside it, so after
// each of three restarts the same payment is refused as executed, the bank
// received it once, and the budget spent before a restart stays spent. A
// changed [mandate] gets a new mandate, with its whole budget.
func TestRestartsContinueTheMandate(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if !strings.Contains(readFile(t, e.config), `kind = "embedded"`) {
		t.Fatal(`the example configuration no longer keeps its state in the embedded store`)
	}
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
	pay := fmt.Sprintf(`{"recipient_iban":%q,"amount":"850.00","reference":"INV-2290"}`, ibanSpaced)
	big := func(ref string) string {
		return fmt.Sprintf(`{"recipient_iban":%q,"amount":"9000.00","reference":%q}`, ibanOnFile, ref)
	}
	billArgs := fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanOnFile)

	c := e.start(mcp.ProtocolVersion20251125, el)
	wantOK(t, call(t, c, "send_money", pay), "Transfer")
	wantOK(t, call(t, c, "send_money", big("INV-9000")), "Transfer")
	wantOK(t, call(t, c, "ap_pay_bill", billArgs))
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(e.dir, "intentplane.db")); err != nil {
		t.Fatalf("no store file beside the configuration: %v", err)
	}
	for restart := 1; restart <= 3; restart++ {
		c := e.start(mcp.ProtocolVersion20251125, el)
		wantError(t, call(t, c, "send_money", pay), "already executed")
		wantError(t, call(t, c, "ap_pay_bill", billArgs), "already executed")
		// 850.00 + 9,000.00 of 12,000.00 spent: another 9,000.00 does
		// not fit, restart or not.
		wantError(t, call(t, c, "send_money", big(fmt.Sprintf("R-%d", restart))), "budget")
		if got := e.bankCalls("send_money"); len(got) != 2 {
			t.Fatalf("after restart %d the bank received %d transfers, want 2: %v", restart, len(got), got)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
	}

	// A changed mandate is a new one: its own budget, its own operations.
	cfg := readFile(t, e.config)
	changed := strings.Replace(cfg, `budget = "EUR 12000.00"`, `budget = "EUR 12500.00"`, 1)
	if changed == cfg {
		t.Fatal("the example's budget line changed; update this test")
	}
	writeFile(t, e.config, changed)
	c = e.start(mcp.ProtocolVersion20251125, el)
	wantOK(t, call(t, c, "send_money", big("NEW-1")), "Transfer")
	if got := e.bankCalls("send_money"); len(got) != 3 {
		t.Fatalf("under a new mandate the bank received %d transfers, want 3", len(got))
	}
}

// exampleStore is the example configuration's [store], without its header.
const exampleStore = "kind = \"embedded\"\npath = \"intentplane.db\""
