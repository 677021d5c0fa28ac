package odootest

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// hidden fields are the fake's own bookkeeping: never read, written or
// searched by clients.
var hidden = map[string]bool{"password": true, "bill_ids": true, "line_bill_ids": true, "link_ids": true}

var allowedKwargs = map[string][]string{
	"search_read":         {"domain", "fields", "limit", "offset", "order", "context", "load"},
	"read":                {"fields", "context", "load"},
	"search":              {"limit", "offset", "order", "context", "count"},
	"search_count":        {"context", "limit"},
	"create":              {"context"},
	"write":               {"context"},
	"unlink":              {"context"},
	"check_access_rights": {"raise_exception", "context"},
	"web_save":            {"specification", "next_id", "context"},
	"message_post":        {"body", "message_type", "subtype_xmlid", "context", "author_id", "email_from"},
}

func (d *db) call(modelName, method string, args []any, kw map[string]any) (any, *fault) {
	m := d.models[modelName]
	if m == nil {
		return nil, userError(fmt.Sprintf("Object %s doesn't exist", modelName))
	}
	if strings.HasPrefix(method, "_") {
		return nil, &fault{4, fmt.Sprintf("Private methods (such as %s) cannot be called remotely.", method)}
	}
	if ok, known := allowedKwargs[method]; known {
		for k := range kw {
			if !slices.Contains(ok, k) {
				return nil, traceback(fmt.Sprintf("TypeError: %s() got an unexpected keyword argument '%s'", method, k))
			}
		}
	}
	ctx, _ := kw["context"].(map[string]any)
	if ctx == nil {
		ctx = map[string]any{}
	}
	companies, f := d.companies(ctx)
	if f != nil {
		return nil, f
	}
	q := &request{m: m, method: method, args: args, kw: kw, ctx: ctx, companies: companies}
	switch method {
	case "search_read", "search", "search_count":
		return d.rpcSearch(q)
	case "read":
		return d.rpcRead(q)
	case "create":
		return d.rpcCreate(q)
	case "write":
		return d.rpcWrite(q)
	case "unlink":
		return d.rpcUnlink(q)
	case "check_access_rights":
		return d.rpcCheckAccessRights(q)
	case "web_save":
		return d.rpcWebSave(q)
	}
	return d.special(m, method, args, kw, ctx, companies)
}

// request is one call of an ORM method on a model, its keyword arguments
// checked, with the context and the companies it may see.
type request struct {
	m         *model
	method    string
	args      []any
	kw        map[string]any
	ctx       map[string]any
	companies []int64
}

// arg returns the i-th positional argument, nil if there is none.
func (q *request) arg(i int) any {
	if i < len(q.args) {
		return q.args[i]
	}
	return nil
}

// accessibleIDs checks the access right op ('r', 'w', 'c' or 'u') on the
// request's model, then returns the ids of its first argument.
func (d *db) accessibleIDs(q *request, op byte) ([]int64, *fault) {
	if f := d.checkAccess(q.m, op); f != nil {
		return nil, f
	}
	return idList(q.arg(0))
}

// rpcSearch answers search_read, search and search_count: the domain
// (positional or keyword), then order (only "desc" is heeded), offset and
// limit.
func (d *db) rpcSearch(q *request) (any, *fault) {
	m, kw := q.m, q.kw
	if f := d.checkAccess(m, 'r'); f != nil {
		return nil, f
	}
	domain := q.arg(0)
	if domain == nil {
		domain = kw["domain"]
	}
	if domain == nil {
		domain = []any{}
	}
	dl, ok := domain.([]any)
	if !ok {
		return nil, traceback("AssertionError: Domains to normalize must have a 'domain' form: a list or tuple of domain components")
	}
	// In id order (no order asked), a page stops at its last record, as
	// PostgreSQL's scan of the primary key does.
	enough := 0
	if o := str(kw["order"]); (o == "" || o == "id" || o == "id asc") && q.method != "search_count" {
		if lim, ok := kw["limit"].(int64); ok && lim > 0 {
			off, _ := kw["offset"].(int64)
			enough = int(lim + max(off, 0))
		}
	}
	recs, f := d.searchN(m, dl, q.ctx, q.companies, enough)
	if f != nil {
		return nil, f
	}
	if f := d.order(m, recs, str(kw["order"])); f != nil {
		return nil, f
	}
	if off, ok := kw["offset"].(int64); ok && off > 0 {
		recs = recs[min(int(off), len(recs)):]
	}
	if lim, ok := kw["limit"].(int64); ok && lim > 0 {
		recs = recs[:min(int(lim), len(recs))]
	}
	switch q.method {
	case "search_count":
		return int64(len(recs)), nil
	case "search":
		ids := make([]any, len(recs))
		for i, r := range recs {
			ids[i] = r.id()
		}
		return ids, nil
	}
	return d.render(m, recs, kw["fields"], kw["load"])
}

