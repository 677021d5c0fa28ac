package odoo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// vendorFields are the res.partner fields read of a vendor. Fields are
// always named: without them, Odoo sends every field (144 for
// res.partner). Those of the other models differ between versions (see
// dialect).
var vendorFields = []string{"name", "phone", "active", "company_id", "supplier_rank", "commercial_partner_id", "country_code"}

// MaxRead is the most records one read of the connector returns. Every
// read has a domain bound to a vendor, a bill, a number or a name, and
// this limit; a read that would return more fails (wrapping ErrTooMany)
// instead of silently dropping records a decision needs. A page of bills
// (erp.BillQuery.Limit) is read with its own limit. A payment's decision
// reads only the vendor's open documents, its payments of the week and
// the duplicate candidates (erp.BillQuery.Decision): it is refused only
// for more than MaxRead of those together, never for a long history.
const MaxRead = 2000

// ErrTooMany is erp.ErrTooMany, wrapped (by an *erp.TooManyError of Max
// MaxRead) by a read that matched more than MaxRead records.
var ErrTooMany = erp.ErrTooMany

// limited returns the kwargs of a read capped at MaxRead (or limit and
// offset, for a page), and a check of its result.
func limited(ctx map[string]any, limit, offset int) (map[string]any, func(n int, what string) error) {
	kw := map[string]any{"context": ctx}
	if limit > 0 {
		kw["limit"] = limit
		if offset > 0 {
			kw["offset"] = offset
		}
		return kw, func(int, string) error { return nil }
	}
	kw["limit"] = MaxRead + 1
	return kw, func(n int, what string) error {
		if n > MaxRead {
			return fmt.Errorf("odoo: %w", &erp.TooManyError{Max: MaxRead, What: what})
		}
		return nil
	}
}

// shared is the domain of records a company sees: its own and those
// without a company, which Odoo shows to every company.
func shared(field string, cid int64) []any {
	return []any{"|", rpc.Leaf(field, "=", false), rpc.Leaf(field, "=", cid)}
}

// all joins complete domain expressions (each a leaf in a list, or a
// prefix expression) with Odoo's prefix &; either with |.
func all(terms ...[]any) []any { return join("&", terms) }

func either(terms ...[]any) []any { return join("|", terms) }

func join(op string, terms [][]any) []any {
	out := slices.Repeat([]any{op}, max(len(terms)-1, 0))
	for _, t := range terms {
		out = append(out, t...)
	}
	return out
}

// term is a leaf as a complete expression.
func term(field, op string, value any) []any { return []any{rpc.Leaf(field, op, value)} }

// Vendors implements erp.Reader: the res.partner records the company sees
// (its own and those without a company) that are commercial partners
// (companies, and individuals without a parent company) with a
// supplier_rank above zero, archived ones included. A contact person of a
// company is never a vendor: its company is.
func (c *Client) Vendors(ctx context.Context, company string, q erp.VendorQuery) ([]erp.Vendor, error) {
	cid, ok := c.company(company)
	if !ok {
		return nil, ctx.Err()
	}
	domain := append(shared("company_id", cid), rpc.Leaf("supplier_rank", ">", 0), "|", rpc.Leaf("is_company", "=", true), rpc.Leaf("parent_id", "=", false))
	var id int64
	if q.ID != "" {
		if id, ok = rpc.ParseID(q.ID); !ok {
			return nil, ctx.Err()
		}
		domain = append(domain, rpc.Leaf("id", "=", id))
	}
	name := strings.ToLower(strings.TrimSpace(q.Name))
	if q.Name != "" {
		domain = append(domain, rpc.Leaf("name", "ilike", strings.TrimSpace(q.Name)))
	}
	kw, check := limited(rpc.Scope(cid, true), q.Limit, 0)
	rs, err := c.reader.SearchRead(ctx, "res.partner", domain, vendorFields, kw)
	if err != nil {
		return nil, err
	}
	if err := check(len(rs), "vendors"); err != nil {
		return nil, err
	}
	out := []erp.Vendor{}
	for _, r := range rs {
		v, co, err := decodeVendor(r)
		if err != nil {
			return nil, err
		}
		// Checked again here: a domain leaf Odoo cannot apply matches
		// everything instead of nothing.
		if co < 0 || (co != 0 && co != cid) || (id != 0 && v.ID != itoa(id)) || (q.Name != "" && strings.ToLower(strings.TrimSpace(v.Name)) != name) {
			continue
		}
		out = append(out, v)
	}
	slices.SortFunc(out, func(a, b erp.Vendor) int { return erp.CompareIDs(a.ID, b.ID) })
	return out, nil
}

// decodeVendor decodes a partner; its company is -1 when it is not a
// vendor (no supplier rank, or a contact person of another partner).
func decodeVendor(r rpc.Record) (erp.Vendor, int64, error) {
	id, err := r.ID()
	if err != nil {
		return erp.Vendor{}, 0, err
	}
	v := erp.Vendor{ID: itoa(id)}
	var rank, co, commercial int64
	errs := []error{}
	v.Name, err = r.Str("name")
	errs = append(errs, err)
	v.Phone, err = r.Str("phone")
	errs = append(errs, err)
	v.Active, err = r.Bool("active")
	errs = append(errs, err)
	co, _, err = r.Many2one("company_id")
	errs = append(errs, err)
	rank, err = r.Int("supplier_rank")
	errs = append(errs, err)
	commercial, _, err = r.Many2one("commercial_partner_id")
	errs = append(errs, err)
	v.Country, err = r.Str("country_code") // related to country_id.code
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return erp.Vendor{}, 0, fmt.Errorf("odoo: res.partner %d: %w", id, err)
	}
	if rank <= 0 || commercial != id {
		co = -1 // not a vendor: filtered out
	}
	return v, co, nil
}

// numberChars reports whether an account number holds only what the
// connector lets through: ASCII letters and digits, spaces (Unicode
// category Zs: the no-break space too) and - . / : ("IBAN: DE89…").
// Anything else (a Cyrillic look-alike, a full-width digit, a combining
// mark, an underscore) is not silently cleaned into a valid number.
func numberChars(s string) bool {
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == ' ', r == '-', r == '.', r == '/', r == ':':
		case r > unicode.MaxASCII && unicode.Is(unicode.Zs, r):
			// A no-break or thin space from a PDF or a locale-formatted
			// page: both sanitizations drop it.
		default:
			return false
		}
	}
	return true
}

