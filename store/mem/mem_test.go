package mem_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) state.Store { return mem.New(nil) })
}

// FuzzKeys: any key round-trips (seeds in testdata/fuzz/FuzzKeys).
func FuzzKeys(f *testing.F) { storetest.Fuzz(f, mem.New(nil)) }

// TestConsumeFarExpiry: a key whose expiry is past 2262 (a mandate valid
// until 9999-12-31, as an issuer may write "never expires"; its operations'
// nonces expire with it) is never forgotten by a sweep. Expiries were
// kept as Unix nanoseconds, which such a date overflows (to a time in the
// past), so the first sweep forgot the key and the same operation could
// execute again.
func TestConsumeFarExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s := mem.New(func() time.Time { return now })
	far := storetest.FarExpiries
	for i, exp := range far {
		if err := s.Consume(ctx, fmt.Sprintf("op:far-%d", i), exp); err != nil {
			t.Fatal(err)
		}
	}
	// Enough other keys to make the store sweep (it sweeps when its set of
	// keys has doubled, from 1024 on), some already expired.
	for i := range 3000 {
		if err := s.Consume(ctx, fmt.Sprintf("op:%d", i), now.Add(time.Duration(i%3-1)*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	for i, exp := range far {
		if err := s.Consume(ctx, fmt.Sprintf("op:far-%d", i), exp); !errors.Is(err, state.ErrReplayed) {
			t.Errorf("key expiring %s consumed again after a sweep: %v, want ErrReplayed", exp, err)
		}
	}
	// And an expired one is still forgotten.
	if err := s.Consume(ctx, "op:0", now.Add(time.Hour)); err != nil {
		t.Errorf("an expired key was kept: %v", err)
	}
}

func TestAuditConformance(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) storetest.AuditStore { return mem.New(nil) })
}
