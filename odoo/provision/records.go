package provision

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// What Admin enters as the ERP's own users would: vendors and contacts,
// bank accounts, bills and credit notes, hand payments, exchange rates,
// time zones.

// AddVendor enters a vendor of company: a res.partner that is a company,
// with supplier_rank 1 and company_id set. It implements erptest.Seeder.
func (a *Admin) AddVendor(ctx context.Context, company string, v erp.Vendor) (erp.Vendor, error) {
	cid, ok := a.company(company)
	if !ok || strings.TrimSpace(v.Name) == "" {
		return erp.Vendor{}, refused("a vendor needs a known company and a name")
	}
	vals := map[string]any{"name": v.Name, "is_company": true, "supplier_rank": 1, "company_id": cid, "active": v.Active}
	if v.Phone != "" {
		vals["phone"] = v.Phone
	}
	if v.Country != "" {
		country, err := a.country(ctx, v.Country)
		if err != nil {
			return erp.Vendor{}, err
		}
		vals["country_id"] = country
	}
	id, err := a.create(ctx, "res.partner", vals, map[string]any{"context": rpc.Scope(cid, false)})
	if err != nil {
		return erp.Vendor{}, rpc.Translate(err)
	}
	v.ID = itoa(id)
	return v, nil
}

// Partner is a res.partner as Odoo's UI creates it, for AddPartner.
type Partner struct {
	// Name and Phone are the partner's.
	Name, Phone string
	// Company makes it a company (is_company); otherwise it is an
	// individual, or, with Parent, a contact person of Parent.
	Company bool
	// Parent is the ID of the company it is a contact person of; "" if none.
	Parent string
	// Shared leaves company_id unset, Odoo's default in a single-company
	// database: the partner is then every company's.
	Shared bool
	// Country is the ISO 3166-1 alpha-2 code of its country (country_id);
	// "" for none.
	Country string
}

// AddPartner enters a partner of company as Odoo's UI does when a bill is
// entered for it: a company or an individual gets supplier_rank 1 (a
// contact person none: its company is the vendor); company_id is set
// unless p.Shared. It returns its ID.
func (a *Admin) AddPartner(ctx context.Context, company string, p Partner) (string, error) {
	cid, ok := a.company(company)
	if !ok || strings.TrimSpace(p.Name) == "" {
		return "", refused("a partner needs a known company and a name")
	}
	vals := map[string]any{"name": p.Name, "is_company": p.Company, "active": true}
	if !p.Shared {
		vals["company_id"] = cid
	}
	if p.Phone != "" {
		vals["phone"] = p.Phone
	}
	if p.Country != "" {
		country, err := a.country(ctx, p.Country)
		if err != nil {
			return "", err
		}
		vals["country_id"] = country
	}
	if parent, ok := rpc.ParseID(p.Parent); ok {
		vals["parent_id"] = parent
	} else {
		vals["supplier_rank"] = 1
	}
	id, err := a.create(ctx, "res.partner", vals, map[string]any{"context": rpc.Scope(cid, false)})
	if err != nil {
		return "", rpc.Translate(err)
	}
	return itoa(id), nil
}

