package postgres_test

import (
	"context"
	"errors"
	"os"
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
