package odoo

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

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
