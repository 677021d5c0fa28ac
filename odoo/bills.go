package odoo

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// Bills implements erp.Reader: the company's account.move records of type
// in_invoice and in_refund. A bill's vendor is its commercial partner
// (commercial_partner_id, stored by Odoo), so a bill addressed to a
// contact person is its company's. Open selects posted bills with
// amount_residual above zero (a stored field, so Odoo filters on it; the
// connector checks it again). WithPayments reads, in the same call, the
// journal entries of the payments registered through the connector (a
// payment's entry carries its memo, state and amount): they are matched
// to their bill by the memo. With Vendor and PaymentsSince it also reads,
// in that call, the entries of the vendor's posted outgoing payments
// dated from that day on: those without the connector's memo (made by
// hand in Odoo) are given with the first bill, Bill empty (an entry does
// not tell which bill its payment is reconciled with). VendorName is the
// display name of the commercial partner, unless q.NoVendorName: then
// the read asks Odoo for no display name at all (see rpc.Session.SearchRead).
func (c *Client) Bills(ctx context.Context, company string, q erp.BillQuery) ([]erp.Bill, error) {
	cid, ok := c.company(company)
	if !ok {
		return nil, ctx.Err()
	}
	bs, _, err := c.bills(ctx, c.reader, cid, q)
	return bs, err
}

// bills reads bills and also returns each bill's vendor by bill ID.
func (c *Client) bills(ctx context.Context, s *rpc.Session, cid int64, q erp.BillQuery) ([]erp.Bill, map[string]int64, error) {
	if err := q.CheckPaymentsSince(); err != nil {
		return nil, nil, err
	}
	d, err := c.dialect(ctx)
	if err != nil {
		return nil, nil, err
	}
	var decision []any
	if q.Decision != nil {
		if decision, err = c.decisionDomain(ctx, s, q.Decision); err != nil {
			return nil, nil, err
		}
	}
	domain, id, vendor, ok := d.billDomain(cid, q, decision)
	if !ok {
		return nil, nil, ctx.Err()
	}
	kw, check := limited(rpc.Scope(cid, false), q.Limit, q.Offset)
	if q.WithPayments {
		kw, check = limited(rpc.Scope(cid, false), 0, 0)
	}
	if !q.NoVendorName {
		kw["load"] = rpc.LoadNames // for VendorName
	}
	rs, err := s.SearchRead(ctx, "account.move", domain, d.billFields(), kw)
	if err != nil {
		return nil, nil, err
	}
	what := "bills and credit notes"
	if q.WithPayments {
		// The same read gives the entries of their payments.
		what = "bills, credit notes and payments"
	}
	if err := check(len(rs), what); err != nil {
		return nil, nil, err
	}
	if err := c.loadCurrencies(ctx, s, rs); err != nil {
		return nil, nil, err
	}
	out, paid, err := c.decodeBills(d, rs, cid, q, id, vendor)
	if err != nil {
		return nil, nil, err
	}
	slices.SortFunc(out, func(a, b erp.Bill) int { return erp.CompareIDs(a.ID, b.ID) })
	if q.Decision != nil {
		out = decisionBills(out, q.Decision)
	}
	vendors := make(map[string]int64, len(out))
	for _, b := range out {
		vendors[b.ID], _ = rpc.ParseID(b.Vendor)
	}
	if q.WithPayments {
		attachPayments(out, paid, q.Decision != nil)
	}
	return out, vendors, nil
}

// attachPayments gives each bill of out its payments among paid. A
// payment made by hand (Bill empty) goes with the first bill, so that it
// is counted once; with a decision's read (decision), so does one of the
// connector's whose bill is not read (erp.DecisionQuery).
func attachPayments(out []erp.Bill, paid []erp.Payment, decision bool) {
	read := make(map[string]bool, len(out))
	for _, b := range out {
		read[b.ID] = true
	}
	for i, b := range out {
		out[i].Payments = []erp.Payment{}
		for _, p := range paid {
			if p.Bill == b.ID || i == 0 && (p.Bill == "" || decision && !read[p.Bill]) {
				out[i].Payments = append(out[i].Payments, p)
			}
		}
	}
}

