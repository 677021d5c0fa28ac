package storetest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// AuditStore is a receipt log with its index, what RunAudit checks.
type AuditStore interface {
	receipt.Log
	state.ReceiptIndex
}

// RunAudit runs the conformance suite of state.ReceiptIndex: every filter
// against a plain scan of the receipts, paging both ways without a gap or
// a repeat, also while receipts are appended, and altered cursors refused.
// newStore must return an empty store, independent of every other one.
func RunAudit(t *testing.T, newStore func(t *testing.T) AuditStore) {
	t.Helper()
	t.Run("Filters", func(t *testing.T) { auditFilters(t, newStore(t)) })
	t.Run("PagesBothWays", func(t *testing.T) { auditBothWays(t, newStore(t)) })
	t.Run("PagesWhileAppending", func(t *testing.T) { auditWhileAppending(t, newStore(t)) })
	t.Run("BadCursorAndQuery", func(t *testing.T) { auditBadCursor(t, newStore(t)) })
	t.Run("OldestFirst", func(t *testing.T) { auditOldestFirst(t, newStore(t)) })
}

// auditBase is the time of the suite's first receipt.
var auditBase = time.Date(2026, 10, 1, 8, 0, 0, 0, time.UTC)

// AuditDraft returns the i-th of a varied set of receipts of owner: its
// time steps a minute every three receipts (so that receipts of several
// owners share times), its verdict, result and vendor cycle, and it
// resolves "vendor" and "iban" to trusted values; benchmarks use it too.
func AuditDraft(owner intent.Owner, i int) receipt.Receipt {
	verdicts := []intent.Verdict{intent.Allow, intent.Deny, intent.StepUp}
	r := receipt.Receipt{
		Owner: owner, Time: auditBase.Add(time.Duration(i/3) * time.Minute),
		Action: "ap.pay_bill", Sent: fmt.Sprintf(`{"n":%d}`, i),
		Verdict: verdicts[i%3], Result: receipt.ResultNotExecuted,
		Resolved: []intent.Resolved{
			{Param: "vendor", Sent: "acme", Value: fmt.Sprintf("V-%d", i%7)},
			{Param: "iban", Sent: "iban", Value: fmt.Sprintf("DE%02d", i%5)},
		},
	}
	if r.Verdict == intent.Deny {
		r.Code = intent.CodePolicyDenied
	}
	if r.Verdict == intent.Allow && i%2 == 0 {
		r.Result = receipt.ResultExecuted
	}
	if i%11 == 10 {
		r.Resolved = nil // refused before resolution
	}
	return r
}

// auditKey names a receipt: its owner and Seq.
type auditKey struct {
	Owner intent.Owner
	Seq   uint64
}

