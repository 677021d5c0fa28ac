package embedded_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/storetest"
)

func open(t *testing.T, path string) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store {
		return open(t, filepath.Join(t.TempDir(), "state.db"))
	})
}

// TestReopen: everything acknowledged is there after Close and Open.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	eur := func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }
	if err := s.Reserve(ctx, "m", eur(1000), "a", eur(600)); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(ctx, "m", eur(1000), "b", eur(300)); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "op:1", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	var last receipt.Receipt
	for i := range 3 {
		if last, err = s.Append(ctx, receipt.Receipt{Owner: "", Time: time.Unix(int64(i+1), 0), Decision: receipt.Deny}); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "op:2", time.Now()); !errors.Is(err, embedded.ErrClosed) {
		t.Fatalf("Consume after Close = %v, want ErrClosed", err)
	}

	s = open(t, path)
	if u, err := s.Usage(ctx, "m"); err != nil || u.Committed != 600 || u.Reserved != 300 {
		t.Fatalf("Usage after reopen = %+v, %v; want committed 600 reserved 300", u, err)
	}
	if err := s.Consume(ctx, "op:1", time.Now().Add(time.Hour)); !errors.Is(err, gateway.ErrReplayed) {
		t.Fatalf("Consume of a key consumed before reopening = %v, want ErrReplayed", err)
	}
	if err := s.Release(ctx, "b"); err != nil {
		t.Fatalf("Release of a reservation made before reopening: %v", err)
	}
	r, err := s.Append(ctx, receipt.Receipt{Owner: "", Time: time.Unix(9, 0), Decision: receipt.Allow})
	if err != nil {
		t.Fatal(err)
	}
	if r.Seq != 4 || r.Prev != last.Hash {
		t.Fatalf("receipt after reopen has seq %d prev %s, want 4 after %s", r.Seq, r.Prev, last.Hash)
	}
	owners, err := s.Owners(ctx)
	if err != nil || len(owners) != 1 || owners[0] != "" {
		t.Fatalf("Owners = %q, %v; want the empty owner", owners, err)
	}
}

// TestLocked: a second Open of the same file waits for the lock and fails.
func TestLocked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	open(t, path)
	if _, err := embedded.Open(path, embedded.Options{LockTimeout: 50 * time.Millisecond}); !errors.Is(err, embedded.ErrLocked) {
		t.Fatalf("second Open = %v, want ErrLocked", err)
	}
}

func TestSweep(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	s, err := embedded.Open(filepath.Join(t.TempDir(), "state.db"), embedded.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Consume(ctx, "old", now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "new", now.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("Sweep = %d, %v; want 1", n, err)
	}
	if err := s.Consume(ctx, "new", now.Add(time.Second)); !errors.Is(err, gateway.ErrReplayed) {
		t.Fatalf("unexpired key forgotten: %v", err)
	}
}
