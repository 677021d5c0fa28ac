package storetest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/state"
)

// RunEntries runs the conformance suite of state.Entries (the approval
// page's requests and sessions, the call-backs). newStore returns an empty
// store independent of every other one; reopen, when not nil, closes s
// and opens the same storage again (a restart).
func RunEntries(t *testing.T, newStore func(t *testing.T) state.Entries, reopen func(t *testing.T, s state.Entries) state.Entries) {
	t.Helper()
	t.Run("PutGetReplaceDelete", func(t *testing.T) { putGetReplaceDelete(t, newStore(t)) })
	t.Run("EntriesInKeyOrderUnexpired", func(t *testing.T) { entriesInKeyOrderUnexpired(t, newStore(t)) })
	t.Run("SwapOnlyFromOld", func(t *testing.T) { swapOnlyFromOld(t, newStore(t)) })
	t.Run("SwapOneWinner", func(t *testing.T) { swapOneWinner(t, newStore(t)) })
	if reopen == nil {
		return
	}
	t.Run("SurvivesRestart", func(t *testing.T) { survivesRestart(t, newStore(t), reopen) })
}

// putGetReplaceDelete: for any key (empty, with NUL, not UTF-8, long) an
// entry is put, replaced, found in its space only, and deleted; deleting
// nothing is no error.
func putGetReplaceDelete(t *testing.T, s state.Entries) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	for _, k := range []string{"", "a\x00b", "\xff not utf-8", strings.Repeat("k", 1000)} {
		if err := s.PutEntry(ctx, spaceA, k, []byte("open"), hour); err != nil {
			t.Fatalf("PutEntry(%q): %v", k, err)
		}
		if err := s.PutEntry(ctx, spaceA, k, []byte("approved"), hour); err != nil {
			t.Fatal(err)
		}
		v, ok, err := s.Entry(ctx, spaceA, k)
		if err != nil || !ok || string(v) != "approved" {
			t.Fatalf("Entry(%q) = %q, %v, %v; want the replacement", k, v, ok, err)
		}
		if _, ok, _ := s.Entry(ctx, spaceB, k); ok {
			t.Fatalf("key %q found in another space", k)
		}
		if err := s.DeleteEntry(ctx, spaceA, k); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Entry(ctx, spaceA, k); ok || err != nil {
			t.Fatalf("Entry after DeleteEntry(%q) = %v, %v", k, ok, err)
		}
	}
	if err := s.DeleteEntry(ctx, spaceA, "never"); err != nil {
		t.Fatalf("DeleteEntry of nothing: %v", err)
	}
}