// rpcRead answers read: the records of the ids that exist, refused if one of
// them is another company's.
func (d *db) rpcRead(q *request) (any, *fault) {
	m := q.m
	ids, f := d.accessibleIDs(q, 'r')
	if f != nil {
		return nil, f
	}
	fields := q.arg(1)
	if fields == nil {
		fields = q.kw["fields"]
	}
	var recs []rec
	for _, id := range ids {
		if r, ok := d.tables[m.name][id]; ok {
			if !d.visible(m, r, q.companies) {
				return nil, &fault{4, fmt.Sprintf("Due to security restrictions, you are not allowed to access '%s' (%s) records.", m.desc, m.name)}
			}
			recs = append(recs, r)
		}
	}
	return d.render(m, recs, fields, q.kw["load"])
}

// rpcCreate answers create, of one record (a dict: its id) or of
// several (a list of dicts: their ids).
func (d *db) rpcCreate(q *request) (any, *fault) {
	m := q.m
	if vals, ok := q.arg(0).(map[string]any); ok {
		if f := d.archivedTwin(m, vals); f != nil {
			return nil, f
		}
	}
	if f := d.checkAccess(m, 'c'); f != nil {
		return nil, f
	}
	switch v := q.arg(0).(type) {
	case map[string]any:
		return d.create(m, v, q.ctx)
	case []any:
		out := []any{}
		for _, x := range v {
			vals, ok := x.(map[string]any)
			if !ok {
				return nil, traceback("ValueError: dictionary update sequence element #0 has length 1; 2 is required")
			}
			id, f := d.create(m, vals, q.ctx)
			if f != nil {
				return nil, f
			}
			out = append(out, id)
		}
		return out, nil
	}
	return nil, traceback("TypeError: create() missing 1 required positional argument: 'vals_list'")
}

// idsAndVals returns the ids and the values of a write or web_save: its
// first two positional arguments.
func idsAndVals(q *request) ([]int64, map[string]any, *fault) {
	ids, f := idList(q.arg(0))
	if f != nil {
		return nil, nil, f
	}
	vals, ok := q.arg(1).(map[string]any)
	if !ok {
		return nil, nil, traceback(fmt.Sprintf("TypeError: %s() missing 1 required positional argument: 'vals'", q.method))
	}
	return ids, vals, nil
}

// rpcWebSave answers web_save (the web module, Odoo 17 on): a create of
// vals (no ids) or their write, then web_read of the records by the
// specification (see webRead).
func (d *db) rpcWebSave(q *request) (any, *fault) {
	ids, vals, f := idsAndVals(q)
	if f != nil {
		return nil, f
	}
	spec, ok := q.kw["specification"].(map[string]any)
	if !ok {
		if spec, ok = q.arg(2).(map[string]any); !ok {
			return nil, traceback("TypeError: web_save() missing 1 required positional argument: 'specification'")
		}
	}
	if len(ids) == 0 {
		v, f := d.rpcCreate(&request{m: q.m, method: "create", args: []any{vals}, kw: map[string]any{}, ctx: q.ctx, companies: q.companies})
		if f != nil {
			return nil, f
		}
		ids = []int64{v.(int64)}
	} else if _, f := d.rpcWrite(&request{m: q.m, method: "write", args: []any{toAny(ids), vals}, kw: map[string]any{}, ctx: q.ctx, companies: q.companies}); f != nil {
		return nil, f
	}
	out := []any{}
	for _, id := range ids {
		row, f := d.webRead(q.m, d.tables[q.m.name][id], spec)
		if f != nil {
			return nil, f
		}
		out = append(out, row)
	}
	return out, nil
}

