package mem

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// TestChainKeepsReceiptsAsBytes appends receipts of every size around a
// chunk's (small ones, one larger than what a chunk has left, one larger
// than a chunk, small ones after them, a receipt of version 1) and reads
// them back, whole and in pages, as they were linked; and checks that
// small receipts share chunks instead of each taking one.
func TestChainKeepsReceiptsAsBytes(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s := New(func() time.Time { return t0 })
	sizes := []int{10, 100, 50_000, 10, 9_000, 10, 70_000, 10, 10, 200_000}
	for range 300 {
		sizes = append(sizes, 300)
	}
	var linked []receipt.Receipt
	for i, n := range sizes {
		r := receipt.Receipt{
			Owner: "emma", Time: t0.Add(time.Duration(i) * time.Second), MandateID: "m-1", Action: "pay.send",
			Args:  intent.Args{"memo": intent.Str(strings.Repeat("x", n)), "amount": intent.AmountValue(1250, 2)},
			Facts: map[string]intent.Value{"paid_today": intent.Int(int64(i)), "trusted": intent.Bool(i%2 == 0)},
			Resolved: []intent.Resolved{{Param: "recipient", Sent: "GB29", Value: "GB29",
				Provenance: intent.Provenance{Source: "registry:beneficiaries", RecordID: "ben-1", At: t0}}},
			Verdict: intent.Allow, Policies: []string{"send"}, Result: receipt.ResultExecuted, Output: "ok",
		}
		if i == 3 {
			r.Version = receipt.Version1
		}
		got, err := s.Append(ctx, r)
		if err != nil {
			t.Fatalf("append %d: %v", i, err)
		}
		linked = append(linked, got)
	}
	wantChain(t, s, "emma", linked)
	for _, page := range []struct {
		from  uint64
		limit int
	}{{0, 3}, {2, 4}, {7, 1}, {uint64(len(sizes)), 5}, {uint64(len(sizes)) + 1, 0}} {
		got, err := s.Receipts(ctx, "emma", page.from, page.limit)
		if err != nil {
			t.Fatal(err)
		}
		i := max(page.from, 1) - 1
		want := linked[min(i, uint64(len(linked))):]
		if page.limit > 0 && len(want) > page.limit {
			want = want[:page.limit]
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("Receipts(from %d, limit %d) (-want, +got):\n%s", page.from, page.limit, diff)
		}
	}
	if _, err := s.Receipts(ctx, "carol", 0, 0); err != receipt.ErrNotFound {
		t.Errorf("an owner without receipts: %v, want ErrNotFound", err)
	}
	c := s.chains["emma"]
	// 300 receipts of ~500 bytes need 3 chunks; the large ones 4 of their
	// own and the first receipts one or two.
	t.Logf("%d chunks", len(c.chunks))
	if n := len(c.chunks); n > 10 {
		t.Errorf("%d receipts kept in %d chunks; small receipts should share them", len(sizes), n)
	}
}

// TestChainSmallForFewReceipts: an owner with one small receipt holds
// about that receipt's bytes, not a whole chunk (10,000 owners of one
// receipt each took 64 KiB apiece, 626 MB); a long chain still ends in
// full-size chunks.
func TestChainSmallForFewReceipts(t *testing.T) {
	ctx := context.Background()
	t0 := time.Date(2026, 12, 2, 9, 0, 0, 0, time.UTC)
	s := New(func() time.Time { return t0 })
	for i := range 100 {
		r := receipt.Receipt{Owner: intent.Owner(fmt.Sprintf("owner-%d", i)), Time: t0, Verdict: intent.Deny, Result: receipt.ResultNotExecuted}
		if _, err := s.Append(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for o, c := range s.chains {
		held := 0
		for _, ch := range c.chunks {
			held += cap(ch)
		}
		if held > 1024 {
			t.Fatalf("owner %q holds %d bytes of chunks for one receipt of %d bytes", o, held, c.at[0].n)
		}
	}
	var linked []receipt.Receipt
	for i := range 2000 {
		r := receipt.Receipt{Owner: "emma", Time: t0.Add(time.Duration(i)), Verdict: intent.Allow, Result: receipt.ResultExecuted,
			Output: strings.Repeat("y", i%700)}
		got, err := s.Append(ctx, r)
		if err != nil {
			t.Fatal(err)
		}
		linked = append(linked, got)
	}
	wantChain(t, s, "emma", linked)
	c := s.chains["emma"]
	for i, ch := range c.chunks[:len(c.chunks)-1] {
		if cap(ch) < chunkSize {
			t.Errorf("chunk %d of %d holds %d bytes, less than a chunk", i, len(c.chunks), cap(ch))
		}
	}
}

// wantChain checks that owner's chain in s reads back as linked, the
// receipts Append returned.
func wantChain(t *testing.T, s *Store, owner intent.Owner, linked []receipt.Receipt) {
	t.Helper()
	all, err := s.Receipts(context.Background(), owner, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(linked, all, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("receipts read back differ (-linked, +read):\n%s", diff)
	}
}
