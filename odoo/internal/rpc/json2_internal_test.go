package rpc

import (
	"errors"
	"go/ast"
	"go/parser"
	"go/token"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestEveryCallHasASignature walks every call made in the source of
// this package, the connector (package odoo) and its provisioning
// (Execute, exec, done, create, write, SearchRead with a literal method)
// and checks that JSON-2 can name its arguments: a method missing from
// signatures would only fail when called on an Odoo 19.
func TestEveryCallHasASignature(t *testing.T) {
	t.Parallel()
	var files []string
	for _, dir := range []string{".", "../..", "../../provision"} {
		fs, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, fs...)
	}
	fset := token.NewFileSet()
	seen := map[string]string{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			method := ""
			switch sel.Sel.Name {
			case "Execute", "exec", "done":
				if len(call.Args) < 3 {
					return true
				}
				if id, ok := call.Args[2].(*ast.Ident); ok && id.Name == "method" {
					return true // a pass-through (Admin.exec, Admin.done): its callers are walked
				}
				lit, ok := call.Args[2].(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					t.Errorf("%s: %s with a method that is not a literal: add it to this test", fset.Position(call.Pos()), sel.Sel.Name)
					return true
				}
				method, _ = strconv.Unquote(lit.Value)
			case "create", "write":
				if x, ok := sel.X.(*ast.Ident); ok && x.Name == "a" { // Admin.create, Admin.write
					method = sel.Sel.Name
				}
			case "SearchRead":
				method = "search_read"
			case "callJSON2":
				if lit, ok := call.Args[3].(*ast.BasicLit); ok {
					method, _ = strconv.Unquote(lit.Value)
				}
			}
			if method != "" {
				seen[method] = fset.Position(call.Pos()).String()
			}
			return true
		})
	}
	if len(seen) < 10 {
		t.Fatalf("found only %d methods: %v", len(seen), seen)
	}
	for m, at := range seen {
		if _, ok := signatures[m]; !ok {
			t.Errorf("%s: %s has no JSON-2 signature (json2.go signatures)", at, m)
		}
	}
	for m := range signatures {
		if _, ok := seen[m]; !ok {
			t.Errorf("signatures names %s, which the connector never calls", m)
		}
	}
}

