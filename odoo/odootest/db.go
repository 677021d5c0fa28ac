package odootest

import (
	"fmt"
	"html"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"
)

// db is one database: its models, records and installed modules.
type db struct {
	name   string
	major  int // the Odoo major version whose schema and behaviour it has (Server.SetVersion)
	models map[string]*model
	tables map[string]map[int64]rec
	next   map[string]int64
	seq    map[string]int // bill numbering per prefix and month
	// uid and now are set for the duration of a call.
	uid int64
	now time.Time
	// journal, during a journaled call, logs what to undo on a fault.
	journal *journal
	// sortedIDs caches each table's ids in order (sorted); an insert or
	// a rollback drops it.
	sortedIDs map[string][]int64
	// partnerIdx indexes account.move by commercial partner (byPartner),
	// for partnerIdxLen moves.
	partnerIdx    map[int64][]int64
	partnerIdxLen int
}

// groups with their external ids and the groups they imply.
var groupDefs = []struct {
	xmlid, name string
	implies     []string
}{
	{"base.group_user", "Internal User", nil},
	{"base.group_system", "Settings", []string{"base.group_user"}},
	{"base.group_partner_manager", "Contact Creation", nil},
	{"account.group_account_readonly", "Show Accounting Features - Readonly", []string{"base.group_user"}},
	{"account.group_account_invoice", "Billing", []string{"base.group_user"}},
	{"account.group_account_manager", "Billing Administrator", []string{"account.group_account_invoice"}},
	{"account.group_validate_bank_account", "Validate bank account", nil},
}

// The names and values that differ between the Odoo versions the fake
// serves (../shared/odoo18-19-api.md §5); everything else about a
// version is asked of these.

// groupsField is res.users' field of a user's groups: groups_id until 18,
// group_ids from 19.
func (d *db) groupsField() string {
	if d.major >= 19 {
		return "group_ids"
	}
	return "groups_id"
}

// memoField is account.payment's memo: ref (delegated to its entry) on
// 17, memo from 18.
func (d *db) memoField() string {
	if d.major >= 18 {
		return "memo"
	}
	return "ref"
}

// movePaymentField is account.move's link to the payment it is the entry
// of: payment_id on 17, origin_payment_id from 18.
func (d *db) movePaymentField() string {
	if d.major >= 18 {
		return "origin_payment_id"
	}
	return "payment_id"
}

// paymentState is the state of a payment the fake posts (matched: fully
// reconciled with its bill) or cancels, as the version names it: 17 has
// posted and cancel; 18 and 19 paid (matched), in_process and canceled.
func (d *db) paymentState(posted, matched bool) string {
	switch {
	case d.major < 18 && posted:
		return "posted"
	case d.major < 18:
		return "cancel"
	case posted && matched:
		return "paid"
	case posted:
		return "in_process"
	}
	return "canceled"
}

// moveState is the state of the journal entry of a payment in state s.
func moveState(s string) string {
	switch s {
	case "posted", "in_process", "paid":
		return "posted"
	case "cancel", "canceled", "rejected":
		return "cancel"
	}
	return "draft"
}

// groupLabel is the label of a group in an access fault: 19 renamed them.
func (d *db) groupLabel(xmlid string) (string, bool) {
	if d.major >= 19 {
		l, ok := groupLabels19[xmlid]
		return l, ok
	}
	l, ok := groupLabels[xmlid]
	return l, ok
}

// groupLabels19 are the labels of Odoo 19's access faults.
var groupLabels19 = map[string]string{
	"base.group_user":                "Role / User",
	"base.group_system":              "Administration / Settings",
	"base.group_partner_manager":     "Contact Creation",
	"account.group_account_readonly": "Show Accounting Features - Readonly",
	"account.group_account_invoice":  "Accounting/Invoicing",
	"account.group_account_manager":  "Accounting/Administrator",
}

