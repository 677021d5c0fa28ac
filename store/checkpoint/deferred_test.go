package checkpoint_test

import (
	"context"
	"crypto/ed25519"
	"path/filepath"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/checkpoint"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/mem"
)

// TestDeferred: receipts appended deferred count towards Every; the one
// that reaches it is appended durably and its checkpoint signed; Flush
// reads the head the deferred receipts moved and covers it.
func TestDeferred(t *testing.T) {
	ctx := context.Background()
	_, priv, _ := ed25519.GenerateKey(seed(3))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st, err := embedded.Open(filepath.Join(t.TempDir(), "state.db"), embedded.Options{Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	sk := &sink{}
	cp := checkpoint.Wrap(st, sk, receipt.NewEd25519Signer("cp-1", priv), checkpoint.Config{Every: 3, Now: func() time.Time { return now }})
	for i := range 4 {
		if err := cp.AppendDeferred(ctx, receipt.Receipt{Owner: "emma", Time: now.Add(time.Duration(i) * time.Second), Verdict: intent.Deny}); err != nil {
			t.Fatal(err)
		}
	}
	if len(sk.cs) != 1 || sk.cs[0].Seq != 3 {
		t.Fatalf("checkpoints %+v, want one at seq 3", sk.cs)
	}
	h, err := st.Head(ctx, "emma")
	if err != nil {
		t.Fatal(err)
	}
	if h.Seq != 4 {
		t.Fatalf("head at seq %d, want 4", h.Seq)
	}
	if err := cp.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if len(sk.cs) != 2 || sk.cs[1].Seq != 4 || sk.cs[1].Head != h.Hash {
		t.Fatalf("after Flush: checkpoints %+v, want a second one of seq 4 %s", sk.cs, h.Hash)
	}
	if err := cp.Flush(ctx); err != nil || len(sk.cs) != 2 {
		t.Fatalf("a second Flush signed again: %d checkpoints, %v", len(sk.cs), err)
	}

	// Over a store that cannot defer, AppendDeferred is Append.
	m := mem.New(func() time.Time { return now })
	cm := checkpoint.Wrap(m, sk, receipt.NewEd25519Signer("cp-1", priv), checkpoint.Config{Every: 100, Now: func() time.Time { return now }})
	if err := cm.AppendDeferred(ctx, receipt.Receipt{Owner: "noah", Time: now, Verdict: intent.Deny}); err != nil {
		t.Fatal(err)
	}
	if rs, err := m.Receipts(ctx, "noah", 1, 0); err != nil || len(rs) != 1 {
		t.Fatalf("mem holds %d receipts, %v; want 1", len(rs), err)
	}
}
