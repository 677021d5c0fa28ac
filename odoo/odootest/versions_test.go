package odootest_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/kolo/xmlrpc"

	"github.com/intentplane/intentplane/odoo/odootest"
)

// TestVersionDifferences: the fake answers as the Odoo version it serves
// for the names that differ (../shared/odoo18-19-api.md §5): a field one
// version lacks gives Odoo's fault, in that version's words.
func TestVersionDifferences(t *testing.T) {
	t.Parallel()
	type read struct{ model, field string }
	for _, v := range odootest.Versions {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			t.Parallel()
			srv := odootest.NewServer("m")
			defer srv.Close()
			srv.SetVersion(v)
			call := func(service, method string, args ...any) (any, error) {
				c, err := xmlrpc.NewClient(srv.URL+"/xmlrpc/2/"+service, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer c.Close()
				var out any
				err = c.Call(method, args, &out)
				return out, err
			}
			if _, err := call("db", "create_database", "m", "d", false, "en_US", "pw", "admin"); err != nil {
				t.Fatal(err)
			}
			uid, err := call("common", "authenticate", "d", "admin", "pw", map[string]any{})
			if err != nil {
				t.Fatal(err)
			}
			exec := func(model, method string, args []any, kw map[string]any) (any, error) {
				return call("object", "execute_kw", "d", uid, "pw", model, method, args, kw)
			}
			mods, err := exec("ir.module.module", "search", []any{[]any{[]any{"name", "=", "account"}}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := exec("ir.module.module", "button_immediate_install", []any{mods}, nil); err != nil {
				t.Fatal(err)
			}
			has := map[read]bool{
				{"res.users", "groups_id"}: v < 19, {"res.users", "group_ids"}: v >= 19,
				{"account.payment", "ref"}: v < 18, {"account.payment", "memo"}: v >= 18,
				{"account.move", "payment_id"}: v < 18, {"account.move", "origin_payment_id"}: v >= 18,
				{"account.move", "matched_payment_ids"}: v >= 18, {"res.partner", "mobile"}: v < 19,
				{"res.partner.bank", "duplicate_bank_partner_ids"}: v >= 19,
			}
			for r, want := range has {
				_, err := exec(r.model, "search_read", []any{[]any{}}, map[string]any{"fields": []any{r.field}, "limit": 1})
				switch {
				case want && err != nil:
					t.Errorf("%s.%s: %v", r.model, r.field, err)
				case !want && err == nil:
					t.Errorf("%s.%s read on Odoo %d", r.model, r.field, v)
				case !want:
					wantText := fmt.Sprintf("Invalid field '%s' on model '%s'", r.field, r.model)
					if v >= 19 {
						wantText = fmt.Sprintf("Invalid field '%s' on '%s'", r.field, r.model)
					}
					if !strings.Contains(err.Error(), wantText) {
						t.Errorf("%s.%s: %v; want %q", r.model, r.field, err, wantText)
					}
				}
			}
			_, err = exec("res.partner", "name_get", []any{[]any{1}}, nil)
			if (v < 18) != (err == nil) {
				t.Errorf("name_get on Odoo %d: %v", v, err)
			}
		})
	}
}