// billDomain is the account.move domain of the bill query q in company
// cid, with the bill ID and vendor it names (0 if none): bills and
// credit notes matching q and, with q.WithPayments, also the journal
// entries of the connector's payments of them (memoPrefix in their ref)
// and those handEntries selects.
// ok is false for a query naming an ID or vendor that is not an ID,
// which matches nothing.
//
// With q.Decision, decision (decisionDomain) narrows the documents, and
// the connector's entries are those of the decision's bill; q.Decision
// without q.Vendor selects nothing.
func (d *dialect) billDomain(cid int64, q erp.BillQuery, decision []any) (domain []any, id, vendor int64, ok bool) {
	docs := [][]any{term("move_type", "in", []any{string(erp.KindBill), string(erp.KindCreditNote)})}
	entries := [][]any{term("move_type", "=", "entry"), term(d.movePayment, "!=", false), term("ref", "ilike", memoPrefix)}
	if q.ID != "" {
		if id, ok = rpc.ParseID(q.ID); !ok {
			return nil, 0, 0, false
		}
		docs = append(docs, term("id", "=", id))
		entries = append(entries, term("ref", "ilike", " bill "+itoa(id)+"]"))
	}
	if q.Vendor != "" {
		if vendor, ok = rpc.ParseID(q.Vendor); !ok {
			return nil, 0, 0, false
		}
		docs = append(docs, term("commercial_partner_id", "=", vendor))
		entries = append(entries, term("commercial_partner_id", "=", vendor))
	}
	if q.Open {
		docs = append(docs, term("move_type", "=", string(erp.KindBill)), term("state", "=", string(erp.StatePosted)),
			term("amount_residual", ">", 0))
	}
	if q.OpenCredit {
		docs = append(docs, term("move_type", "=", string(erp.KindCreditNote)), term("state", "=", string(erp.StatePosted)),
			term("amount_residual", ">", 0))
	}
	if q.Lookup != "" {
		docs = append(docs, lookupDomain(q.Lookup))
	}
	if q.Decision != nil {
		bill, okBill := rpc.ParseID(q.Decision.Bill)
		if vendor == 0 || !okBill {
			return nil, 0, 0, false
		}
		docs = append(docs, decision)
		entries = append(entries, term("ref", "ilike", " bill "+itoa(bill)+"]"))
	}
	domain = append([]any{rpc.Leaf("company_id", "=", cid)}, all(docs...)...)
	if q.WithPayments {
		legs := [][]any{all(docs...), all(entries...)}
		if hand := d.handEntries(q, vendor); hand != nil {
			legs = append(legs, hand)
		}
		domain = append([]any{rpc.Leaf("company_id", "=", cid)}, either(legs...)...)
		if vendor != 0 {
			// Every leg is the vendor's: said once at the top too, where
			// the database's index on the partner narrows the search.
			domain = append([]any{rpc.Leaf("company_id", "=", cid), rpc.Leaf("commercial_partner_id", "=", vendor)}, either(legs...)...)
		}
	}
	return domain, id, vendor, true
}

// maxRefLikes is the most ilike leaves one erp.RefPattern becomes in a
// domain (erp.RefPattern.Likes): a reference pattern whose characters
// have more spellings is widened, never cut.
const maxRefLikes = 8

// decisionDomain is the account.move domain that narrows a read of one
// vendor's documents to what dq selects (erp.DecisionQuery): the bill,
// the credit notes reversing it, the open documents, and the suspects
// (suspectsDomain) with the posted credit notes reversing them. It reads
// the currency of dq.Suspects unless known (one call, then cached).
func (c *Client) decisionDomain(ctx context.Context, s *rpc.Session, dq *erp.DecisionQuery) ([]any, error) {
	bill, ok := rpc.ParseID(dq.Bill)
	if !ok {
		return nil, nil // billDomain selects nothing
	}
	legs := [][]any{term("id", "=", bill), term("reversed_entry_id", "=", bill),
		all(term("state", "=", string(erp.StatePosted)), term("amount_residual", ">", 0))}
	bills, err := c.suspectsDomain(ctx, s, "", dq.Suspects)
	if err != nil {
		return nil, err
	}
	if bills != nil {
		refunds, err := c.suspectsDomain(ctx, s, "reversed_entry_id.", dq.Suspects)
		if err != nil {
			return nil, err
		}
		legs = append(legs,
			all(term("move_type", "=", string(erp.KindBill)), term("state", "!=", string(erp.StateCancelled)), bills),
			all(term("move_type", "=", string(erp.KindCreditNote)), term("state", "=", string(erp.StatePosted)),
				term("reversed_entry_id.state", "!=", string(erp.StateCancelled)), refunds))
	}
	return either(legs...), nil
}

