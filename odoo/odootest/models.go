package odootest

import (
	"fmt"
	"slices"
	"strings"
)

func (d *db) validator() bool { return d.hasGroup("account.group_validate_bank_account") }

func (d *db) currencyDecimals(id int64) int64 {
	n, _ := d.tables["res.currency"][id]["decimal_places"].(int64)
	return n
}

func (d *db) defaultCompany(companies []int64) int64 {
	if len(companies) > 0 {
		return companies[0]
	}
	return d.tables["res.users"][d.uid].m2o("company_id")
}

// beforeCreate applies defaults and checks that depend on the caller,
// before vals are set.
func (d *db) beforeCreate(m *model, r rec, vals map[string]any, ctx map[string]any) *fault {
	companies, _ := d.companies(ctx)
	switch m.name {
	case "res.partner.bank":
		r["sequence"] = int64(10)
		if !d.validator() {
			// Odoo forces the flag to False "to prevent scam payments on
			// newly created bank accounts", without a word.
			if _, ok := vals["allow_out_payment"]; ok {
				vals["allow_out_payment"] = false
			}
		}
	case "res.partner":
		r["company_id"] = int64(0)
	case "res.users":
		r["company_id"] = d.defaultCompany(companies)
		r["company_ids"] = []int64{d.defaultCompany(companies)}
		if _, ok := vals[d.groupsField()]; !ok {
			// The default user template: Contact Creation and Billing
			// Administrator, a trap for connector users.
			for _, g := range []string{"base.group_user", "base.group_partner_manager", "account.group_account_manager"} {
				if id := d.groupID(g); id != 0 {
					r[d.groupsField()] = append(r.ids(d.groupsField()), id)
				}
			}
		}
	case "account.move":
		r["state"], r["name"], r["payment_state"] = "draft", "/", "not_paid"
		if d.major >= 18 {
			r["name"] = "" // a draft's name is False from 18 on
		}
		r["company_id"] = d.defaultCompany(companies)
		mt := str(vals["move_type"])
		if mt == "" {
			mt = "entry"
		}
		switch mt {
		case "entry", "out_invoice", "out_refund", "in_invoice", "in_refund", "out_receipt", "in_receipt":
		default:
			return traceback(fmt.Sprintf("ValueError: Wrong value for account.move.move_type: '%s'", mt))
		}
		r["move_type"] = mt
	case "account.payment.register":
		am := str(ctx["active_model"])
		if am != "account.move" && am != "account.move.line" {
			return userError("The register payment wizard should only be called on account.move or account.move.line records.")
		}
		ids, _ := idList(ctx["active_ids"])
		if len(ids) == 0 {
			return userError(d.nothingLeftToPay())
		}
		moves := d.models["account.move"]
		var first rec
		for _, id := range ids {
			b, ok := d.tables["account.move"][id]
			if !ok || !d.visible(moves, b, companies) {
				return missing("account.move", []int64{id}, d.uid)
			}
			// 18 and 19 register a payment on a draft bill; 17 refuses.
			if b.str("state") != "posted" && (d.major < 18 || b.str("state") != "draft") {
				return userError("You can only register payment for posted journal entries.")
			}
			if b.num("amount_residual") <= 0 {
				return userError(d.nothingLeftToPay())
			}
			if first == nil {
				first = b
			}
		}
		r["line_bill_ids"] = ids
		r["payment_date"] = d.today()
		r["payment_difference_handling"] = "open"
		r["communication"] = first.str("ref")
		if len(ids) == 1 {
			r["amount"] = first.num("amount_residual")
		}
		bank := first.m2o("partner_bank_id")
		if b, ok := d.tables["res.partner.bank"][bank]; !ok || !b.boolean("active") {
			bank = 0 // the wizard silently takes the partner's first active account
			if l, _ := d.models["res.partner"].fields["bank_ids"].computed(d, d.tables["res.partner"][first.m2o("commercial_partner_id")]).([]int64); len(l) > 0 {
				bank = l[0]
			}
		}
		r["partner_bank_id"] = bank
		for _, j := range d.sorted("account.journal") {
			if j.m2o("company_id") == first.m2o("company_id") && j.str("type") == "bank" {
				r["journal_id"] = j.id()
			}
		}
	}
	return nil
}

