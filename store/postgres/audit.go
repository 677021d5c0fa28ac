package postgres

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

var _ state.ReceiptIndex = (*Store)(nil)

// Page implements state.ReceiptIndex with one query on the indexes of
// migration 0008: receipts_at (or receipts_owner_at for one owner,
// receipts_verdict_at, receipts_result_at) or, with a payee, the
// receipt_values range of that value, read from the cursor in index
// order and stopped after the page.
func (s *Store) Page(ctx context.Context, q state.ReceiptQuery) (state.ReceiptPage, error) {
	p, err := state.PlanOf(q)
	if err != nil {
		return state.ReceiptPage{}, err
	}
	if p.Owners != nil && len(p.Owners) == 0 {
		return p.Finish(nil), nil
	}
	sql, args := pageQuery(p)
	var rs []receipt.Receipt
	err = s.do(ctx, "read a page of receipts", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, sql, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		var buf bytes.Buffer
		for rows.Next() {
			var line []byte
			if err := rows.Scan(&line); err != nil {
				return err
			}
			buf.Write(line)
			buf.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if rs, _, err = receipt.ReadJSONL(&buf); err != nil {
			return fmt.Errorf("%w: stored receipts do not read back: %w", receipt.ErrInvalid, err)
		}
		return nil
	})
	if err != nil {
		return state.ReceiptPage{}, err
	}
	return p.Finish(rs), nil
}

// atText is t as the at columns hold it: the canonical time text.
func atText(t time.Time) string {
	return t.UTC().Format(intent.TimeFormat)
}

// pageQuery returns the query of p's page and its arguments.
func pageQuery(p state.Plan) (string, []any) {
	var where []string
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	from, k := "receipts r", "r"
	if p.Payee != "" {
		// The payee's range of receipt_values, in receipt order.
		from, k = "receipt_values v JOIN receipts r ON r.owner = v.owner AND r.seq = v.seq", "v"
		where = append(where, "v.value = "+arg(p.Payee))
		if len(p.PayeeParams) > 0 {
			where = append(where, "v.params && "+arg(p.PayeeParams)+"::text[]")
		}
	}
	// One owner (and no payee): its range of receipts_owner_at, where
	// the owner is constant and drops out of the order. (In a payee's
	// range the owner is a filter, and the order stays whole.)
	one := len(p.Owners) == 1 && p.Payee == "" && (!p.Start || p.After.Owner == p.Owners[0])
	switch {
	case len(p.Owners) == 1:
		where = append(where, k+".owner = "+arg(string(p.Owners[0])))
	case p.Owners != nil:
		owners := make([]string, len(p.Owners))
		for i, o := range p.Owners {
			owners[i] = string(o)
		}
		where = append(where, k+".owner = ANY("+arg(owners)+"::text[])")
	}
	if !p.From.IsZero() {
		where = append(where, k+".at >= "+arg(atText(p.From)))
	}
	if !p.To.IsZero() {
		where = append(where, k+".at < "+arg(atText(p.To)))
	}
	if p.Verdict != "" {
		where = append(where, "r.verdict = "+arg(p.Verdict))
	}
	if p.Result != "" {
		where = append(where, "r.result = "+arg(p.Result))
	}
	cols := []string{k + ".at", k + `.owner COLLATE "C"`, k + ".seq"}
	if one {
		cols = []string{k + ".at", k + ".seq"}
	}
	cmp, dir := "<", " DESC"
	if p.Back {
		cmp, dir = ">", ""
	}
	if p.Start {
		vals := []string{arg(atText(p.After.Time))}
		if !one {
			vals = append(vals, arg(string(p.After.Owner)))
		}
		vals = append(vals, arg(int64(p.After.Seq))+"::bigint")
		where = append(where, "("+strings.Join(cols, ", ")+") "+cmp+" ("+strings.Join(vals, ", ")+")")
	}
	order := strings.Join(cols, dir+", ") + dir
	sql := "SELECT r.line FROM " + from
	if len(where) > 0 {
		sql += " WHERE " + strings.Join(where, " AND ")
	}
	return sql + " ORDER BY " + order + " LIMIT " + arg(p.Limit+1), args
}