// TestNamed: the translation of execute_kw's positional arguments.
func TestNamed(t *testing.T) {
	t.Parallel()
	domain := []any{[]any{"id", "=", int64(1)}}
	for _, tc := range []struct {
		name   string
		method string
		args   []any
		kw     map[string]any
		want   map[string]any
		one    bool
		err    bool
	}{
		{"search_read", "search_read", []any{domain}, map[string]any{"fields": []any{"name"}, "load": "", "order": "id", "context": map[string]any{"active_test": false}},
			map[string]any{"domain": domain, "fields": []any{"name"}, "load": "", "order": "id", "context": map[string]any{"active_test": false}}, false, false},
		{"search", "search", []any{[]any{}}, map[string]any{"limit": 1}, map[string]any{"domain": []any{}, "limit": 1}, false, false},
		{"read", "read", []any{[]any{int64(3)}}, map[string]any{"fields": []any{"tz"}}, map[string]any{"ids": []any{int64(3)}, "fields": []any{"tz"}}, false, false},
		{"read, fields positional", "read", []any{[]any{int64(3)}, []any{"tz"}}, nil, map[string]any{"ids": []any{int64(3)}, "fields": []any{"tz"}}, false, false},
		{"create one", "create", []any{map[string]any{"name": "x"}}, nil, map[string]any{"vals_list": map[string]any{"name": "x"}}, true, false},
		{"create several", "create", []any{[]any{map[string]any{"name": "x"}}}, nil, map[string]any{"vals_list": []any{map[string]any{"name": "x"}}}, false, false},
		{"write", "write", []any{[]any{int64(1)}, map[string]any{"name": "y"}}, nil, map[string]any{"ids": []any{int64(1)}, "vals": map[string]any{"name": "y"}}, false, false},
		{"action_post", "action_post", []any{[]any{int64(1)}}, nil, map[string]any{"ids": []any{int64(1)}}, false, false},
		{"message_post", "message_post", []any{[]any{int64(1)}}, map[string]any{"body": "b"}, map[string]any{"ids": []any{int64(1)}, "body": "b"}, false, false},
		{"js_assign_outstanding_line", "js_assign_outstanding_line", []any{[]any{int64(1)}, int64(9)}, nil, map[string]any{"ids": []any{int64(1)}, "line_id": int64(9)}, false, false},
		{"try_loading", "try_loading", []any{[]any{}, "generic_coa", int64(2), false}, nil,
			map[string]any{"ids": []any{}, "template_code": "generic_coa", "company": int64(2), "install_demo": false}, false, false},
		{"unknown method", "name_get", []any{[]any{int64(1)}}, nil, nil, false, true},
		{"too many arguments", "unlink", []any{[]any{int64(1)}, "x"}, nil, nil, false, true},
		{"an argument twice", "search", []any{[]any{}}, map[string]any{"domain": []any{}}, nil, false, true},
	} {
		got, one, err := named(tc.method, tc.args, tc.kw)
		if (err != nil) != tc.err || one != tc.one {
			t.Errorf("%s: one %v, error %v", tc.name, one, err)
			continue
		}
		if err != nil && !errors.Is(err, errUnknownMethod) {
			t.Errorf("%s: %v, want errUnknownMethod", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, got); err == nil && diff != "" {
			t.Errorf("%s (-want, +got):\n%s", tc.name, diff)
		}
	}
}

// TestDecodeJSON: numbers reach the decoders as XML-RPC gives them, never
// rounded.
func TestDecodeJSON(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		in   string
		want any
		err  bool
	}{
		{`[{"id": 9007199254740993, "amount_total": 125.0, "rate": 1.5e-7, "x": -3, "partner_id": [6, "ACME"], "email": false}]`,
			[]any{map[string]any{"id": int64(9007199254740993), "amount_total": 125.0, "rate": 1.5e-7, "x": int64(-3), "partner_id": []any{int64(6), "ACME"}, "email": false}}, false},
		{`null`, nil, false},
		{`false`, false, false},
		{`[6]`, []any{int64(6)}, false},
		{`9223372036854775807`, int64(math.MaxInt64), false},
		{`9223372036854775808`, nil, true}, // beyond int64: an error, not a float
		{`NaN`, nil, true},
		{`[1] [2]`, nil, true},
		{`<!DOCTYPE html>`, nil, true},
		{``, nil, true},
	} {
		got, err := decodeJSON([]byte(tc.in))
		if (err != nil) != tc.err || (err != nil && !errors.Is(err, ErrBadAnswer)) {
			t.Errorf("%.40s: error %v", tc.in, err)
			continue
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%.40s (-want, +got):\n%s", tc.in, diff)
		}
	}
}

