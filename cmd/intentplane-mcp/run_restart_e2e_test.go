package main_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestPaymentRunSurvivesRestart (issue 25): a payment run is one request
// on the page, and intentplane-mcp may restart while it waits, on the
// embedded store and on PostgreSQL. Left open across a restart, the run is
// still listed, the agent's retry finds the same request, and once
// approved each payment executes once. Approved before a restart, the
// approval is used after it, once: asked again after another restart,
// nothing executes twice.
func TestPaymentRunSurvivesRestart(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"embedded", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newPageEnv(t, 0, "")
			if kind == "postgres" {
				usePostgres(t, e.env, "")
			} else if !strings.Contains(readFile(t, e.config), exampleStore) {
				t.Fatal("the example no longer keeps its state in the embedded store; update this test")
			}
			line := func(bill, amount string) string {
				return fmt.Sprintf(`{"vendor":"ACME Supplies","bill":%q,"iban":%q,"amount":%q,"currency":"EUR"}`, bill, ibanOnFile, amount)
			}
			run := `{"payments":[` + line("INV-2290", "850.00") + "," + line("INV-2291", "500.00") + `]}`
			restart := func(c interface{ Close() error }) {
				t.Helper()
				if err := c.Close(); err != nil {
					t.Fatal(err)
				}
			}

			c := e.start(mcp.ProtocolVersion20251125, nil)
			l := link(t, call(t, c, "ap_propose_payment_run", run))
			restart(c)

			c = e.start(mcp.ProtocolVersion20251125, nil)
			alice := signIn(t, e.base, "alice")
			if ids := alice.pending(); len(ids) != 1 || !strings.HasSuffix(l, ids[0]) {
				t.Fatalf("pending after the restart: %v; want the run %s", ids, l)
			}
			if l2 := link(t, call(t, c, "ap_propose_payment_run", run)); l2 != l {
				t.Fatalf("the retry after the restart got %s, want the run's request %s", l2, l)
			}
			alice.decide(l, true)
			restart(c)

			// Approved before this restart: used after it, once.
			c = e.start(mcp.ProtocolVersion20251125, nil)
			wantOK(t, call(t, c, "ap_propose_payment_run", run), "2 of 2 payments executed", "1. executed", "2. executed")
			restart(c)

			c = e.start(mcp.ProtocolVersion20251125, nil)
			r := call(t, c, "ap_propose_payment_run", run)
			wantError(t, r, "1. refused", "2. refused", "already executed")
			if strings.Contains(text(r), "executed:") {
				t.Fatalf("a payment of the run executed twice across restarts: %s", text(r))
			}
			wantError(t, call(t, c, "ap_pay_bill", line("INV-2291", "500.00")), "already executed")
			if ids := alice.pending(); len(ids) != 0 {
				t.Fatalf("the page still lists %v after the run executed", ids)
			}
		})
	}
}