// SetTimeZone sets the time zone (an IANA name, "" for none) of the user
// with login, or, with login "", of company's own partner: the calendar
// the connector dates payments in.
func (a *Admin) SetTimeZone(ctx context.Context, company, login, tz string) error {
	var tzv any = tz
	if tz == "" {
		tzv = false
	}
	if login != "" {
		rs, err := a.s.SearchRead(ctx, "res.users", []any{rpc.Leaf("login", "=", login)}, []string{"login"}, map[string]any{"limit": 1})
		if err != nil {
			return err
		}
		if len(rs) != 1 {
			return fmt.Errorf("odoo: no user %q", login)
		}
		id, err := rs[0].ID()
		if err != nil {
			return err
		}
		return a.write(ctx, "res.users", []int64{id}, map[string]any{"tz": tzv}, nil)
	}
	cid, ok := a.company(company)
	if !ok {
		return fmt.Errorf("odoo: company %q is not mapped", company)
	}
	v, err := a.exec(ctx, "res.company", "read", []any{[]any{cid}}, map[string]any{"fields": rpc.Strs([]string{"partner_id"})})
	if err != nil {
		return err
	}
	rs, err := rpc.Records(v)
	if err != nil || len(rs) != 1 {
		return fmt.Errorf("odoo: res.company %d: %w", cid, errors.Join(err, odoo.ErrBadAnswer))
	}
	partner, _, err := rs[0].Many2one("partner_id")
	if err != nil {
		return err
	}
	return a.write(ctx, "res.partner", []int64{partner}, map[string]any{"tz": tzv}, nil)
}

// ArchiveBankAccount archives a bank account (active False), as Odoo's UI
// does.
func (a *Admin) ArchiveBankAccount(ctx context.Context, company, id string) error {
	cid, ok := a.company(company)
	n, ok2 := rpc.ParseID(id)
	if !ok || !ok2 {
		return notFound("bank account")
	}
	return a.write(ctx, "res.partner.bank", []int64{n}, map[string]any{"active": false}, map[string]any{"context": rpc.Scope(cid, false)})
}

// FindVendor returns the vendor of company named name, if any.
func (a *Admin) FindVendor(ctx context.Context, company, name string) (erp.Vendor, bool, error) {
	vs, err := a.client.Vendors(ctx, company, erp.VendorQuery{Name: name})
	if err != nil || len(vs) == 0 {
		return erp.Vendor{}, false, err
	}
	return vs[0], true, nil
}

// AddBankAccount enters a bank account of one of company's vendors as the
// administrator, who may trust it. A BIC is the code of its bank
// (bank_id, found or created by its bic); a Country becomes the vendor's
// (country_id). SetAt cannot be chosen: Odoo stamps
// write_date itself. A zero Sequence means 10. It implements
// erptest.Seeder.
func (a *Admin) AddBankAccount(ctx context.Context, company string, b erp.BankAccount) (erp.BankAccount, error) {
	cid, ok := a.company(company)
	if !ok {
		return erp.BankAccount{}, notFound("vendor")
	}
	vs, err := a.client.Vendors(ctx, company, erp.VendorQuery{ID: b.Vendor})
	if err != nil {
		return erp.BankAccount{}, err
	}
	if len(vs) != 1 {
		return erp.BankAccount{}, notFound("vendor")
	}
	if erp.Sanitize(b.Number) == "" {
		return erp.BankAccount{}, refused("the account number is empty")
	}
	vendor, _ := rpc.ParseID(b.Vendor)
	if b.Sequence == 0 {
		b.Sequence = 10
	}
	vals := map[string]any{
		"partner_id": vendor, "acc_number": b.Number, "allow_out_payment": b.Trusted, "active": b.Active, "sequence": b.Sequence,
	}
	if b.BIC != "" {
		bank, err := a.bank(ctx, b.BIC)
		if err != nil {
			return erp.BankAccount{}, err
		}
		vals["bank_id"] = bank
	}
	if b.Country != "" {
		country, err := a.country(ctx, b.Country)
		if err != nil {
			return erp.BankAccount{}, err
		}
		if err := a.write(ctx, "res.partner", []int64{vendor}, map[string]any{"country_id": country}, map[string]any{"context": rpc.Scope(cid, false)}); err != nil {
			return erp.BankAccount{}, rpc.Translate(err)
		}
	}
	id, err := a.create(ctx, "res.partner.bank", vals, map[string]any{"context": rpc.Scope(cid, false)})
	if err != nil {
		return erp.BankAccount{}, rpc.Translate(err)
	}
	as, err := a.client.BankAccounts(ctx, company, erp.BankAccountQuery{ID: itoa(id)})
	if err != nil {
		return erp.BankAccount{}, err
	}
	if len(as) != 1 {
		return erp.BankAccount{}, fmt.Errorf("odoo: res.partner.bank %d cannot be read back", id)
	}
	return as[0], nil
}

