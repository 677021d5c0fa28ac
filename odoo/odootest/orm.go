package odootest

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"unicode"
)

// fault is an XML-RPC fault as Odoo's /xmlrpc/2 gives it.
type fault struct {
	code int
	msg  string
}

func (f *fault) Error() string { return fmt.Sprintf("fault %d: %s", f.code, f.msg) }

// traceback is fault 1: a Python traceback ending in "Type: message".
func traceback(line string) *fault {
	return &fault{1, "Traceback (most recent call last):\n  File \"/odoo/odoo/service/server.py\", line 1, in dispatch\n    ...\n" + line + "\n"}
}

func userError(msg string) *fault { return &fault{2, msg} }

func missing(model string, ids []int64, uid int64) *fault {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = fmt.Sprint(id)
	}
	return userError(fmt.Sprintf("Record does not exist or has been deleted.\n(Record: %s(%s,), User: %d)", model, strings.Join(parts, ", "), uid))
}

// Field types.
const (
	tChar = iota
	tInt
	tFloat
	tBool
	tM2O
	tX2M
	tDate
	tDatetime
)

type field struct {
	typ      int
	comodel  string
	required bool
	// computed, if set, gives the value of a field that is not stored:
	// it cannot be searched (a leaf on it matches every record) and
	// cannot be written.
	computed func(d *db, r rec) any
	// o2m marks a computed x2many that is a one2many in Odoo, and so
	// searchable.
	o2m   bool
	label string
}

type model struct {
	name   string
	desc   string // "Bank Accounts"
	fields map[string]*field
	// rights maps a group's external id to the operations it allows:
	// r, w, c, u.
	rights map[string]string
	// module is the module that brings the model; "" means base.
	module string
}

// rec is a stored record: field name to value (int64 ids for many2one, 0
// for none; []int64 for x2many; "" for an empty char).
type rec map[string]any

func (r rec) id() int64 {
	id, _ := r["id"].(int64)
	return id
}

func (r rec) str(f string) string {
	s, _ := r[f].(string)
	return s
}

func (r rec) m2o(f string) int64 {
	n, _ := r[f].(int64)
	return n
}

func (r rec) num(f string) float64 {
	x, _ := r[f].(float64)
	return x
}

func (r rec) boolean(f string) bool {
	b, _ := r[f].(bool)
	return b
}

func (r rec) ids(f string) []int64 {
	l, _ := r[f].([]int64)
	return l
}

func (r rec) clone() rec {
	c := maps.Clone(r)
	for k, v := range c {
		if l, ok := v.([]int64); ok {
			c[k] = slices.Clone(l)
		}
	}
	return c
}

// sanitize is Odoo's sanitize_account_number: re.sub(r'\W+', ”, n).upper(),
// which keeps any Unicode letter or digit and the underscore, and folds
// as Python's str.upper does: a dotless ı becomes I, and ß and the
// ligatures become several letters (ß is SS, ﬁ is FI).
func sanitize(n string) string {
	var b strings.Builder
	for _, r := range n {
		if unicode.IsLetter(r) || unicode.IsNumber(r) || r == '_' {
			b.WriteRune(r)
		}
	}
	return pythonUpper.Replace(strings.ToUpper(b.String()))
}

// pythonUpper are the full case mappings of Python's str.upper that Go's
// strings.ToUpper (simple mappings) leaves alone.
var pythonUpper = strings.NewReplacer("ß", "SS", "ﬀ", "FF", "ﬁ", "FI", "ﬂ", "FL", "ﬃ", "FFI", "ﬄ", "FFL", "ﬅ", "ST", "ﬆ", "ST", "ŉ", "ʼN")

// leafError is fault 1 for a bad domain leaf.
func invalidLeaf(l []any) *fault {
	return traceback(fmt.Sprintf("ValueError: Invalid leaf %s", pyRepr(l)))
}