// groupLabels are the names Odoo's access errors list (17, 18).
var groupLabels = map[string]string{
	"base.group_user":                "User types/Internal User",
	"base.group_system":              "Administration/Settings",
	"base.group_partner_manager":     "Extra Rights/Contact Creation",
	"account.group_account_readonly": "Technical/Show Accounting Features - Readonly",
	"account.group_account_invoice":  "Invoicing/Billing",
	"account.group_account_manager":  "Invoicing/Billing Administrator",
}

func f(typ int) *field                            { return &field{typ: typ} }
func m2o(comodel string) *field                   { return &field{typ: tM2O, comodel: comodel} }
func x2m(comodel string) *field                   { return &field{typ: tX2M, comodel: comodel} }
func req(x *field) *field                         { x.required = true; return x }
func comp(x *field, fn func(*db, rec) any) *field { x.computed = fn; return x }
func labeled(x *field, label string) *field       { x.label = label; return x }

// o2m marks a computed x2many as the one2many it is in Odoo: searchable
// through a path ("partner_id.bank_ids.sanitized_acc_number").
func o2m(x *field) *field { x.o2m = true; return x }

func newDB(s *Server, name, login, password string) *db {
	d := &db{name: name, major: s.version, models: map[string]*model{}, tables: map[string]map[int64]rec{}, next: map[string]int64{}, seq: map[string]int{}}
	d.now = s.now().UTC()
	add := func(m *model) {
		for _, n := range []string{"create_date", "write_date"} {
			m.fields[n] = f(tDatetime)
		}
		m.fields["create_uid"], m.fields["write_uid"] = m2o("res.users"), m2o("res.users")
		m.fields["display_name"] = comp(f(tChar), func(d *db, r rec) any { return d.displayName(m.name, r) })
		d.models[m.name] = m
		d.tables[m.name] = map[int64]rec{}
	}
	read := map[string]string{"base.group_user": "r"}
	add(&model{name: "res.company", desc: "Companies", rights: read, fields: map[string]*field{
		"name": req(f(tChar)), "currency_id": m2o("res.currency"), "chart_template": f(tChar), "partner_id": m2o("res.partner")}})
	add(&model{name: "res.currency", desc: "Currency", rights: read, fields: map[string]*field{
		"name": req(f(tChar)), "active": f(tBool), "decimal_places": f(tInt)}})
	// res.currency.rate: company_rate is computed as in Odoo 17 (the
	// rate divided by the latest rate of the company's currency, 1 when
	// it has none): what Odoo's rates list shows as "USD per EUR".
	add(&model{name: "res.currency.rate", desc: "Currency Rate", rights: read, fields: map[string]*field{
		"name": req(f(tDate)), "rate": f(tFloat), "currency_id": req(m2o("res.currency")), "company_id": m2o("res.company"),
		"company_rate": comp(f(tFloat), func(d *db, r rec) any { return r.num("rate") / d.companyCurrencyRate(r.m2o("company_id")) })}})
	add(&model{name: "res.groups", desc: "Access Groups", rights: read, fields: map[string]*field{"name": f(tChar)}})
	add(&model{name: "ir.model.data", desc: "Model Data", rights: read, fields: map[string]*field{
		"module": f(tChar), "name": f(tChar), "model": f(tChar), "res_id": f(tInt)}})
	add(&model{name: "ir.module.module", desc: "Module", rights: read, fields: map[string]*field{
		"name": f(tChar), "state": f(tChar)}})
	add(&model{name: "res.users", desc: "User", rights: read, fields: map[string]*field{
		"name": req(f(tChar)), "login": req(f(tChar)), "password": f(tChar), "active": f(tBool), "email": f(tChar),
		d.groupsField(): x2m("res.groups"), "company_ids": x2m("res.company"), "company_id": m2o("res.company"), "partner_id": m2o("res.partner"),
		"tz": f(tChar)}})
	add(&model{name: "res.partner", desc: "Contact", rights: map[string]string{"base.group_user": "r", "base.group_partner_manager": "rwcu"},
		fields: map[string]*field{
			"name": f(tChar), "phone": f(tChar), "email": f(tChar), "active": f(tBool), "company_id": m2o("res.company"),
			"supplier_rank": f(tInt), "is_company": f(tBool), "tz": f(tChar),
			// country_code is related to country_id.code in Odoo.
			"country_id": m2o("res.country"), "country_code": comp(f(tChar), func(d *db, r rec) any {
				return d.tables["res.country"][r.m2o("country_id")].str("code")
			}),
			// parent_id makes a contact person of a company; Odoo stores
			// commercial_partner_id (computed): the company, or the
			// partner itself when it is a company or has no parent.
			"parent_id": m2o("res.partner"), "commercial_partner_id": m2o("res.partner"),
			"bank_ids": o2m(comp(x2m("res.partner.bank"), func(d *db, r rec) any {
				var ids []int64
				for _, b := range d.sorted("res.partner.bank") {
					if b.m2o("partner_id") == r.id() && b.boolean("active") {
						ids = append(ids, b.id())
					}
				}
				slices.SortStableFunc(ids, func(a, b int64) int {
					return int(d.tables["res.partner.bank"][a]["sequence"].(int64) - d.tables["res.partner.bank"][b]["sequence"].(int64))
				})
				return ids
			}))}})
	add(&model{name: "res.partner.bank", desc: "Bank Accounts", rights: map[string]string{"base.group_user": "r", "base.group_partner_manager": "rwcu"},
		fields: map[string]*field{
			"acc_number": labeled(req(f(tChar)), "Account Number"), "sanitized_acc_number": f(tChar), "partner_id": labeled(req(m2o("res.partner")), "Account Holder"),
			"allow_out_payment": f(tBool), "active": f(tBool), "sequence": f(tInt), "company_id": m2o("res.company"),
			"acc_holder_name": f(tChar), "currency_id": m2o("res.currency"),
			// bank_bic is related to bank_id.bic in Odoo.
			"bank_id": m2o("res.bank"), "bank_bic": comp(f(tChar), func(d *db, r rec) any {
				return d.tables["res.bank"][r.m2o("bank_id")].str("bic")
			})}})
	add(&model{name: "res.bank", desc: "Bank", rights: map[string]string{"base.group_user": "r", "base.group_partner_manager": "rwcu"},
		fields: map[string]*field{"name": req(f(tChar)), "bic": f(tChar), "country": m2o("res.country"), "active": f(tBool)}})
	add(&model{name: "res.country", desc: "Country", rights: read, fields: map[string]*field{"name": f(tChar), "code": f(tChar)}})
	add(&model{name: "mail.message", desc: "Message", rights: map[string]string{"base.group_user": "rc"}, fields: map[string]*field{
		"model": f(tChar), "res_id": f(tInt), "body": f(tChar), "message_type": f(tChar), "author_id": m2o("res.partner")}})
	if d.major < 19 {
		d.models["res.partner"].fields["mobile"] = f(tChar) // gone in 19
	}
	d.seedBase(login, password)
	return d
}

