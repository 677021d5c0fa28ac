package main

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/internal/cli"
	"github.com/intentplane/intentplane/store/embedded"
)

// TestReconcileCommand: on an embedded store left by a crash, `reconcile`
// releases the reservation whose operation never reached its executor
// (with a receipt), and leaves open, naming it and exiting 3, the one whose
// outcome no pack given can tell.
func TestReconcileCommand(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	budget, amount := intent.Money{Currency: "EUR", Amount: 100000}, intent.Money{Currency: "EUR", Amount: 1250}
	never := strings.Repeat("a1", 32)
	ran := strings.Repeat("b2", 32)
	// Reservation ids as the gateway makes them: hash, action, owner.
	for _, h := range []string{never, ran} {
		if err := s.Reserve(ctx, "m-emma", budget, h+" banking.send_money emma", amount); err != nil {
			t.Fatal(err)
		}
	}
	// The never-executed operation's share of a running total.
	total := state.TotalAccount("emma", "banking", "paid_today", "EUR", "2026-12-01", "GB29")
	if err := s.Reserve(ctx, total, intent.Money{Currency: "EUR", Amount: state.TotalLimit}, state.TotalReservationID(never+" banking.send_money emma", 0), amount); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "op:"+ran, time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	out, err := runCLI(t, "reconcile", "--store", path)
	var ee *cli.ExitError
	if !errors.As(err, &ee) || ee.Code != 3 || !strings.Contains(ee.Msg, "1 reservations stay open") {
		t.Fatalf("reconcile: %v\n%s", err, out)
	}
	if strings.Contains(out, "\x00") {
		t.Errorf("the output holds a NUL byte:\n%q", out)
	}
	for _, want := range []string{
		"released: operation " + never[:16] + ` (banking.send_money of "emma", mandate m-emma): the operation never reached its executor`,
		"unsettled: operation " + ran[:16] + ` (banking.send_money of "emma", mandate m-emma): no pack of this gateway has the action`,
		"released: operation " + never[:16] + ` (banking.send_money of "emma", total paid_today: owner=emma pack=banking currency=EUR period=2026-12-01 by=GB29): the operation never reached its executor`,
		"2 reservations settled",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}

	s, err = embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, _ := s.Usage(ctx, "m-emma")
	rs, rerr := s.Receipts(ctx, "emma", 1, 0)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if u.Reserved != 1250 || u.Committed != 0 {
		t.Errorf("usage %+v, want only the unsettled 12.50 reserved", u)
	}
	if rerr != nil || len(rs) != 1 || rs[0].Operation != never || rs[0].Result != "not_executed" || !strings.Contains(rs[0].Message, "Reconciled after a crash") {
		t.Errorf("receipts %+v, %v; want one for the released operation", rs, rerr)
	}

	// A second run finds only what stays unsettled.
	out, err = runCLI(t, "reconcile", "--store", "embedded:"+path)
	if !errors.As(err, &ee) || ee.Code != 3 || !strings.Contains(out, "0 reservations settled") {
		t.Fatalf("second reconcile: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "reconcile", "--store", path, "--older-than", "-1s"); err == nil {
		t.Error("a negative --older-than was accepted")
	}
}

// TestReconcileStoreInUse: reconcile of an embedded store a gateway holds
// says to stop the gateway, never to work on a backup copy (which would
// settle nothing in the store the gateway uses); export still may.
func TestReconcileStoreInUse(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	out, err := runCLI(t, "reconcile", "--store", path)
	if err == nil || !strings.Contains(err.Error()+out, "stop the gateway") || strings.Contains(err.Error()+out, "backup") {
		t.Errorf("reconcile of a store in use: %v\n%s\nwant: stop the gateway, and no backup copy", err, out)
	}
	out, err = runCLI(t, "receipts", "export", "--store", path, "--out", filepath.Join(t.TempDir(), "x.jsonl"))
	if err == nil || !strings.Contains(err.Error()+out, "backup copy") {
		t.Errorf("export of a store in use: %v\n%s", err, out)
	}
}