// suspectsDomain is the domain of the account.move records whose fields
// (prefixed by prefix: "" for the bill itself, "reversed_entry_id." for
// the bill a credit note reverses) sus selects (erp.Suspects): a ref
// holding a pattern (ilike, erp.RefPattern.Likes), no ref, a total within
// sus.Near of sus.Amount, or an invoice date in [From, To]; totals are
// compared within half a minor unit, for Odoo stores them as decimals.
// nil when sus selects nothing.
func (c *Client) suspectsDomain(ctx context.Context, s *rpc.Session, prefix string, sus erp.Suspects) ([]any, error) {
	var legs [][]any
	for _, p := range sus.Refs {
		for _, like := range p.Likes(maxRefLikes) {
			legs = append(legs, term(prefix+"ref", "ilike", like)) // Odoo passes % and _ through as wildcards
		}
	}
	if sus.NoRef {
		legs = append(legs, term(prefix+"ref", "=", false))
	}
	if !sus.From.IsZero() && !sus.To.IsZero() {
		legs = append(legs, all(term(prefix+"invoice_date", ">=", sus.From.UTC().Format(time.DateOnly)),
			term(prefix+"invoice_date", "<=", sus.To.UTC().Format(time.DateOnly))))
	}
	if sus.Amount > 0 {
		cur, money, err := c.loadCurrencyID(ctx, s, sus.Currency)
		if errors.Is(err, erp.ErrNotFound) {
			return either(legs...), nil // no bill of Odoo is in it
		}
		if err != nil {
			return nil, err
		}
		unit := math.Pow10(-money.decimals)
		major := func(a intent.Amount) float64 { return float64(a) * unit }
		band := func(lo, hi intent.Amount) []any {
			return all(term(prefix+"currency_id", "=", cur), term(prefix+"amount_total", ">=", major(lo)-unit/2),
				term(prefix+"amount_total", "<=", major(hi)+unit/2))
		}
		legs = append(legs, band(sus.Amount-max(sus.Near, 0), sus.Amount+max(sus.Near, 0)))
	}
	if len(legs) == 0 {
		return nil, nil
	}
	return either(legs...), nil
}

// decisionBills keeps of the documents out (in ID order) those dq
// selects (erp.DecisionQuery), checked again in the connector: Odoo's
// ilike may match more than the patterns (a widened pattern, an
// unaccented character), and the domain is not trusted alone. A credit
// note reversing a suspect is kept when that suspect is.
func decisionBills(out []erp.Bill, dq *erp.DecisionQuery) []erp.Bill {
	suspects := map[string]bool{}
	for _, b := range out {
		if b.Kind == erp.KindBill && b.State != erp.StateCancelled && dq.Suspects.Matches(b) {
			suspects[b.ID] = true
		}
	}
	return slices.DeleteFunc(out, func(b erp.Bill) bool {
		switch {
		case b.ID == dq.Bill, b.State == erp.StatePosted && b.Residual > 0, suspects[b.ID]:
			return false
		case b.Kind == erp.KindCreditNote && b.Reverses != "":
			return b.Reverses != dq.Bill && !(b.State == erp.StatePosted && suspects[b.Reverses])
		}
		return true
	})
}