// afterCreate computes stored fields and checks constraints, before the
// record is inserted.
func (d *db) afterCreate(m *model, r rec, ctx map[string]any) *fault {
	switch m.name {
	case "res.partner.bank":
		r["sanitized_acc_number"] = sanitize(r.str("acc_number"))
		return d.uniqueAccount(r)
	case "account.move":
		if r.m2o("currency_id") == 0 {
			r["currency_id"] = d.tables["res.company"][r.m2o("company_id")].m2o("currency_id")
		}
		total := roundTo(r.num("_lines_total"), d.currencyDecimals(r.m2o("currency_id")))
		r["amount_total"], r["amount_residual"] = total, total
	case "res.currency.rate":
		return d.checkRate(r)
	}
	return nil
}

// checkRate applies res.currency.rate's SQL constraints: a rate above
// zero, one rate per day, currency and company.
func (d *db) checkRate(r rec) *fault {
	if r.num("rate") <= 0 {
		return userError("The currency rate must be strictly positive.")
	}
	for _, o := range d.tables["res.currency.rate"] {
		if o.str("name") == r.str("name") && o.m2o("currency_id") == r.m2o("currency_id") && o.m2o("company_id") == r.m2o("company_id") {
			return userError("Only one currency rate per day allowed!")
		}
	}
	return nil
}

// syncPaymentMove keeps a payment's journal entry (move_id) as Odoo's
// _inherits does: the entry carries the payment's memo (ref), state,
// partner, company, currency, amount and date, and names the payment.
func (d *db) syncPaymentMove(p rec) {
	mv, ok := d.tables["account.move"][p.m2o("move_id")]
	if ok {
		mv = d.own("account.move", mv.id())
	} else {
		mv = rec{"move_type": "entry", d.movePaymentField(): p.id(), "name": p.str("name"), "payment_state": "not_paid", "amount_residual": 0.0,
			"partner_bank_id": int64(0), "reversed_entry_id": int64(0), "invoice_date_due": "", "invoice_date": "", "invoice_line_ids": []int64{}}
		p["move_id"] = d.insert("account.move", mv)
	}
	for k, v := range map[string]any{"ref": p.str(d.memoField()), "state": moveState(p.str("state")), "partner_id": p.m2o("partner_id"), "company_id": p.m2o("company_id"),
		"currency_id": p.m2o("currency_id"), "amount_total": p.num("amount"), "date": p.str("date"), "partner_bank_id": p.m2o("partner_bank_id")} {
		mv[k] = v
	}
	d.derive("account.move", mv)
}

// created runs after the record is inserted.
func (d *db) created(m *model, r rec, ctx map[string]any) *fault {
	switch m.name {
	case "account.payment":
		d.syncPaymentMove(r)
	case "res.company":
		// A company is also a partner, which holds its address and tz.
		if r.m2o("partner_id") == 0 {
			r["partner_id"] = d.insert("res.partner", rec{"name": r.str("name"), "active": true, "company_id": int64(0),
				"supplier_rank": int64(0), "is_company": true, "tz": "", "parent_id": int64(0)})
		}
	case "res.partner.bank":
		d.note(r.m2o("partner_id"), fmt.Sprintf("Bank Account #%d created", r.id()))
	case "res.users":
		p := d.insert("res.partner", rec{"name": r.str("name"), "email": r.str("email"), "active": true, "company_id": int64(0),
			"supplier_rank": int64(0), "is_company": false, "phone": ""})
		r["partner_id"] = p
	}
	return nil
}

