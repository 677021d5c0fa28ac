package gateway

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/core/state"
)

// 5. Context: hold the records one operation at a time may act on, read
// the facts, and build the operation. The records are held from before
// their facts are read until after execution, so that two concurrent
// payments of one bill cannot both see it unpaid.
func (g *Gateway) context(ctx context.Context, st *decision) *intent.Refusal {
	c, m := st.route.contract, st.mandate
	if len(c.Exclusive) > 0 {
		if r := g.hold(ctx, st); r != nil {
			return r
		}
	}
	facts, err := g.facts(ctx, st.route, m, st.res, st.now)
	if err != nil {
		var ve *VisibleError
		if errors.As(err, &ve) {
			return refusals.SystemsInsufficient(ve.Msg)
		}
		return refusals.SystemsUnreadable()
	}
	if !validText(facts, st.res) {
		st.args, st.out.Resolved = st.sent, nil // keep only what the receipt can record
		return refusals.InvalidText()
	}
	st.out.Facts = facts
	op := intent.Operation{Action: c.Action, Args: st.args, MandateID: m.ID, Owner: m.Owner}
	hash, err := op.Hash()
	if err != nil {
		return refusals.Unencodable()
	}
	st.out.Operation, st.out.OperationHash = &op, hash
	st.op.nonce = state.NonceKey(hash)
	st.op.hash = strings.TrimPrefix(st.op.nonce, "op:")
	if c.Budget != "" {
		st.op.amount = intent.Amount(st.args[c.Budget].Int)
		st.op.currency = m.Budget.Currency
		if c.BudgetCurrency != "" {
			v, ok := facts[c.BudgetCurrency]
			if !ok || v.Kind != intent.KindString || v.Str == "" {
				g.log.Error("the budget currency fact is missing", "action", c.Action, "fact", c.BudgetCurrency)
				return refusals.SystemsUnreadable()
			}
			st.op.currency = v.Str
		}
		// An amount read at another scale than its currency's minor unit
		// (2 decimals for a JPY budget) would be counted and shown off by
		// a power of ten: refused, whatever the amount.
		if r := checkScale(c, st); r != nil {
			return r
		}
		st.out.Currency = st.op.currency
	}
	return nil
}

func (g *Gateway) facts(ctx context.Context, rt *route, m *mandate.Mandate, res resolve.Output, now time.Time) (map[string]intent.Value, error) {
	facts := map[string]intent.Value{}
	for i, attrs := range res.Attrs {
		for k, v := range attrs {
			facts[res.Resolved[i].Param+"_"+k] = v
		}
	}
	q := FactQuery{Owner: m.Owner, Action: rt.contract.Action, Args: res.Args, Resolved: res.Resolved, Budget: m.Budget, Budgets: m.AllBudgets(), Claims: m.Claims, Now: now}
	for _, p := range rt.pack.Context {
		fs, err := p.Facts(ctx, q)
		if err != nil {
			return nil, err
		}
		for k, v := range fs {
			if _, dup := facts[k]; dup {
				return nil, fmt.Errorf("gateway: fact %q given twice", k)
			}
			facts[k] = v
		}
	}
	return facts, nil
}

// validText reports whether every string read from the systems of record
// (facts, resolved values and their provenance) is valid UTF-8: the
// receipt, which is written after execution, must be able to record them.
func validText(facts map[string]intent.Value, res resolve.Output) bool {
	for k, v := range facts {
		if !utf8.ValidString(k) || v.Kind == intent.KindString && !utf8.ValidString(v.Str) {
			return false
		}
	}
	for _, r := range res.Resolved {
		p := r.Provenance
		if !utf8.ValidString(r.Value) || !utf8.ValidString(p.Source) || !utf8.ValidString(p.RecordID) || !utf8.ValidString(p.Version) {
			return false
		}
	}
	return true
}

// checkScale refuses the budget amount of st when it is read in another
// currency than the one it is counted in (an amount in the currency an
// argument names, contract.AmountIn, where the record paid is in
// another), or at another scale than that currency's minor unit.
func checkScale(c *contract.Contract, st *decision) *intent.Refusal {
	v := st.args[c.Budget]
	if v.Kind != intent.KindAmount {
		return nil
	}
	for _, p := range c.Params {
		if cp := p.Type.Currency(); p.Name == c.Budget && cp != "" && st.args[cp].Str != st.op.currency {
			return refusals.CurrencyMismatch(c.Budget, st.args[cp].Str, st.op.currency)
		}
	}
	if e := (intent.Money{Currency: st.op.currency}).Exponent(); int(v.Scale) != e {
		return refusals.ScaleMismatch(c.Budget, int(v.Scale), st.op.currency, e)
	}
	return nil
}

// hold takes the contract's exclusive records in the store, which makes
// the hold work across gateway replicas that share it; cleanup gives them
// back.
func (g *Gateway) hold(ctx context.Context, st *decision) *intent.Refusal {
	c := st.route.contract
	var buf [4]string // Exclusive names one or two records
	values := buf[:0]
	for _, name := range c.Exclusive {
		values = append(values, st.res.Args[name].Str)
	}
	holder := g.holders.next()
	key := state.LockKey(st.mandate.Owner, c.Action, values...)
	if err := g.store.Hold(ctx, key, holder, g.lockTTL); err != nil {
		if errors.Is(err, state.ErrHeld) {
			return heldRefusal(c, err, g.lockTTL)
		}
		return refusals.Unavailable()
	}
	st.held.key, st.held.holder = key, holder
	return nil
}

// heldRefusal is the refusal of a decision whose records another holds:
// when the store says until when (state.HeldError), it names when that
// hold was taken (its expiry less ttl: every gateway sharing a store has
// the same LockTTL) and when it expires, in UTC, since a hold left by a
// gateway that crashed lasts until then.
func heldRefusal(c *contract.Contract, err error, ttl time.Duration) *intent.Refusal {
	what := strings.Join(c.Exclusive, " and ")
	var he *state.HeldError
	if !errors.As(err, &he) || he.Until.IsZero() {
		return refusals.InFlight(what)
	}
	until := he.Until.Truncate(time.Second)
	return refusals.InFlightUntil(what, until.Add(-ttl), until)
}

// holders makes the lock-holder ids of one gateway: "holder:" and 32 hex
// digits, a random prefix read once (8 bytes) and a counter (8 bytes), so
// that ids are unique across gateways sharing a store and within one,
// without reading randomness on every decision. An id names who holds a
// lock; it is no secret (only the store sees it).
type holders struct {
	prefix [8]byte
	n      atomic.Uint64
}

func (h *holders) next() string {
	var id [16]byte
	copy(id[:], h.prefix[:])
	binary.BigEndian.PutUint64(id[8:], h.n.Add(1))
	var b [len("holder:") + 2*len(id)]byte
	hex.Encode(b[copy(b[:], "holder:"):], id[:])
	return string(b[:])
}