// TestJSON2Faults: each error answer of odoo18-19-api.md §3 maps onto the
// sentinel the same failure gives over XML-RPC.
func TestJSON2Faults(t *testing.T) {
	t.Parallel()
	body := func(name, msg string) []byte {
		return []byte(`{"name": "` + name + `", "message": ` + strconv.Quote(msg) + `, "arguments": [], "context": {}, "debug": "Traceback (most recent call last):\n  File \"/opt/odoo/odoo/http.py\""}`)
	}
	all := []error{ErrUser, ErrMissing, ErrAccess, ErrAccessDenied, ErrKeyRefused, ErrServer}
	for _, tc := range []struct {
		name   string
		status int
		ctype  string
		body   []byte
		want   []error // and none of the others in all
		code   int
	}{
		{"UserError", 422, "application/json", body("odoo.exceptions.UserError", "The Bill/Refund date is required"), []error{ErrUser}, 2},
		{"ValidationError", 422, "application/json", body("odoo.exceptions.ValidationError", "The operation cannot be completed"), []error{ErrUser}, 2},
		{"AccessError", 403, "application/json", body("odoo.exceptions.AccessError", "You are not allowed to access 'Journal Entry'"), []error{ErrAccess}, 4},
		{"private method", 403, "application/json", body("odoo.exceptions.AccessError", "Private methods (such as 'res.partner.browse') cannot be called remotely."), []error{ErrAccess}, 4},
		{"MissingError", 404, "application/json", body("odoo.exceptions.MissingError", "Record does not exist or has been deleted.\n(Record: res.partner(999999,), User: 2)"), []error{ErrUser, ErrMissing}, 2},
		{"unknown model", 404, "application/json", body("werkzeug.exceptions.NotFound", "the model 'no.such.model' does not exist"), []error{ErrUser, ErrMissing}, 2},
		{"unknown method", 404, "application/json", body("werkzeug.exceptions.NotFound", "The method 'res.partner.no_such_method' does not exist"), []error{ErrServer}, 1},
		{"ids to an @api.model method", 422, "application/json", body("werkzeug.exceptions.UnprocessableEntity", "cannot call res.partner.search_read with ids"), []error{ErrServer}, 1},
		{"TypeError", 500, "application/json", body("builtins.TypeError", "BaseModel._read_format() got an unexpected keyword argument 'args'"), []error{ErrServer}, 1},
		{"ValueError", 500, "application/json", body("builtins.ValueError", "Invalid field res.partner.no_such_field"), []error{ErrServer}, 1},
		{"Invalid apikey", 401, "application/json", body("werkzeug.exceptions.Unauthorized", "Invalid apikey"), []error{ErrAccessDenied, ErrKeyRefused}, 3},
		{"no key", 401, "application/json", body("werkzeug.exceptions.Unauthorized", "User not authenticated, use an API Key with a Bearer Authorization header."), []error{ErrAccessDenied, ErrKeyRefused}, 3},
		{"malformed JSON", 400, "application/json", body("werkzeug.exceptions.BadRequest", "could not parse the body as json"), []error{ErrServer}, 1},
		{"unknown database", 404, "text/html", []byte("<!DOCTYPE html>\n<title>404 Not Found</title>\n<p>No database is selected and the requested URL was not found in the server-wide controllers.</p>"), []error{ErrServer}, 1},
		{"no JSON-2 (Odoo 18)", 404, "text/html", []byte("<!doctype html><title>404 Not Found</title>"), []error{ErrServer}, 1},
		{"form-encoded", 415, "text/html", []byte("<!doctype html><title>415 Unsupported Media Type</title>"), []error{ErrServer}, 1},
	} {
		f, debug := json2Fault(tc.status, tc.ctype, tc.body)
		if f == nil {
			t.Errorf("%s: no fault", tc.name)
			continue
		}
		f.Call = "json2 x.y"
		for _, e := range all {
			want := false
			for _, w := range tc.want {
				want = want || w == e
			}
			if errors.Is(f, e) != want {
				t.Errorf("%s: errors.Is(%v, %v) = %v", tc.name, f, e, !want)
			}
		}
		if f.Code != tc.code || errors.Is(f, ErrNoneResult) {
			t.Errorf("%s: code %d, want %d", tc.name, f.Code, tc.code)
		}
		if strings.Contains(f.Error(), "Traceback") || strings.Contains(f.Error(), ".py") {
			t.Errorf("%s: the error shows the traceback: %v", tc.name, f)
		}
		if tc.ctype == "application/json" && !strings.Contains(debug, "Traceback") {
			t.Errorf("%s: debug %q not given to the debug log", tc.name, debug)
		}
	}
	if f, _ := json2Fault(502, "text/html", []byte("<html>Bad Gateway</html>")); f != nil {
		t.Errorf("a proxy's 502: %v; want no fault (the caller reports ErrNetwork: the call may have run)", f)
	}
}