func (d *db) uniqueAccount(r rec) *fault {
	for _, o := range d.tables["res.partner.bank"] {
		if o.id() != r.id() && o.m2o("partner_id") == r.m2o("partner_id") && o.str("sanitized_acc_number") == r.str("sanitized_acc_number") {
			return userError("The operation cannot be completed: The combination Account Number/Partner must be unique.")
		}
	}
	return nil
}

// bankWriteChecks are res.partner.bank.write's own checks, which run
// before the access rights are checked.
func (d *db) bankWriteChecks(ids []int64, vals map[string]any) *fault {
	untrusting := vals["allow_out_payment"] == false
	_, number := vals["acc_number"]
	_, partner := vals["partner_id"]
	for _, id := range ids {
		if a, ok := d.tables["res.partner.bank"][id]; ok && a.boolean("allow_out_payment") && (number || partner) && !untrusting {
			return userError("You cannot modify the account number or partner of an account that has been trusted.")
		}
	}
	if _, ok := vals["allow_out_payment"]; ok && !d.validator() {
		return userError("You do not have the rights to trust or un-trust accounts.")
	}
	return nil
}

// special serves the methods other than the ORM's own.
func (d *db) special(m *model, method string, args []any, kw, ctx map[string]any, companies []int64) (any, *fault) {
	ids, _ := idList(argAt(args, 0))
	key := m.name + "." + method
	switch key {
	case "account.move.action_post":
		if f := d.checkAccess(m, 'w'); f != nil {
			return nil, f
		}
		for _, id := range ids {
			b, ok := d.tables[m.name][id]
			if !ok {
				return nil, missing(m.name, ids, d.uid)
			}
			if b.str("state") != "draft" {
				return nil, userError(fmt.Sprintf("The entry %s (id %d) must be in draft.", b.str("name"), id))
			}
			if b.str("invoice_date") == "" {
				return nil, userError("The Bill/Refund date is required to validate this document.")
			}
			if a, ok := d.tables["res.partner.bank"][b.m2o("partner_bank_id")]; ok && !a.boolean("active") && d.major >= 18 {
				return nil, userError("The recipient bank account linked to this invoice is archived.\nSo you cannot confirm the invoice.")
			}
			prefix := "BILL"
			if b.str("move_type") == "in_refund" {
				prefix = "RBILL"
			}
			month := b.str("invoice_date")[:7]
			d.seq[prefix+month]++
			b["name"] = fmt.Sprintf("%s/%s/%04d", prefix, strings.ReplaceAll(month, "-", "/"), d.seq[prefix+month])
			b["state"] = "posted"
			d.next["account.move.line"]++
			b["_payable_line"] = d.next["account.move.line"] // the id of its line on the payable account
			if b.str("invoice_date_due") == "" {
				b["invoice_date_due"] = b.str("invoice_date")
			}
			// (partner | partner.commercial_partner_id)._increase_rank
			if p, ok := d.tables["res.partner"][b.m2o("partner_id")]; ok {
				p["supplier_rank"] = p["supplier_rank"].(int64) + 1
				if c, ok := d.tables["res.partner"][p.m2o("commercial_partner_id")]; ok && c.id() != p.id() {
					c["supplier_rank"] = c["supplier_rank"].(int64) + 1
				}
			}
			// Posting a reversal reconciles it with the entry it reverses.
			if orig, ok := d.tables[m.name][b.m2o("reversed_entry_id")]; ok && orig.str("state") == "posted" {
				applied := min(orig.num("amount_residual"), b.num("amount_residual"))
				d.settle(orig, applied)
				d.settle(b, applied)
			}
		}
		return false, nil
	case "account.move.button_cancel", "account.move.button_draft":
		if f := d.checkAccess(m, 'w'); f != nil {
			return nil, f
		}
		for _, id := range ids {
			b, ok := d.tables[m.name][id]
			if !ok {
				return nil, missing(m.name, ids, d.uid)
			}
			b["state"] = map[string]string{"button_cancel": "cancel", "button_draft": "draft"}[method]
		}
		return none{}, nil // committed, then the None result cannot be sent
	case "account.payment.action_post", "account.payment.action_cancel":
		if f := d.checkAccess(m, 'w'); f != nil {
			return nil, f
		}
		for _, id := range ids {
			p, ok := d.tables[m.name][id]
			if !ok {
				return nil, missing(m.name, ids, d.uid)
			}
			if method == "action_cancel" {
				for _, bid := range p.ids("bill_ids") {
					if b, ok := d.tables["account.move"][bid]; ok {
						d.settle(b, -matchedOf(p))
					}
				}
				p["bill_ids"], p["state"] = []int64{}, d.paymentState(false, false)
			} else {
				p["state"] = d.paymentState(true, false) // not reconciled: in_process from 18
			}
			d.syncPaymentMove(p)
		}
		return none{}, nil
	case "account.payment.register.action_create_payments":
		return d.createPayments(ids, ctx)
	case "account.move.js_assign_outstanding_line":
		if f := d.checkAccess(m, 'w'); f != nil {
			return nil, f
		}
		line, _ := argAt(args, 1).(int64)
		return d.assignOutstanding(ids, line)
	case "res.partner.message_post":
		if f := d.checkAccess(m, 'w'); f != nil { // _mail_post_access is write
			return nil, f
		}
		if len(ids) != 1 {
			return nil, traceback("ValueError: Expected singleton: res.partner()")
		}
		if _, ok := d.tables[m.name][ids[0]]; !ok {
			return nil, missing(m.name, ids, d.uid)
		}
		u := d.tables["res.users"][d.uid]
		if u.str("email") == "" && str(kw["email_from"]) == "" {
			return nil, userError("Unable to send message, please configure the sender's email address.")
		}
		return d.insert("mail.message", rec{"model": "res.partner", "res_id": ids[0], "body": escapeBody(str(kw["body"])),
			"message_type": str(kw["message_type"]), "author_id": u.m2o("partner_id")}), nil
	case "res.partner.name_get", "res.partner.bank.name_get", "account.move.name_get":
		if d.major >= 18 {
			break // removed in 18
		}
		if f := d.checkAccess(m, 'r'); f != nil {
			return nil, f
		}
		out := []any{}
		for _, id := range ids {
			if r, ok := d.tables[m.name][id]; ok {
				out = append(out, []any{id, d.displayName(m.name, r)})
			}
		}
		return out, nil
	case "ir.module.module.button_immediate_install":
		if !d.hasGroup("base.group_system") {
			return nil, &fault{4, "You are not allowed to access 'Module' (ir.module.module) records."}
		}
		for _, id := range ids {
			mod, ok := d.tables[m.name][id]
			if !ok {
				return nil, missing(m.name, ids, d.uid)
			}
			if mod.str("state") != "installed" && mod.str("name") == "account" {
				d.installAccount()
			}
			mod["state"] = "installed"
		}
		return map[string]any{"type": "ir.actions.act_url", "target": "self", "url": "/web"}, nil
	case "account.chart.template.try_loading":
		if !d.hasGroup("base.group_system") {
			return nil, userError("Only administrators can load a chart of accounts")
		}
		company, _ := argAt(args, 2).(int64)
		if _, ok := d.tables["res.company"][company]; !ok {
			return none{}, nil
		}
		d.installChart(company)
		return none{}, nil
	}
	return nil, traceback(fmt.Sprintf("AttributeError: The method '%s' does not exist on the model '%s'", method, m.name))
}

