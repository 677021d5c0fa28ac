package odoo

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// bankMarker is the text of the note the connector posts on a vendor after
// a bank-account change, which records the change's idempotency key.
const bankMarker = "intentplane bank change "

// ChangeBankAccount implements erp.BankEditor, as the bank administrator.
// It reads the vendor (one of the company's active vendors), looks for a
// note on it recording c.Key (and returns that change's account), then
// creates the account (trusted, ordered first) or trusts, activates and
// reorders the vendor's account holding the number (writing to it whenever
// it is not the vendor's current account, so that Odoo moves its
// write_date, which is SetAt, even when it was trusted and active
// already), archives the vendor's
// other accounts, posts a note recording the key on the vendor, and reads
// the account back. A number with characters other than ASCII letters,
// digits, spaces and - . / is refused, so that Odoo's clean-up, which
// keeps any Unicode letter, never stores a look-alike. If Odoo stores the
// new account untrusted (the identity is not in Bank / Validate bank
// account, and Odoo silently drops the flag), it returns an error wrapping
// ErrAccess. The bank administrator needs an e-mail address in Odoo:
// without one Odoo refuses to post the note (provision.Setup gives it one).
func (c *Client) ChangeBankAccount(ctx context.Context, company string, ch erp.BankChange) (erp.BankAccount, error) {
	number := erp.Sanitize(ch.Number)
	switch {
	case number == "" || !validKey(ch.Key):
		return erp.BankAccount{}, refused("a number and an idempotency key of 1 to 128 letters, digits and . : - are required")
	case !numberChars(ch.Number) || len(number) > 64:
		return erp.BankAccount{}, refused("an account number may hold only ASCII letters, digits, spaces and - . /, 64 characters at most")
	}
	cid, ok := c.company(company)
	vendor, okv := rpc.ParseID(ch.Vendor)
	if !ok || !okv {
		return erp.BankAccount{}, notFound("vendor")
	}
	s := c.bankAdmin
	unlock, err := c.lock(ctx, itoa(cid)+"/vendor/"+ch.Vendor)
	if err != nil {
		return erp.BankAccount{}, err
	}
	defer unlock()
	if err := checkBankVendor(ctx, s, cid, vendor, ch.Vendor); err != nil {
		return erp.BankAccount{}, err
	}
	if a, done, err := c.bankChangeDone(ctx, s, cid, vendor, ch); err != nil || done {
		return a, err
	}
	mine, err := c.bankAccounts(ctx, s, cid, erp.BankAccountQuery{Vendor: ch.Vendor})
	if err != nil {
		return erp.BankAccount{}, err
	}
	id, err := makeCurrentAccount(ctx, s, cid, vendor, ch, mine)
	if err != nil {
		return erp.BankAccount{}, err
	}
	if err := archiveOtherAccounts(ctx, s, cid, mine, id); err != nil {
		return erp.BankAccount{}, err
	}
	a, err := c.readBackAccount(ctx, s, cid, ch.Vendor, id, number)
	if err != nil {
		return erp.BankAccount{}, err
	}
	if _, err := s.Execute(ctx, "res.partner", "message_post", []any{[]any{vendor}}, map[string]any{
		"body": bankMarker + ch.Key + " account " + itoa(id) + " .", "message_type": "comment", "subtype_xmlid": "mail.mt_note",
	}); err != nil && !errors.Is(err, rpc.ErrNoneResult) {
		return erp.BankAccount{}, fmt.Errorf("odoo: account %d is the vendor's account now, but recording the key failed: %w", id, err)
	}
	return a, nil
}

// checkBankVendor reads the vendor (its ID, vendorID as the connector
// writes it) as s and returns an error wrapping ErrNotFound unless it is
// one of company cid's active vendors (a company with a supplier rank).
func checkBankVendor(ctx context.Context, s *rpc.Session, cid, vendor int64, vendorID string) error {
	vs, err := s.SearchRead(ctx, "res.partner", []any{rpc.Leaf("id", "=", vendor), rpc.Leaf("company_id", "=", cid),
		rpc.Leaf("supplier_rank", ">", 0), rpc.Leaf("is_company", "=", true)}, vendorFields, map[string]any{"context": rpc.Scope(cid, false)})
	if err != nil {
		return err
	}
	if len(vs) != 1 {
		return notFound("vendor")
	}
	if v, co, err := decodeVendor(vs[0]); err != nil {
		return err
	} else if co != cid || !v.Active || v.ID != vendorID {
		return notFound("vendor")
	}
	return nil
}

// bankChangeDone looks for a change already made under ch.Key: a note on
// the vendor recording the key. When one names an account the vendor
// still has, it returns that account and true.
func (c *Client) bankChangeDone(ctx context.Context, s *rpc.Session, cid, vendor int64, ch erp.BankChange) (erp.BankAccount, bool, error) {
	notes, err := s.SearchRead(ctx, "mail.message", []any{rpc.Leaf("model", "=", "res.partner"), rpc.Leaf("res_id", "=", vendor),
		rpc.Leaf("body", "ilike", bankMarker+ch.Key+" account ")}, []string{"body"}, nil)
	if err != nil {
		return erp.BankAccount{}, false, err
	}
	for _, n := range notes {
		body, err := n.Str("body")
		if err != nil {
			return erp.BankAccount{}, false, fmt.Errorf("odoo: mail.message: %w", err)
		}
		if id, ok := parseBankNote(body, ch.Key); ok {
			as, err := c.bankAccounts(ctx, s, cid, erp.BankAccountQuery{ID: itoa(id), Vendor: ch.Vendor})
			if err != nil {
				return erp.BankAccount{}, false, err
			}
			if len(as) == 1 {
				return as[0], true, nil
			}
		}
	}
	return erp.BankAccount{}, false, nil
}

