package postgres_test

import (
	"context"
	"errors"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/postgres/internal/pgtest"
)

func eur(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }

// TestUpgradeFromVersion1: a database written at schema version 1 (no
// limits) is migrated by Open; its accounts keep the limit of their next
// reservation, and its open reservations can be closed.
func TestUpgradeFromVersion1(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := pgtest.Schema(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	v1, err := os.ReadFile("migrations/0001_init.sql")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		string(v1),
		`CREATE TABLE schema_migrations (version int PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
		`INSERT INTO schema_migrations (version, name) VALUES (1, '0001_init')`,
		// What a version 1 gateway did: 3.00 reserved under "open", 2.00
		// committed under "done", against a limit of 10.00.
		`SELECT intentplane_ledger('m', '{reserve,reserve,commit}', '{open,done,done}', '{EUR,EUR,""}', '{1000,1000,0}', '{300,200,0}')`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatalf("%.40s: %v", q, err)
		}
	}

	s, err := postgres.Open(ctx, dsn, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Reserve(ctx, "m", eur(5000), "x", eur(100)); err != nil {
		t.Fatalf("first Reserve after the upgrade: %v", err)
	}
	if err := s.Reserve(ctx, "m", eur(1000), "y", eur(100)); !errors.Is(err, state.ErrLimitMismatch) {
		t.Fatalf("Reserve with another limit than the adopted one = %v, want ErrLimitMismatch", err)
	}
	if err := s.Commit(ctx, "open"); err != nil {
		t.Fatalf("Commit of a reservation made before the upgrade: %v", err)
	}
	if u, err := s.Usage(ctx, "m"); err != nil || u.Committed != 500 || u.Reserved != 100 {
		t.Fatalf("Usage = %+v, %v; want committed 500 reserved 100", u, err)
	}
}

// TestReserveAllAndSettle: ReserveAll makes reservations on several
// accounts and returns each account's usage after it, with an error per
// reservation; Settle commits or releases reservations on several accounts
// in one call, concurrent calls included, those another Store made among
// them, with ErrNotFound for one not open.
func TestReserveAllAndSettle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, dsn := open(t, postgres.Config{})
	other, err := postgres.Open(ctx, dsn, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	req := func(acct, id string, a intent.Amount) state.ReserveRequest {
		return state.ReserveRequest{Account: acct, Limit: eur(1000), ID: id, Amount: eur(a)}
	}
	us, errs := s.ReserveAll(ctx, []state.ReserveRequest{req("a", "a1", 100)})
	if errs[0] != nil || us[0].Reserved != 100 || us[0].Committed != 0 {
		t.Fatalf("ReserveAll of one = %+v, %v; want reserved 100", us, errs)
	}
	us, errs = s.ReserveAll(ctx, []state.ReserveRequest{req("z", "z1", 5), req("a", "a2", 250), req("a", "a3", 700), req("a", "a1", 1), req("m", "m1", 7),
		{Account: "m", Limit: eur(1000), ID: "m2", Amount: intent.Money{Currency: "USD", Amount: 1}}})
	for i, want := range []struct {
		err      error
		reserved intent.Amount
	}{{nil, 5}, {nil, 350}, {state.ErrExceeded, 0}, {state.ErrDuplicate, 0}, {nil, 7}, {state.ErrCurrency, 0}} {
		if !errors.Is(errs[i], want.err) || (want.err == nil && errs[i] != nil) || us[i].Reserved != want.reserved {
			t.Errorf("ReserveAll, reservation %d: %+v, %v; want reserved %d, %v", i, us[i], errs[i], want.reserved, want.err)
		}
	}
	if err := s.Release(ctx, "z1"); err != nil {
		t.Fatalf("Release of a reservation ReserveAll made: %v", err)
	}
	for _, r := range []struct{ acct, id string }{{"b", "b1"}, {"c", "c1"}, {"b", "b2"}} {
		if err := s.Reserve(ctx, r.acct, eur(1000), r.id, eur(10)); err != nil {
			t.Fatal(err)
		}
	}
	if err := other.Reserve(ctx, "c", eur(1000), "c2", eur(5)); err != nil {
		t.Fatal(err)
	}
	// Concurrent Settles, batched into one statement when they meet.
	var wg sync.WaitGroup
	results := make([][]error, 2)
	for i, ids := range [][]string{{"a1", "b1", "c1", "c2", "gone"}, {"b2", "a2"}} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = s.Settle(ctx, ids, i == 0)
		}()
	}
	wg.Wait()
	for i, want := range [][]error{{nil, nil, nil, nil, state.ErrNotFound}, {nil, nil}} {
		for j := range want {
			if !errors.Is(results[i][j], want[j]) || (want[j] == nil && results[i][j] != nil) {
				t.Errorf("Settle %d, id %d: %v, want %v", i, j, results[i][j], want[j])
			}
		}
	}
	for _, c := range []struct {
		acct                string
		committed, reserved intent.Amount
	}{{"a", 100, 0}, {"b", 10, 0}, {"c", 15, 0}} {
		if u, err := s.Usage(ctx, c.acct); err != nil || u.Committed != c.committed || u.Reserved != c.reserved {
			t.Errorf("Usage(%s) = %+v, %v; want committed %d reserved %d", c.acct, u, err, c.committed, c.reserved)
		}
	}
	if errs := s.Settle(ctx, []string{"a1"}, true); !errors.Is(errs[0], state.ErrNotFound) {
		t.Errorf("Settle of a settled reservation = %v, want ErrNotFound", errs[0])
	}
}