func argAt(args []any, i int) any {
	if i < len(args) {
		return args[i]
	}
	return nil
}

// nothingLeftToPay is the wizard's refusal of a bill with nothing left to
// pay: 19 reworded it.
func (d *db) nothingLeftToPay() string {
	if d.major >= 19 {
		return "There's nothing left to pay for the selected journal items, so no payment registration is necessary. You've got your finances under control like a boss!"
	}
	return "You can't register a payment because there is nothing left to pay on the selected journal items."
}

// settle reduces a bill's residual by amount (negative to undo) and sets
// its payment state.
func (d *db) settle(b rec, amount float64) {
	b = d.own("account.move", b.id())
	dec := d.currencyDecimals(b.m2o("currency_id"))
	res := roundTo(b.num("amount_residual")-amount, dec)
	res = max(min(res, b.num("amount_total")), 0)
	b["amount_residual"] = res
	switch {
	case res <= 0:
		b["payment_state"] = "paid"
	case res < b.num("amount_total"):
		b["payment_state"] = "partial"
	default:
		b["payment_state"] = "not_paid"
	}
}

// matchedOf is how much of payment p is matched with its bill: what the
// wizard could reconcile, or all of it for a payment the fake made
// otherwise.
func matchedOf(p rec) float64 {
	if m, ok := p["_matched"].(float64); ok {
		return m
	}
	return p.num("amount")
}