// webRead renders r as web_read does by spec: each field named as read
// gives it, a many2one as its id (or False), or, with "fields" in its
// spec, as the related record so rendered. The payment wizard's line_ids
// (the fake keeps the wizard's bills, not their lines) is one line per
// bill, its line on the payable account, whose move_id is the bill.
func (d *db) webRead(m *model, r rec, spec map[string]any) (map[string]any, *fault) {
	row := map[string]any{"id": r.id()}
	for name, x := range spec {
		sub, _ := x.(map[string]any)
		nested, _ := sub["fields"].(map[string]any)
		if m.name == "account.payment.register" && name == "line_ids" {
			lines := []any{}
			for _, bid := range r.ids("line_bill_ids") {
				b := d.tables["account.move"][bid]
				line := map[string]any{"id": b["_payable_line"]}
				if mv, ok := nested["move_id"].(map[string]any); ok {
					fs, _ := mv["fields"].(map[string]any)
					v, f := d.webRead(d.models["account.move"], b, fs)
					if f != nil {
						return nil, f
					}
					line["move_id"] = v
				}
				lines = append(lines, line)
			}
			row[name] = lines
			continue
		}
		fl := m.fields[name]
		if fl == nil || hidden[name] {
			return nil, d.invalidField(name, m.name, false)
		}
		v := d.value(m, name, r)
		if pair, ok := v.([]any); ok && fl.typ == tM2O {
			v = pair[0]
			if nested != nil {
				if v, f := d.webRead(d.models[fl.comodel], d.tables[fl.comodel][pair[0].(int64)], nested); f != nil {
					return nil, f
				} else {
					row[name] = v
				}
				continue
			}
		}
		row[name] = v
	}
	return row, nil
}

// rpcWrite answers write: every id must exist and be visible before
// any record changes.
func (d *db) rpcWrite(q *request) (any, *fault) {
	m := q.m
	ids, vals, f := idsAndVals(q)
	if f != nil {
		return nil, f
	}
	if m.name == "res.partner.bank" {
		if f := d.bankWriteChecks(ids, vals); f != nil {
			return nil, f
		}
	}
	if f := d.checkAccess(m, 'w'); f != nil {
		return nil, f
	}
	for _, id := range ids {
		r, ok := d.tables[m.name][id]
		if !ok || !d.visible(m, r, q.companies) {
			return nil, missing(m.name, ids, d.uid)
		}
	}
	for _, id := range ids {
		if f := d.write(m, d.own(m.name, id), vals); f != nil {
			return nil, f
		}
	}
	return true, nil
}

// rpcUnlink answers unlink: every id must exist before any is deleted.
func (d *db) rpcUnlink(q *request) (any, *fault) {
	m := q.m
	ids, f := d.accessibleIDs(q, 'u')
	if f != nil {
		return nil, f
	}
	for _, id := range ids {
		if _, ok := d.tables[m.name][id]; !ok {
			return nil, missing(m.name, ids, d.uid)
		}
	}
	for _, id := range ids {
		if m.name == "res.partner.bank" && d.major >= 18 {
			// From 18, account archives a bank account instead of deleting it.
			d.tables[m.name][id]["active"] = false
			continue
		}
		delete(d.tables[m.name], id)
	}
	return true, nil
}

// archivedTwin is 18's and 19's refusal to create a bank account whose
// acc_number an archived account of the same partner has, checked before
// the access rights.
func (d *db) archivedTwin(m *model, vals map[string]any) *fault {
	if m.name != "res.partner.bank" || d.major < 18 {
		return nil
	}
	partner, _ := vals["partner_id"].(int64)
	number, _ := vals["acc_number"].(string)
	for _, a := range d.sorted(m.name) {
		if partner != 0 && number != "" && !a.boolean("active") && a.m2o("partner_id") == partner && a.str("acc_number") == number {
			return userError(fmt.Sprintf("A bank account with Account Number %s already exists for Partner %s, but is archived. Please unarchive it instead.",
				number, d.tables["res.partner"][partner].str("name")))
		}
	}
	return nil
}

// rpcCheckAccessRights answers check_access_rights: the fault of a missing
// right, or false instead when raise_exception is false.
func (d *db) rpcCheckAccessRights(q *request) (any, *fault) {
	op := map[string]byte{"read": 'r', "write": 'w', "create": 'c', "unlink": 'u'}[str(q.arg(0))]
	f := d.checkAccess(q.m, op)
	if raise, ok := q.kw["raise_exception"].(bool); ok && !raise {
		return f == nil, nil
	}
	if f != nil {
		return nil, f
	}
	return true, nil
}

func idList(v any) ([]int64, *fault) {
	switch x := v.(type) {
	case int64:
		return []int64{x}, nil
	case []any:
		out := make([]int64, 0, len(x))
		for _, e := range x {
			id, ok := e.(int64)
			if !ok {
				return nil, traceback(fmt.Sprintf("TypeError: unhashable or bad id %v", e))
			}
			out = append(out, id)
		}
		return out, nil
	}
	return nil, traceback("TypeError: missing ids")
}