// entriesInKeyOrderUnexpired: Entries lists one space's unexpired entries
// in key order, and stops at fn's first error, returning it.
func entriesInKeyOrderUnexpired(t *testing.T, s state.Entries) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	for _, k := range []string{"c", "a", "b\x00"} {
		if err := s.PutEntry(ctx, spaceC, k, []byte("v"+k), hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutEntry(ctx, spaceC, "old", []byte("x"), time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEntry(ctx, spaceB, "other", []byte("x"), hour); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := s.Entries(ctx, spaceC, func(k string, v []byte) error {
		got = append(got, fmt.Sprintf("%q=%s", k, v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := `"a"=va "b\x00"=vb` + "\x00" + ` "c"=vc`; strings.Join(got, " ") != want {
		t.Fatalf("Entries = %q, want %q", strings.Join(got, " "), want)
	}
	if _, ok, _ := s.Entry(ctx, spaceC, "old"); ok {
		t.Fatal("an expired entry was returned")
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Entries(ctx, spaceC, func(string, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Entries after fn's error: %v after %d calls", err, n)
	}
}

// survivesRestart: an entry of each space put before reopen is found
// after it.
func survivesRestart(t *testing.T, s state.Entries, reopen func(t *testing.T, s state.Entries) state.Entries) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	entries := map[string]string{spaceA: "approved", spaceB: "alice", spaceC: "called"}
	for sp, v := range entries {
		if err := s.PutEntry(ctx, sp, "id\x00", []byte(v), hour); err != nil {
			t.Fatal(err)
		}
	}
	s = reopen(t, s)
	for sp, want := range entries {
		if v, ok, err := s.Entry(ctx, sp, "id\x00"); err != nil || !ok || string(v) != want {
			t.Fatalf("after a restart %s = %q, %v, %v; want %q", sp, v, ok, err, want)
		}
	}
}

// swapOnlyFromOld: SwapEntry writes only over an unexpired entry holding
// exactly old; otherwise it reports false and leaves the entry as it was.
func swapOnlyFromOld(t *testing.T, s state.Entries) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	sp := spaceA
	if ok, err := s.SwapEntry(ctx, sp, "absent", nil, []byte("x"), hour); ok || err != nil {
		t.Fatalf("SwapEntry over nothing = %v, %v; want false, nil", ok, err)
	}
	if _, ok, _ := s.Entry(ctx, sp, "absent"); ok {
		t.Fatal("SwapEntry over nothing created an entry")
	}
	if err := s.PutEntry(ctx, sp, "k", []byte("pending"), hour); err != nil {
		t.Fatal(err)
	}
	for _, old := range [][]byte{nil, []byte(""), []byte("pendin"), []byte("pending "), []byte("PENDING")} {
		if ok, err := s.SwapEntry(ctx, sp, "k", old, []byte("rejected"), hour); ok || err != nil {
			t.Fatalf("SwapEntry from %q over %q = %v, %v; want false, nil", old, "pending", ok, err)
		}
	}
	if ok, err := s.SwapEntry(ctx, sp, "k", []byte("pending"), []byte("approved"), hour); !ok || err != nil {
		t.Fatalf("SwapEntry from the value there = %v, %v; want true, nil", ok, err)
	}
	if v, ok, err := s.Entry(ctx, sp, "k"); err != nil || !ok || string(v) != "approved" {
		t.Fatalf("Entry after the swap = %q, %v, %v", v, ok, err)
	}
	if ok, err := s.SwapEntry(ctx, sp, "k", []byte("pending"), []byte("rejected"), hour); ok || err != nil {
		t.Fatalf("a second swap from the old value = %v, %v; want false", ok, err)
	}
	if v, _, _ := s.Entry(ctx, sp, "k"); string(v) != "approved" {
		t.Fatalf("a refused swap changed the entry to %q", v)
	}
	if _, ok, _ := s.Entry(ctx, spaceB, "k"); ok {
		t.Fatal("the swap wrote into another space")
	}
	if err := s.PutEntry(ctx, sp, "gone", []byte("pending"), time.Now().Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.SwapEntry(ctx, sp, "gone", []byte("pending"), []byte("approved"), hour); ok || err != nil {
		t.Fatalf("SwapEntry over an expired entry = %v, %v; want false", ok, err)
	}
}

// swapOneWinner: of many processes swapping the same entry from the same
// value at once, exactly one wins, and the entry holds its value.
func swapOneWinner(t *testing.T, s state.Entries) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	sp := spaceA
	for round := range 5 {
		key := fmt.Sprintf("race-%d", round)
		if err := s.PutEntry(ctx, sp, key, []byte("pending"), hour); err != nil {
			t.Fatal(err)
		}
		const n = 8
		won := make(chan string, n)
		errs := make(chan error, n)
		start := make(chan struct{})
		for i := range n {
			go func() {
				<-start
				v := fmt.Sprintf("decided by %d", i)
				ok, err := s.SwapEntry(ctx, sp, key, []byte("pending"), []byte(v), hour)
				if err != nil {
					errs <- err
					return
				}
				if ok {
					won <- v
				}
				errs <- nil
			}()
		}
		close(start)
		for range n {
			if err := <-errs; err != nil {
				t.Fatal(err)
			}
		}
		close(won)
		var winners []string
		for w := range won {
			winners = append(winners, w)
		}
		if len(winners) != 1 {
			t.Fatalf("round %d: %d swaps won (%v); want exactly one", round, len(winners), winners)
		}
		if v, _, _ := s.Entry(ctx, sp, key); string(v) != winners[0] {
			t.Fatalf("round %d: entry holds %q, the winner wrote %q", round, v, winners[0])
		}
	}
}

// The spaces the entries suite writes in: any names do; these are the
// approval page's.
const (
	spaceA = "approvals/requests"
	spaceB = "approvals/sessions"
	spaceC = "approvals/callbacks"
)