// bank returns the ID of the bank (res.bank) with the code bic as typed, a
// BIC or a US routing number or a UK sort code kept in the BIC field,
// creating it as Odoo's UI does when none has it.
func (a *Admin) bank(ctx context.Context, bic string) (int64, error) {
	rs, err := a.s.SearchRead(ctx, "res.bank", []any{rpc.Leaf("bic", "=", bic)}, []string{"bic"}, map[string]any{"limit": 1})
	if err != nil {
		return 0, err
	}
	if len(rs) == 1 {
		return rs[0].ID()
	}
	id, err := a.create(ctx, "res.bank", map[string]any{"name": "Bank " + bic, "bic": bic}, nil)
	return id, rpc.Translate(err)
}

// country returns the ID of the country (res.country) with the ISO 3166-1
// alpha-2 code.
func (a *Admin) country(ctx context.Context, code string) (int64, error) {
	rs, err := a.s.SearchRead(ctx, "res.country", []any{rpc.Leaf("code", "=", code)}, []string{"code"}, map[string]any{"limit": 1})
	if err != nil {
		return 0, err
	}
	if len(rs) != 1 {
		return 0, refused("no country %s", code)
	}
	return rs[0].ID()
}

// AddBill enters a vendor bill or credit note of company, dated b.Date
// (today if zero), as
// one line without tax for its Total, and posts it unless its State is
// draft (or cancels it for cancel). A posted credit note that names a
// bill in Reverses is reconciled with it, reducing its residual. Name is
// Odoo's to give. It implements erptest.Seeder.
func (a *Admin) AddBill(ctx context.Context, company string, b erp.Bill) (erp.Bill, error) {
	cid, ok := a.company(company)
	if !ok {
		return erp.Bill{}, notFound("vendor")
	}
	if b.Kind == "" {
		b.Kind = erp.KindBill
	}
	if b.State == "" {
		b.State = erp.StatePosted
	}
	if b.Total <= 0 || !codeForm(b.Currency) {
		return erp.Bill{}, refused("a bill needs a total above zero and an ISO 4217 currency")
	}
	vs, err := a.client.Vendors(ctx, company, erp.VendorQuery{ID: b.Vendor})
	if err != nil {
		return erp.Bill{}, err
	}
	if len(vs) != 1 {
		return erp.Bill{}, notFound("vendor")
	}
	money, err := a.currency(ctx, b.Currency)
	if err != nil {
		return erp.Bill{}, err
	}
	vals := a.billValues(b, cid, money.id, money.decimals)
	reversed, err := a.reversedBill(ctx, company, b)
	if err != nil {
		return erp.Bill{}, err
	}
	if reversed != 0 {
		vals["reversed_entry_id"] = reversed
	}
	kw := map[string]any{"context": rpc.Scope(cid, false)}
	id, err := a.create(ctx, "account.move", vals, kw)
	if err != nil {
		return erp.Bill{}, rpc.Translate(err)
	}
	if err := a.setMoveState(ctx, id, b.State, kw); err != nil {
		return erp.Bill{}, err
	}
	if reversed != 0 && b.State == erp.StatePosted {
		if err := a.reconcileCredit(ctx, cid, reversed, id); err != nil {
			return erp.Bill{}, err
		}
	}
	bs, err := a.client.Bills(ctx, company, erp.BillQuery{ID: itoa(id)})
	if err != nil {
		return erp.Bill{}, err
	}
	if len(bs) != 1 {
		return erp.Bill{}, fmt.Errorf("odoo: account.move %d cannot be read back", id)
	}
	return bs[0], nil
}

