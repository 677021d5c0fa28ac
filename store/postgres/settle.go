package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/intentplane/intentplane/core/state"
)

var _ state.Settler = (*Store)(nil)

// settleOp is one commit or release of a Settle, on a reservation this
// process made (its account known).
type settleOp struct {
	acct, id, op string
	err          *error // where its outcome goes
}

// Settle implements state.Settler. The reservations this process made are
// settled, with those of every concurrent Settle of this process, in one
// statement (intentplane_ledger_many, accounts locked in sorted order);
// others one by one, as Commit or Release.
func (s *Store) Settle(ctx context.Context, ids []string, commit bool) []error {
	errs := make([]error, len(ids))
	op := "release"
	if commit {
		op = "commit"
	}
	var ops []settleOp
	for i, id := range ids {
		if err := state.CheckKeys(id); err != nil {
			errs[i] = err
			continue
		}
		s.mu.Lock()
		acct, known := s.reservedIn[id]
		s.mu.Unlock()
		if !known {
			errs[i] = s.closeReservation(ctx, op, id)
			continue
		}
		ops = append(ops, settleOp{acct: acct, id: id, op: op, err: &errs[i]})
	}
	if len(ops) == 0 {
		return errs
	}
	if err := ctx.Err(); err != nil {
		for _, o := range ops {
			*o.err = err
		}
		return errs
	}
	_, _ = s.settles.run(ops, s.cfg.MaxBatch, func(batch []*job[[]settleOp, struct{}]) {
		s.writeSettles(context.WithoutCancel(ctx), batch)
	})
	s.mu.Lock()
	for _, o := range ops {
		if *o.err == nil || errors.Is(*o.err, state.ErrNotFound) {
			delete(s.reservedIn, o.id)
		}
	}
	s.mu.Unlock()
	return errs
}

// writeSettles applies the operations of every job of batch in one
// statement, sorted by account, and sets each operation's outcome.
func (s *Store) writeSettles(ctx context.Context, batch []*job[[]settleOp, struct{}]) {
	var ops []settleOp
	for _, b := range batch {
		ops = append(ops, b.in...)
	}
	slices.SortStableFunc(ops, func(a, b settleOp) int { return bytes.Compare([]byte(a.acct), []byte(b.acct)) })
	accts, names, ids := make([][]byte, len(ops)), make([]string, len(ops)), make([][]byte, len(ops))
	for i, o := range ops {
		accts[i], names[i], ids[i] = []byte(o.acct), o.op, []byte(o.id)
	}
	err := s.do(ctx, "budget "+ops[0].op, func(ctx context.Context) error {
		var codes []int32
		if err := s.pool.QueryRow(ctx, `SELECT intentplane_ledger_many($1, $2, $3)`, accts, names, ids).Scan(&codes); err != nil {
			return err
		}
		if len(codes) != len(ops) {
			return fmt.Errorf("intentplane_ledger_many returned %d codes for %d operations", len(codes), len(ops))
		}
		for i, c := range codes {
			if c < 0 || int(c) >= len(ledgerErrs) {
				return fmt.Errorf("intentplane_ledger_many returned code %d", c)
			}
			*ops[i].err = ledgerErrs[c]
		}
		return nil
	})
	if err != nil {
		for _, o := range ops {
			*o.err = err
		}
	}
}