// installAccount adds the accounting models, as installing account does.
func (d *db) installAccount() {
	add := func(m *model) {
		for _, n := range []string{"create_date", "write_date"} {
			m.fields[n] = f(tDatetime)
		}
		m.fields["create_uid"], m.fields["write_uid"] = m2o("res.users"), m2o("res.users")
		m.fields["display_name"] = comp(f(tChar), func(d *db, r rec) any { return d.displayName(m.name, r) })
		m.module = "account"
		d.models[m.name] = m
		d.tables[m.name] = map[int64]rec{}
	}
	moves := map[string]string{"account.group_account_readonly": "r", "account.group_account_invoice": "rwcu"}
	add(&model{name: "account.move", desc: "Journal Entry", rights: moves, fields: map[string]*field{
		"name": f(tChar), "ref": f(tChar), "partner_id": m2o("res.partner"), "move_type": f(tChar), "currency_id": m2o("res.currency"),
		"amount_total": f(tFloat), "amount_residual": f(tFloat), "invoice_date": f(tDate), "invoice_date_due": f(tDate),
		"partner_bank_id": m2o("res.partner.bank"), "state": f(tChar), "payment_state": f(tChar), "reversed_entry_id": m2o("account.move"),
		"company_id": m2o("res.company"), "invoice_line_ids": x2m("account.move.line"),
		// Stored in Odoo: the commercial partner of partner_id.
		"commercial_partner_id": m2o("res.partner"),
		// A payment's journal entry (move_type entry) names its payment,
		// as account.payment's _inherits makes it.
		d.movePaymentField(): m2o("account.payment"), "date": f(tDate),
		"duplicated_ref_ids":                        comp(x2m("account.move"), (*db).duplicatedRefIDs),
		"invoice_payments_widget":                   comp(f(tChar), func(d *db, r rec) any { return d.paymentsWidget(r) }),
		"invoice_outstanding_credits_debits_widget": comp(f(tChar), func(d *db, r rec) any { return d.outstandingWidget(r) }),
	}})
	add(&model{name: "account.payment", desc: "Payments", rights: moves, fields: map[string]*field{
		"name": f(tChar), "partner_id": m2o("res.partner"), "partner_bank_id": m2o("res.partner.bank"), "amount": f(tFloat),
		"currency_id": m2o("res.currency"), "state": f(tChar), d.memoField(): f(tChar), "date": f(tDate), "company_id": m2o("res.company"),
		"payment_type": f(tChar), "partner_type": f(tChar), "journal_id": m2o("account.journal"), "move_id": m2o("account.move"),
		"bill_ids": f(tX2M), // the fake's own record of reconciliation; not an Odoo field
		// From 18, a payment made on a bill is linked to it (invoice_ids)
		// even when it is not reconciled with it, and reconciled_bill_ids
		// lists the linked bills too.
		"link_ids":            f(tX2M), // the fake's invoice_ids; not read by clients
		"reconciled_bill_ids": comp(x2m("account.move"), (*db).reconciledBillIDs),
		"is_reconciled": comp(f(tBool), func(d *db, r rec) any {
			return len(r.ids("bill_ids")) > 0 && matchedOf(r) >= r.num("amount")
		}),
	}})
	if d.major >= 19 {
		d.models["res.partner.bank"].fields["duplicate_bank_partner_ids"] = comp(x2m("res.partner"), (*db).duplicateBankPartnerIDs)
	}
	if d.major >= 18 {
		mv := d.models["account.move"].fields
		mv["matched_payment_ids"] = comp(x2m("account.payment"), (*db).matchedPaymentIDs)
		mv["status_in_payment"] = comp(f(tChar), (*db).statusInPayment)
	}
	add(&model{name: "account.payment.register", desc: "Pay", rights: map[string]string{"account.group_account_invoice": "rwc"}, fields: map[string]*field{
		"amount": f(tFloat), "partner_bank_id": m2o("res.partner.bank"), "communication": f(tChar), "payment_date": f(tDate),
		"payment_difference_handling": f(tChar), "journal_id": m2o("account.journal"), "writeoff_account_id": f(tInt),
		"line_bill_ids": f(tX2M), // the bills the wizard was opened on; not an Odoo field
	}})
	add(&model{name: "account.journal", desc: "Journal", rights: map[string]string{"account.group_account_readonly": "r", "account.group_account_invoice": "r"},
		fields: map[string]*field{"name": f(tChar), "type": f(tChar), "company_id": m2o("res.company")}})
	add(&model{name: "account.chart.template", desc: "Account Chart Template", rights: map[string]string{}, fields: map[string]*field{}})
	for _, g := range groupDefs {
		if strings.HasPrefix(g.xmlid, "account.") {
			d.addGroup(g.xmlid, g.name)
		}
	}
	for _, c := range d.sorted("res.company") {
		d.installChart(c.id())
	}
	admin := d.tables["res.users"][2]
	for _, g := range groupDefs {
		if id := d.groupID(g.xmlid); id != 0 && !slices.Contains(admin.ids(d.groupsField()), id) {
			admin[d.groupsField()] = append(admin.ids(d.groupsField()), id)
		}
	}
}