// handEntries is the account.move domain of the journal entries of the
// vendor's posted outgoing payments dated on or after q.PaymentsSince
// (erp.BillQuery.PaymentsSince), whoever registered them; nil when q asks
// for none (no vendor or no PaymentsSince). Odoo searches through the
// entry's payment (dialect.movePayment) for the direction
// (account.payment payment_type). state is the entry's: posted on every
// version.
func (d *dialect) handEntries(q erp.BillQuery, vendor int64) []any {
	if vendor == 0 || q.PaymentsSince == "" {
		return nil
	}
	return all(term("move_type", "=", "entry"), term(d.movePayment, "!=", false), term("commercial_partner_id", "=", vendor),
		term("state", "=", string(erp.StatePosted)), term("date", ">=", q.PaymentsSince), term(d.movePayment+".payment_type", "=", "outbound"))
}

// lookupDomain matches a bill by what a person calls it: its name (any
// case), its ID, or its vendor reference (erp.LookupPattern).
func lookupDomain(lookup string) []any {
	match := [][]any{term("name", "=ilike", lookup)}
	if n, ok := rpc.ParseID(lookup); ok {
		match = append(match, term("id", "=", n))
	}
	if k := erp.LookupPattern(lookup); k != "" {
		match = append(match, term("ref", "ilike", k)) // Odoo passes % through as a wildcard
	}
	return either(match...)
}

// decodeBills decodes the account.move records rs that bills read for q
// in company cid (id and vendor as billDomain gives them): the bills,
// checked again against q (the connector does not trust the domain
// alone), and with q.WithPayments the payments of the connector's
// entries among rs, of bill id and vendor when given, and the payments
// made by hand that q.PaymentsSince asks for (handWanted).
func (c *Client) decodeBills(d *dialect, rs []rpc.Record, cid int64, q erp.BillQuery, id, vendor int64) ([]erp.Bill, []erp.Payment, error) {
	out := []erp.Bill{}
	var paid []erp.Payment
	for _, r := range rs {
		if q.WithPayments {
			if p, ok, err := c.decodeEntry(d, r, cid); err != nil {
				return nil, nil, err
			} else if ok {
				if p.Key != "" && (id == 0 || p.Bill == itoa(id)) && (vendor == 0 || p.Vendor == itoa(vendor)) ||
					p.Key == "" && handWanted(p, q, vendor) {
					paid = append(paid, p)
				}
				continue
			}
		}
		b, co, err := c.decodeBill(r)
		if err != nil {
			return nil, nil, err
		}
		if co != cid || !billMatches(b, q, id, vendor) {
			continue
		}
		out = append(out, b)
	}
	return out, paid, nil
}

// handWanted reports whether p, decoded from a payment's journal entry
// without the connector's memo, is one that q asks for with
// PaymentsSince (of vendor, posted, dated on or after it); the direction
// is left to the domain (handEntries), as the entry does not carry it.
func handWanted(p erp.Payment, q erp.BillQuery, vendor int64) bool {
	return vendor != 0 && q.PaymentsSince != "" && p.Vendor == itoa(vendor) && p.State == erp.PaymentPosted &&
		p.Day != "" && p.Day >= q.PaymentsSince
}

// billMatches reports whether the decoded bill b is a bill or credit note
// that the query q (id and vendor as billDomain gives them) asks for.
func billMatches(b erp.Bill, q erp.BillQuery, id, vendor int64) bool {
	switch {
	case b.Kind != erp.KindBill && b.Kind != erp.KindCreditNote:
		return false
	case id != 0 && b.ID != itoa(id), vendor != 0 && b.Vendor != itoa(vendor):
		return false
	case q.Open && (b.Kind != erp.KindBill || b.State != erp.StatePosted || b.Residual <= 0):
		return false
	case q.OpenCredit && (b.Kind != erp.KindCreditNote || b.State != erp.StatePosted || b.Residual <= 0):
		return false
	}
	return true
}