func pyRepr(v any) string {
	switch x := v.(type) {
	case string:
		return "'" + x + "'"
	case bool:
		if x {
			return "True"
		}
		return "False"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = pyRepr(e)
		}
		return "(" + strings.Join(parts, ", ") + ")"
	}
	return fmt.Sprint(v)
}

// match evaluates a domain (Polish notation, implicit and) on r.
func (d *db) match(m *model, r rec, domain []any) (bool, *fault) {
	pos := 0
	var eval func() (bool, *fault)
	eval = func() (bool, *fault) {
		if pos >= len(domain) {
			return true, nil
		}
		t := domain[pos]
		pos++
		switch op := t.(type) {
		case string:
			switch op {
			case "&", "|":
				a, f := eval()
				if f != nil {
					return false, f
				}
				b, f := eval()
				if f != nil {
					return false, f
				}
				if op == "&" {
					return a && b, nil
				}
				return a || b, nil
			case "!":
				a, f := eval()
				return !a, f
			}
			return false, traceback("ValueError: Invalid leaf " + op)
		case []any:
			return d.leaf(m, r, op)
		}
		return false, traceback("AssertionError: Domains to normalize must have a 'domain' form: a list or tuple of domain components")
	}
	ok := true
	for pos < len(domain) {
		v, f := eval()
		if f != nil {
			return false, f
		}
		ok = ok && v
	}
	return ok, nil
}

func (d *db) leaf(m *model, r rec, l []any) (bool, *fault) {
	if len(l) != 3 {
		return false, invalidLeaf(l)
	}
	path, ok1 := l[0].(string)
	op, ok2 := l[1].(string)
	if !ok1 || !ok2 {
		return false, invalidLeaf(l)
	}
	switch op {
	case "=", "!=", "<", ">", "<=", ">=", "in", "not in", "like", "ilike", "not ilike", "=like", "=ilike", "child_of", "parent_of":
	default:
		return false, invalidLeaf(l)
	}
	name, rest, _ := strings.Cut(path, ".")
	if name == "id" {
		return compare(r.id(), op, l[2]), nil
	}
	f := m.fields[name]
	if f == nil {
		if d.major >= 19 {
			return false, traceback(fmt.Sprintf("ValueError: Invalid field %s.%s in condition %s", m.name, name, pyRepr(l)))
		}
		return false, traceback(fmt.Sprintf("ValueError: Invalid field %s.%s in leaf %s", m.name, name, pyRepr(l)))
	}
	if f.computed != nil && !f.o2m {
		// Odoo logs "Non-stored field ... cannot be searched." and the leaf
		// matches every record.
		return true, nil
	}
	value := l[2]
	if f.typ == tX2M && (rest != "" || f.computed != nil) {
		ids := r.ids(name)
		if f.computed != nil {
			ids, _ = f.computed(d, r).([]int64)
		}
		if rest == "" {
			rest = "id"
		}
		co := d.models[f.comodel]
		for _, id := range ids {
			if target, ok := d.tables[f.comodel][id]; ok {
				if ok, fl := d.leaf(co, target, []any{rest, op, value}); fl != nil || ok {
					return ok, fl
				}
			}
		}
		return false, nil
	}
	if rest != "" {
		if f.typ != tM2O {
			return false, invalidLeaf(l)
		}
		co := d.models[f.comodel]
		target, ok := d.tables[f.comodel][r.m2o(name)]
		if !ok {
			return op == "=" && value == false, nil
		}
		return d.leaf(co, target, []any{rest, op, value})
	}
	if m.name == "res.partner.bank" && name == "acc_number" && (op == "=" || op == "ilike") {
		// Odoo searches the sanitized form.
		name = "sanitized_acc_number"
		if s, ok := value.(string); ok {
			value = sanitize(s)
		}
	}
	v := r[name]
	switch f.typ {
	case tM2O:
		return compare(r.m2o(name), op, value), nil
	case tX2M:
		ids := r.ids(name)
		for _, id := range ids {
			if compare(id, op, value) {
				return true, nil
			}
		}
		return false, nil
	}
	return compare(v, op, value), nil
}