// duplicatedRefIDs computes account.move.duplicated_ref_ids: the other
// moves of the same partner and type with the same ref, not cancelled.
func (d *db) duplicatedRefIDs(r rec) any {
	ids := []int64{}
	for _, o := range d.sorted("account.move") {
		if o.id() != r.id() && o.str("ref") != "" && o.str("ref") == r.str("ref") && o.m2o("partner_id") == r.m2o("partner_id") &&
			o.str("move_type") == r.str("move_type") && o.str("state") != "cancel" {
			ids = append(ids, o.id())
		}
	}
	return ids
}

// reconciledBillIDs computes account.payment.reconciled_bill_ids: the
// bills reconciled with the payment and, from 18, those it is linked to.
func (d *db) reconciledBillIDs(r rec) any {
	ids := slices.Clone(r.ids("bill_ids"))
	if d.major >= 18 {
		for _, id := range r.ids("link_ids") {
			if !slices.Contains(ids, id) {
				ids = append(ids, id)
			}
		}
	}
	return ids
}

// duplicateBankPartnerIDs computes 19's
// res.partner.bank.duplicate_bank_partner_ids: the partners of the other
// active accounts with the same acc_number (as typed, not sanitized), of
// the account's company or none.
func (d *db) duplicateBankPartnerIDs(r rec) any {
	ids := []int64{}
	if !r.boolean("active") {
		return ids
	}
	for _, o := range d.sorted("res.partner.bank") {
		co, oco := r.m2o("company_id"), o.m2o("company_id")
		if o.id() != r.id() && o.boolean("active") && o.str("acc_number") == r.str("acc_number") && o.m2o("partner_id") != 0 &&
			(co == oco || oco == 0) && !slices.Contains(ids, o.m2o("partner_id")) {
			ids = append(ids, o.m2o("partner_id"))
		}
	}
	return ids
}