// billValues are the account.move values of the bill b of company cid in
// the currency cur (with decimals digits after the point), dated b.Date
// or today:
// one line without tax for b.Total, addressed to b.Contact when set (a
// contact person of the vendor), else to b.Vendor, with its reference,
// due date and bank account when given.
func (a *Admin) billValues(b erp.Bill, cid, cur int64, decimals int) map[string]any {
	vendor, _ := rpc.ParseID(b.Vendor)
	if contact, ok := rpc.ParseID(b.Contact); ok {
		vendor = contact // addressed to a contact person of the vendor
	}
	vals := map[string]any{
		"move_type": string(b.Kind), "partner_id": vendor, "currency_id": cur, "company_id": cid,
		"invoice_date": a.now().UTC().Format(rpc.DateFormat),
		"invoice_line_ids": []any{[]any{0, 0, map[string]any{
			"name": "Goods and services", "quantity": 1, "price_unit": rpc.FromMinor(b.Total, decimals), "tax_ids": []any{[]any{6, 0, []any{}}},
		}}},
	}
	if b.Ref != "" {
		vals["ref"] = b.Ref
	}
	if !b.Date.IsZero() {
		vals["invoice_date"] = b.Date.UTC().Format(rpc.DateFormat)
	}
	if !b.Due.IsZero() {
		vals["invoice_date_due"] = b.Due.UTC().Format(rpc.DateFormat)
	}
	if id, ok := rpc.ParseID(b.BankAccount); ok {
		vals["partner_bank_id"] = id
	}
	return vals
}

// reversedBill returns the ID of the bill a credit note b reverses, after
// checking that it is one of company's bills (else an error wrapping
// ErrNotFound); 0 when b is not a credit note or reverses nothing.
func (a *Admin) reversedBill(ctx context.Context, company string, b erp.Bill) (int64, error) {
	if b.Kind != erp.KindCreditNote || b.Reverses == "" {
		return 0, nil
	}
	bs, err := a.client.Bills(ctx, company, erp.BillQuery{ID: b.Reverses})
	if err != nil {
		return 0, err
	}
	if len(bs) != 1 || bs[0].Kind != erp.KindBill {
		return 0, notFound("reversed bill")
	}
	reversed, _ := rpc.ParseID(b.Reverses)
	return reversed, nil
}

// setMoveState posts (StatePosted) or cancels (StateCancelled) the new
// draft account.move id with the keyword arguments kw; any other state
// leaves it a draft.
func (a *Admin) setMoveState(ctx context.Context, id int64, state erp.State, kw map[string]any) error {
	switch state {
	case erp.StatePosted:
		return a.done(ctx, "account.move", "action_post", []any{[]any{id}}, kw)
	case erp.StateCancelled:
		return a.done(ctx, "account.move", "button_cancel", []any{[]any{id}}, kw)
	}
	return nil
}

// ResetToDraft resets a posted bill of company to draft, as a person
// does with "Reset to Draft" in Odoo (account.move button_draft). It
// returns an error wrapping erp.ErrNotFound for an unknown company or a
// bill ID that is not one.
func (a *Admin) ResetToDraft(ctx context.Context, company, bill string) error {
	cid, ok := a.company(company)
	id, ok2 := rpc.ParseID(bill)
	if !ok || !ok2 {
		return notFound("bill")
	}
	return rpc.Translate(a.done(ctx, "account.move", "button_draft", []any{[]any{id}}, map[string]any{"context": rpc.Scope(cid, false)}))
}

