package postgres_test

import (
	"context"
	"testing"
	"time"

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
	s, _ := open(t, postgres.Config{Now: clock.Now})
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