// matchedPaymentIDs computes 18's account.move.matched_payment_ids: the
// payments linked to a bill, reconciled or not.
func (d *db) matchedPaymentIDs(r rec) any {
	ids := []int64{}
	for _, p := range d.sorted("account.payment") {
		if slices.Contains(p.ids("bill_ids"), r.id()) || slices.Contains(p.ids("link_ids"), r.id()) {
			ids = append(ids, p.id())
		}
	}
	return ids
}

// statusInPayment computes account.move.status_in_payment (18 and
// later): an unpaid posted bill is not_paid on 18, posted on 19.
func (d *db) statusInPayment(r rec) any {
	switch ps := r.str("payment_state"); {
	case r.str("state") != "posted":
		return r.str("state")
	case ps == "not_paid" && d.major >= 19:
		return "posted"
	default:
		return ps
	}
}

// installChart gives a company its chart of accounts: here, a bank
// journal and the template's currency.
func (d *db) installChart(company int64) {
	c := d.tables["res.company"][company]
	if c.str("chart_template") != "" {
		return
	}
	c["chart_template"] = "generic_coa"
	// Loading the generic chart sets the company's currency to USD.
	for _, cur := range d.tables["res.currency"] {
		if cur.str("name") == "USD" {
			c["currency_id"] = cur.id()
		}
	}
	d.insert("account.journal", rec{"name": "Bank", "type": "bank", "company_id": company})
}

func (d *db) insert(model string, r rec) int64 {
	d.next[model]++
	id := d.next[model]
	r["id"] = id
	now := d.now.Format("2006-01-02 15:04:05")
	r["create_date"], r["write_date"] = now, now
	uid := d.uid
	if uid == 0 {
		uid = 1
	}
	r["create_uid"], r["write_uid"] = uid, uid
	d.tables[model][id] = r
	delete(d.sortedIDs, model)
	if model == "account.move" && d.partnerIdx != nil {
		p := r.m2o("commercial_partner_id") // derive below indexes it again if it changes
		d.partnerIdx[p] = append(d.partnerIdx[p], id)
		d.partnerIdxLen++
	}
	if d.journal != nil {
		d.journal.inserted = append(d.journal.inserted, tableID{model, id})
	}
	d.derive(model, r)
	return id
}