// fill appends n receipts per owner, interleaved, and returns them.
func fill(t *testing.T, s AuditStore, owners []intent.Owner, n int) []receipt.Receipt {
	t.Helper()
	var out []receipt.Receipt
	for i := range n {
		for _, o := range owners {
			r, err := s.Append(context.Background(), AuditDraft(o, i))
			if err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
	}
	return out
}

// expect returns the keys of the receipts of all q keeps, newest first.
func expect(t *testing.T, all []receipt.Receipt, q state.ReceiptQuery) []auditKey {
	t.Helper()
	q.Cursor = ""
	p, err := state.PlanOf(q)
	if err != nil {
		t.Fatal(err)
	}
	var keep []receipt.Receipt
	for _, r := range all {
		if p.Keeps(state.EntryOf(r)) {
			keep = append(keep, r)
		}
	}
	slices.SortFunc(keep, func(a, b receipt.Receipt) int { return state.KeyOf(b).Compare(state.KeyOf(a)) })
	return keysOf(keep)
}

func keysOf(rs []receipt.Receipt) []auditKey {
	out := []auditKey{}
	for _, r := range rs {
		out = append(out, auditKey{r.Owner, r.Seq})
	}
	return out
}

// pageAll reads every page of q forwards and returns the receipts' keys,
// failing on a page over the limit or a receipt that does not read back
// whole.
func pageAll(t *testing.T, s AuditStore, q state.ReceiptQuery, pages func(state.ReceiptPage)) []auditKey {
	t.Helper()
	out := []auditKey{}
	for n := 0; ; n++ {
		pg, err := s.Page(context.Background(), q)
		if err != nil {
			t.Fatalf("page %d of %+v: %v", n, q, err)
		}
		if q.Limit > 0 && len(pg.Receipts) > q.Limit {
			t.Fatalf("page %d holds %d receipts, over the limit %d", n, len(pg.Receipts), q.Limit)
		}
		for _, r := range pg.Receipts {
			if r.Hash.IsZero() || r.Sent == "" {
				t.Fatalf("receipt %s #%d read back without its hash or body", r.Owner, r.Seq)
			}
		}
		if pages != nil {
			pages(pg)
		}
		out = append(out, keysOf(pg.Receipts)...)
		if pg.Next == "" {
			return out
		}
		if n > 10000 {
			t.Fatal("paging does not end")
		}
		q.Cursor = pg.Next
	}
}

func auditFilters(t *testing.T, s AuditStore) {
	// Bytewise, "Bob" < "alice" < "Émile"; a collation of words would
	// put alice first.
	owners := []intent.Owner{"alice", "Bob", "Émile"}
	all := fill(t, s, owners, 40)
	params := []string{"vendor"}
	for _, tc := range []struct {
		name string
		q    state.ReceiptQuery
	}{
		{"all", state.ReceiptQuery{}},
		{"owners", state.ReceiptQuery{Owners: []intent.Owner{"Bob", "Émile"}}},
		{"one owner", state.ReceiptQuery{Owners: []intent.Owner{"Émile"}}},
		{"no owner", state.ReceiptQuery{Owners: []intent.Owner{}}},
		{"unknown owner", state.ReceiptQuery{Owners: []intent.Owner{"dave"}}},
		{"time range", state.ReceiptQuery{From: auditBase.Add(3 * time.Minute), To: auditBase.Add(7 * time.Minute)}},
		{"from", state.ReceiptQuery{From: auditBase.Add(10 * time.Minute)}},
		{"verdict", state.ReceiptQuery{Verdict: "step_up"}},
		{"result", state.ReceiptQuery{Result: receipt.ResultExecuted}},
		{"payee", state.ReceiptQuery{Payee: "V-3", PayeeParams: params}},
		{"payee of another param", state.ReceiptQuery{Payee: "DE01", PayeeParams: params}},
		{"payee either param", state.ReceiptQuery{Payee: "DE01", PayeeParams: []string{"vendor", "iban"}}},
		{"unknown payee", state.ReceiptQuery{Payee: "V-99", PayeeParams: params}},
		{"payee of any param", state.ReceiptQuery{Payee: "DE02"}},
		{"everything", state.ReceiptQuery{Owners: []intent.Owner{"alice"}, From: auditBase.Add(2 * time.Minute), To: auditBase.Add(12 * time.Minute),
			Verdict: "allow", Result: receipt.ResultNotExecuted, Payee: "V-1", PayeeParams: params}},
	} {
		for _, limit := range []int{1, 4, 0} {
			t.Run(fmt.Sprintf("%s/limit %d", tc.name, limit), func(t *testing.T) {
				q := tc.q
				q.Limit = limit
				want := expect(t, all, q)
				if tc.name == "all" && len(want) != len(all) || tc.name == "payee" && len(want) == 0 {
					t.Fatalf("the case selects %d receipts: the data does not test it", len(want))
				}
				got := pageAll(t, s, q, nil)
				if !slices.Equal(want, got) {
					t.Errorf("Page(%+v):\n got %v\nwant %v", q, got, want)
				}
			})
		}
	}
}

// auditBothWays pages forwards to the end, then back with each page's
// Prev: the pages read backwards are those read forwards.
func auditBothWays(t *testing.T, s AuditStore) {
	ctx := context.Background()
	fill(t, s, []intent.Owner{"alice", "bob"}, 25)
	q := state.ReceiptQuery{Limit: 7, Verdict: "deny"}
	var fwd []state.ReceiptPage
	pageAll(t, s, q, func(p state.ReceiptPage) { fwd = append(fwd, p) })
	if len(fwd) < 3 {
		t.Fatalf("%d pages: too few to test", len(fwd))
	}
	if fwd[0].Prev != "" {
		t.Error("the first page has a Prev cursor")
	}
	for i := len(fwd) - 1; i > 0; i-- {
		q.Cursor = fwd[i].Prev
		back, err := s.Page(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if want, got := keysOf(fwd[i-1].Receipts), keysOf(back.Receipts); !slices.Equal(want, got) {
			t.Errorf("Prev of page %d:\n got %v\nwant page %d %v", i, got, i-1, want)
		}
		if (back.Prev == "") != (i-1 == 0) {
			t.Errorf("page %d read backwards has Prev %q", i-1, back.Prev)
		}
		if back.Next == "" {
			t.Errorf("page %d read backwards has no Next", i-1)
		}
	}
}

// auditWhileAppending pages through while two goroutines append 400
// receipts each, newer ones and (with a clock behind) older ones: every receipt stored before the first
// page is read exactly once, and no receipt twice.
func auditWhileAppending(t *testing.T, s AuditStore) {
	ctx := context.Background()
	before := fill(t, s, []intent.Owner{"alice", "bob", "carol"}, 30)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	errc := make(chan error, 2)
	for w, o := range []intent.Owner{"alice", "dave"} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 400 {
				select {
				case <-stop:
					errc <- nil
					return
				default:
				}
				r := AuditDraft(o, i)
				if w == 1 {
					r.Time = auditBase.Add(time.Duration(i%40) * time.Minute) // among the old ones
				} else {
					r.Time = auditBase.Add(time.Hour + time.Duration(i)*time.Second)
				}
				if _, err := s.Append(ctx, r); err != nil {
					errc <- err
					return
				}
			}
			errc <- nil
		}()
	}
	got := pageAll(t, s, state.ReceiptQuery{Limit: 5}, func(state.ReceiptPage) { time.Sleep(time.Millisecond) })
	close(stop)
	wg.Wait()
	for range 2 {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	seen := map[auditKey]int{}
	for _, k := range got {
		if seen[k]++; seen[k] == 2 {
			t.Errorf("%s #%d read twice", k.Owner, k.Seq)
		}
	}
	for _, k := range keysOf(before) {
		if seen[k] != 1 {
			t.Errorf("%s #%d, stored before paging began, read %d times", k.Owner, k.Seq, seen[k])
		}
	}
}

func auditBadCursor(t *testing.T, s AuditStore) {
	ctx := context.Background()
	fill(t, s, []intent.Owner{"alice"}, 10)
	q := state.ReceiptQuery{Limit: 3}
	first, err := s.Page(ctx, q)
	if err != nil || first.Next == "" {
		t.Fatalf("first page: %v, next %q", err, first.Next)
	}
	flip := []byte(first.Next)
	i := len(flip) / 2
	flip[i] = map[bool]byte{true: 'B', false: 'A'}[flip[i] == 'A']
	for name, c := range map[string]string{
		"altered": string(flip), "truncated": first.Next[:len(first.Next)-3], "not base64": "not a cursor!",
		"empty bytes": "AA",
	} {
		q.Cursor = c
		if _, err := s.Page(ctx, q); !errors.Is(err, state.ErrBadCursor) {
			t.Errorf("%s cursor: err %v, want state.ErrBadCursor", name, err)
		}
	}
	other := state.ReceiptQuery{Limit: 3, Verdict: "allow", Cursor: first.Next}
	if _, err := s.Page(ctx, other); !errors.Is(err, state.ErrBadCursor) {
		t.Errorf("a cursor read with other filters: err %v, want state.ErrBadCursor", err)
	}
	for name, bad := range map[string]state.ReceiptQuery{
		"verdict":        {Verdict: "maybe"},
		"negative limit": {Limit: -1},
	} {
		if _, err := s.Page(ctx, bad); !errors.Is(err, state.ErrBadQuery) {
			t.Errorf("%s: err %v, want state.ErrBadQuery", name, err)
		}
	}
}

// auditOldestFirst reads from state.Cursor(q, ReceiptKey{}, true) on, with
// each page's Prev: every receipt q selects, oldest page first.
func auditOldestFirst(t *testing.T, s AuditStore) {
	all := fill(t, s, []intent.Owner{"alice", "Bob"}, 20)
	q := state.ReceiptQuery{Limit: 6, Result: receipt.ResultNotExecuted}
	want := expect(t, all, q)
	slices.Reverse(want)
	got := []auditKey{}
	q.Cursor = state.Cursor(q, state.ReceiptKey{}, true)
	for n := 0; q.Cursor != ""; n++ {
		p, err := s.Page(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		ks := keysOf(p.Receipts)
		slices.Reverse(ks)
		got = append(got, ks...)
		if q.Cursor = p.Prev; n > 100 {
			t.Fatal("paging does not end")
		}
	}
	if !slices.Equal(want, got) {
		t.Fatalf("oldest first:\n got %v\nwant %v", got, want)
	}
}

// BenchOwners are the owners of a benchmark's receipts: agent-00 to
// agent-09.
func BenchOwners() []intent.Owner {
	out := make([]intent.Owner, 10)
	for i := range out {
		out[i] = intent.Owner(fmt.Sprintf("agent-%02d", i))
	}
	return out
}

// BenchAudit measures pages of s, which holds AuditDraft(o, i) for each
// of BenchOwners and i below perOwner: the first page, a page halfway
// into history, the first and a deep page of one payee's receipts, the
// first page of one verdict's and of one owner's. Each page holds
// DefaultPageSize receipts; a page that holds fewer fails the benchmark.
func BenchAudit(b *testing.B, s state.ReceiptIndex, perOwner int) {
	mid := state.KeyOf(receipt.Receipt{Owner: "agent-05", Seq: uint64(perOwner/2 + 1), Time: AuditDraft("agent-05", perOwner/2).Time})
	vendor := []string{"vendor"}
	deep := func(q state.ReceiptQuery) state.ReceiptQuery {
		q.Cursor = state.Cursor(q, mid, false)
		return q
	}
	for _, c := range []struct {
		name string
		q    state.ReceiptQuery
	}{
		{"first", state.ReceiptQuery{}},
		{"deep", deep(state.ReceiptQuery{})},
		{"deep-newer", func() state.ReceiptQuery { q := state.ReceiptQuery{}; q.Cursor = state.Cursor(q, mid, true); return q }()},
		{"payee", state.ReceiptQuery{Payee: "V-3", PayeeParams: vendor}},
		{"payee-deep", deep(state.ReceiptQuery{Payee: "V-3", PayeeParams: vendor})},
		{"verdict", state.ReceiptQuery{Verdict: "step_up"}},
		{"verdict-deep", deep(state.ReceiptQuery{Verdict: "step_up"})},
		{"owner", state.ReceiptQuery{Owners: []intent.Owner{"agent-03"}}},
		{"owner-deep", deep(state.ReceiptQuery{Owners: []intent.Owner{"agent-05"}})},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := s.Page(context.Background(), c.q)
				if err != nil {
					b.Fatal(err)
				}
				if len(p.Receipts) != state.DefaultPageSize {
					b.Fatalf("a page of %d receipts", len(p.Receipts))
				}
			}
		})
	}
}

// BenchReceipts is how many receipts BenchAudit's callers load: the
// environment's INTENTPLANE_AUDIT_RECEIPTS, or 1,000,000.
func BenchReceipts(b *testing.B) int {
	n := 1_000_000
	if v := os.Getenv("INTENTPLANE_AUDIT_RECEIPTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil || n < 10*state.MaxPageSize {
			b.Fatalf("INTENTPLANE_AUDIT_RECEIPTS=%q: want a number of at least %d", v, 10*state.MaxPageSize)
		}
	}
	return n
}
