package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/embedded"
)

// TestReconcileLog: the start-up reconciliation logs a budget's
// reservation under mandate=, and a running total's share under total=
// (its name) and total_key= (its parts, printable), never the total's
// account, with its NUL separators, under mandate= (found by a new-user
// trial).
func TestReconcileLog(t *testing.T) {
	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(t.TempDir(), "s.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	res := state.ReservationID(strings.Repeat("c3", 32), "ap.pay_bill", "northwind")
	amount := intent.Money{Currency: "EUR", Amount: 12000}
	if err := st.Reserve(ctx, "m-north", intent.Money{Currency: "EUR", Amount: 100000}, res, amount); err != nil {
		t.Fatal(err)
	}
	total := state.TotalAccount("northwind", "ap", "paid_to_vendor_today", "EUR", "2026-12-01", "res.partner:7")
	if err := st.Reserve(ctx, total, intent.Money{Currency: "EUR", Amount: state.TotalLimit}, state.TotalReservationID(res, 0), amount); err != nil {
		t.Fatal(err)
	}
	gw, err := gateway.New(gateway.Config{Audience: "a", Issuers: mandate.StaticKeys{}}, st)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	reconcileAtStart(ctx, gw, "embedded", slog.New(slog.NewTextHandler(&buf, nil)))
	out := buf.String()
	for _, want := range []string{
		"outcome=released", "mandate=m-north",
		"total=paid_to_vendor_today", `total_key="owner=northwind pack=ap currency=EUR period=2026-12-01 by=res.partner:7"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("the log lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `\x00`) || strings.Contains(out, "\x00") || strings.Contains(out, "mandate=total") || strings.Contains(out, `mandate="total`) {
		t.Errorf("the log holds a total's account:\n%s", out)
	}
}
