// Package approvalstest is the conformance suite of approvals.Store. Run it
// from each store's tests:
//
//	func TestApprovalStore(t *testing.T) {
//		approvalstest.Run(t, func(t *testing.T) approvals.Store { return mem.New(nil) }, nil)
//	}
package approvalstest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
)

// Run runs the suite. newStore returns an empty store independent of every
// other one; reopen, when not nil, closes s and opens the same storage
// again (a restart).
func Run(t *testing.T, newStore func(t *testing.T) approvals.Store, reopen func(t *testing.T, s approvals.Store) approvals.Store) {
	t.Helper()
	t.Run("PutGetReplaceDelete", func(t *testing.T) { putGetReplaceDelete(t, newStore(t)) })
	t.Run("EntriesInKeyOrderUnexpired", func(t *testing.T) { entriesInKeyOrderUnexpired(t, newStore(t)) })
	if reopen == nil {
		return
	}
	t.Run("SurvivesRestart", func(t *testing.T) { survivesRestart(t, newStore(t), reopen) })
}

// putGetReplaceDelete: for any key (empty, with NUL, not UTF-8, long) an
// entry is put, replaced, found in its space only, and deleted; deleting
// nothing is no error.
func putGetReplaceDelete(t *testing.T, s approvals.Store) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	for _, k := range []string{"", "a\x00b", "\xff not utf-8", strings.Repeat("k", 1000)} {
		if err := s.PutEntry(ctx, approvals.SpaceRequests, k, []byte("open"), hour); err != nil {
			t.Fatalf("PutEntry(%q): %v", k, err)
		}
		if err := s.PutEntry(ctx, approvals.SpaceRequests, k, []byte("approved"), hour); err != nil {
			t.Fatal(err)
		}
		v, ok, err := s.Entry(ctx, approvals.SpaceRequests, k)
		if err != nil || !ok || string(v) != "approved" {
			t.Fatalf("Entry(%q) = %q, %v, %v; want the replacement", k, v, ok, err)
		}
		if _, ok, _ := s.Entry(ctx, approvals.SpaceSessions, k); ok {
			t.Fatalf("key %q found in another space", k)
		}
		if err := s.DeleteEntry(ctx, approvals.SpaceRequests, k); err != nil {
			t.Fatal(err)
		}
		if _, ok, err := s.Entry(ctx, approvals.SpaceRequests, k); ok || err != nil {
			t.Fatalf("Entry after DeleteEntry(%q) = %v, %v", k, ok, err)
		}
	}
	if err := s.DeleteEntry(ctx, approvals.SpaceRequests, "never"); err != nil {
		t.Fatalf("DeleteEntry of nothing: %v", err)
	}
}

// entriesInKeyOrderUnexpired: Entries lists one space's unexpired entries
// in key order, and stops at fn's first error, returning it.
func entriesInKeyOrderUnexpired(t *testing.T, s approvals.Store) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	for _, k := range []string{"c", "a", "b\x00"} {
		if err := s.PutEntry(ctx, approvals.SpaceCallbacks, k, []byte("v"+k), hour); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.PutEntry(ctx, approvals.SpaceCallbacks, "old", []byte("x"), time.Now().Add(-time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := s.PutEntry(ctx, approvals.SpaceSessions, "other", []byte("x"), hour); err != nil {
		t.Fatal(err)
	}
	var got []string
	if err := s.Entries(ctx, approvals.SpaceCallbacks, func(k string, v []byte) error {
		got = append(got, fmt.Sprintf("%q=%s", k, v))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if want := `"a"=va "b\x00"=vb` + "\x00" + ` "c"=vc`; strings.Join(got, " ") != want {
		t.Fatalf("Entries = %q, want %q", strings.Join(got, " "), want)
	}
	if _, ok, _ := s.Entry(ctx, approvals.SpaceCallbacks, "old"); ok {
		t.Fatal("an expired entry was returned")
	}
	stop := errors.New("stop")
	n := 0
	if err := s.Entries(ctx, approvals.SpaceCallbacks, func(string, []byte) error { n++; return stop }); !errors.Is(err, stop) || n != 1 {
		t.Fatalf("Entries after fn's error: %v after %d calls", err, n)
	}
}

// survivesRestart: an entry of each space put before reopen is found
// after it.
func survivesRestart(t *testing.T, s approvals.Store, reopen func(t *testing.T, s approvals.Store) approvals.Store) {
	ctx, hour := context.Background(), time.Now().Add(time.Hour)
	entries := map[string]string{approvals.SpaceRequests: "approved", approvals.SpaceSessions: "alice", approvals.SpaceCallbacks: "called"}
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
