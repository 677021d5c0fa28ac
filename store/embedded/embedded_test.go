package embedded_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/storetest"
)

func open(t testing.TB, path string) *embedded.Store {
	t.Helper()
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) state.Store {
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
		if last, err = s.Append(ctx, receipt.Receipt{Owner: "", Time: time.Unix(int64(i+1), 0), Verdict: intent.Deny}); err != nil {
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
	if err := s.Consume(ctx, "op:1", time.Now().Add(time.Hour)); !errors.Is(err, state.ErrReplayed) {
		t.Fatalf("Consume of a key consumed before reopening = %v, want ErrReplayed", err)
	}
	if err := s.Release(ctx, "b"); err != nil {
		t.Fatalf("Release of a reservation made before reopening: %v", err)
	}
	if err := s.Reserve(ctx, "m", eur(2000), "c", eur(1)); !errors.Is(err, state.ErrLimitMismatch) {
		t.Fatalf("Reserve with another limit after reopening = %v, want ErrLimitMismatch", err)
	}
	r, err := s.Append(ctx, receipt.Receipt{Owner: "", Time: time.Unix(9, 0), Verdict: intent.Allow})
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

// TestAccountWithoutLimit: an account written before limits were kept
// (no 'l' key) takes the limit of its next reservation.
func TestAccountWithoutLimit(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range []string{"meta", "accounts", "reservations", "consumed", "heads", "receipts", "checkpoints"} {
			if _, err := tx.CreateBucket([]byte(b)); err != nil {
				return err
			}
		}
		if err := tx.Bucket([]byte("meta")).Put([]byte("version"), u64(1)); err != nil {
			return err
		}
		// Account m: committed 6.00, reserved 3.00 under reservation b.
		if err := tx.Bucket([]byte("accounts")).Put([]byte("am"), append(append(u64(600), u64(300)...), "EUR"...)); err != nil {
			return err
		}
		return tx.Bucket([]byte("reservations")).Put([]byte("rb"), append(u64(300), 'm'))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s := open(t, path)
	eur := func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }
	if err := s.Reserve(ctx, "m", eur(2000), "c", eur(1100)); err != nil {
		t.Fatalf("first Reserve on an account without a limit: %v", err)
	}
	if err := s.Reserve(ctx, "m", eur(1000), "d", eur(1)); !errors.Is(err, state.ErrLimitMismatch) {
		t.Fatalf("Reserve with another limit than the one adopted = %v, want ErrLimitMismatch", err)
	}
	if err := s.Reserve(ctx, "m", eur(2000), "d", eur(1)); !errors.Is(err, state.ErrExceeded) {
		t.Fatalf("Reserve past the adopted limit = %v, want ErrExceeded", err)
	}
	if err := s.Release(ctx, "b"); err != nil {
		t.Fatalf("Release of an older reservation: %v", err)
	}
	if u, err := s.Usage(ctx, "m"); err != nil || u.Committed != 600 || u.Reserved != 1100 {
		t.Fatalf("Usage = %+v, %v; want committed 600 reserved 1100", u, err)
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
	if err := s.Consume(ctx, "new", now.Add(time.Second)); !errors.Is(err, state.ErrReplayed) {
		t.Fatalf("unexpired key forgotten: %v", err)
	}
}

// FuzzKeys: any key round-trips (seeds in testdata/fuzz/FuzzKeys).
func FuzzKeys(f *testing.F) {
	storetest.Fuzz(f, open(f, filepath.Join(f.TempDir(), "state.db")))
}

// TestSweepFarExpiry: Sweep never forgets a key whose expiry is past 2262
// (a mandate valid until the year 2556 or 9999, whose operations' nonces
// expire with it). Expiries were kept as uint64(t.UnixNano()), which such
// dates overflow; for some (2555 to 2557, among many) the result is below
// today's, so Sweep forgot the key and the operation could execute again.
func TestSweepFarExpiry(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s, err := embedded.Open(filepath.Join(t.TempDir(), "state.db"), embedded.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	far := storetest.FarExpiries
	for i, exp := range far {
		if err := s.Consume(ctx, fmt.Sprintf("op:far-%d", i), exp); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Consume(ctx, "op:old", now.Add(-time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := s.Sweep(ctx); err != nil || n != 1 {
		t.Errorf("Sweep = %d, %v; want 1 (the expired key only)", n, err)
	}
	for i, exp := range far {
		if err := s.Consume(ctx, fmt.Sprintf("op:far-%d", i), exp); !errors.Is(err, state.ErrReplayed) {
			t.Errorf("key expiring %s consumed again after Sweep: %v, want ErrReplayed", exp, err)
		}
	}
}

func TestAuditConformance(t *testing.T) {
	storetest.RunAudit(t, func(t *testing.T) storetest.AuditStore {
		return open(t, filepath.Join(t.TempDir(), "state.db"))
	})
}