// searchN returns the records matching domain that the call may see,
// archived ones only with active_test False or a leaf on active,
// stopping at the first enough records found (in id order) when enough
// is above zero.
func (d *db) searchN(m *model, domain []any, ctx map[string]any, companies []int64, enough int) ([]rec, *fault) {
	activeTest := true
	if v, ok := ctx["active_test"].(bool); ok && !v {
		activeTest = false
	}
	_, hasActive := m.fields["active"]
	for _, t := range domain {
		if l, ok := t.([]any); ok && len(l) == 3 && l[0] == "active" {
			activeTest = false
		}
	}
	// The domain is parsed once and its conjuncts of id or partner narrow
	// the records through an index; the first record visited is matched
	// leaf by leaf (match), so that a bad leaf anywhere faults as in Odoo.
	root, parsed := parse(domain)
	recs := d.sorted(m.name)
	if parsed {
		recs = d.candidates(m, root)
	}
	var out []rec
	first := true
	for _, r := range recs {
		if hasActive && activeTest && !r.boolean("active") {
			continue
		}
		if !d.visible(m, r, companies) {
			continue
		}
		var ok bool
		var f *fault
		if first || !parsed {
			ok, f = d.match(m, r, domain)
		} else {
			ok, f = d.eval(m, r, root)
		}
		first = false
		if f != nil {
			return nil, f
		}
		if ok {
			out = append(out, r)
			if enough > 0 && len(out) == enough {
				break
			}
		}
	}
	return out, nil
}

// render gives the fields of recs as read answers them (all but the
// hidden ones if fields is not a list). load is the keyword of read and
// search_read (Odoo's read_kwargs): absent or "_classic_read" gives each
// many2one as a pair (id, display name); anything else (the documented
// "") its id alone, and Odoo then computes no display name.
func (d *db) render(m *model, recs []rec, fields, load any) (any, *fault) {
	pairs := load == nil || load == "_classic_read"
	var names []string
	switch x := fields.(type) {
	case []any:
		for _, n := range x {
			s, _ := n.(string)
			if _, ok := m.fields[s]; (!ok || hidden[s]) && s != "id" {
				return nil, d.invalidField(s, m.name, false)
			}
			names = append(names, s)
		}
	default:
		for n := range m.fields {
			if !hidden[n] {
				names = append(names, n)
			}
		}
	}
	out := []any{}
	for _, r := range recs {
		row := map[string]any{"id": r.id()}
		for _, n := range names {
			row[n] = d.value(m, n, r)
			if pair, ok := row[n].([]any); ok && !pairs && m.fields[n] != nil && m.fields[n].typ == tM2O {
				row[n] = pair[0]
			}
		}
		out = append(out, row)
	}
	return out, nil
}

// set converts and stores vals on r, checking fields and foreign keys.
func (d *db) set(m *model, r rec, vals map[string]any) *fault {
	for k, v := range vals {
		fl := m.fields[k]
		if fl == nil || hidden[k] && m.name != "res.users" {
			return d.invalidField(k, m.name, true)
		}
		if fl.computed != nil {
			continue // Odoo ignores a value for a computed field without inverse
		}
		switch fl.typ {
		case tChar, tDate, tDatetime:
			switch x := v.(type) {
			case string:
				r[k] = x
			case bool, nil:
				r[k] = ""
			default:
				r[k] = fmt.Sprint(x)
			}
		case tInt:
			switch x := v.(type) {
			case int64:
				r[k] = x
			case float64:
				r[k] = int64(x)
			default:
				r[k] = int64(0)
			}
		case tFloat:
			switch x := v.(type) {
			case int64:
				r[k] = float64(x)
			case float64:
				r[k] = x
			default:
				r[k] = 0.0
			}
		case tBool:
			b, _ := v.(bool)
			if n, ok := v.(int64); ok {
				b = n != 0
			}
			r[k] = b
		case tM2O:
			id, _ := v.(int64)
			if id != 0 {
				if _, ok := d.tables[fl.comodel][id]; !ok {
					if d.major >= 19 {
						return userError(fmt.Sprintf("The operation cannot be completed: Another model is using the record you are trying to delete.\n\nThe troublemaker is: '%s' (%s)\nThanks to the following constraint: '%s' (%s)\n",
							m.desc, m.name, fl.label, k))
					}
					return userError(fmt.Sprintf("The operation cannot be completed: another model requires the record being deleted. If possible, archive it instead.\n\nModel: %s (%s)\nConstraint: %s_%s_fkey\n",
						m.desc, m.name, strings.ReplaceAll(m.name, ".", "_"), k))
				}
			}
			r[k] = id
		case tX2M:
			ids := r.ids(k)
			cmds, _ := v.([]any)
			for _, c := range cmds {
				cmd, _ := c.([]any)
				if len(cmd) == 0 {
					return traceback("ValueError: bad x2many command")
				}
				op, _ := cmd[0].(int64)
				switch op {
				case 6:
					ids = nil
					if len(cmd) == 3 {
						l, _ := idList(cmd[2])
						ids = l
					}
				case 4:
					if id, ok := cmd[1].(int64); ok && !slices.Contains(ids, id) {
						ids = append(ids, id)
					}
				case 3:
					if id, ok := cmd[1].(int64); ok {
						ids = slices.DeleteFunc(ids, func(x int64) bool { return x == id })
					}
				case 5:
					ids = nil
				case 0:
					if k != "invoice_line_ids" || len(cmd) != 3 {
						return traceback("ValueError: create command on " + k)
					}
					line, _ := cmd[2].(map[string]any)
					q, p := asNum(line["quantity"]), asNum(line["price_unit"])
					if _, ok := line["quantity"]; !ok {
						q = 1
					}
					r["_lines_total"] = r.num("_lines_total") + q*p
				}
			}
			if ids == nil {
				ids = []int64{}
			}
			r[k] = ids
		}
	}
	return nil
}