// compare applies op to a stored value and a domain value.
func compare(v any, op string, w any) bool {
	switch op {
	case "in", "not in":
		list, _ := w.([]any)
		in := false
		for _, e := range list {
			in = in || equal(v, e)
		}
		return in == (op == "in")
	case "=":
		return equal(v, w)
	case "!=":
		return !equal(v, w)
	case "like", "ilike", "not ilike", "=like", "=ilike":
		s, _ := v.(string)
		p, _ := w.(string)
		ci := strings.Contains(op, "ilike")
		if ci && !isASCII(s+p) {
			s, p = strings.ToLower(s), strings.ToLower(p)
		}
		ok := likeFold(s, p, !strings.HasPrefix(op, "="), ci)
		if op == "not ilike" {
			return !ok
		}
		return ok
	}
	a, okA := asFloat(v)
	b, okB := asFloat(w)
	if !okA || !okB {
		sa, _ := v.(string)
		sb, _ := w.(string)
		switch op {
		case "<":
			return sa < sb
		case ">":
			return sa > sb
		case "<=":
			return sa <= sb
		case ">=":
			return sa >= sb
		}
		return false
	}
	switch op {
	case "<":
		return a < b
	case ">":
		return a > b
	case "<=":
		return a <= b
	case ">=":
		return a >= b
	}
	return false
}

func asFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

func equal(v, w any) bool {
	if w == false || w == nil {
		switch x := v.(type) {
		case int64:
			return x == 0
		case string:
			return x == ""
		case bool:
			return !x
		case float64:
			return false
		}
		return v == nil
	}
	if a, ok := asFloat(v); ok {
		b, ok := asFloat(w)
		return ok && a == b
	}
	return v == w
}

// likeFold is like(s, p), with p inside % when contains (Odoo's like and
// ilike), ASCII case ignored when fold (ilike; a caller folds other
// case itself); it allocates nothing for an ASCII s and p.
func likeFold(s, p string, contains, fold bool) bool {
	if contains {
		p = "%" + p + "%"
	}
	return like(s, p, fold)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// like matches s against a SQL LIKE pattern (% and _) in time linear in
// their lengths, as PostgreSQL does (never backtracking through every way
// the wildcards could split s): the pieces between % are matched leftmost
// in order, the first anchored at the start and the last at the end
// unless the pattern begins or ends with %.
func like(s, p string, fold bool) bool {
	pieces := strings.Split(p, "%")
	if len(pieces) == 1 {
		return len(s) == len(p) && piece(s, p, fold)
	}
	first, last := pieces[0], pieces[len(pieces)-1]
	if len(s) < len(first)+len(last) || !piece(s[:len(first)], first, fold) || !piece(s[len(s)-len(last):], last, fold) {
		return false
	}
	rest := s[len(first) : len(s)-len(last)]
	for _, q := range pieces[1 : len(pieces)-1] {
		i := index(rest, q, fold)
		if i < 0 {
			return false
		}
		rest = rest[i+len(q):]
	}
	return true
}

// piece reports whether s, as long as q, matches q, a pattern without %
// in which _ stands for any one character; ASCII case aside if fold.
func piece(s, q string, fold bool) bool {
	for i := 0; i < len(q); i++ {
		a, b := s[i], q[i]
		if fold {
			a, b = lower(a), lower(b)
		}
		if b != '_' && a != b {
			return false
		}
	}
	return true
}

func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// index is the first place in s where the %-free pattern q matches, or
// -1.
func index(s, q string, fold bool) int {
	for i := 0; i+len(q) <= len(s); i++ {
		if piece(s[i:i+len(q)], q, fold) {
			return i
		}
	}
	return -1
}

// roundTo rounds an amount to a currency's decimal places.
func roundTo(x float64, decimals int64) float64 {
	p := math.Pow10(int(decimals))
	return math.Round(x*p) / p
}