// createPayments runs the payment wizard: one posted payment per bill,
// to the wizard's partner_bank_id as given (Community checks neither
// trust, nor activity, nor the partner of that account), reconciled with
// the bill.
func (d *db) createPayments(ids []int64, ctx map[string]any) (any, *fault) {
	m := d.models["account.payment.register"]
	if f := d.checkAccess(m, 'w'); f != nil {
		return nil, f
	}
	if f := d.checkAccess(d.models["account.payment"], 'c'); f != nil {
		return nil, f
	}
	var made []int64
	for _, id := range ids {
		w, ok := d.tables[m.name][id]
		if !ok {
			return nil, missing(m.name, ids, d.uid)
		}
		for _, bid := range w.ids("line_bill_ids") {
			b := d.tables["account.move"][bid]
			if b == nil {
				return nil, missing("account.move", []int64{bid}, d.uid)
			}
			amount := w.num("amount")
			// Odoo checks what is left to pay when the wizard opens
			// (default_get), not here: a bill settled since by another
			// payment is paid again, and what it no longer owes stays
			// unmatched (is_reconciled False).
			switch {
			case amount < 0:
				return nil, userError("The operation cannot be completed: The payment amount cannot be negative.")
			case w.str("payment_difference_handling") == "reconcile" && amount < b.num("amount_residual") && w.m2o("writeoff_account_id") == 0:
				return nil, userError("The operation cannot be completed: Missing required account on accountable line.")
			case w.m2o("journal_id") == 0:
				return nil, userError("Please define a payment method line on your payment.")
			}
			year := d.now.Format("2006")
			d.seq["PBNK1"+year]++
			// The payment is to the commercial partner, as the bill's
			// payable line is.
			p := rec{
				"name": fmt.Sprintf("PBNK1/%s/%05d", year, d.seq["PBNK1"+year]), "partner_id": b.m2o("commercial_partner_id"),
				"partner_bank_id": w.m2o("partner_bank_id"), "amount": amount, "currency_id": b.m2o("currency_id"),
				d.memoField(): w.str("communication"), "date": w.str("payment_date"), "company_id": b.m2o("company_id"),
				"payment_type": "outbound", "partner_type": "supplier", "journal_id": w.m2o("journal_id"), "bill_ids": []int64{},
				"link_ids": []int64{bid},
			}
			matched := max(min(amount, b.num("amount_residual")), 0)
			if b.str("state") != "posted" && d.major == 18 {
				// 18 links a payment on a draft bill (matched_payment_ids)
				// without reconciling it: the bill stays unpaid.
				matched = 0
			}
			if matched > 0 {
				// 19 reconciles even with a draft bill, which then shows
				// paid while still a draft.
				p["bill_ids"] = []int64{bid}
				d.settle(b, matched)
			}
			p["_matched"] = matched
			p["state"] = d.paymentState(true, matched > 0 && matched >= amount)
			pid := d.insert("account.payment", p)
			d.syncPaymentMove(p)
			made = append(made, pid)
		}
	}
	if v, ok := ctx["dont_redirect_to_payments"].(bool); ok && v {
		return true, nil
	}
	action := map[string]any{"name": "Payments", "type": "ir.actions.act_window", "res_model": "account.payment",
		"context": map[string]any{"create": false}}
	if len(made) == 1 {
		action["view_mode"], action["res_id"] = "form", made[0]
	} else {
		action["view_mode"], action["domain"] = "tree,form", []any{[]any{"id", "in", toAny(made)}}
	}
	return action, nil
}

