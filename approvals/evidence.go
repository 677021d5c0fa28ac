package approvals

import (
	"cmp"
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// The call-back evidence (issue 25) is, per operation that relied on a
// call-back recorded on this page (a bank-detail change: a trusted value
// whose record is the call-back), what an auditor asks for: who requested
// the change (the mandate), who called the vendor back, which number
// (the one on file: the page records no other), when, what was said, who
// approved, and whether and when it executed. It is read from the receipt
// chains alone, in the audit's scope: /audit/callbacks shows it and
// /audit/callbacks.csv exports it.

// evidenceRow is one operation that relied on a call-back.
type evidenceRow struct {
	Owner, Callback, Vendor, IBAN, Phone, CalledBy, CalledAt, Note string
	Action, Operation, RequestedAt, Mandate, Approvers, Rejected   string
	Status, ExecutedAt, Receipt                                    string
	at                                                             time.Time // when called, for the order
}

// callbackEvidence returns the evidence rows of the receipts rs of one
// owner's chain, oldest call-back first.
func callbackEvidence(rs []receipt.Receipt) []evidenceRow {
	calls := map[string]receipt.Receipt{}
	for _, r := range rs {
		if r.Action != ActionRecordCallback {
			continue
		}
		id := r.Args["callback"].Str
		switch {
		case r.Verdict == intent.Allow && r.Result == receipt.ResultExecuted:
			calls[id] = r
		case r.Result == receipt.ResultFailed:
			delete(calls, id) // recorded, then not kept: it does not count
		}
	}
	byOp := map[string]*evidenceRow{}
	var order []string
	for _, r := range rs {
		cb, ok := reliesOn(r, calls)
		if !ok || r.Operation == "" {
			continue
		}
		row := byOp[r.Operation]
		if row == nil {
			row = newEvidence(r, cb)
			byOp[r.Operation] = row
			order = append(order, r.Operation)
		}
		row.add(r)
	}
	out := make([]evidenceRow, 0, len(order))
	for _, op := range order {
		out = append(out, *byOp[op])
	}
	slices.SortStableFunc(out, func(a, b evidenceRow) int { return a.at.Compare(b.at) })
	return out
}

// reliesOn returns the call-back of calls that a trusted value of r comes
// from, if any.
func reliesOn(r receipt.Receipt, calls map[string]receipt.Receipt) (receipt.Receipt, bool) {
	for _, res := range r.Resolved {
		if cb, ok := calls[res.Provenance.RecordID]; ok && res.Provenance.RecordID != "" {
			return cb, true
		}
	}
	return receipt.Receipt{}, false
}

// newEvidence starts the row of the operation of r, which relies on the
// call-back cb.
func newEvidence(r, cb receipt.Receipt) *evidenceRow {
	vendor := cb.Args["vendor"].Str
	if n := cb.Args["vendor_name"].Str; n != "" {
		vendor = n + " (" + vendor + ")"
	}
	return &evidenceRow{
		Owner: string(r.Owner), Callback: cb.Args["callback"].Str, Vendor: visible(vendor), IBAN: displayValue(cb.Args["iban"].Str),
		Phone: visible(cb.Args["phone"].Str), CalledBy: visible(cb.Args["called_by"].Str), CalledAt: utc(cb.Time),
		Note: visible(cb.Args["note"].Str), Action: visible(string(r.Action)), Operation: r.Operation, RequestedAt: utc(r.Time),
		Mandate: visible(r.MandateID), Status: "requested", at: cb.Time,
	}
}

// add counts r, a receipt of the row's operation: its approvals, a
// rejection, an execution.
func (e *evidenceRow) add(r receipt.Receipt) {
	for _, a := range r.Approvals {
		if !strings.Contains(", "+e.Approvers+", ", ", "+a.Approver+", ") {
			e.Approvers = strings.TrimPrefix(e.Approvers+", "+visible(a.Approver), ", ")
		}
	}
	switch {
	case r.Result == receipt.ResultExecuted && r.Action != ActionRecordCallback:
		e.Status, e.ExecutedAt, e.Receipt = "executed", utc(r.Time), fmt.Sprintf("%s #%d", ownerText(r.Owner), r.Seq)
	case r.Result == receipt.ResultFailed:
		e.Status, e.ExecutedAt, e.Receipt = "outcome unknown", utc(r.Time), fmt.Sprintf("%s #%d", ownerText(r.Owner), r.Seq)
	case r.Verdict == intent.Deny && strings.Contains(r.Message, " rejected by "):
		e.Status, e.Rejected = "rejected", visible(r.Message)
	}
}

func utc(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05") }

// evidence returns the evidence rows of every owner in the approver me's
// audit scope, oldest call-back first, from all of each owner's chain:
// evidenceReceipts finds the receipts a row is made of through the
// store's index, so a chain of millions costs what its call-backs and
// the receipts resolving their accounts cost.
func (s *Server) evidence(ctx context.Context, a *auditState, me *approverEntry) ([]evidenceRow, error) {
	owners, err := s.auditOwners(ctx, a, me)
	if err != nil {
		return nil, err
	}
	var rows []evidenceRow
	for _, o := range owners {
		if !me.mayDecide(o) {
			continue
		}
		rs, err := a.evidenceReceipts(ctx, o)
		if err != nil {
			return nil, err
		}
		rows = append(rows, callbackEvidence(rs)...)
	}
	slices.SortStableFunc(rows, func(x, y evidenceRow) int { return x.at.Compare(y.at) })
	return rows, nil
}

// evidenceReceipts returns the receipts of owner's chain that
// callbackEvidence reads, in Seq order: its call-back records, and the
// receipts whose trusted values come from one of them. It asks the
// store's index, never reading the whole chain: the call-back records
// are among the receipts executed (allowed) and failed; a trusted value
// that relies on a call-back is the account it confirmed (the record's
// value is the IBAN the vendor read back, as ap's callbacks registry
// gives it), so the receipts relying on one are among those that
// resolved that IBAN (the payee index, any parameter) since the
// call-back.
func (a *auditState) evidenceReceipts(ctx context.Context, owner intent.Owner) ([]receipt.Receipt, error) {
	mine := []intent.Owner{owner}
	var kept []receipt.Receipt
	keep := func(r receipt.Receipt) {
		if r.Action == ActionRecordCallback {
			kept = append(kept, r)
		}
	}
	for _, q := range []state.ReceiptQuery{{Owners: mine, Verdict: intent.Allow.String(), Result: receipt.ResultExecuted}, {Owners: mine, Result: receipt.ResultFailed}} {
		if err := a.each(ctx, q, keep); err != nil {
			return nil, err
		}
	}
	since := map[string]time.Time{} // the IBANs confirmed, each from its oldest call-back
	ids := map[string]bool{}
	for _, r := range kept {
		ids[r.Args["callback"].Str] = true
		if iban := r.Args["iban"].Str; iban != "" && (since[iban].IsZero() || r.Time.Before(since[iban])) {
			since[iban] = r.Time
		}
	}
	for _, iban := range slices.Sorted(maps.Keys(since)) {
		err := a.each(ctx, state.ReceiptQuery{Owners: mine, Payee: iban, From: since[iban]}, func(r receipt.Receipt) {
			if slices.ContainsFunc(r.Resolved, func(x intent.Resolved) bool { return ids[x.Provenance.RecordID] }) {
				kept = append(kept, r)
			}
		})
		if err != nil {
			return nil, err
		}
	}
	slices.SortFunc(kept, func(x, y receipt.Receipt) int { return cmp.Compare(x.Seq, y.Seq) })
	return slices.CompactFunc(kept, func(x, y receipt.Receipt) bool { return x.Seq == y.Seq }), nil
}

// each calls f on every receipt q selects, newest first, a page of
// state.MaxPageSize at a time.
func (a *auditState) each(ctx context.Context, q state.ReceiptQuery, f func(receipt.Receipt)) error {
	q.Limit = state.MaxPageSize
	for {
		p, err := a.cfg.Log.Page(ctx, q)
		if err != nil {
			return err
		}
		for _, r := range p.Receipts {
			f(r)
		}
		if p.Next == "" || len(p.Receipts) == 0 {
			return nil
		}
		q.Cursor = p.Next
	}
}

type evidenceView struct {
	Session *session
	CSRF    string
	Rows    []evidenceRow
}

func (s *Server) evidenceList(c echo.Context) error {
	ss := sessionOf(c)
	rows, err := s.evidence(c.Request().Context(), s.auditOf(), s.approvers[ss.approver])
	if err != nil {
		return err
	}
	return s.page(c, http.StatusOK, "evidence", evidenceView{Session: ss, CSRF: ss.csrf, Rows: rows})
}

// evidenceHeader names the evidence export's columns.
var evidenceHeader = []string{"called_at_utc", "owner", "callback", "vendor", "new_account", "called_by", "phone_dialled", "note",
	"action", "operation", "requested_at_utc", "mandate", "approvers", "status", "executed_at_utc", "receipt"}

func (s *Server) evidenceCSV(c echo.Context) error {
	ss := sessionOf(c)
	rows, err := s.evidence(c.Request().Context(), s.auditOf(), s.approvers[ss.approver])
	if err != nil {
		return err
	}
	c.Response().Header().Set("Content-Type", "text/csv; charset=utf-8; header=present")
	c.Response().Header().Set("Content-Disposition", `attachment; filename="intentplane-callback-evidence.csv"`)
	c.Response().WriteHeader(http.StatusOK)
	w := csv.NewWriter(c.Response())
	w.UseCRLF = true // RFC 4180
	_ = w.Write(evidenceHeader)
	for _, e := range rows {
		row := []string{e.CalledAt, e.Owner, e.Callback, e.Vendor, e.IBAN, e.CalledBy, e.Phone, e.Note,
			e.Action, e.Operation, e.RequestedAt, e.Mandate, e.Approvers, e.Status, e.ExecutedAt, e.Receipt}
		for i := range row {
			row[i] = csvCell(row[i])
		}
		_ = w.Write(row)
	}
	w.Flush()
	s.logger.Info("call-back evidence export", "approver", ss.approver, "rows", len(rows))
	return w.Error()
}