// AddBills enters many posted vendor bills of company at once (two calls:
// one create, one action_post), each as one line without tax for its
// Total in its Currency, for a vendor (or a contact person, Contact).
// It is for loading a realistic book; it returns nothing but an error.
func (a *Admin) AddBills(ctx context.Context, company string, bills []erp.Bill) error {
	cid, ok := a.company(company)
	if !ok {
		return notFound("vendor")
	}
	today := a.now().UTC().Format(rpc.DateFormat)
	var vals []any
	for _, b := range bills {
		money, err := a.currency(ctx, b.Currency)
		if err != nil {
			return err
		}
		partner, ok := rpc.ParseID(b.Vendor)
		if c, isContact := rpc.ParseID(b.Contact); isContact {
			partner = c
		}
		if !ok || b.Total <= 0 {
			return refused("a bill needs a vendor and a total above zero")
		}
		v := map[string]any{
			"move_type": string(erp.KindBill), "partner_id": partner, "currency_id": money.id, "company_id": cid, "invoice_date": today,
			"invoice_line_ids": []any{[]any{0, 0, map[string]any{
				"name": "Goods and services", "quantity": 1, "price_unit": rpc.FromMinor(b.Total, money.decimals), "tax_ids": []any{[]any{6, 0, []any{}}},
			}}},
		}
		if b.Ref != "" {
			v["ref"] = b.Ref
		}
		vals = append(vals, v)
	}
	kw := map[string]any{"context": rpc.Scope(cid, false)}
	out, err := a.exec(ctx, "account.move", "create", []any{vals}, kw)
	if err != nil {
		return rpc.Translate(err)
	}
	list, ok := out.([]any)
	if !ok || len(list) != len(bills) {
		return fmt.Errorf("odoo: account.move.create: %w", odoo.ErrBadAnswer)
	}
	return a.done(ctx, "account.move", "action_post", []any{list}, kw)
}

// reconcileCredit reconciles a posted credit note with the bill it
// reverses, as the bill's "outstanding credits" widget does.
func (a *Admin) reconcileCredit(ctx context.Context, cid, bill, credit int64) error {
	cs, err := a.s.SearchRead(ctx, "account.move", []any{rpc.Leaf("id", "=", credit)}, []string{"payment_state"},
		map[string]any{"context": rpc.Scope(cid, false)})
	if err != nil {
		return err
	}
	if len(cs) == 1 {
		if st, _ := cs[0].Str("payment_state"); st != "not_paid" {
			return nil // Odoo reconciled it with the bill when posting
		}
	}
	rs, err := a.s.SearchRead(ctx, "account.move", []any{rpc.Leaf("id", "=", bill)}, []string{"invoice_outstanding_credits_debits_widget"},
		map[string]any{"context": rpc.Scope(cid, false)})
	if err != nil {
		return err
	}
	if len(rs) != 1 {
		return fmt.Errorf("odoo: bill %d cannot be read", bill)
	}
	w, _ := rs[0]["invoice_outstanding_credits_debits_widget"].(map[string]any)
	content, _ := w["content"].([]any)
	for _, x := range content {
		e, _ := x.(map[string]any)
		move, err1 := rpc.AsID(e["move_id"])
		line, err2 := rpc.AsID(e["id"])
		if err1 != nil || err2 != nil || move != credit {
			continue
		}
		return a.done(ctx, "account.move", "js_assign_outstanding_line", []any{[]any{bill}, line}, map[string]any{"context": rpc.Scope(cid, false)})
	}
	return fmt.Errorf("odoo: credit note %d is not outstanding on bill %d (%v)", credit, bill, rs[0]["invoice_outstanding_credits_debits_widget"])
}