// paymentsWidget is account.move's invoice_payments_widget.
func (d *db) paymentsWidget(b rec) any {
	var content []any
	for _, p := range d.sorted("account.payment") {
		if slices.Contains(p.ids("bill_ids"), b.id()) {
			content = append(content, map[string]any{"account_payment_id": p.id(), "amount": p.num("amount"), "date": p.str("date"),
				"ref": p.str("name") + " (" + b.str("ref") + ")", "journal_name": "Bank", "is_exchange": false})
		}
	}
	if content == nil {
		return false
	}
	return map[string]any{"title": "Less Payment", "outstanding": false, "content": content}
}

// outstandingWidget is account.move's
// invoice_outstanding_credits_debits_widget for a posted vendor bill that
// is not settled: the unreconciled payable lines of the posted credit
// notes of its commercial partner, in its currency, with what each still
// holds ("Outstanding debits"). Odoo lists outstanding payments too; the
// fake makes none. False when there is nothing to list.
func (d *db) outstandingWidget(b rec) any {
	ps := b.str("payment_state")
	if b.str("move_type") != "in_invoice" || b.str("state") != "posted" || ps != "not_paid" && ps != "partial" {
		return false
	}
	var content []any
	for _, c := range d.sorted("account.move") {
		if c.str("move_type") != "in_refund" || c.str("state") != "posted" || c.num("amount_residual") <= 0 ||
			c.m2o("commercial_partner_id") != b.m2o("commercial_partner_id") || c.m2o("company_id") != b.m2o("company_id") ||
			c.m2o("currency_id") != b.m2o("currency_id") {
			continue
		}
		line, _ := c["_payable_line"].(int64)
		content = append(content, map[string]any{"journal_name": c.str("name"), "amount": c.num("amount_residual"),
			"currency_id": b.m2o("currency_id"), "id": line, "move_id": c.id(), "date": c.str("invoice_date"), "account_payment_id": false})
	}
	if content == nil {
		return false
	}
	return map[string]any{"outstanding": true, "content": content, "move_id": b.id(), "title": "Outstanding debits"}
}

// assignOutstanding is account.move.js_assign_outstanding_line: it
// reconciles the payable line with id line (a credit note's) with the
// bill ids[0]'s, up to what both still hold, and answers None (the
// marshal fault, after committing). A line of another partner or account
// reconciles nothing, as Odoo's reconcile of lines that do not match
// raises a user error.
func (d *db) assignOutstanding(ids []int64, line int64) (any, *fault) {
	if len(ids) != 1 {
		return nil, traceback("ValueError: Expected singleton: account.move()")
	}
	b, ok := d.tables["account.move"][ids[0]]
	if !ok {
		return nil, missing("account.move", ids, d.uid)
	}
	for _, c := range d.sorted("account.move") {
		if l, _ := c["_payable_line"].(int64); l != line || line == 0 {
			continue
		}
		if c.m2o("commercial_partner_id") != b.m2o("commercial_partner_id") || c.str("state") != "posted" || b.str("state") != "posted" {
			return nil, userError("Entries are not from the same account or partner.")
		}
		amount := min(c.num("amount_residual"), b.num("amount_residual"))
		if amount > 0 {
			d.settle(b, amount)
			d.settle(c, amount)
		}
		return none{}, nil
	}
	return nil, missing("account.move.line", []int64{line}, d.uid)
}
