package storetest

import (
	"context"
	"sort"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/state"
)

// testOpenReservations checks state.Reconciler, which every durable
// store implements: open reservations are listed with their account,
// amount and currency, committed and released ones are not, and the time
// bound leaves out what is reserved after it; Consumed tells consumed keys
// from others.
func testOpenReservations(t *testing.T, s state.Store) {
	rs, ok := s.(state.Reconciler)
	if !ok {
		t.Fatalf("%T does not implement state.Reconciler", s)
	}
	ctx := context.Background()
	limit := eur(10000)
	for _, id := range []string{"a1", "a2", "a3", "b1 pay.send emma with spaces"} {
		acct := "m-a"
		if id[0] == 'b' {
			acct = "m-b"
		}
		if err := s.Reserve(ctx, acct, limit, id, eur(100)); err != nil {
			t.Fatalf("Reserve %s: %v", id, err)
		}
	}
	if err := s.Commit(ctx, "a2"); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, "a3"); err != nil {
		t.Fatal(err)
	}
	// Bound far in the future to list everything, far in the past for
	// nothing; Since is on the store's clock (here the wall clock), by
	// whatever clock the store stamps a reservation with.
	open, err := rs.OpenReservations(ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	sort.Slice(open, func(i, j int) bool { return open[i].ID < open[j].ID })
	if len(open) != 2 || open[0].ID != "a1" || open[0].Account != "m-a" || open[0].Amount != eur(100) ||
		open[1].ID != "b1 pay.send emma with spaces" || open[1].Account != "m-b" {
		t.Fatalf("OpenReservations = %+v, want a1 on m-a and b1 on m-b, 1.00 EUR each", open)
	}
	checkSince(t, open)
	if old, err := rs.OpenReservations(ctx, time.Now().Add(-24*time.Hour)); err != nil || len(old) != 0 {
		t.Errorf("OpenReservations before yesterday = %+v, %v; want none", old, err)
	}
	for _, r := range open {
		if err := s.Release(ctx, r.ID); err != nil {
			t.Fatal(err)
		}
	}
	if open, err := rs.OpenReservations(ctx, time.Now().Add(time.Hour)); err != nil || len(open) != 0 {
		t.Errorf("after releasing every one: %+v, %v", open, err)
	}
}

// checkSince: each reservation was made now, by its Since on the store's
// clock (here the wall clock), whatever clock the store stamps it with.
func checkSince(t *testing.T, open []state.Reservation) {
	t.Helper()
	for _, r := range open {
		if d := time.Since(r.Since); d < -time.Minute || d > time.Minute {
			t.Errorf("reservation %s made %v ago by its Since (%v); want now", r.ID, d, r.Since)
		}
	}
}