// derive sets the stored computed fields of r: commercial_partner_id of a
// partner (itself, unless it is a contact person of a company: then its
// company's) and of a journal entry (its partner's), and the company of
// a bank account (its partner's).
func (d *db) derive(model string, r rec) {
	switch model {
	case "res.partner":
		if p, ok := d.tables[model][r.m2o("parent_id")]; ok && !r.boolean("is_company") {
			r["commercial_partner_id"] = p.m2o("commercial_partner_id")
		} else {
			r["commercial_partner_id"] = r.id()
		}
	case "account.move":
		was := r.m2o("commercial_partner_id")
		r["commercial_partner_id"] = d.tables["res.partner"][r.m2o("partner_id")].m2o("commercial_partner_id")
		if p := r.m2o("commercial_partner_id"); p != was && d.partnerIdx != nil {
			d.partnerIdx[p] = append(d.partnerIdx[p], r.id()) // the entry under was is filtered out (candidates)
		}
	case "res.partner.bank":
		// Stored, related to partner_id.company_id on every version.
		r["company_id"] = d.tables["res.partner"][r.m2o("partner_id")].m2o("company_id")
	}
}

// zone is the calling user's time zone (res.users tz), UTC if unset or
// unknown.
func (d *db) zone() *time.Location {
	if z, err := time.LoadLocation(d.tables["res.users"][d.uid].str("tz")); err == nil {
		return z
	}
	return time.UTC
}

func (d *db) addGroup(xmlid, name string) int64 {
	id := d.insert("res.groups", rec{"name": name})
	module, n, _ := strings.Cut(xmlid, ".")
	d.insert("ir.model.data", rec{"module": module, "name": n, "model": "res.groups", "res_id": id})
	return id
}

func (d *db) groupID(xmlid string) int64 {
	module, n, _ := strings.Cut(xmlid, ".")
	for _, r := range d.tables["ir.model.data"] {
		if r.str("module") == module && r.str("name") == n && r.str("model") == "res.groups" {
			return r.m2o("res_id")
		}
	}
	return 0
}

func (d *db) seedBase(login, password string) {
	for _, c := range countries {
		d.insert("res.country", rec{"name": c[1], "code": c[0]})
	}
	usd := d.insert("res.currency", rec{"name": "USD", "active": true, "decimal_places": int64(2)})
	d.insert("res.currency", rec{"name": "EUR", "active": false, "decimal_places": int64(2)})
	d.insert("res.currency", rec{"name": "JPY", "active": false, "decimal_places": int64(0)})
	d.insert("res.currency", rec{"name": "KWD", "active": false, "decimal_places": int64(3)})
	cp := d.insert("res.partner", rec{"name": "My Company", "active": true, "company_id": int64(0), "supplier_rank": int64(0), "is_company": true,
		"tz": "", "parent_id": int64(0)})
	d.tables["res.partner"][cp]["commercial_partner_id"] = cp
	company := d.insert("res.company", rec{"name": "My Company", "currency_id": usd, "chart_template": "", "partner_id": cp})
	for _, g := range groupDefs {
		if strings.HasPrefix(g.xmlid, "base.") {
			d.addGroup(g.xmlid, g.name)
		}
	}
	for _, m := range []string{"base", "web", "mail", "account", "contacts"} {
		st := "uninstalled"
		if m == "base" || m == "web" || m == "mail" {
			st = "installed"
		}
		d.insert("ir.module.module", rec{"name": m, "state": st})
	}
	bot := d.insert("res.partner", rec{"name": "OdooBot", "active": false, "company_id": int64(0), "supplier_rank": int64(0), "is_company": false})
	d.insert("res.users", rec{"name": "OdooBot", "login": "__system__", "password": "", "active": false, d.groupsField(): []int64{},
		"company_ids": []int64{company}, "company_id": company, "partner_id": bot})
	p := d.insert("res.partner", rec{"name": "Administrator", "email": "admin@example.com", "active": true, "company_id": int64(0),
		"supplier_rank": int64(0), "is_company": false})
	var groups []int64
	for _, g := range groupDefs {
		if id := d.groupID(g.xmlid); id != 0 {
			groups = append(groups, id)
		}
	}
	d.insert("res.users", rec{"name": "Administrator", "login": login, "password": password, "active": true, "email": "admin@example.com",
		d.groupsField(): groups, "company_ids": []int64{company}, "company_id": company, "partner_id": p})
}