// AddPayment registers a payment by hand, as a person does with Register
// Payment on a bill in Odoo: the payment wizard on bill p.Bill, with the
// wizard's own memo (the bill's reference, no idempotency key), for
// p.Amount (in the bill's currency, in minor units), to p.BankAccount
// (the wizard's choice, the bill's account, if empty), dated p.Day
// (YYYY-MM-DD; today in the company's calendar if empty). It returns p
// posted, with its ID (empty when Odoo's answer does not name it); an error
// wrapping erp.ErrNotFound for an unknown company or bill, erp.ErrRefused
// for an amount not above zero or a day that is not YYYY-MM-DD, and
// Odoo's own refusals (a bill with nothing left to pay) translated.
func (a *Admin) AddPayment(ctx context.Context, company string, p erp.Payment) (erp.Payment, error) {
	cid, ok := a.company(company)
	if !ok {
		return erp.Payment{}, notFound("company")
	}
	billID, ok := rpc.ParseID(p.Bill)
	if !ok {
		return erp.Payment{}, notFound("bill")
	}
	if p.Amount.Amount <= 0 {
		return erp.Payment{}, refused("a payment needs an amount above zero")
	}
	if err := (erp.BillQuery{PaymentsSince: p.Day}).CheckPaymentsSince(); err != nil {
		return erp.Payment{}, refused("the payment's day %q is not YYYY-MM-DD", p.Day)
	}
	money, err := a.currency(ctx, p.Amount.Currency)
	if err != nil {
		return erp.Payment{}, err
	}
	vals := map[string]any{"amount": rpc.FromMinor(p.Amount.Amount, money.decimals), "payment_difference_handling": "open"}
	if p.Day != "" {
		vals["payment_date"] = p.Day
	}
	if p.BankAccount != "" {
		acct, ok := rpc.ParseID(p.BankAccount)
		if !ok {
			return erp.Payment{}, notFound("bank account")
		}
		vals["partner_bank_id"] = acct
	}
	wctx := rpc.Scope(cid, false)
	wctx["active_model"], wctx["active_ids"] = "account.move", []any{billID}
	kw := map[string]any{"context": wctx}
	wizard, err := a.create(ctx, "account.payment.register", vals, kw)
	if err != nil {
		return erp.Payment{}, rpc.Translate(err)
	}
	v, err := a.exec(ctx, "account.payment.register", "action_create_payments", []any{[]any{wizard}}, kw)
	if err != nil && !errors.Is(err, rpc.ErrNoneResult) {
		return erp.Payment{}, rpc.Translate(err)
	}
	p.ID, p.State, p.Key = "", erp.PaymentPosted, ""
	if ids := rpc.ActionResID(v); len(ids) == 1 {
		p.ID = itoa(ids[0])
	}
	return p, nil
}

// SetRate enters an exchange rate as an accountant does in Odoo
// (Accounting > Configuration > Currencies, the currency, Rates): a
// res.currency.rate of currency (activated if archived) dated day
// (YYYY-MM-DD), value units of it per unit of the company's currency
// (the technical rate, which is what Odoo's list shows while the
// company's own currency has no rate), for company, or for every company
// when company is "". It returns an error wrapping erp.ErrRefused for a
// malformed day or value, erp.ErrNotFound for a company not in the map,
// and Odoo's error when it refuses (a second rate of the same day).
func (a *Admin) SetRate(ctx context.Context, company, code, day, value string) error {
	if err := erp.CheckDay(day); err != nil {
		return err
	}
	if _, err := erp.ParseRateValue(value); err != nil {
		return err
	}
	v, err := strconv.ParseFloat(value, 64)
	if err != nil {
		return fmt.Errorf("%w: rate %q", erp.ErrRefused, value)
	}
	var cid any = false
	if company != "" {
		id, ok := a.company(company)
		if !ok {
			return fmt.Errorf("%w: company %q", erp.ErrNotFound, company)
		}
		cid = id
	}
	cur, err := a.Currency(ctx, code)
	if err != nil {
		return err
	}
	_, err = a.create(ctx, "res.currency.rate", map[string]any{"name": day, "rate": v, "currency_id": cur, "company_id": cid}, nil)
	return err
}

// codeForm reports whether s has the form of an ISO 4217 code:
// three capital letters.
func codeForm(s string) bool {
	return len(s) == 3 && strings.Trim(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") == ""
}

func refused(format string, a ...any) error {
	return fmt.Errorf("%w: %s", erp.ErrRefused, fmt.Sprintf(format, a...))
}

func notFound(what string) error { return fmt.Errorf("%w: %s", erp.ErrNotFound, what) }

func itoa(id int64) string { return strconv.FormatInt(id, 10) }
