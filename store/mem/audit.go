package mem

import (
	"context"
	"slices"
	"time"

	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

var _ state.ReceiptIndex = (*Store)(nil)

// audit is the store's index of receipts for state.ReceiptIndex: every
// receipt's entry in key order, and the same entries by verdict, result
// and resolved value, each a slice sorted by key. Receipts come mostly in
// time order, so an insert is mostly an append.
type audit struct {
	all       []*state.Entry
	byVerdict map[string][]*state.Entry
	byResult  map[string][]*state.Entry
	byValue   map[string][]*state.Entry
}

func cmpEntry(a, b *state.Entry) int { return a.Key.Compare(b.Key) }

// insert adds e to the sorted slice s.
func insert(s []*state.Entry, e *state.Entry) []*state.Entry {
	if n := len(s); n == 0 || cmpEntry(s[n-1], e) < 0 {
		return append(s, e)
	}
	i, _ := slices.BinarySearchFunc(s, e, cmpEntry)
	return slices.Insert(s, i, e)
}

// add indexes the stored receipt r.
func (a *audit) add(r receipt.Receipt) {
	if a.byVerdict == nil {
		a.byVerdict, a.byResult, a.byValue = map[string][]*state.Entry{}, map[string][]*state.Entry{}, map[string][]*state.Entry{}
	}
	e := state.EntryOf(r)
	a.all = insert(a.all, &e)
	a.byVerdict[e.Verdict.String()] = insert(a.byVerdict[e.Verdict.String()], &e)
	a.byResult[e.Result] = insert(a.byResult[e.Result], &e)
	var seen []string
	for _, res := range e.Resolved {
		if !slices.Contains(seen, res.Value) {
			seen = append(seen, res.Value)
			a.byValue[res.Value] = insert(a.byValue[res.Value], &e)
		}
	}
}

// candidates returns the narrowest of the sorted slices that holds every
// receipt p may keep.
func (a *audit) candidates(p state.Plan) []*state.Entry {
	best := a.all
	for _, c := range []struct {
		on  bool
		idx map[string][]*state.Entry
		key string
	}{{p.Verdict != "", a.byVerdict, p.Verdict}, {p.Result != "", a.byResult, p.Result}, {p.Payee != "", a.byValue, p.Payee}} {
		if c.on && len(c.idx[c.key]) < len(best) {
			best = c.idx[c.key]
		}
	}
	return best
}

// Page implements state.ReceiptIndex.
func (s *Store) Page(ctx context.Context, q state.ReceiptQuery) (state.ReceiptPage, error) {
	if err := ctx.Err(); err != nil {
		return state.ReceiptPage{}, err
	}
	p, err := state.PlanOf(q)
	if err != nil {
		return state.ReceiptPage{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var found []*state.Entry
	if p.Owners == nil || len(p.Owners) > 0 {
		found = scan(s.audit.candidates(p), p)
	}
	rs := make([]receipt.Receipt, len(found))
	for i, e := range found {
		r, err := s.chains[e.Key.Owner].receipts(e.Key.Seq, 1)
		if err != nil {
			return state.ReceiptPage{}, err
		}
		rs[i] = r[0]
	}
	return p.Finish(rs), nil
}

// scan walks the sorted slice es from p's cursor in p's direction and
// returns up to p.Limit+1 entries p keeps.
func scan(es []*state.Entry, p state.Plan) []*state.Entry {
	var out []*state.Entry
	i := len(es) - 1
	step := -1
	if p.Start {
		at, found := slices.BinarySearchFunc(es, p.After, func(e *state.Entry, k state.ReceiptKey) int { return e.Key.Compare(k) })
		i = at - 1
		if p.Back {
			i, step = at, 1
			if found {
				i++
			}
		}
	}
	if !p.Back && !p.To.IsZero() {
		// Start below To rather than walk every newer receipt.
		to, _ := slices.BinarySearchFunc(es, p.To, func(e *state.Entry, t time.Time) int { return e.Key.Time.Compare(t) })
		i = min(i, to-1)
	}
	for ; i >= 0 && i < len(es) && len(out) <= p.Limit; i += step {
		if outside(es[i].Key.Time, p) {
			break
		}
		if p.Keeps(*es[i]) {
			out = append(out, es[i])
		}
	}
	return out
}

// outside reports whether at, and every time further in p's direction, is
// outside p's time range.
func outside(at time.Time, p state.Plan) bool {
	if p.Back {
		return !p.To.IsZero() && !at.Before(p.To)
	}
	return !p.From.IsZero() && at.Before(p.From)
}