// BankAccounts implements erp.Reader: res.partner.bank records the
// company sees (its own and those without a company, Odoo's default) of
// the partners it sees, archived ones included unless q.Active. SetAt is
// the account's write_date: Odoo keeps no date for the number alone, and
// any later write (archiving, reordering, trusting) only makes the
// account look younger, which errs towards a call-back. A Number with
// characters other than ASCII letters, digits, spaces and - . / matches
// nothing.
func (c *Client) BankAccounts(ctx context.Context, company string, q erp.BankAccountQuery) ([]erp.BankAccount, error) {
	cid, ok := c.company(company)
	if !ok {
		return nil, ctx.Err()
	}
	return c.bankAccounts(ctx, c.reader, cid, q)
}

func (c *Client) bankAccounts(ctx context.Context, s *rpc.Session, cid int64, q erp.BankAccountQuery) ([]erp.BankAccount, error) {
	domain, id, vendor, ok := accountDomain(cid, q)
	if !ok {
		return nil, ctx.Err() // a query that matches nothing
	}
	d, err := c.dialect(ctx)
	if err != nil {
		return nil, err
	}
	number := erp.Sanitize(q.Number)
	kw, check := limited(rpc.Scope(cid, !q.Active), 0, 0)
	rs, err := s.SearchRead(ctx, "res.partner.bank", domain, d.accountFields(q.Holders && q.Number != ""), kw)
	if err != nil {
		return nil, err
	}
	if err := check(len(rs), "bank accounts"); err != nil {
		return nil, err
	}
	withHolders := q.Holders && q.Number != ""
	out, holders, dups, err := decodeAccounts(rs, d, q, cid, id, vendor)
	if err != nil {
		return nil, err
	}
	if q.Number != "" {
		out = slices.DeleteFunc(out, func(a erp.BankAccount) bool {
			return !erp.SameNumber(a.Sanitized, number) && !(q.Holders && holders[a.Vendor])
		})
	}
	if withHolders {
		otherHolders(number, out, dups)
	}
	slices.SortFunc(out, func(a, b erp.BankAccount) int { return erp.CompareIDs(a.ID, b.ID) })
	if err := holderCountries(ctx, s, cid, out); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeAccounts decodes a res.partner.bank read for bankAccounts: the
// accounts q wants (accountWanted), the vendors among them holding q's
// number on an active account, and, on Odoo 19 when q asks for holders,
// each account's duplicate_bank_partner_ids (partner ids, by account id).
func decodeAccounts(rs []rpc.Record, d *dialect, q erp.BankAccountQuery, cid, id, vendor int64) ([]erp.BankAccount, map[string]bool, map[string][]int64, error) {
	number := erp.Sanitize(q.Number)
	withDups := d.duplicateHolders != "" && q.Holders && q.Number != ""
	out := []erp.BankAccount{}
	holders := map[string]bool{}
	dups := map[string][]int64{}
	for _, r := range rs {
		a, co, err := decodeAccount(r)
		if err != nil {
			return nil, nil, nil, err
		}
		if withDups {
			if dups[a.ID], err = r.IDs(d.duplicateHolders); err != nil {
				return nil, nil, nil, fmt.Errorf("odoo: res.partner.bank %s: %w", a.ID, err)
			}
		}
		if !accountWanted(a, co, cid, id, vendor, q.Active) {
			continue
		}
		if q.Number != "" && erp.SameNumber(a.Sanitized, number) && a.Active {
			holders[a.Vendor] = true
		}
		out = append(out, a)
	}
	return out, holders, dups, nil
}

// otherHolders sets the OtherHolders of the active accounts of number
// among as, which a read with Holders gave: every account of the number
// the company sees is among them (an account's company_id is its
// partner's, so the company sees the accounts of its own partners and of
// partners of no company, as Odoo 19 computes duplicate_bank_partner_ids),
// whichever partner, a vendor or not, holds it. The other holders are the
// partners of the other active accounts of number, matched on
// sanitized_acc_number on every version (no call more), so that a number
// typed differently (which 19's field, comparing acc_number as typed,
// misses) counts too; on 19 the field's partners (dups, by account) are
// added.
func otherHolders(number string, as []erp.BankAccount, dups map[string][]int64) {
	var partners []string
	for _, a := range as {
		if a.Active && erp.SameNumber(a.Sanitized, number) && !slices.Contains(partners, a.Vendor) {
			partners = append(partners, a.Vendor)
		}
	}
	for i, a := range as {
		if !a.Active || !erp.SameNumber(a.Sanitized, number) {
			continue
		}
		var others []string
		for _, p := range partners {
			if p != a.Vendor {
				others = append(others, p)
			}
		}
		for _, p := range dups[a.ID] {
			if id := itoa(p); id != a.Vendor && !slices.Contains(others, id) {
				others = append(others, id)
			}
		}
		slices.SortFunc(others, erp.CompareIDs)
		as[i].OtherHolders = others
	}
}

// accountWanted reports whether the account a, of company co (0: shared),
// read for company cid, is one the query asked for: the account id and
// the vendor id when they are not 0, and an active account if active. It
// checks again what the search domain asked, so that a record Odoo
// returns beyond it is left out.
func accountWanted(a erp.BankAccount, co, cid, id, vendor int64, active bool) bool {
	return (co == 0 || co == cid) && (id == 0 || a.ID == itoa(id)) && (vendor == 0 || a.Vendor == itoa(vendor)) && (!active || a.Active)
}

// holderCountries sets the Country of the accounts whose type depends on
// it (normalize.ParseAccount): a bank code of digits only, an ABA routing
// number or a sort code, or a 14-digit number, a sort code typed with the
// account number. It reads their holders' country_code (related to
// country_id.code) in one call, and none when no account needs it: an
// IBAN, or a national number at a BIC, names its country itself.
func holderCountries(ctx context.Context, s *rpc.Session, cid int64, as []erp.BankAccount) error {
	var ids []any
	for _, a := range as {
		if needsCountry(a) {
			id, _ := rpc.ParseID(a.Vendor)
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rs, err := s.SearchRead(ctx, "res.partner", []any{rpc.Leaf("id", "in", ids)}, []string{"country_code"},
		map[string]any{"context": rpc.Scope(cid, true), "limit": len(ids)})
	if err != nil {
		return err
	}
	codes := map[string]string{}
	for _, r := range rs {
		id, err := r.ID()
		if err != nil {
			return err
		}
		if codes[itoa(id)], err = r.Str("country_code"); err != nil {
			return fmt.Errorf("odoo: res.partner %d: %w", id, err)
		}
	}
	for i := range as {
		if needsCountry(as[i]) {
			as[i].Country = codes[as[i].Vendor]
		}
	}
	return nil
}

// needsCountry reports whether an account's type depends on its holder's
// country (see holderCountries).
func needsCountry(a erp.BankAccount) bool {
	digits := func(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }
	return digits(erp.Sanitize(a.BIC)) || len(a.Sanitized) == 14 && digits(a.Sanitized)
}

// accountDomain is the domain of a bank-account query, with the ID and
// vendor it names (0 if none); ok is false for a query that can match
// nothing (an ID that is not one, a number with characters the connector
// never lets through).
func accountDomain(cid int64, q erp.BankAccountQuery) (domain []any, id, vendor int64, ok bool) {
	domain = append(shared("company_id", cid), shared("partner_id.company_id", cid)...)
	if q.ID != "" {
		if id, ok = rpc.ParseID(q.ID); !ok {
			return nil, 0, 0, false
		}
		domain = append(domain, rpc.Leaf("id", "=", id))
	}
	if q.Vendor != "" {
		if vendor, ok = rpc.ParseID(q.Vendor); !ok {
			return nil, 0, 0, false
		}
		domain = append(domain, rpc.Leaf("partner_id", "=", vendor))
	}
	if q.Number != "" {
		number := erp.Sanitize(q.Number)
		if !numberChars(q.Number) || number == "" {
			return nil, 0, 0, false
		}
		numbers := make([]any, 0, 2)
		for _, n := range erp.QueryNumbers(number) {
			numbers = append(numbers, n)
		}
		if q.Holders {
			// bank_ids lists a partner's active accounts only.
			domain = append(domain, "|", rpc.Leaf("sanitized_acc_number", "in", numbers), rpc.Leaf("partner_id.bank_ids.sanitized_acc_number", "in", numbers))
		} else {
			domain = append(domain, rpc.Leaf("sanitized_acc_number", "in", numbers))
		}
	}
	if q.Active {
		domain = append(domain, rpc.Leaf("active", "=", true))
	}
	return domain, id, vendor, true
}

func decodeAccount(r rpc.Record) (erp.BankAccount, int64, error) {
	id, err := r.ID()
	if err != nil {
		return erp.BankAccount{}, 0, err
	}
	a := erp.BankAccount{ID: itoa(id)}
	var partner, co, seq int64
	errs := []error{}
	partner, _, err = r.Many2one("partner_id")
	errs = append(errs, err)
	a.Number, err = r.Str("acc_number")
	errs = append(errs, err)
	a.Sanitized, err = r.Str("sanitized_acc_number")
	errs = append(errs, err)
	a.BIC, err = r.Str("bank_bic")
	errs = append(errs, err)
	a.Trusted, err = r.Bool("allow_out_payment")
	errs = append(errs, err)
	a.Active, err = r.Bool("active")
	errs = append(errs, err)
	seq, err = r.Int("sequence")
	errs = append(errs, err)
	a.SetAt, err = r.Datetime("write_date")
	errs = append(errs, err)
	co, _, err = r.Many2one("company_id")
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return erp.BankAccount{}, 0, fmt.Errorf("odoo: res.partner.bank %d: %w", id, err)
	}
	if partner == 0 {
		return erp.BankAccount{}, 0, fmt.Errorf("odoo: res.partner.bank %d: %w: no partner", id, ErrBadAnswer)
	}
	a.Vendor, a.Sequence = itoa(partner), int(seq)
	return a, co, nil
}

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

// Payments implements erp.Reader: the company's outgoing supplier
// payments. A payment belongs to the bills it is reconciled with
// (reconciled_bill_ids, which Odoo cannot search: it is read and matched
// here), or, while it is not reconciled, to the bill its memo names. A
// payment to a vendor is one whose partner's commercial partner is the
// vendor (a payment to a contact person is its company's).
func (c *Client) Payments(ctx context.Context, company string, q erp.PaymentQuery) ([]erp.Payment, error) {
	cid, ok := c.company(company)
	if !ok {
		return nil, ctx.Err()
	}
	d, err := c.dialect(ctx)
	if err != nil {
		return nil, err
	}
	domain, ok := d.paymentDomain(cid, q)
	if !ok {
		return []erp.Payment{}, ctx.Err() // an ID or key that names nothing
	}
	if q.Bill == "" && q.Vendor != "" {
		// With q.Limit as the read's own limit, so that a vendor paid
		// thousands of times is not ErrTooMany for a question one payment
		// answers; a payment reconciled with no bill is kept.
		return c.payments(ctx, d, c.reader, cid, domain, false, 0, q.Limit, true)
	}
	var bill int64
	if q.Bill != "" {
		if bill, ok = rpc.ParseID(q.Bill); !ok {
			return nil, ctx.Err()
		}
		bs, vendors, err := c.bills(ctx, c.reader, cid, erp.BillQuery{ID: q.Bill})
		if err != nil {
			return nil, err
		}
		if len(bs) != 1 {
			return []erp.Payment{}, nil
		}
		domain = append(domain, rpc.Leaf("partner_id", "=", vendors[bs[0].ID]))
	}
	ps, err := c.payments(ctx, d, c.reader, cid, domain, false, bill, 0, false)
	if err != nil {
		return nil, err
	}
	ps = slices.DeleteFunc(ps, func(p erp.Payment) bool {
		return (q.Vendor != "" && p.Vendor != q.Vendor) || (q.Posted && p.State != erp.PaymentPosted) || (q.Key != "" && p.Key != q.Key)
	})
	if q.Limit > 0 && len(ps) > q.Limit {
		ps = ps[:q.Limit]
	}
	return ps, nil
}

// paymentDomain is the domain of the company's outgoing vendor payments q
// selects, before the bill (see Payments); ok is false when q names a
// vendor or key that no record can have.
func (d *dialect) paymentDomain(cid int64, q erp.PaymentQuery) (domain []any, ok bool) {
	domain = []any{rpc.Leaf("company_id", "=", cid), rpc.Leaf("payment_type", "=", "outbound"), rpc.Leaf("partner_type", "=", "supplier")}
	if q.Posted {
		domain = append(domain, rpc.Leaf("state", "in", d.postedStates()))
	}
	if q.Key != "" {
		if !validKey(q.Key) {
			return nil, false // no payment was ever made under it
		}
		// The memo's marker, matched with ilike and then exactly.
		domain = append(domain, rpc.Leaf(d.paymentMemo, "ilike", memoPrefix+q.Key+" bill "))
	}
	if q.Vendor != "" {
		vendor, ok := rpc.ParseID(q.Vendor)
		if !ok {
			return nil, false
		}
		domain = append(domain, rpc.Leaf("partner_id.commercial_partner_id", "=", vendor))
	}
	return domain, true
}

// payments reads the fields (paymentFields, or with keyed keyedFields:
// then a payment's bill is the one its memo names only) of the payments matching
// domain and returns them with their bill; bill, if not zero, keeps only
// that bill's. limit, if above zero, is the read's limit (else MaxRead);
// unbilled keeps the payments of no bill too, with Bill empty.
func (c *Client) payments(ctx context.Context, d *dialect, s *rpc.Session, cid int64, domain []any, keyed bool, bill int64, limit int, unbilled bool) ([]erp.Payment, error) {
	fields := d.paymentFields()
	if keyed {
		fields = d.keyedFields()
	}
	kw, check := limited(rpc.Scope(cid, false), limit, 0)
	rs, err := s.SearchRead(ctx, "account.payment", domain, fields, kw)
	if err != nil {
		return nil, err
	}
	if err := check(len(rs), "payments"); err != nil {
		return nil, err
	}
	if err := c.loadCurrencies(ctx, s, rs); err != nil {
		return nil, err
	}
	out := []erp.Payment{}
	for _, r := range rs {
		p, co, bills, err := c.decodePayment(d, r, !keyed)
		if err != nil {
			return nil, err
		}
		if co != cid {
			continue
		}
		switch {
		case bill != 0 && (slices.Contains(bills, bill) || p.Bill == itoa(bill)):
			p.Bill = itoa(bill)
		case bill != 0:
			continue
		case p.Bill == "" && len(bills) > 0:
			p.Bill = itoa(slices.Min(bills))
		case p.Bill == "" && !unbilled:
			continue // not a payment of a bill
		}
		out = append(out, p)
	}
	slices.SortFunc(out, func(a, b erp.Payment) int { return erp.CompareIDs(a.ID, b.ID) })
	return out, nil
}

// decodePayment decodes a payment; its Bill is the bill its memo names, if
// any, and bills the bills it is reconciled with, if reconciled (r holds
// reconciled_bill_ids), else none.
func (c *Client) decodePayment(d *dialect, r rpc.Record, reconciled bool) (erp.Payment, int64, []int64, error) {
	id, err := r.ID()
	if err != nil {
		return erp.Payment{}, 0, nil, err
	}
	p := erp.Payment{ID: itoa(id)}
	var partner, bank, cur, co int64
	var state, ref, ptype, partnerType string
	var bills []int64
	var date time.Time
	errs := []error{}
	partner, _, err = r.Many2one("partner_id")
	errs = append(errs, err)
	bank, _, err = r.Many2one("partner_bank_id")
	errs = append(errs, err)
	cur, _, err = r.Many2one("currency_id")
	errs = append(errs, err)
	state, err = r.Str("state")
	errs = append(errs, err)
	ref, err = r.Str(d.paymentMemo)
	errs = append(errs, err)
	date, err = r.Date("date")
	errs = append(errs, err)
	if !date.IsZero() {
		p.Day = date.Format(time.DateOnly)
	}
	p.Date, err = r.Datetime("create_date")
	errs = append(errs, err)
	if reconciled {
		bills, err = r.IDs("reconciled_bill_ids")
		errs = append(errs, err)
	}
	p.Reconciled, err = r.Bool("is_reconciled")
	errs = append(errs, err)
	co, _, err = r.Many2one("company_id")
	errs = append(errs, err)
	ptype, err = r.Str("payment_type")
	errs = append(errs, err)
	partnerType, err = r.Str("partner_type")
	errs = append(errs, err)
	if err := errors.Join(errs...); err != nil {
		return erp.Payment{}, 0, nil, fmt.Errorf("odoo: account.payment %d: %w", id, err)
	}
	money, ok := c.currency(cur)
	if !ok {
		return erp.Payment{}, 0, nil, fmt.Errorf("odoo: account.payment %d: %w: unknown currency", id, ErrBadAnswer)
	}
	amount, err := r.Amount("amount", money.decimals)
	if err != nil {
		return erp.Payment{}, 0, nil, fmt.Errorf("odoo: account.payment %d: %w", id, err)
	}
	status, ok := d.paymentState(state)
	if !ok {
		return erp.Payment{}, 0, nil, fmt.Errorf("odoo: account.payment %d: %w: state %q", id, ErrBadAnswer, state)
	}
	if ptype != "outbound" || partnerType != "supplier" {
		co = 0 // not a vendor payment: filtered out
	}
	p.Vendor, p.Amount, p.State = itoa(partner), intent.Money{Currency: money.code, Amount: amount}, status
	if bank != 0 {
		p.BankAccount = itoa(bank)
	}
	if p.Date.IsZero() {
		p.Date = date
	}
	if key, b, ok := parseMemo(ref); ok {
		p.Key, p.Bill = key, itoa(b)
	}
	return p, co, bills, nil
}

// The memo of a payment made by the connector ends with a marker naming
// its idempotency key and its bill: "INV-2290 [intentplane KEY bill 42]".
const memoPrefix = "[intentplane "

// validKey reports whether an idempotency key can go into a memo: 1 to
// 128 ASCII letters, digits and . : -, none of them a LIKE wildcard.
func validKey(k string) bool {
	if k == "" || len(k) > 128 {
		return false
	}
	for i := 0; i < len(k); i++ {
		switch c := k[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == ':', c == '-':
		default:
			return false
		}
	}
	return true
}

func memo(ref, key string, bill int64) string {
	ref = strings.Map(func(r rune) rune {
		if r == '[' || r == ']' || r < 0x20 {
			return -1
		}
		return r
	}, ref)
	m := memoPrefix + key + " bill " + itoa(bill) + "]"
	if ref = strings.TrimSpace(ref); ref != "" {
		m = ref + " " + m
	}
	return m
}

// parseMemo finds the last marker in a memo.
func parseMemo(ref string) (key string, bill int64, ok bool) {
	i := strings.LastIndex(ref, memoPrefix)
	if i < 0 || !strings.HasSuffix(ref, "]") {
		return "", 0, false
	}
	fields := strings.Fields(strings.TrimSuffix(ref[i+len(memoPrefix):], "]"))
	if len(fields) != 3 || fields[1] != "bill" || !validKey(fields[0]) {
		return "", 0, false
	}
	bill, ok = rpc.ParseID(fields[2])
	return fields[0], bill, ok
}

func refused(format string, a ...any) error {
	return fmt.Errorf("%w: %s", erp.ErrRefused, fmt.Sprintf(format, a...))
}

func notFound(what string) error { return fmt.Errorf("%w: %s", erp.ErrNotFound, what) }

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// lock holds the connector's lock on one bill of a company, so that
// two payments of it from this Client never overlap. Across processes the
// gateway's exclusive hold on the bill serializes them.
func (c *Client) lock(ctx context.Context, key string) (func(), error) {
	c.mu.Lock()
	ch, ok := c.locks[key]
	if !ok {
		ch = make(chan struct{}, 1)
		c.locks[key] = ch
	}
	c.mu.Unlock()
	select {
	case ch <- struct{}{}:
		return func() { <-ch }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// RegisterPayment implements erp.Payer, as the payer identity. Without
// r.Decided it looks for a payment already made under r.Key (and returns
// it), then reads the bill and the bank account; with r.Decided it checks
// the request against the bill, its payments and the account as the
// caller read them while deciding (see erp.PaymentRequest). It checks them
// (see erp.Payer); opens Odoo's payment wizard (account.payment.register)
// on the bill with the amount, the bank account passed explicitly, the
// payment date (today in the company's calendar, see Config.TimeZone) and
// a memo carrying the key; runs it; and reads the payment back, checking
// that Odoo paid the account and amount asked. That is three XML-RPC calls
// with r.Decided, six without, once the uid, the currency and the
// company's time zone are cached. On Odoo 18 and 19, whose wizard pays a
// bill that is not posted (17 refuses), a request with r.Decided also
// reads the bill's state and residual again just before the wizard (one
// call more: four): a bill reset to draft since the decision is refused.
//
// Outcomes: a refusal of the request wraps erp.ErrRefused; a failure
// before Odoo ran the payment (the connection refused, an access or user
// fault of the wizard, a fault of action_create_payments, which Odoo rolls
// back) wraps erp.ErrNotWritten; if the answer of action_create_payments
// is lost, it looks for the key again before saying anything: the payment
// is either found and returned, or the error wraps ErrNetwork only (the
// outcome is unknown) and the write is not retried. With r.Credits it
// reads the vendor's open credit notes and the bill's outstanding debits
// before the payment (two calls), and once the payment is made adds each
// credit note's line to the bill (one call each,
// account.move.js_assign_outstanding_line); those that fail are named in
// the payment's Unreconciled.
func (c *Client) RegisterPayment(ctx context.Context, company string, r erp.PaymentRequest) (erp.Payment, error) {
	cid, billID, err := c.paymentTarget(company, r)
	if err != nil {
		return erp.Payment{}, err
	}
	s := c.payer
	unlock, err := c.lock(ctx, itoa(cid)+"/"+r.Bill)
	if err != nil {
		return erp.Payment{}, err
	}
	defer unlock()
	b, acct, done, err := c.paymentSubjects(ctx, s, cid, r)
	if err != nil || done != nil {
		if done != nil {
			return *done, nil
		}
		return erp.Payment{}, err
	}
	if err := checkPayment(b, acct, r); err != nil {
		return erp.Payment{}, err
	}
	credits, err := c.creditLines(ctx, s, cid, b, r)
	if err != nil {
		return erp.Payment{}, err
	}
	money, err := c.loadCurrency(ctx, s, b.Currency)
	if err != nil {
		return erp.Payment{}, notWritten(err)
	}
	day, err := c.today(ctx, cid)
	if err != nil {
		return erp.Payment{}, notWritten(err)
	}
	// Read for the decision, maybe a while ago: on 18 and 19, whose
	// wizard pays a bill that is not posted, the wizard's opening reads
	// again whether it still is (without Decided it was just read above).
	recheck := false
	if r.Decided != nil {
		d, err := c.dialect(ctx)
		if err != nil {
			return erp.Payment{}, notWritten(err)
		}
		recheck = d.draftBillPayable
	}
	return c.runWizard(ctx, s, cid, billID, b, acct, r, money, day, credits, recheck)
}

// runWizard opens Odoo's payment wizard (account.payment.register) on
// bill billID of company cid with r's amount in money's minor units, the
// account acct, the payment date day (YYYY-MM-DD, the company's calendar)
// and a memo carrying r.Key, checking the bill again when recheck (see
// openWizard); runs it (action_create_payments); and reads the payment
// back. RegisterPayment documents the outcomes.
func (c *Client) runWizard(ctx context.Context, s *rpc.Session, cid, billID int64, b erp.Bill, acct erp.BankAccount, r erp.PaymentRequest, money currency, day string, credits []creditLine, recheck bool) (erp.Payment, error) {
	acctID, _ := rpc.ParseID(acct.ID)
	wctx := rpc.Scope(cid, false)
	wctx["active_model"] = "account.move"
	wctx["active_ids"] = []any{billID}
	wizard, err := openWizard(ctx, s, billID, b, r, money, map[string]any{
		"amount":                      rpc.FromMinor(r.Amount.Amount, money.decimals),
		"partner_bank_id":             acctID,
		"communication":               memo(b.Ref, r.Key, billID),
		"payment_difference_handling": "open",
		"payment_date":                day,
	}, wctx, recheck)
	if err != nil {
		return erp.Payment{}, err
	}
	v, err := s.Execute(ctx, "account.payment.register", "action_create_payments", []any{[]any{wizard}}, map[string]any{"context": wctx})
	if err != nil && !errors.Is(err, rpc.ErrNoneResult) {
		var f *Fault
		if errors.As(err, &f) || errors.Is(err, ErrNotSent) {
			return erp.Payment{}, notWritten(rpc.Translate(err)) // a fault: Odoo rolled the call back; or never sent
		}
		p, err := c.paymentAnswerLost(ctx, s, cid, r, err)
		switch {
		case err == nil && p.State == erp.PaymentPosted && !p.Reconciled:
			return erp.Payment{}, c.cancelUnmatched(ctx, s, p, b, money)
		case err == nil:
			p.Unreconciled = c.reconcileCredits(ctx, s, cid, billID, credits)
		}
		return p, err
	}
	return c.readBack(ctx, s, cid, b, acct, r, money, credits, rpc.ActionResID(v))
}

// wizardSpec is what openWizard asks web_save to answer of the wizard it
// creates: the bill of each line the wizard pays, with what stillOpen
// checks.
var wizardSpec = map[string]any{"line_ids": map[string]any{"fields": map[string]any{
	"move_id": map[string]any{"fields": map[string]any{"state": map[string]any{}, "payment_state": map[string]any{}, "amount_residual": map[string]any{}}},
}}}

// openWizard creates the payment wizard with vals in the context wctx
// (the bill billID, b as read before) and returns its id; an error wraps
// erp.ErrNotWritten, for the wizard alone pays nothing. With recheck (an
// Odoo whose wizard pays a bill that is not posted, dialect.draftBillPayable:
// 18 and 19, and b read for the decision, maybe a while ago) it creates
// it with web_save, which answers in the same call, read in the same
// transaction as the wizard's own lines, the state, payment state and
// residual of the bill the wizard would pay; stillOpen then refuses a bill
// reset to draft since (which 18 and 19 would pay), blocked, paid, or
// owing less than r's amount, and the wizard is left unrun (Odoo removes
// such transient records itself). No call more than the wizard's create:
// the check is as late as it can be before action_create_payments. On 17
// the wizard itself refuses a bill that is not posted.
func openWizard(ctx context.Context, s *rpc.Session, billID int64, b erp.Bill, r erp.PaymentRequest, money currency, vals, wctx map[string]any, recheck bool) (int64, error) {
	if !recheck {
		v, err := s.Execute(ctx, "account.payment.register", "create", []any{vals}, map[string]any{"context": wctx})
		if err != nil {
			// The wizard alone pays nothing: whatever happened to this
			// call, no payment was made.
			return 0, notWritten(rpc.Translate(err))
		}
		wizard, err := rpc.AsID(v)
		if err != nil {
			return 0, notWritten(fmt.Errorf("odoo: account.payment.register.create: %w", err))
		}
		return wizard, nil
	}
	v, err := s.Execute(ctx, "account.payment.register", "web_save", []any{[]any{}, vals}, map[string]any{"specification": wizardSpec, "context": wctx})
	if err != nil {
		return 0, notWritten(rpc.Translate(err))
	}
	wizard, now, err := wizardBill(v, billID, b, money)
	if err != nil {
		return 0, notWritten(fmt.Errorf("odoo: account.payment.register.web_save: %w", err))
	}
	if err := stillOpen(b, now, r); err != nil {
		return 0, err
	}
	return wizard, nil
}

// wizardBill decodes web_save's answer for wizardSpec: the wizard's id and
// bill b (billID) as the wizard's lines show it now. Every line must be
// one of that bill's: a wizard paying another would be a bug of Odoo's or
// ours.
func wizardBill(v any, billID int64, b erp.Bill, money currency) (int64, erp.Bill, error) {
	rs, err := rpc.Records(v)
	if err != nil || len(rs) != 1 {
		return 0, erp.Bill{}, errors.Join(err, rpc.BadAnswer("one wizard", v))
	}
	wizard, err := rs[0].ID()
	if err != nil {
		return 0, erp.Bill{}, err
	}
	lines, err := rpc.Records(rs[0]["line_ids"])
	if err != nil || len(lines) == 0 {
		return 0, erp.Bill{}, errors.Join(err, rpc.FieldError("line_ids", rpc.BadAnswer("the bill's lines", rs[0]["line_ids"])))
	}
	var move rpc.Record
	for _, l := range lines {
		m, ok := l["move_id"].(map[string]any)
		if !ok {
			return 0, erp.Bill{}, rpc.FieldError("line_ids.move_id", rpc.BadAnswer("a bill", l["move_id"]))
		}
		if id, err := rpc.Record(m).ID(); err != nil || id != billID {
			return 0, erp.Bill{}, rpc.FieldError("line_ids.move_id", rpc.BadAnswer(fmt.Sprintf("bill %d", billID), m["id"]))
		}
		move = m
	}
	state, err1 := move.Str("state")
	pstate, err2 := move.Str("payment_state")
	residual, err3 := move.Amount("amount_residual", money.decimals)
	if err := errors.Join(err1, err2, err3); err != nil {
		return 0, erp.Bill{}, err
	}
	ps, ok := paymentStates[pstate]
	if !ok {
		return 0, erp.Bill{}, fmt.Errorf("%w: payment state %q", ErrBadAnswer, pstate)
	}
	now := b
	now.State, now.PaymentState, now.Residual = erp.State(state), ps, residual
	return wizard, now, nil
}

// stillOpen refuses to pay bill b, as Odoo shows it now, for r: no longer
// posted, blocked, paid, or owing less than r's amount.
func stillOpen(b, now erp.Bill, r erp.PaymentRequest) error {
	switch {
	case now.State != erp.StatePosted:
		return refused("%s is no longer posted in Odoo (it is %s now); only posted bills are paid", b.Name, now.State)
	case now.PaymentState == erp.Blocked:
		return refused("%s is blocked for payment in Odoo; a person releases it there first", b.Name)
	case now.Residual <= 0 || now.PaymentState.Settled():
		return refused("%s is already paid", b.Name)
	case r.Amount.Amount > now.Residual:
		return refused("the amount is above what is still owed on %s", b.Name)
	}
	return nil
}

// readBack reads the payment the wizard just made on bill b (by the id its
// action named, else by key), checks it is the one r asked for and that
// Odoo matched all of it with the bill (else cancelUnmatched), and
// reconciles the credit notes netted with it.
func (c *Client) readBack(ctx context.Context, s *rpc.Session, cid int64, b erp.Bill, acct erp.BankAccount, r erp.PaymentRequest, money currency, credits []creditLine, ids []int64) (erp.Payment, error) {
	p, found, err := c.paymentByKey(ctx, s, cid, r.Key, ids...)
	if err != nil {
		return erp.Payment{}, err
	}
	if !found {
		return erp.Payment{}, fmt.Errorf("odoo: the payment wizard of bill %s answered but no payment carries key %s: %w", r.Bill, r.Key, ErrBadAnswer)
	}
	if err := checkRegistered(p, acct, r, money); err != nil {
		return erp.Payment{}, err
	}
	if p.State == erp.PaymentPosted && !p.Reconciled {
		return erp.Payment{}, c.cancelUnmatched(ctx, s, p, b, money)
	}
	billID, _ := rpc.ParseID(b.ID)
	p.Unreconciled = c.reconcileCredits(ctx, s, cid, billID, credits)
	return p, nil
}

// cancelUnmatched cancels payment p, which Odoo posted but could not match
// in whole with bill b: another payment settled the bill (or part of it)
// between the wizard's opening and its run, so p would pay more than the
// bill owed. It cancels p (account.payment action_cancel: back to draft,
// unreconciled, cancelled; one call) and returns an error wrapping
// erp.ErrNotWritten; if the cancellation fails, an error naming p to
// cancel in Odoo, which does not (the outcome needs a person).
func (c *Client) cancelUnmatched(ctx context.Context, s *rpc.Session, p erp.Payment, b erp.Bill, money currency) error {
	id, _ := rpc.ParseID(p.ID)
	why := fmt.Sprintf("odoo: bill %s was paid by another payment at the same moment (another process, or by hand in Odoo); payment %s of %s %s could not be matched with it in whole",
		b.Name, p.ID, intent.FormatAmount(p.Amount.Amount, uint8(money.decimals)), money.code)
	if _, err := s.Execute(context.WithoutCancel(ctx), "account.payment", "action_cancel", []any{[]any{id}}, nil); err != nil && !errors.Is(err, rpc.ErrNoneResult) {
		return fmt.Errorf("%s, and cancelling it failed: cancel payment %s in Odoo now, it pays more than the bill owed: %w", why, p.ID, err)
	}
	return fmt.Errorf("%w: %s, so it was cancelled: nothing was paid by this request; read the bill again", erp.ErrNotWritten, why)
}

// paymentTarget returns the Odoo ids of company and of r's bill, before
// anything is read: an error wrapping erp.ErrRefused for a missing or
// malformed idempotency key, erp.ErrNotFound for a company this client
// does not serve or a bill id that is not an Odoo id.
func (c *Client) paymentTarget(company string, r erp.PaymentRequest) (cid, billID int64, err error) {
	if !validKey(r.Key) {
		return 0, 0, refused("an idempotency key of 1 to 128 letters, digits and . : - is required")
	}
	cid, ok := c.company(company)
	if !ok {
		return 0, 0, notFound("bill")
	}
	if billID, ok = rpc.ParseID(r.Bill); !ok {
		return 0, 0, notFound("bill")
	}
	return cid, billID, nil
}

// paymentAnswerLost is RegisterPayment after the payment wizard's answer
// was lost (err): the payment may have been made. It returns the payment
// carrying r.Key if one is found (looked up even when ctx is cancelled);
// otherwise an error saying the payment may or may not exist, wrapping
// err, and nothing is retried.
func (c *Client) paymentAnswerLost(ctx context.Context, s *rpc.Session, cid int64, r erp.PaymentRequest, err error) (erp.Payment, error) {
	p, found, lerr := c.paymentByKey(context.WithoutCancel(ctx), s, cid, r.Key)
	if lerr == nil && found {
		return p, nil
	}
	return erp.Payment{}, fmt.Errorf("odoo: the payment of bill %s may or may not have been registered; not retried (key %s): %w", r.Bill, r.Key, err)
}

// checkRegistered returns an error, telling to cancel it in Odoo, when
// the payment p Odoo registered is not the one r asked for: to the bank
// account acct, of r.Amount (in money's minor units), for r.Bill.
func checkRegistered(p erp.Payment, acct erp.BankAccount, r erp.PaymentRequest, money currency) error {
	if p.BankAccount != acct.ID || p.Amount != r.Amount || p.Bill != r.Bill {
		return fmt.Errorf("odoo: payment %s was registered as %s to bank account %s, not %s to %s as asked: cancel it in Odoo",
			p.ID, intent.FormatAmount(p.Amount.Amount, uint8(money.decimals)), p.BankAccount, intent.FormatAmount(r.Amount.Amount, uint8(money.decimals)), acct.ID)
	}
	return nil
}

// notWritten marks an error after which nothing was written. A refusal
// (erp.ErrRefused, erp.ErrNotFound) already says so and stays as it is.
func notWritten(err error) error {
	if errors.Is(err, erp.ErrRefused) || errors.Is(err, erp.ErrNotFound) {
		return err
	}
	return fmt.Errorf("%w: %w", erp.ErrNotWritten, err)
}

// paymentSubjects returns the bill and the account a payment request is
// checked against: those the caller read while deciding, or read now.
// done is the payment already made under r.Key, if any.
func (c *Client) paymentSubjects(ctx context.Context, s *rpc.Session, cid int64, r erp.PaymentRequest) (erp.Bill, erp.BankAccount, *erp.Payment, error) {
	if r.Decided != nil {
		if r.Account == nil || r.Decided.ID != r.Bill || r.Account.ID != r.BankAccount {
			return erp.Bill{}, erp.BankAccount{}, nil, refused("the bill and bank account decided on are not those of the request")
		}
		for _, p := range r.Decided.Payments {
			if p.Key == r.Key && p.State != erp.PaymentCancelled {
				return erp.Bill{}, erp.BankAccount{}, &p, nil
			}
		}
		return *r.Decided, *r.Account, nil, nil
	}
	// A payment under the key that was cancelled (by a person, or by
	// cancelUnmatched) is not one made: the request pays anew.
	if p, ok, err := c.paymentByKey(ctx, s, cid, r.Key); err != nil || (ok && p.State != erp.PaymentCancelled) {
		if ok {
			return erp.Bill{}, erp.BankAccount{}, &p, nil
		}
		return erp.Bill{}, erp.BankAccount{}, nil, notWritten(err)
	}
	bs, _, err := c.bills(ctx, s, cid, erp.BillQuery{ID: r.Bill})
	if err != nil {
		return erp.Bill{}, erp.BankAccount{}, nil, notWritten(err)
	}
	if len(bs) != 1 {
		return erp.Bill{}, erp.BankAccount{}, nil, notFound("bill")
	}
	if _, ok := rpc.ParseID(r.BankAccount); !ok {
		return erp.Bill{}, erp.BankAccount{}, nil, refused("the bank account is not an active, trusted account of the bill's vendor")
	}
	as, err := c.bankAccounts(ctx, s, cid, erp.BankAccountQuery{ID: r.BankAccount, Vendor: bs[0].Vendor})
	if err != nil {
		return erp.Bill{}, erp.BankAccount{}, nil, notWritten(err)
	}
	if len(as) != 1 {
		return erp.Bill{}, erp.BankAccount{}, nil, refused("the bank account is not an active, trusted account of the bill's vendor")
	}
	return bs[0], as[0], nil, nil
}

// checkPayment checks a payment request against the bill and the account
// (see erp.Payer).
func checkPayment(b erp.Bill, a erp.BankAccount, r erp.PaymentRequest) error {
	switch {
	case b.Kind != erp.KindBill:
		return refused("%s is a credit note; credit notes reduce what is owed and are never paid", b.Name)
	case b.State != erp.StatePosted:
		return refused("%s is not posted", b.Name)
	case b.PaymentState == erp.Blocked:
		return refused("%s is blocked for payment in Odoo; a person releases it there first", b.Name)
	case b.Residual <= 0 || b.PaymentState.Settled():
		return refused("%s is already paid", b.Name)
	case r.Amount.Currency != b.Currency:
		return refused("%s is in %s, not %s", b.Name, b.Currency, r.Amount.Currency)
	case r.Amount.Amount <= 0:
		return refused("the amount must be above zero")
	case r.Amount.Amount > b.Residual:
		return refused("the amount is above what is still owed on %s", b.Name)
	case a.ID != r.BankAccount || a.Vendor != b.Vendor || !a.Active || !a.Trusted || !numberChars(a.Number) || a.Sanitized != erp.Sanitize(a.Number):
		return refused("the bank account is not an active, trusted account of the bill's vendor")
	}
	return nil
}

// loadCurrency returns the currency with this code, reading it (one call,
// then cached) if no read has brought it yet.
func (c *Client) loadCurrency(ctx context.Context, s *rpc.Session, code string) (currency, error) {
	_, cur, err := c.loadCurrencyID(ctx, s, code)
	if errors.Is(err, erp.ErrNotFound) {
		return currency{}, fmt.Errorf("odoo: currency %s: %w", code, ErrBadAnswer)
	}
	return cur, err
}

// loadCurrencyID returns the Odoo id and the currency with this code,
// reading it (one call, archived currencies included) unless known; an
// error wrapping erp.ErrNotFound when Odoo has none.
func (c *Client) loadCurrencyID(ctx context.Context, s *rpc.Session, code string) (int64, currency, error) {
	if id, cur, ok := c.currencyEntry(code); ok {
		return id, cur, nil
	}
	rs, err := s.SearchRead(ctx, "res.currency", []any{rpc.Leaf("name", "=", code)}, []string{"name", "decimal_places"},
		map[string]any{"limit": 1, "context": map[string]any{"active_test": false}})
	if err != nil {
		return 0, currency{}, err
	}
	if err := c.storeCurrencies(rs); err != nil {
		return 0, currency{}, err
	}
	if id, cur, ok := c.currencyEntry(code); ok {
		return id, cur, nil
	}
	return 0, currency{}, fmt.Errorf("%w: Odoo has no currency %s", erp.ErrNotFound, code)
}

// currencyEntry returns the Odoo id and the known currency with this code.
func (c *Client) currencyEntry(code string) (int64, currency, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, cur := range c.currencies {
		if cur.code == code {
			return id, cur, true
		}
	}
	return 0, currency{}, false
}

// paymentByKey finds the payment made under key: by id when the wizard
// said which, else by its memo. The memo is matched with ilike and then
// exactly, so "k-1" never finds "k-10".
func (c *Client) paymentByKey(ctx context.Context, s *rpc.Session, cid int64, key string, id ...int64) (erp.Payment, bool, error) {
	d, err := c.dialect(ctx)
	if err != nil {
		return erp.Payment{}, false, err
	}
	domain := []any{rpc.Leaf("company_id", "=", cid), rpc.Leaf(d.paymentMemo, "ilike", memoPrefix+key+" bill ")}
	if len(id) == 1 {
		domain = append(domain, rpc.Leaf("id", "=", id[0]))
	}
	ps, err := c.payments(ctx, d, s, cid, domain, true, 0, 0, false)
	if err != nil {
		return erp.Payment{}, false, err
	}
	ps = slices.DeleteFunc(ps, func(p erp.Payment) bool { return p.Key != key })
	if len(ps) == 0 {
		return erp.Payment{}, false, nil
	}
	// Several payments under one key would be a bug or a hand-made copy:
	// the posted one first, then the oldest.
	slices.SortStableFunc(ps, func(a, b erp.Payment) int {
		return cmp.Compare(b2i(a.State != erp.PaymentPosted), b2i(b.State != erp.PaymentPosted))
	})
	return ps[0], true, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
