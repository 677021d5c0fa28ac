package odoo

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// creditLine is a credit note to net with a payment: its ID and the id of
// its payable line outstanding on the bill.
type creditLine struct {
	credit string
	line   int64
}

// creditLines checks the credit notes r nets with its payment of bill b
// (see erp.PaymentRequest.Credits) and returns their payable lines, as the
// payer identity, before anything is written: two reads, the vendor's open
// credit notes (account.move of type in_refund) and the bill's outstanding
// debits (invoice_outstanding_credits_debits_widget, which lists the
// unreconciled payable lines of its partner that can be added to it, each
// with its move_id). A credit note that is not the vendor's open credit in
// the bill's currency, or not outstanding on the bill, or credit notes
// that with r.Amount exceed what the bill owes, are refused
// (erp.ErrRefused); a failed read wraps erp.ErrNotWritten.
func (c *Client) creditLines(ctx context.Context, s *rpc.Session, cid int64, b erp.Bill, r erp.PaymentRequest) ([]creditLine, error) {
	if len(r.Credits) == 0 {
		return nil, nil
	}
	open, _, err := c.bills(ctx, s, cid, erp.BillQuery{OpenCredit: true, Vendor: b.Vendor})
	if err != nil {
		return nil, notWritten(err)
	}
	total := r.Amount.Amount
	for i, id := range r.Credits {
		j := slices.IndexFunc(open, func(o erp.Bill) bool { return o.ID == id })
		if j < 0 || slices.Contains(r.Credits[:i], id) {
			return nil, refused("credit note %s is not an open credit note of the bill's vendor, or is named twice", id)
		}
		cn := open[j]
		if cn.Currency != b.Currency || cn.Vendor != b.Vendor || cn.PaymentState.Settled() {
			return nil, refused("%s is not open credit of the bill's vendor in %s", cn.Name, b.Currency)
		}
		if cn.Residual > b.Residual-total {
			return nil, refused("the amount and the credit notes together are above what is still owed on %s", b.Name)
		}
		total += cn.Residual
	}
	billID, _ := rpc.ParseID(b.ID)
	v, err := s.Execute(ctx, "account.move", "read", []any{[]any{billID}},
		map[string]any{"fields": rpc.Strs([]string{"invoice_outstanding_credits_debits_widget"}), "context": rpc.Scope(cid, false)})
	if err != nil {
		return nil, notWritten(err)
	}
	rs, err := rpc.Records(v)
	if err != nil || len(rs) != 1 {
		return nil, notWritten(fmt.Errorf("odoo: account.move %d outstanding debits: %w", billID, errors.Join(err, ErrBadAnswer)))
	}
	lines, err := outstandingLines(rs[0]["invoice_outstanding_credits_debits_widget"])
	if err != nil {
		return nil, notWritten(fmt.Errorf("odoo: account.move %d outstanding debits: %w", billID, err))
	}
	out := make([]creditLine, 0, len(r.Credits))
	for _, id := range r.Credits {
		n, _ := rpc.ParseID(id)
		line, ok := lines[n]
		if !ok {
			return nil, refused("credit note %s has no line outstanding on %s in Odoo", id, b.Name)
		}
		out = append(out, creditLine{credit: id, line: line})
	}
	return out, nil
}

// outstandingLines decodes the outstanding-debits widget of a bill (False
// or {"content": [{"id": line, "move_id": move, ...}]}) into the payable
// line of each move listed.
func outstandingLines(v any) (map[int64]int64, error) {
	lines := map[int64]int64{}
	if b, ok := v.(bool); ok && !b {
		return lines, nil
	}
	w, ok := v.(map[string]any)
	if !ok {
		return nil, rpc.BadAnswer("the outstanding widget", v)
	}
	content, ok := w["content"].([]any)
	if !ok {
		return nil, rpc.BadAnswer("the widget's content", w["content"])
	}
	for _, x := range content {
		e, ok := x.(map[string]any)
		if !ok {
			return nil, rpc.BadAnswer("a widget entry", x)
		}
		line, err1 := rpc.AsID(e["id"])
		move, err2 := rpc.AsID(e["move_id"])
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		if _, dup := lines[move]; !dup {
			lines[move] = line
		}
	}
	return lines, nil
}

// reconcileCredits adds each credit note's outstanding line to the bill
// (account.move.js_assign_outstanding_line, which Odoo answers with the
// None fault once committed), after the payment was made. It returns the
// IDs of the credit notes whose reconciliation failed: the payment stands
// and a person reconciles them. It runs even if ctx is cancelled: the
// payment is made.
func (c *Client) reconcileCredits(ctx context.Context, s *rpc.Session, cid, bill int64, lines []creditLine) []string {
	ctx = context.WithoutCancel(ctx)
	var failed []string
	for _, l := range lines {
		_, err := s.Execute(ctx, "account.move", "js_assign_outstanding_line", []any{[]any{bill}, l.line},
			map[string]any{"context": rpc.Scope(cid, false)})
		if err != nil && !errors.Is(err, rpc.ErrNoneResult) {
			failed = append(failed, l.credit)
		}
	}
	return failed
}
