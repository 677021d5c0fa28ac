package postgres

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
)

// ReserveAll implements state.BatchReserver: the reservations, sorted by
// account (so that two calls lock the accounts they share in the same
// order), and the accounts' usage come back from one statement,
// intentplane_reserve_many. A single reservation goes with this process's
// concurrent operations on its account instead.
func (s *Store) ReserveAll(ctx context.Context, rs []state.ReserveRequest) ([]state.Usage, []error) {
	us, errs := make([]state.Usage, len(rs)), make([]error, len(rs))
	if len(rs) == 1 {
		us[0], errs[0] = s.reserveUsage(ctx, rs[0].Account, rs[0].Limit, rs[0].ID, rs[0].Amount)
		return us, errs
	}
	if err := ctx.Err(); err != nil {
		for i := range errs {
			errs[i] = err
		}
		return us, errs
	}
	var order []int // the reservations sent, by account
	for i, r := range rs {
		if errs[i] = checkReserve(r.Account, r.Limit, r.ID, r.Amount); errs[i] == nil {
			order = append(order, i)
		}
	}
	if len(order) == 0 {
		return us, errs
	}
	slices.SortStableFunc(order, func(a, b int) int { return strings.Compare(rs[a].Account, rs[b].Account) })
	n := len(order)
	accts, ids, currencies := make([][]byte, n), make([][]byte, n), make([]string, n)
	limits, amounts := make([]int64, n), make([]int64, n)
	for k, i := range order {
		r := rs[i]
		accts[k], ids[k], currencies[k], limits[k], amounts[k] = []byte(r.Account), []byte(r.ID), r.Limit.Currency, int64(r.Limit.Amount), int64(r.Amount.Amount)
	}
	var codes []int32
	var committed, reserved []int64
	err := s.do(ctx, "budget reserve", func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT o_codes, o_committed, o_reserved FROM intentplane_reserve_many($1, $2, $3, $4, $5)`,
			accts, ids, currencies, limits, amounts).Scan(&codes, &committed, &reserved)
		if err != nil {
			return err
		}
		if len(codes) != n || len(committed) != n || len(reserved) != n {
			return fmt.Errorf("intentplane_reserve_many returned %d codes for %d reservations", len(codes), n)
		}
		for _, c := range codes {
			if c < 0 || int(c) >= len(ledgerErrs) {
				return fmt.Errorf("intentplane_reserve_many returned code %d", c)
			}
		}
		return nil
	})
	for k, i := range order {
		if err != nil {
			errs[i] = err
			continue
		}
		if errs[i] = ledgerErrs[codes[k]]; errs[i] == nil {
			us[i] = state.Usage{Committed: intent.Amount(committed[k]), Reserved: intent.Amount(reserved[k])}
			s.mu.Lock()
			s.reservedIn[rs[i].ID] = rs[i].Account
			s.mu.Unlock()
		}
	}
	return us, errs
}