// companyCurrencyRate is the latest rate of the currency of company
// (the admin's company when 0), of the company or of none, 1 if none:
// Odoo 17's _get_last_rates_for_companies.
func (d *db) companyCurrencyRate(company int64) float64 {
	if company == 0 {
		company = d.tables["res.users"][d.uid].m2o("company_id")
	}
	cur := d.tables["res.company"][company].m2o("currency_id")
	best, day := 1.0, ""
	for _, r := range d.tables["res.currency.rate"] {
		if c := r.m2o("company_id"); r.m2o("currency_id") == cur && (c == 0 || c == company) && r.num("rate") != 0 && r.str("name") > day {
			best, day = r.num("rate"), r.str("name")
		}
	}
	return best
}

func (d *db) clone(name string) *db {
	c := &db{name: name, major: d.major, models: d.models, tables: map[string]map[int64]rec{}, next: maps.Clone(d.next), seq: maps.Clone(d.seq)}
	for m, t := range d.tables {
		ct := make(map[int64]rec, len(t))
		for id, r := range t {
			ct[id] = r.clone()
		}
		c.tables[m] = ct
	}
	// models may be extended by installAccount: copy the map itself.
	c.models = maps.Clone(d.models)
	return c
}

func (d *db) sorted(model string) []rec {
	t := d.tables[model]
	ids, ok := d.sortedIDs[model]
	if !ok || len(ids) != len(t) {
		ids = make([]int64, 0, len(t))
		for id := range t {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		if d.sortedIDs == nil {
			d.sortedIDs = map[string][]int64{}
		}
		d.sortedIDs[model] = ids
	}
	out := make([]rec, len(ids))
	for i, id := range ids {
		out[i] = t[id]
	}
	return out
}

func (d *db) displayName(model string, r rec) string {
	switch model {
	case "res.partner.bank":
		return r.str("acc_number")
	case "account.move":
		if r.str("state") == "draft" {
			return "Draft Bill (* " + fmt.Sprint(r.id()) + ")"
		}
		if ref := r.str("ref"); ref != "" {
			return r.str("name") + " (" + ref + ")"
		}
		return r.str("name")
	case "mail.message", "account.payment.register":
		return fmt.Sprintf("%s,%d", model, r.id())
	}
	return r.str("name")
}

// userGroups returns the external ids of the calling user's groups, with
// the groups they imply.
func (d *db) userGroups() map[string]bool {
	u := d.tables["res.users"][d.uid]
	have := map[string]bool{}
	for _, gid := range u.ids(d.groupsField()) {
		for _, r := range d.tables["ir.model.data"] {
			if r.str("model") == "res.groups" && r.m2o("res_id") == gid {
				have[r.str("module")+"."+r.str("name")] = true
			}
		}
	}
	for changed := true; changed; {
		changed = false
		for _, g := range groupDefs {
			if have[g.xmlid] {
				for _, i := range g.implies {
					if !have[i] {
						have[i], changed = true, true
					}
				}
			}
		}
	}
	return have
}

func (d *db) hasGroup(xmlid string) bool { return d.userGroups()[xmlid] }

var verbs = map[byte]string{'r': "access", 'w': "modify", 'c': "create", 'u': "delete"}

// checkAccess is Odoo's ACL check: fault 4 naming the groups that have the
// right.
func (d *db) checkAccess(m *model, op byte) *fault {
	if d.hasGroup("base.group_system") {
		return nil
	}
	have := d.userGroups()
	var allowed []string
	for g, r := range m.rights {
		if strings.IndexByte(r, op) >= 0 {
			if have[g] {
				return nil
			}
			if l, ok := d.groupLabel(g); ok {
				allowed = append(allowed, l)
			}
		}
	}
	sort.Strings(allowed)
	msg := fmt.Sprintf("You are not allowed to %s '%s' (%s) records.\n\n", verbs[op], m.desc, m.name)
	if len(allowed) > 0 {
		msg += "This operation is allowed for the following groups:\n\t- " + strings.Join(allowed, "\n\t- ") + "\n\n"
	} else {
		msg += "No group currently allows this operation.\n\n"
	}
	return &fault{4, msg + "Contact your administrator to request access if necessary."}
}

// companies returns the companies the call may see: allowed_company_ids
// from the context, which must be the user's, or all the user's.
func (d *db) companies(ctx map[string]any) ([]int64, *fault) {
	u := d.tables["res.users"][d.uid]
	mine := u.ids("company_ids")
	list, ok := ctx["allowed_company_ids"].([]any)
	if !ok {
		return mine, nil
	}
	var out []int64
	for _, x := range list {
		id, _ := x.(int64)
		if !slices.Contains(mine, id) {
			return nil, &fault{4, "Access to unauthorized or invalid companies."}
		}
		out = append(out, id)
	}
	return out, nil
}

// visible applies the multi-company record rules.
func (d *db) visible(m *model, r rec, companies []int64) bool {
	if _, ok := m.fields["company_id"]; !ok || m.name == "res.users" {
		return true
	}
	c := r.m2o("company_id")
	return c == 0 || slices.Contains(companies, c)
}

// value renders a stored value as Odoo sends it.
func (d *db) value(m *model, name string, r rec) any {
	if name == "id" {
		return r.id()
	}
	fl := m.fields[name]
	if fl.computed != nil {
		v := fl.computed(d, r)
		if ids, ok := v.([]int64); ok {
			return toAny(ids)
		}
		if v == nil || v == "" {
			return false
		}
		return v
	}
	switch fl.typ {
	case tM2O:
		id := r.m2o(name)
		target, ok := d.tables[fl.comodel][id]
		if id == 0 || !ok {
			return false
		}
		return []any{id, d.displayName(fl.comodel, target)}
	case tX2M:
		return toAny(r.ids(name))
	case tChar, tDate, tDatetime:
		if s := r.str(name); s != "" {
			return s
		}
		return false
	case tInt:
		n, _ := r[name].(int64)
		return n
	case tFloat:
		return r.num(name)
	case tBool:
		return r.boolean(name)
	}
	return false
}

func toAny(ids []int64) []any {
	out := make([]any, len(ids))
	for i, id := range ids {
		out[i] = id
	}
	return out
}

// today is the date in the calling user's time zone, which Odoo's date
// fields default to (fields.Date.context_today).
func (d *db) today() string { return d.now.In(d.zone()).Format("2006-01-02") }

func escapeBody(s string) string { return "<p>" + html.EscapeString(s) + "</p>" }

// countries are the res.country records the fake knows (code, name): a
// part of those Odoo's base module loads.
var countries = [][2]string{
	{"AT", "Austria"}, {"AU", "Australia"}, {"BE", "Belgium"}, {"CA", "Canada"}, {"CH", "Switzerland"},
	{"DE", "Germany"}, {"DK", "Denmark"}, {"ES", "Spain"}, {"FR", "France"}, {"GB", "United Kingdom"},
	{"IE", "Ireland"}, {"IN", "India"}, {"IT", "Italy"}, {"JP", "Japan"}, {"NL", "Netherlands"},
	{"PL", "Poland"}, {"PT", "Portugal"}, {"SE", "Sweden"}, {"SG", "Singapore"}, {"US", "United States"},
}
