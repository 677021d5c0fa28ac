package odootest

import (
	"fmt"
	"maps"
	"slices"
)

// HistoryDoc is a document of a vendor's past that SeedHistory enters:
// a posted vendor bill paid in full, or a posted credit note applied in
// full.
type HistoryDoc struct {
	// Ref is the vendor's reference; "" for none.
	Ref string
	// Total is the document's total in its currency's units (12.5 for
	// 12.50).
	Total float64
	// Date is its invoice date, YYYY-MM-DD.
	Date string
	// CreditNote makes it a credit note (in_refund) instead of a bill.
	CreditNote bool
	// Paid, for a bill, also enters the payment that settled it (an
	// account.payment made by hand, with its journal entry), dated Date.
	Paid bool
}

// SeedHistory enters docs as the past of vendor (a res.partner id) in
// company (a res.company id) of database db, in currency (a res.currency
// id), directly in the fake's tables: what years of bookkeeping leave,
// without the calls that would take to enter (a benchmark of a vendor of
// 20,000 documents). Every document is settled (residual zero), so that
// none is open. It returns an error for an unknown database, company,
// vendor or currency. The records look as the fake's own calls leave
// them.
func (s *Server) SeedHistory(db string, company, vendor, currency int64, docs []HistoryDoc) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[db]
	switch {
	case d == nil:
		return fmt.Errorf("odootest: no database %q", db)
	case d.tables["res.company"][company] == nil, d.tables["res.partner"][vendor] == nil, d.tables["res.currency"][currency] == nil:
		return fmt.Errorf("odootest: company %d, vendor %d or currency %d unknown", company, vendor, currency)
	}
	d.now = s.now().UTC()
	defer func() { d.uid = 0 }()
	for i, h := range docs {
		kind, state := "in_invoice", "paid"
		if h.CreditNote {
			kind = "in_refund"
		}
		d.seq["HIST"]++
		bill := rec{"name": fmt.Sprintf("HIST/%07d", d.seq["HIST"]), "ref": h.Ref, "partner_id": vendor, "move_type": kind, "currency_id": currency,
			"amount_total": h.Total, "amount_residual": 0.0, "invoice_date": h.Date, "invoice_date_due": h.Date, "partner_bank_id": int64(0),
			"state": "posted", "payment_state": state, "reversed_entry_id": int64(0), "company_id": company, "invoice_line_ids": []int64{},
			d.movePaymentField(): int64(0), "date": h.Date}
		id := d.insert("account.move", bill)
		if !h.Paid || h.CreditNote {
			continue
		}
		p := rec{"name": fmt.Sprintf("PHIST/%07d", i), "partner_id": vendor, "partner_bank_id": int64(0), "amount": h.Total, "currency_id": currency,
			d.memoField(): h.Ref, "date": h.Date, "company_id": company, "payment_type": "outbound", "partner_type": "supplier",
			"journal_id": int64(0), "bill_ids": []int64{id}, "link_ids": []int64{id}, "state": d.paymentState(true, true)}
		d.insert("account.payment", p)
		d.syncPaymentMove(p)
	}
	return nil
}

// readOnly are the methods that change nothing: the fake answers them on
// the database itself, without the copy a transaction works on (which
// costs as much as the database is large).
var readOnly = []string{"search_read", "search", "search_count", "read", "fields_get", "context_get", "check_access_rights", "has_group"}

// isReadOnly reports whether method changes nothing (readOnly).
func isReadOnly(method string) bool { return slices.Contains(readOnly, method) }

// journal is the undo log of a call the fake runs on the database itself
// instead of on a copy (journaled): the records it inserted, the records
// it changed as they were before (own), and the counters, so that a fault
// rolls the call back as Odoo's transaction does, at a cost that follows
// what the call touched, not the size of the database.
type journal struct {
	inserted []tableID
	before   map[tableID]rec
	next     map[string]int64
	seq      map[string]int
}

type tableID struct {
	model string
	id    int64
}

// journaled reports whether the call of method on model runs with a
// journal: the payment wizard's, whose every change to an existing record
// goes through own. Any other write works on a copy of the database.
func journaled(model, method string) bool {
	return model == "account.payment.register" && (method == "create" || method == "web_save" || method == "action_create_payments")
}

// own returns the record of model with this id, to be changed: with a
// journal, its state before the first change is kept for a rollback.
// nil if there is none.
func (d *db) own(model string, id int64) rec {
	r := d.tables[model][id]
	if d.journal == nil || r == nil {
		return r
	}
	k := tableID{model, id}
	if _, ok := d.journal.before[k]; !ok {
		d.journal.before[k] = r.clone()
	}
	return r
}

// begin starts a journal on d.
func (d *db) begin() {
	d.journal = &journal{before: map[tableID]rec{}, next: maps.Clone(d.next), seq: maps.Clone(d.seq)}
}

