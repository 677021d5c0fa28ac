package odoo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// RightsError reports that an identity can do something it must not: the
// probe that should have been refused was not.
type RightsError struct {
	// Role is "reader", "payer" or "bank administrator".
	Role string
	// Probe says what was tried, e.g. "create a bank account".
	Probe string
}

// Error names the identity and what it could do.
func (e *RightsError) Error() string {
	return fmt.Sprintf("odoo: the %s can %s; it must not: fix its groups", e.Role, e.Probe)
}

// CheckRights tries, as each configured identity, what it must not be
// able to do, and returns a *RightsError for the first that is not
// refused (after undoing it where it can), or nil. The reader and the
// payer must not create or change a bank account or create a vendor; the
// reader must not open the payment wizard; the bank administrator must
// not read bills or open the payment wizard. Probes that succeed write
// records named "intentplane rights probe", which are then deleted.
// company is a company of the map with at least one bank account for the
// write probe; without one, that probe is skipped.
func (c *Client) CheckRights(ctx context.Context, company string) error {
	cid, ok := c.company(company)
	if !ok {
		return fmt.Errorf("odoo: company %q is not mapped", company)
	}
	var account, partner int64
	if c.reader.Identity().Login != "" {
		rs, err := c.reader.SearchRead(ctx, "res.partner.bank", []any{rpc.Leaf("partner_id.company_id", "=", cid)}, []string{"partner_id", "acc_holder_name"},
			map[string]any{"limit": 1, "context": rpc.Scope(cid, false)})
		if err != nil {
			return err
		}
		if len(rs) == 1 {
			account, _ = rs[0].ID()
			partner, _, _ = rs[0].Many2one("partner_id")
		}
	}
	const probe = "intentplane rights probe"
	type try struct {
		s    *rpc.Session
		what string
		run  func(s *rpc.Session) (created string, id int64, err error)
	}
	// A probe account a user could create is unlinked at once, which from
	// Odoo 18 on archives it; a second probe of the same number on the
	// partner would then be refused as archived ("Please unarchive it
	// instead"), a user error that says nothing of the rights. Each check
	// probes with a number of its own.
	probeNumber := "PROBE" + itoa(partner) + "X" + strconv.FormatInt(c.now().UnixNano(), 36)
	createBank := func(s *rpc.Session) (string, int64, error) {
		if partner == 0 {
			return "", 0, ErrAccess // nothing to probe against
		}
		v, err := s.Execute(ctx, "res.partner.bank", "create", []any{map[string]any{"partner_id": partner, "acc_number": probeNumber}},
			map[string]any{"context": rpc.Scope(cid, false)})
		id, _ := rpc.AsID(v)
		return "res.partner.bank", id, err
	}
	writeBank := func(s *rpc.Session) (string, int64, error) {
		if account == 0 {
			return "", 0, ErrAccess
		}
		_, err := s.Execute(ctx, "res.partner.bank", "write", []any{[]any{account}, map[string]any{"acc_holder_name": probe}},
			map[string]any{"context": rpc.Scope(cid, false)})
		return "", 0, err
	}
	trustBank := func(s *rpc.Session) (string, int64, error) {
		if account == 0 {
			return "", 0, ErrAccess
		}
		_, err := s.Execute(ctx, "res.partner.bank", "write", []any{[]any{account}, map[string]any{"allow_out_payment": true}},
			map[string]any{"context": rpc.Scope(cid, false)})
		return "", 0, err
	}
	createVendor := func(s *rpc.Session) (string, int64, error) {
		v, err := s.Execute(ctx, "res.partner", "create", []any{map[string]any{"name": probe, "supplier_rank": 1, "is_company": true, "company_id": cid}},
			map[string]any{"context": rpc.Scope(cid, false)})
		id, _ := rpc.AsID(v)
		return "res.partner", id, err
	}
	openWizard := func(s *rpc.Session) (string, int64, error) {
		v, err := s.Execute(ctx, "account.payment.register", "create", []any{map[string]any{}},
			map[string]any{"context": map[string]any{"active_model": "account.move", "active_ids": []any{}, "allowed_company_ids": []any{cid}}})
		id, _ := rpc.AsID(v)
		return "account.payment.register", id, err
	}
	readBills := func(s *rpc.Session) (string, int64, error) {
		_, err := s.Execute(ctx, "account.move", "search", []any{[]any{}}, map[string]any{"limit": 1, "context": rpc.Scope(cid, false)})
		return "", 0, err
	}
	tries := []try{
		{c.reader, "create a bank account", createBank},
		{c.reader, "change a bank account", writeBank},
		{c.reader, "trust a bank account", trustBank},
		{c.reader, "create a vendor", createVendor},
		{c.reader, "open the payment wizard", openWizard},
		{c.payer, "create a bank account", createBank},
		{c.payer, "change a bank account", writeBank},
		{c.payer, "trust a bank account", trustBank},
		{c.payer, "create a vendor", createVendor},
		{c.bankAdmin, "read bills", readBills},
		{c.bankAdmin, "open the payment wizard", openWizard},
	}
	for _, t := range tries {
		if t.s.Identity().Login == "" {
			continue
		}
		model, id, err := t.run(t.s)
		// Odoo refuses with an AccessError (fault 4), except for the trust
		// flag, whose check runs first and raises a UserError (fault 2).
		if errors.Is(err, ErrAccess) || (errors.Is(err, ErrUser) && t.what == "trust a bank account") {
			continue
		}
		if err != nil {
			return fmt.Errorf("odoo: probing whether the %s can %s: %w", t.s.Role(), t.what, err)
		}
		if model != "" && id != 0 {
			_, _ = t.s.Execute(context.WithoutCancel(ctx), model, "unlink", []any{[]any{id}}, nil)
		}
		return &RightsError{Role: t.s.Role(), Probe: t.what}
	}
	return nil
}
