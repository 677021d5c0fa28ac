package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/state"
)

// RunRecords runs the conformance suite of state.Records. newStore must
// return an empty store, independent of every other one it returned;
// reopen, when not nil, closes that store and opens it again on the same
// storage (a restart), for stores that keep records durably.
func RunRecords(t *testing.T, newStore func(t *testing.T) state.Records, reopen func(t *testing.T, s state.Records) state.Records) {
	t.Helper()
	t.Run("KeepFirstWins", func(t *testing.T) { recordsKeepFirstWins(t, newStore(t)) })
	t.Run("ExpiredIsReplaced", func(t *testing.T) { recordsExpiredIsReplaced(t, newStore(t)) })
	t.Run("ConcurrentKeepsAgree", func(t *testing.T) { recordsConcurrentKeepsAgree(t, newStore(t)) })
	t.Run("FarExpiryKept", func(t *testing.T) { recordsFarExpiryKept(t, newStore(t)) })
	if reopen == nil {
		return
	}
	t.Run("SurvivesRestart", func(t *testing.T) { recordsSurviveRestart(t, newStore(t), reopen) })
}

// recordsKeepFirstWins: for any key (empty, with NUL, not UTF-8, of
// MaxKeyLen bytes) the first Keep's value and expiry stay; a longer key is
// ErrKeyTooLong.
func recordsKeepFirstWins(t *testing.T, s state.Records) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour).UTC().Truncate(time.Microsecond)
	for _, k := range []string{"", "a\x00b", "\xff\xfe not utf-8", strings.Repeat("k", state.MaxKeyLen)} {
		v, e, err := s.Keep(ctx, k, []byte("first"), exp)
		if err != nil || string(v) != "first" || !e.Equal(exp) {
			t.Fatalf("Keep(%q) = %q, %v, %v; want first, %v", k, v, e, err, exp)
		}
		v, e, err = s.Keep(ctx, k, []byte("second"), exp.Add(time.Hour))
		if err != nil || string(v) != "first" || !e.Equal(exp) {
			t.Fatalf("second Keep(%q) = %q, %v, %v; want the first value kept", k, v, e, err)
		}
		v, _, ok, err := s.Kept(ctx, k)
		if err != nil || !ok || string(v) != "first" {
			t.Fatalf("Kept(%q) = %q, %v, %v", k, v, ok, err)
		}
	}
	if _, _, ok, err := s.Kept(ctx, "a\x00c"); err != nil || ok {
		t.Fatalf("Kept of a key never kept = %v, %v; want not found", ok, err)
	}
	if _, _, err := s.Keep(ctx, strings.Repeat("k", state.MaxKeyLen+1), nil, exp); !errors.Is(err, state.ErrKeyTooLong) {
		t.Fatalf("Keep of a long key: %v; want ErrKeyTooLong", err)
	}
}

// recordsExpiredIsReplaced: an expired record is not found, and a Keep
// replaces it.
func recordsExpiredIsReplaced(t *testing.T, s state.Records) {
	ctx := context.Background()
	past := time.Now().Add(-time.Minute)
	if _, _, err := s.Keep(ctx, "m", []byte("old"), past); err != nil {
		t.Fatal(err)
	}
	if _, _, ok, err := s.Kept(ctx, "m"); err != nil || ok {
		t.Fatalf("Kept of an expired record = %v, %v; want not found", ok, err)
	}
	v, _, err := s.Keep(ctx, "m", []byte("new"), time.Now().Add(time.Hour))
	if err != nil || string(v) != "new" {
		t.Fatalf("Keep over an expired record = %q, %v; want new", v, err)
	}
}

// FarExpiries are expiries after 2262, where Unix nanoseconds overflow
// int64, that a store must keep as they are: 2311 (intentplane-mcp's
// valid_for = "2500000h", near the longest Go duration), 2556 (whose
// nanoseconds wrap to a time before today) and 9999-12-31 (an issuer's
// "never expires").
var FarExpiries = []time.Time{
	time.Date(2311, 3, 1, 0, 0, 0, 0, time.UTC),
	time.Date(2556, 1, 1, 0, 0, 0, 0, time.UTC),
	time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
}

// recordsFarExpiryKept: a record that expires after 2262, where Unix
// nanoseconds overflow int64 (intentplane-mcp keeps its mandate until the
// mandate's expiry, and valid_for = "2500000h" is a valid duration), is
// found and kept, not taken for expired: otherwise every restart issued a
// new mandate, with its whole budget and none of the operations executed.
func recordsFarExpiryKept(t *testing.T, s state.Records) {
	ctx := context.Background()
	for i, exp := range FarExpiries {
		k := fmt.Sprintf("far-%d", i)
		if _, _, err := s.Keep(ctx, k, []byte("first"), exp); err != nil {
			t.Fatal(err)
		}
		if v, _, ok, err := s.Kept(ctx, k); err != nil || !ok || string(v) != "first" {
			t.Errorf("Kept of a record expiring %s = %q, %v, %v; want first", exp, v, ok, err)
		}
		if v, _, err := s.Keep(ctx, k, []byte("second"), exp); err != nil || string(v) != "first" {
			t.Errorf("second Keep of a record expiring %s = %q, %v; want the first value kept", exp, v, err)
		}
	}
}

// recordsConcurrentKeepsAgree: concurrent Keeps of one key all return the
// same value.
func recordsConcurrentKeepsAgree(t *testing.T, s state.Records) {
	ctx := context.Background()
	const n = 16
	got := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			got[i], _, errs[i] = s.Keep(ctx, "shared\x00key", fmt.Appendf(nil, "v%d", i), time.Now().Add(time.Hour))
		})
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !bytes.Equal(got[i], got[0]) {
			t.Fatalf("Keep %d = %q, %v; Keep 0 = %q: concurrent keeps disagree", i, got[i], errs[i], got[0])
		}
	}
}

// recordsSurviveRestart: a record kept before reopen is found after it.
func recordsSurviveRestart(t *testing.T, s state.Records, reopen func(t *testing.T, s state.Records) state.Records) {
	ctx := context.Background()
	if _, _, err := s.Keep(ctx, "mandate\x00x", []byte("token"), time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	s = reopen(t, s)
	v, _, ok, err := s.Kept(ctx, "mandate\x00x")
	if err != nil || !ok || string(v) != "token" {
		t.Fatalf("after a restart Kept = %q, %v, %v; want token", v, ok, err)
	}
}