// end ends d's journal: with a fault (rollback), every change it logged
// is undone.
func (d *db) end(rollback bool) {
	j := d.journal
	d.journal = nil
	if !rollback {
		return
	}
	for _, k := range j.inserted {
		delete(d.tables[k.model], k.id)
	}
	for k, r := range j.before {
		maps.Copy(d.tables[k.model][k.id], r)
		for f := range d.tables[k.model][k.id] {
			if _, ok := r[f]; !ok {
				delete(d.tables[k.model][k.id], f)
			}
		}
	}
	d.next, d.seq = j.next, j.seq
	d.sortedIDs, d.partnerIdx = nil, nil
}

// inPlace runs a call on d itself, not on a copy: a read, which changes
// nothing, or a journaled call, rolled back from its journal on a fault.
func (s *Server) inPlace(d *db, uid int64, model, method string, args []any, kw map[string]any) (any, *fault) {
	d.uid, d.now = uid, s.now().UTC()
	defer func() { d.uid = 0 }()
	if isReadOnly(method) {
		return d.call(model, method, args, kw)
	}
	d.begin()
	v, f := d.call(model, method, args, kw)
	d.end(f != nil)
	return v, f
}

// node is a domain parsed once for a search: a leaf, or &, | or ! of its
// kids.
type node struct {
	op   string // "&", "|", "!" or "" for a leaf
	leaf []any
	kids []*node
}

// parse parses a domain in Polish notation (implicit & at the top); ok
// is false for one the fake's match would refuse, which is then left to
// match.
func parse(domain []any) (n *node, ok bool) {
	pos := 0
	var one func() (*node, bool)
	one = func() (*node, bool) {
		if pos >= len(domain) {
			return &node{op: "&"}, true // an operator short of operands: match's true
		}
		t := domain[pos]
		pos++
		switch x := t.(type) {
		case string:
			arity := map[string]int{"&": 2, "|": 2, "!": 1}[x]
			if arity == 0 {
				return nil, false
			}
			n := &node{op: x}
			for range arity {
				k, ok := one()
				if !ok {
					return nil, false
				}
				n.kids = append(n.kids, k)
			}
			return n, true
		case []any:
			return &node{leaf: x}, true
		}
		return nil, false
	}
	root := &node{op: "&"}
	for pos < len(domain) {
		k, ok := one()
		if !ok {
			return nil, false
		}
		root.kids = append(root.kids, k)
	}
	return root, true
}

// eval evaluates n on r, each & and | stopping at its first deciding
// operand.
func (d *db) eval(m *model, r rec, n *node) (bool, *fault) {
	switch n.op {
	case "":
		return d.leaf(m, r, n.leaf)
	case "!":
		v, f := d.eval(m, r, n.kids[0])
		return !v, f
	}
	for _, k := range n.kids {
		v, f := d.eval(m, r, k)
		if f != nil || v == (n.op == "|") {
			return v, f
		}
	}
	return n.op == "&", nil
}

// candidates returns the records of m that the leaves of root's top-level
// & (the whole domain's conjuncts) narrow it to through an index: id =,
// and an account.move's commercial_partner_id =, as PostgreSQL's
// indexes do; all of them (sorted) when no conjunct does.
func (d *db) candidates(m *model, root *node) []rec {
	var leaves [][]any
	var walk func(n *node)
	walk = func(n *node) {
		for _, k := range n.kids {
			switch k.op {
			case "":
				leaves = append(leaves, k.leaf)
			case "&":
				walk(k)
			}
		}
	}
	walk(root)
	for _, l := range leaves {
		v, isID := l[2].(int64)
		if len(l) != 3 || l[1] != "=" || !isID {
			continue
		}
		switch {
		case l[0] == "id":
			if r, ok := d.tables[m.name][v]; ok {
				return []rec{r}
			}
			return nil
		case l[0] == "commercial_partner_id" && m.name == "account.move":
			ids := d.byPartner()[v]
			out := make([]rec, 0, len(ids))
			last := int64(0)
			for _, id := range ids {
				// An id indexed again after its partner changed back
				// comes out of order: its first place counts.
				if r, ok := d.tables[m.name][id]; ok && id > last && r.m2o("commercial_partner_id") == v {
					out = append(out, r)
					last = id
				}
			}
			return out
		}
	}
	return d.sorted(m.name)
}

// byPartner indexes account.move ids by commercial_partner_id, in id
// order, built once per database state and kept by insert; records whose
// partner changed since are filtered out by candidates, and partners
// changed to are found as the index is rebuilt when the table's size
// differs from what it indexed.
func (d *db) byPartner() map[int64][]int64 {
	if d.partnerIdx != nil && d.partnerIdxLen == len(d.tables["account.move"]) {
		return d.partnerIdx
	}
	idx := map[int64][]int64{}
	for _, r := range d.sorted("account.move") {
		p := r.m2o("commercial_partner_id")
		idx[p] = append(idx[p], r.id())
	}
	d.partnerIdx, d.partnerIdxLen = idx, len(d.tables["account.move"])
	return idx
}