// invalidField is fault 1 for a field the model does not have: "on
// model 'm'" until 18; 19 says "on 'm'" for a read and "in 'm'" for a
// create or write.
func (d *db) invalidField(name, model string, writing bool) *fault {
	switch {
	case d.major >= 19 && writing:
		return traceback(fmt.Sprintf("ValueError: Invalid field '%s' in '%s'", name, model))
	case d.major >= 19:
		return traceback(fmt.Sprintf("ValueError: Invalid field '%s' on '%s'", name, model))
	}
	return traceback(fmt.Sprintf("ValueError: Invalid field '%s' on model '%s'", name, model))
}

func asNum(v any) float64 {
	x, _ := asFloat(v)
	return x
}

func (d *db) create(m *model, vals map[string]any, ctx map[string]any) (any, *fault) {
	r := emptyRecord(m)
	if f := d.beforeCreate(m, r, vals, ctx); f != nil {
		return nil, f
	}
	if f := d.set(m, r, vals); f != nil {
		return nil, f
	}
	if f := d.missingRequired(m, r); f != nil {
		return nil, f
	}
	if f := d.afterCreate(m, r, ctx); f != nil {
		return nil, f
	}
	id := d.insert(m.name, r)
	if f := d.created(m, r, ctx); f != nil {
		return nil, f
	}
	return id, nil
}

// emptyRecord is a new record of m before its values are set: every
// stored field (not computed, not the create and write stamps) at its
// type's zero, and active true when m has the field.
func emptyRecord(m *model) rec {
	r := rec{}
	for n, fl := range m.fields {
		if fl.computed != nil || n == "create_date" || n == "write_date" || n == "create_uid" || n == "write_uid" {
			continue
		}
		switch fl.typ {
		case tChar, tDate, tDatetime:
			r[n] = ""
		case tInt, tM2O:
			r[n] = int64(0)
		case tFloat:
			r[n] = 0.0
		case tBool:
			r[n] = false
		case tX2M:
			r[n] = []int64{}
		}
	}
	if _, ok := m.fields["active"]; ok {
		r["active"] = true
	}
	return r
}

// missingRequired is Odoo's user error for a required field of m that r
// leaves empty ("" or 0), naming the field by its label; nil when none is.
func (d *db) missingRequired(m *model, r rec) *fault {
	for n, fl := range m.fields {
		if fl.required && r[n] == "" || fl.required && r[n] == int64(0) {
			label := fl.label
			if label == "" {
				label = n
			}
			if d.major >= 19 {
				return userError(fmt.Sprintf("The operation cannot be completed: Missing required value for the field '%s' (%s).\nModel: '%s' (%s)\n", label, n, m.desc, m.name))
			}
			return userError(fmt.Sprintf("The operation cannot be completed:\n- Create/update: a mandatory field is not set.\n- Delete: another model requires the record being deleted. If possible, archive it instead.\n\nModel: %s (%s)\nField: %s (%s)\n", m.desc, m.name, label, n))
		}
	}
	return nil
}

