package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/internal/testclock"
	"github.com/intentplane/intentplane/store/postgres"
)

// TestGatewayClock: a gateway whose clock is not the database server's
// (here two years ahead, as a test clock or a skewed host would be) sees
// entries and records expire by its own clock, as the other stores do,
// and the age of reservations measured as it would measure it.
func TestGatewayClock(t *testing.T) {
	t.Parallel()
	clock := testclock.New(time.Now().AddDate(2, 0, 0).Truncate(time.Microsecond))
	s, dsn := open(t, postgres.Config{Now: clock.Now})
	ctx := context.Background()
	hour := clock.Now().Add(time.Hour)
	if err := s.PutEntry(ctx, "sessions", "k", []byte("v"), hour); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Keep(ctx, "mandate\x00m", []byte("token"), hour); err != nil {
		t.Fatal(err)
	}
	eur := intent.Money{Currency: "EUR", Amount: 100}
	if err := s.Reserve(ctx, "m-a", intent.Money{Currency: "EUR", Amount: 1000}, "r1", eur); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.Entry(ctx, "sessions", "k"); err != nil || !ok {
		t.Fatalf("the entry before its expiry: %v, %v", ok, err)
	}
	if open, err := s.OpenReservations(ctx, clock.Now().Add(-time.Hour)); err != nil || len(open) != 0 {
		t.Errorf("reservations older than an hour by the gateway's clock: %+v, %v; want none", open, err)
	}
	open, err := s.OpenReservations(ctx, clock.Now().Add(time.Minute))
	if err != nil || len(open) != 1 {
		t.Fatalf("reservations made before a minute from now: %+v, %v; want r1", open, err)
	}
	if d := clock.Now().Sub(open[0].Since); d < -time.Minute || d > time.Minute {
		t.Errorf("r1 made %v before the gateway's now by its Since; want about now", d)
	}

	// A reservation left open for days (a crash before a long weekend):
	// its age, an interval of days, is measured in full.
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `UPDATE budget_reservations SET created_at = now() - interval '3 days 2 hours'`); err != nil {
		t.Fatal(err)
	}
	if open, err := s.OpenReservations(ctx, clock.Now().Add(-72*time.Hour)); err != nil || len(open) != 1 {
		t.Fatalf("reservations older than three days: %+v, %v; want r1", open, err)
	} else if d := clock.Now().Sub(open[0].Since) - 74*time.Hour; d < -time.Minute || d > time.Minute {
		t.Errorf("r1 made %v before the gateway's now by its Since; want 74h", clock.Now().Sub(open[0].Since))
	}

	clock.Advance(2 * time.Hour)
	if _, ok, err := s.Entry(ctx, "sessions", "k"); err != nil || ok {
		t.Errorf("the entry an hour after its expiry by the gateway's clock: found %v, %v", ok, err)
	}
	if _, _, ok, err := s.Kept(ctx, "mandate\x00m"); err != nil || ok {
		t.Errorf("the record an hour after its expiry by the gateway's clock: found %v, %v", ok, err)
	}
	if v, _, err := s.Keep(ctx, "mandate\x00m", []byte("new"), clock.Now().Add(time.Hour)); err != nil || string(v) != "new" {
		t.Errorf("keeping the expired record's key again: %q, %v; want the new value", v, err)
	}
}
