package provision

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
	"github.com/intentplane/intentplane/odoo/odootest"
)

// realJSON2 copies the template database of a real Odoo 19
// (odootest.RealOf: ODOO_URL_19, else ODOO_URL) into a new intentplane_test_*
// database, dropped at the end, and returns an Admin of it (XML-RPC,
// by password) and an API key of its administrator made as Setup makes
// them. It skips the test without a real Odoo 19 and a template.
func realJSON2(t testing.TB) (a *Admin, adminKey string) {
	t.Helper()
	rs := odootest.RealOf(t, 19)
	url, master := rs.URL, rs.Master
	tpl, pw := rs.TemplateDB, rs.TemplatePassword
	if tpl == "" {
		t.Skip("no ODOO_TEMPLATE_DB: the JSON-2 test copies a template database")
	}
	ctx := context.Background()
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	db := "intentplane_test_j2_" + hex.EncodeToString(b)
	admin := odoo.Identity{Login: "admin", Password: pw}
	src, err := NewAdmin(AdminConfig{URL: url, DB: tpl, MasterPassword: master, Admin: admin, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if v, err := src.t.Version(ctx); err != nil || v.Major < 19 {
		t.Skipf("the JSON-2 test needs Odoo 19 or later: %+v, %v", v, err)
	}
	if err := src.DuplicateDatabase(ctx, db); err != nil {
		t.Fatalf("copying %s: %v", tpl, err)
	}
	a, err = NewAdmin(AdminConfig{URL: url, DB: db, MasterPassword: master, Admin: admin, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if ok, err := a.DropDatabase(context.Background()); !ok || err != nil {
			t.Errorf("dropping %s: %v, %v", db, ok, err)
		}
	})
	k, err := a.NewAPIKey(ctx, admin, "intentplane test", 1)
	if err != nil {
		t.Fatalf("API key of the administrator: %v", err)
	}
	if !rpc.APIKeyForm(k.Key) || !k.Expires.After(time.Now()) || k.Expires.After(time.Now().Add(49*time.Hour)) {
		t.Fatalf("API key %d characters, expires %s", len(k.Key), k.Expires)
	}
	return a, k.Key
}

// session returns a session of id on a's database over the transport
// mode, as the connector's reader logs in (odoo.New).
func session(tb testing.TB, a *Admin, mode string, id odoo.Identity) *rpc.Session {
	tb.Helper()
	t, err := rpc.NewTransport(rpc.Options{URL: a.t.Base(), Mode: mode, Secrets: []string{id.Password}, Database: a.db})
	if err != nil {
		tb.Fatal(err)
	}
	return rpc.NewSession(t, a.db, "reader", id)
}

// rawJSON2 posts body to /json/2/model/method with key, as a test's own
// client, and returns the status and the decoded answer.
func rawJSON2(t *testing.T, a *Admin, key, model, method string, body map[string]any) (int, any) {
	t.Helper()
	raw, _ := json.Marshal(body)
	req, _ := http.NewRequest(http.MethodPost, a.t.Base()+"/json/2/"+model+"/"+method, bytes.NewReader(raw))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "bearer "+key)
	req.Header.Set("X-Odoo-Database", a.db)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v any
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return resp.StatusCode, v
}

// TestRealOdooJSON2 runs the connector's JSON-2 transport against a real
// Odoo 19: API keys made as Setup makes them, a login by key, reads,
// writes and creates, each error class of odoo18-19-api.md §3 mapped onto
// the sentinels XML-RPC gives, revoked and expired keys named as such,
// no traceback in any error, and the key as an XML-RPC password.
func TestRealOdooJSON2(t *testing.T) {
	a, key := realJSON2(t)
	ctx := context.Background()
	s := session(t, a, odoo.TransportJSON2, odoo.Identity{Login: "admin", Password: key})
	if _, err := s.UID(ctx); err != nil {
		t.Fatalf("login by API key: %v", err)
	}
	rs, err := s.SearchRead(ctx, "res.partner", []any{rpc.Leaf("id", "=", 1)}, []string{"name", "company_id", "credit_limit"}, nil)
	if err != nil || len(rs) != 1 {
		t.Fatalf("search_read: %v, %v", rs, err)
	}
	if _, ok := rs[0]["id"].(int64); !ok {
		t.Errorf("id is %T, want int64", rs[0]["id"])
	}
	if _, ok := rs[0]["credit_limit"].(float64); !ok {
		t.Errorf("a float field is %T (%v), want float64", rs[0]["credit_limit"], rs[0]["credit_limit"])
	}
	v, err := s.Execute(ctx, "res.partner", "create", []any{map[string]any{"name": "JSON-2 Supplies", "is_company": true}}, nil)
	id, idErr := rpc.AsID(v)
	if err != nil || idErr != nil {
		t.Fatalf("create of one record = %v (%T), %v; want the id", v, v, err)
	}
	if _, err := s.Execute(ctx, "res.partner", "write", []any{[]any{id}, map[string]any{"phone": "+49 30 1"}}, nil); err != nil {
		t.Fatalf("write: %v", err)
	}
	v, err = s.Execute(ctx, "res.partner", "read", []any{[]any{id}}, map[string]any{"fields": rpc.Strs([]string{"phone"})})
	if rs, _ := rpc.Records(v); err != nil || len(rs) != 1 || rs[0]["phone"] != "+49 30 1" {
		t.Errorf("read back: %v, %v", v, err)
	}

	bill, err := s.Execute(ctx, "account.move", "create", []any{map[string]any{"move_type": "in_invoice", "partner_id": id}}, nil)
	if err != nil {
		t.Fatal(err)
	}

	// Each error class: the sentinel XML-RPC gives, no traceback.
	for _, tc := range []struct {
		name          string
		model, method string
		args          []any
		kw            map[string]any
		want          error
		status        int
	}{
		{"ValidationError", "res.partner.bank", "create", []any{map[string]any{"partner_id": id}}, nil, odoo.ErrUser, 422},
		{"UserError", "account.move", "action_post", []any{[]any{bill}}, nil, odoo.ErrUser, 422},
		{"MissingError", "res.partner", "write", []any{[]any{999999}, map[string]any{"name": "x"}}, nil, odoo.ErrMissing, 404},
		{"unknown model", "no.such.model", "search_read", []any{[]any{}}, nil, odoo.ErrMissing, 404},
		{"unknown method", "res.partner", "action_create_payments", []any{[]any{id}}, nil, odoo.ErrServer, 404},
		{"ValueError", "res.partner", "search_read", []any{[]any{rpc.Leaf("no_such_field", "=", 1)}}, nil, odoo.ErrServer, 500},
		{"TypeError", "res.partner", "search_read", []any{[]any{}}, map[string]any{"args": []any{}}, odoo.ErrServer, 500},
	} {
		_, err := s.Execute(ctx, tc.model, tc.method, tc.args, tc.kw)
		var f *odoo.Fault
		if !errors.Is(err, tc.want) || !errors.As(err, &f) || (tc.status != 0 && f.Status != tc.status) {
			t.Errorf("%s: %v; want %v, HTTP %d", tc.name, err, tc.want, tc.status)
			continue
		}
		if strings.Contains(err.Error(), "Traceback") || strings.Contains(err.Error(), ".py") {
			t.Errorf("%s: the error shows the traceback: %v", tc.name, err)
		}
		t.Logf("%s: %v", tc.name, err)
	}

	// An access error: a user with base.group_user only reads a bill.
	gid, err := a.GroupID(ctx, "base.group_user")
	if err != nil {
		t.Fatal(err)
	}
	plain := odoo.Identity{Login: "ip-json2-plain", Password: "pw-" + key[:12]}
	if _, err := a.create(ctx, "res.users", map[string]any{"name": "plain", "login": plain.Login, "password": plain.Password,
		"group_ids": []any{[]any{6, 0, []any{gid}}}}, map[string]any{"context": map[string]any{"no_reset_password": true}}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.NewAPIKey(ctx, plain, "too long", 365); !errors.Is(err, odoo.ErrUser) {
		t.Errorf("a 365-day key for a plain user: %v; want odoo.ErrUser (internal users: 90 days)", err)
	}
	pk, err := a.NewAPIKey(ctx, plain, "plain", KeyDays)
	if err != nil {
		t.Fatal(err)
	}
	pc := session(t, a, odoo.TransportAuto, odoo.Identity{Login: plain.Login, Password: pk.Key})
	if _, err := pc.Execute(ctx, "account.move", "search_read", []any{[]any{}}, map[string]any{"limit": 1}); !errors.Is(err, odoo.ErrAccess) {
		t.Errorf("AccessError: %v; want odoo.ErrAccess", err)
	} else {
		t.Logf("AccessError: %v", err)
	}
	other, _ := odoo.New(odoo.Config{URL: a.t.Base(), DB: a.db, Reader: odoo.Identity{Login: "admin", Password: pk.Key, Setting: "ODOO_READER_PASSWORD"}})
	if err := other.Login(ctx); !errors.Is(err, odoo.ErrKeyRefused) || !strings.Contains(err.Error(), plain.Login) {
		t.Errorf("another user's key: %v; want odoo.ErrKeyRefused naming %s", err, plain.Login)
	}

	// The key as the XML-RPC password.
	xc := session(t, a, odoo.TransportXMLRPC, odoo.Identity{Login: "admin", Password: key})
	if _, err := xc.SearchRead(ctx, "res.partner", []any{rpc.Leaf("id", "=", id)}, []string{"name"}, nil); err != nil {
		t.Errorf("XML-RPC with the API key as password: %v", err)
	}

	// An expired key (generate, as the administrator, lets any date) and a
	// revoked one.
	st, expired := rawJSON2(t, a, key, "res.users.apikeys", "generate", map[string]any{"key": key, "scope": nil, "name": "expired", "expiration_date": "2026-01-02"})
	st2, revoked := rawJSON2(t, a, key, "res.users.apikeys", "generate", map[string]any{"key": key, "scope": nil, "name": "revoked", "expiration_date": time.Now().AddDate(0, 0, 2).Format(time.DateOnly)})
	if st != 200 || st2 != 200 {
		t.Fatalf("generate: %d %v, %d %v", st, expired, st2, revoked)
	}
	if st, v := rawJSON2(t, a, key, "res.users.apikeys", "revoke", map[string]any{"key": revoked}); st != 200 || v != true {
		t.Fatalf("revoke: %d %v", st, v)
	}
	for name, k := range map[string]string{"expired": expired.(string), "revoked": revoked.(string), "wrong": strings.Repeat("0", 40)} {
		for _, tr := range []string{odoo.TransportJSON2, odoo.TransportXMLRPC} {
			kc, _ := odoo.New(odoo.Config{URL: a.t.Base(), DB: a.db, Reader: odoo.Identity{Login: "admin", Password: k, Setting: "environment variable ODOO_READER_PASSWORD"}, Transport: tr})
			err := kc.Login(ctx)
			if !errors.Is(err, odoo.ErrKeyRefused) || !errors.Is(err, odoo.ErrAccessDenied) || !strings.Contains(err.Error(), "ODOO_READER_PASSWORD") ||
				!strings.Contains(err.Error(), "expired") || strings.Contains(err.Error(), k) {
				t.Errorf("%s key over %s: %v; want odoo.ErrKeyRefused naming the setting, without the key", name, tr, err)
			} else {
				t.Logf("%s key over %s: %v", name, tr, err)
			}
		}
	}
}

// BenchmarkRealSearchRead measures one search_read (the bills of a
// database, six fields, as in odoo18-19-api.md §4) on a real Odoo 19 over
// JSON-2, XML-RPC with the X-Odoo-Database header and XML-RPC without
// it, interleaved in each iteration so that the host's load hits the
// three alike; it reports each one's median and mean in ms. Run it with
// ODOO_URL (19), ODOO_MASTER_PASSWORD and ODOO_TEMPLATE_DB set:
// go test -run '^$' -bench RealSearchRead -benchtime 50x ./odoo/
func BenchmarkRealSearchRead(b *testing.B) {
	a, key := realJSON2(b)
	ctx := context.Background()
	id := odoo.Identity{Login: "admin", Password: key}
	variants := []struct {
		name string
		s    *rpc.Session
	}{
		{"json2", nil}, {"xmlrpc-header", nil}, {"xmlrpc-noheader", nil},
	}
	for i, tr := range []string{odoo.TransportJSON2, odoo.TransportXMLRPC, odoo.TransportXMLRPC} {
		o := rpc.Options{URL: a.t.Base(), Mode: tr, Secrets: []string{key}, Database: a.db}
		if i == 2 {
			o.Database = ""
		}
		t, err := rpc.NewTransport(o)
		if err != nil {
			b.Fatal(err)
		}
		s := rpc.NewSession(t, a.db, "reader", id)
		if _, err := s.UID(ctx); err != nil {
			b.Fatal(err)
		}
		variants[i].s = s
	}
	domain := []any{rpc.Leaf("move_type", "=", "in_invoice")}
	fields := []string{"name", "partner_id", "amount_total", "amount_residual", "state", "invoice_date"}
	took := make([][]time.Duration, len(variants))
	for b.Loop() {
		for i, v := range variants {
			start := time.Now()
			if _, err := v.s.SearchRead(ctx, "account.move", domain, fields, nil); err != nil {
				b.Fatalf("%s: %v", v.name, err)
			}
			took[i] = append(took[i], time.Since(start))
		}
	}
	for i, v := range variants {
		d := slices.Clone(took[i])
		slices.Sort(d)
		var sum time.Duration
		for _, x := range d {
			sum += x
		}
		ms := func(x time.Duration) float64 { return float64(x.Microseconds()) / 1000 }
		b.ReportMetric(ms(d[len(d)/2]), v.name+"-median-ms")
		b.ReportMetric(ms(sum/time.Duration(len(d))), v.name+"-mean-ms")
	}
}
