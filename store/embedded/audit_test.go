package embedded_test

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"slices"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/storetest"
)

// TestAuditUpgrade: a file of version 1 (no index) is indexed when it is
// opened, and its receipts are then found by Page, filters and all.
func TestAuditUpgrade(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var all []receipt.Receipt
	for i := range 60 {
		for _, o := range []intent.Owner{"alice", "bob"} {
			r, err := s.Append(ctx, storetest.AuditDraft(o, i))
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, r)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	// Back to version 1: no index buckets.
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range []string{"audit", "audit_verdict", "audit_result", "audit_value", "audit_owner"} {
			if err := tx.DeleteBucket([]byte(b)); err != nil {
				return err
			}
		}
		return tx.Bucket([]byte("meta")).Put([]byte("version"), binary.BigEndian.AppendUint64(nil, 1))
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	s = open(t, path)
	q := state.ReceiptQuery{Verdict: "allow", Payee: "V-2", PayeeParams: []string{"vendor"}, Limit: 4}
	var want []uint64
	for _, r := range slices.Backward(all) {
		if r.Verdict == intent.Allow && slices.ContainsFunc(r.Resolved, func(res intent.Resolved) bool { return res.Param == "vendor" && res.Value == "V-2" }) {
			want = append(want, r.Seq*10+map[intent.Owner]uint64{"alice": 1, "bob": 2}[r.Owner])
		}
	}
	var got []uint64
	for {
		p, err := s.Page(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range p.Receipts {
			got = append(got, r.Seq*10+map[intent.Owner]uint64{"alice": 1, "bob": 2}[r.Owner])
		}
		if q.Cursor = p.Next; q.Cursor == "" {
			break
		}
	}
	if len(want) < 4 || !slices.Equal(got, want) {
		t.Fatalf("after the upgrade, pages hold %v, want %v", got, want)
	}
}