// decodeEntry decodes the journal entry of a payment (move_type entry,
// naming its payment: dialect.movePayment): with the key and bill its memo names if the
// connector made it, Key and Bill empty otherwise; ok is false for any
// other record.
func (c *Client) decodeEntry(d *dialect, r rpc.Record, cid int64) (erp.Payment, bool, error) {
	kind, err := r.Str("move_type")
	if err != nil || kind != "entry" {
		return erp.Payment{}, false, err
	}
	var pay, partner, bank, cur, co int64
	var ref, state string
	var created time.Time
	errs := []error{}
	pay, _, err = r.Many2one(d.movePayment)
	errs = append(errs, err)
	partner, _, err = r.Many2one("commercial_partner_id")
	errs = append(errs, err)
	bank, _, err = r.Many2one("partner_bank_id")
	errs = append(errs, err)
	cur, _, err = r.Many2one("currency_id")
	errs = append(errs, err)
	co, _, err = r.Many2one("company_id")
	errs = append(errs, err)
	ref, err = r.Str("ref")
	errs = append(errs, err)
	state, err = r.Str("state")
	errs = append(errs, err)
	created, err = r.Datetime("create_date")
	errs = append(errs, err)
	day, err := r.Date("date")
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return erp.Payment{}, false, fmt.Errorf("odoo: account.move entry: %w", err)
	}
	key, bill, ours := parseMemo(ref)
	if pay == 0 || co != cid {
		return erp.Payment{}, false, nil
	}
	money, ok := c.currency(cur)
	if !ok {
		return erp.Payment{}, false, fmt.Errorf("odoo: account.payment %d: %w: unknown currency", pay, ErrBadAnswer)
	}
	amount, err := r.Amount("amount_total", money.decimals)
	if err != nil {
		return erp.Payment{}, false, fmt.Errorf("odoo: account.payment %d: %w", pay, err)
	}
	switch erp.PaymentStatus(state) {
	case erp.PaymentDraft, erp.PaymentPosted, erp.PaymentCancelled:
	default:
		return erp.Payment{}, false, fmt.Errorf("odoo: account.payment %d: %w: state %q", pay, ErrBadAnswer, state)
	}
	p := erp.Payment{ID: itoa(pay), Vendor: itoa(partner), Amount: intent.Money{Currency: money.code, Amount: amount},
		Date: created, State: erp.PaymentStatus(state)}
	if ours { // the connector's: its memo names its key and bill
		p.Key, p.Bill = key, itoa(bill)
	}
	if bank != 0 {
		p.BankAccount = itoa(bank)
	}
	if !day.IsZero() {
		p.Day = day.Format(time.DateOnly)
	}
	return p, true, nil
}

// loadCurrencies reads the currencies of rs (their currency_id) that are
// not cached yet, in one call.
func (c *Client) loadCurrencies(ctx context.Context, s *rpc.Session, rs []rpc.Record) error {
	var missing []any
	c.mu.Lock()
	for _, r := range rs {
		id, _, err := r.Many2one("currency_id")
		if err != nil || id == 0 {
			continue // decodeBill reports it
		}
		if _, ok := c.currencies[id]; !ok && !slices.Contains(missing, any(id)) {
			missing = append(missing, id)
		}
	}
	c.mu.Unlock()
	if len(missing) == 0 {
		return nil
	}
	v, err := s.Execute(ctx, "res.currency", "read", []any{missing}, map[string]any{
		"fields": rpc.Strs([]string{"name", "decimal_places"}), "context": map[string]any{"active_test": false}})
	if err != nil {
		return err
	}
	cs, err := rpc.Records(v)
	if err != nil {
		return fmt.Errorf("odoo: res.currency.read: %w", err)
	}
	return c.storeCurrencies(cs)
}

// storeCurrencies caches res.currency records read with name and
// decimal_places.
func (c *Client) storeCurrencies(cs []rpc.Record) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, r := range cs {
		id, err := r.ID()
		if err != nil {
			return fmt.Errorf("odoo: res.currency: %w", err)
		}
		code, err1 := r.Str("name")
		dec, err2 := r.Int("decimal_places")
		if err := errors.Join(err1, err2); err != nil {
			return fmt.Errorf("odoo: res.currency %d: %w", id, err)
		}
		if !isCurrencyCode(code) || dec < 0 || dec > 6 {
			return fmt.Errorf("odoo: res.currency %d: %w: code %q, %d decimals", id, ErrBadAnswer, code, dec)
		}
		if intent.ISOCurrency(code) && int(dec) != erp.Decimals(code) {
			// Amounts would be read and written at another scale than
			// ISO 4217's, the one every amount of the gateway is in.
			return fmt.Errorf("odoo: res.currency %d: %w: %s has %d decimal places in Odoo, %d in ISO 4217; correct the currency in Odoo",
				id, ErrBadAnswer, code, dec, erp.Decimals(code))
		}
		c.currencies[id] = currency{code: code, decimals: int(dec)}
	}
	return nil
}

