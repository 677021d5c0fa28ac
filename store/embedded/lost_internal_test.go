package embedded

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// TestDeferredLostIsTold: a deferred receipt whose write fails after the
// caller was answered (here the owner's head is corrupt, as a bad disk
// would leave it) is told to Options.Lost with its owner, once, so that an
// operator's metrics count it; a write that succeeds is not.
func TestDeferredLostIsTold(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var lost []intent.Owner
	s, err := Open(filepath.Join(t.TempDir(), "s.db"), Options{Lost: func(o intent.Owner, err error) {
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			t.Error("Lost told without an error")
		}
		lost = append(lost, o)
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	r := func(o intent.Owner) receipt.Receipt {
		return receipt.Receipt{Owner: o, Time: time.Unix(1, 0), Action: "bank.get_balance", Verdict: intent.Allow}
	}
	if err := s.AppendDeferred(ctx, r("kept")); err != nil {
		t.Fatal(err)
	}
	bad, err := ownerKey("broken")
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(bucketHeads).Put(bad, []byte("corrupt")) }); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendDeferred(ctx, r("broken")); err != nil {
		t.Fatalf("the deferred append was refused at once (%v); the test needs a write that fails later", err)
	}
	if _, err := s.Head(ctx, "kept"); err != nil { // waits for the deferred writes queued before
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lost) != 1 || lost[0] != "broken" {
		t.Errorf("Lost was told %v; want the broken owner's receipt, once", lost)
	}
}
