package odoo

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unicode"

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