// makeCurrentAccount makes the vendor's account holding ch.Number, among
// its accounts mine, trusted, active and ordered before the others
// (sequence one less than the lowest, 10 when there is none), creating it
// when the vendor has none with that number. It returns the account's ID.
func makeCurrentAccount(ctx context.Context, s *rpc.Session, cid, vendor int64, ch erp.BankChange, mine []erp.BankAccount) (int64, error) {
	number := erp.Sanitize(ch.Number)
	first := 10
	var target *erp.BankAccount
	for i := range mine {
		first = min(first, mine[i].Sequence)
		if mine[i].Sanitized == number {
			target = &mine[i]
		}
	}
	if target == nil {
		v, err := s.Execute(ctx, "res.partner.bank", "create", []any{map[string]any{
			"partner_id": vendor, "acc_number": ch.Number, "allow_out_payment": true, "sequence": first - 1,
		}}, map[string]any{"context": rpc.Scope(cid, false)})
		if err != nil {
			return 0, rpc.Translate(err)
		}
		id, err := rpc.AsID(v)
		if err != nil {
			return 0, fmt.Errorf("odoo: res.partner.bank.create: %w", err)
		}
		return id, nil
	}
	id, _ := rpc.ParseID(target.ID)
	// SetAt is write_date, and the cooling-off period runs from it: an
	// account that becomes the vendor's current one is always written
	// (which moves write_date, even when no value changes), including
	// one that was trusted and active already; only re-confirming the
	// current account writes nothing unless a value must change.
	vals := map[string]any{}
	if cur, ok := erp.Current(mine, ch.Vendor); !ok || cur.ID != target.ID {
		vals["allow_out_payment"], vals["active"] = true, true
	}
	if !target.Trusted {
		vals["allow_out_payment"] = true
	}
	if !target.Active {
		vals["active"] = true
	}
	if target.Sequence > first || target.Sequence == 0 {
		vals["sequence"] = first - 1
	}
	if len(vals) > 0 {
		if _, err := s.Execute(ctx, "res.partner.bank", "write", []any{[]any{id}, vals}, map[string]any{"context": rpc.Scope(cid, false)}); err != nil {
			return 0, rpc.Translate(err)
		}
	}
	return id, nil
}

// archiveOtherAccounts archives the active accounts among mine other
// than account id, in one write.
func archiveOtherAccounts(ctx context.Context, s *rpc.Session, cid int64, mine []erp.BankAccount, id int64) error {
	var others []any
	for _, a := range mine {
		if a.Active && a.ID != itoa(id) {
			oid, _ := rpc.ParseID(a.ID)
			others = append(others, oid)
		}
	}
	if len(others) > 0 {
		if _, err := s.Execute(ctx, "res.partner.bank", "write", []any{others, map[string]any{"active": false}},
			map[string]any{"context": rpc.Scope(cid, false)}); err != nil {
			return fmt.Errorf("odoo: account %d is now trusted, but archiving the vendor's other accounts failed: %w", id, err)
		}
	}
	return nil
}

// readBackAccount reads account id of the vendor back after a change and
// checks that Odoo stored what was written: trusted (else an error
// wrapping ErrAccess), active and holding number (else ErrBadAnswer).
func (c *Client) readBackAccount(ctx context.Context, s *rpc.Session, cid int64, vendorID string, id int64, number string) (erp.BankAccount, error) {
	as, err := c.bankAccounts(ctx, s, cid, erp.BankAccountQuery{ID: itoa(id), Vendor: vendorID})
	if err != nil {
		return erp.BankAccount{}, err
	}
	if len(as) != 1 {
		return erp.BankAccount{}, fmt.Errorf("odoo: res.partner.bank %d cannot be read back: %w", id, ErrBadAnswer)
	}
	a := as[0]
	if !a.Trusted {
		return erp.BankAccount{}, fmt.Errorf("%w: Odoo stored account %d untrusted: the bank administrator is not in Bank / Validate bank account", ErrAccess, id)
	}
	if a.Sanitized != number || !a.Active {
		return erp.BankAccount{}, fmt.Errorf("odoo: account %d reads back as %q, active %v; want %q, active: %w", id, a.Sanitized, a.Active, number, ErrBadAnswer)
	}
	return a, nil
}

// parseBankNote returns the account id a note records for key.
func parseBankNote(body, key string) (int64, bool) {
	i := strings.Index(body, bankMarker+key+" account ")
	if i < 0 {
		return 0, false
	}
	rest := body[i+len(bankMarker+key+" account "):]
	j := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
	if j < 0 {
		j = len(rest)
	}
	return rpc.ParseID(rest[:j])
}