func isCurrencyCode(s string) bool {
	return len(s) == 3 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

func (c *Client) currency(id int64) (currency, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cur, ok := c.currencies[id]
	return cur, ok
}

var paymentStates = map[string]erp.PaymentState{
	"not_paid": erp.NotPaid, "partial": erp.Partial, "paid": erp.Paid, "in_payment": erp.InPayment,
	"reversed": erp.Reversed, "invoicing_legacy": erp.Paid, // paid in the invoicing app before accounting was installed
	"blocked": erp.Blocked, // Odoo 18 and later: put on hold for payment
}

func (c *Client) decodeBill(r rpc.Record) (erp.Bill, int64, error) {
	id, err := r.ID()
	if err != nil {
		return erp.Bill{}, 0, err
	}
	b := erp.Bill{ID: itoa(id)}
	var partner, commercial, cur, bank, rev, co int64
	var kind, state, pstate string
	errs := []error{}
	b.Name, err = r.Str("name")
	errs = append(errs, err)
	b.Ref, err = r.Str("ref")
	errs = append(errs, err)
	partner, _, err = r.Many2one("partner_id")
	errs = append(errs, err)
	commercial, b.VendorName, err = r.Many2one("commercial_partner_id")
	errs = append(errs, err)
	kind, err = r.Str("move_type")
	errs = append(errs, err)
	cur, _, err = r.Many2one("currency_id")
	errs = append(errs, err)
	b.Due, err = r.Date("invoice_date_due")
	errs = append(errs, err)
	b.Date, err = r.Date("invoice_date")
	errs = append(errs, err)
	bank, _, err = r.Many2one("partner_bank_id")
	errs = append(errs, err)
	state, err = r.Str("state")
	errs = append(errs, err)
	pstate, err = r.Str("payment_state")
	errs = append(errs, err)
	rev, _, err = r.Many2one("reversed_entry_id")
	errs = append(errs, err)
	co, _, err = r.Many2one("company_id")
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return erp.Bill{}, 0, fmt.Errorf("odoo: account.move %d: %w", id, err)
	}
	money, ok := c.currency(cur)
	if !ok {
		return erp.Bill{}, 0, fmt.Errorf("odoo: account.move %d: %w: unknown currency", id, ErrBadAnswer)
	}
	b.Total, err = r.Amount("amount_total", money.decimals)
	errs = append(errs[:0], err)
	b.Residual, err = r.Amount("amount_residual", money.decimals)
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return erp.Bill{}, 0, fmt.Errorf("odoo: account.move %d: %w", id, err)
	}
	ps, ok := paymentStates[pstate]
	switch erp.State(state) {
	case erp.StateDraft, erp.StatePosted, erp.StateCancelled:
	default:
		ok = false
	}
	if !ok || partner == 0 || commercial == 0 {
		return erp.Bill{}, 0, fmt.Errorf("odoo: account.move %d: %w: state %q, payment state %q", id, ErrBadAnswer, state, pstate)
	}
	if b.Name == "" && b.State == erp.StateDraft {
		b.Name = "/" // a draft's name: "/" on Odoo 17, False from 18 on
	}
	if partner != commercial {
		b.Contact = itoa(partner)
	}
	b.Vendor, b.Kind, b.Currency, b.State, b.PaymentState = itoa(commercial), erp.Kind(kind), money.code, erp.State(state), ps
	if bank != 0 {
		b.BankAccount = itoa(bank)
	}
	if rev != 0 && b.Kind == erp.KindCreditNote {
		b.Reverses = itoa(rev)
	}
	return b, co, nil
}