// bankTracked are the fields of res.partner.bank that account tracks.
var bankTracked = []string{"bank_id", "active", "acc_number", "acc_holder_name", "partner_id", "allow_out_payment", "currency_id"}

func (d *db) write(m *model, r rec, vals map[string]any) *fault {
	if cur, ok := vals["currency_id"]; ok && m.name == "res.company" && cur != r["currency_id"] {
		for _, mv := range d.tables["account.move"] {
			if mv.m2o("company_id") == r.id() {
				return userError("You cannot change the currency of the company since some journal items already exist")
			}
		}
	}
	if _, ok := vals["invoice_line_ids"]; ok && m.name == "account.move" && r.str("state") == "posted" && d.major >= 18 {
		return userError("You cannot modify the following readonly fields on a posted move: invoice_line_ids")
	}
	var was rec
	if m.name == "res.partner.bank" {
		was = r.clone()
	}
	if f := d.set(m, r, vals); f != nil {
		return f
	}
	if m.name == "res.partner.bank" {
		r["sanitized_acc_number"] = sanitize(r.str("acc_number"))
		if f := d.uniqueAccount(r); f != nil {
			return f
		}
		// account logs a note only when a tracked field changed.
		for _, n := range bankTracked {
			if _, ok := vals[n]; ok && r[n] != was[n] {
				d.note(r.m2o("partner_id"), fmt.Sprintf("Bank Account #%d updated", r.id()))
				if p := was.m2o("partner_id"); p != r.m2o("partner_id") {
					d.note(p, fmt.Sprintf("Bank Account #%d updated", r.id()))
				}
				break
			}
		}
	}
	d.derive(m.name, r)
	if m.name == "account.payment" {
		d.syncPaymentMove(r)
	}
	// As Odoo's write does, every write stamps write_date with the
	// transaction's time, whether or not a value changed.
	r["write_date"] = d.now.Format("2006-01-02 15:04:05")
	r["write_uid"] = d.uid
	return nil
}

// note logs a message on a partner, as Odoo's _message_log does.
func (d *db) note(partner int64, body string) int64 {
	return d.insert("mail.message", rec{"model": "res.partner", "res_id": partner, "body": escapeBody(body), "message_type": "notification",
		"author_id": d.tables["res.users"][max(d.uid, 1)].m2o("partner_id")})
}

// order sorts recs (in id order) as Odoo's order spec says: fields, each
// optionally followed by asc or desc, separated by commas, then id. A
// many2one orders by the record's id, NULL last when ascending and first
// when descending (PostgreSQL's default); Odoo orders it by the comodel's
// _order, which gives the same order among one record and NULL, the case
// of the connector's reads. An unknown field is Odoo's ValueError.
func (d *db) order(m *model, recs []rec, spec string) *fault {
	type key struct {
		name string
		desc bool
	}
	var keys []key
	for _, part := range strings.Split(spec, ",") {
		w := strings.Fields(strings.ToLower(part))
		if len(w) == 0 {
			continue
		}
		if _, ok := m.fields[w[0]]; !ok && w[0] != "id" || len(w) > 2 || len(w) == 2 && w[1] != "asc" && w[1] != "desc" {
			return traceback(fmt.Sprintf("ValueError: Invalid order %q for model %s", spec, m.name))
		}
		keys = append(keys, key{w[0], len(w) == 2 && w[1] == "desc"})
	}
	slices.SortStableFunc(recs, func(a, b rec) int {
		for _, k := range keys {
			c := compareField(m, k.name, a, b)
			if k.desc {
				c = -c
			}
			if c != 0 {
				return c
			}
		}
		return 0
	})
	return nil
}

// compareField compares a and b by one field for order; a NULL many2one
// (0) is greater than any record.
func compareField(m *model, name string, a, b rec) int {
	if name == "id" {
		return cmp.Compare(a.id(), b.id())
	}
	switch m.fields[name].typ {
	case tM2O:
		x, y := a.m2o(name), b.m2o(name)
		switch {
		case x == y:
			return 0
		case x == 0:
			return 1
		case y == 0:
			return -1
		}
		return cmp.Compare(x, y)
	case tInt:
		x, _ := a[name].(int64)
		y, _ := b[name].(int64)
		return cmp.Compare(x, y)
	case tFloat:
		return cmp.Compare(a.num(name), b.num(name))
	case tBool:
		return cmp.Compare(boolInt(a.boolean(name)), boolInt(b.boolean(name)))
	}
	return strings.Compare(a.str(name), b.str(name))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
