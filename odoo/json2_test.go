package odoo_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestAPIKeyRefused: an expired, revoked or wrong API key is named as
// such, with the identity's login and the setting to change, never
// showing the key, over JSON-2 and (the key as the password) XML-RPC; a
// key revoked while the client runs is named at the next call.
func TestAPIKeyRefused(t *testing.T) {
	t.Parallel()
	for _, ft := range fakeTransports[2:] { // Odoo 19
		t.Run(ft.name, func(t *testing.T) {
			t.Parallel()
			e := newFakeOn(t, nil, ft, true)
			ctx := context.Background()
			login := e.cfg.Payer.Login
			expired, err := e.srv.APIKey(e.cfg.DB, login, time.Now().Add(-time.Minute))
			if err != nil {
				t.Fatal(err)
			}
			live, _ := e.srv.APIKey(e.cfg.DB, login, time.Now().Add(time.Hour))
			for name, key := range map[string]string{"expired": expired, "wrong": strings.Repeat("ab", 20)} {
				cfg := e.cfg
				cfg.Payer = odoo.Identity{Login: login, Password: key, Setting: "environment variable ODOO_PAYER_PASSWORD"}
				c, _ := odoo.New(cfg)
				err := c.Login(ctx)
				if !errors.Is(err, odoo.ErrKeyRefused) || !errors.Is(err, odoo.ErrAccessDenied) || strings.Contains(err.Error(), key) ||
					!strings.Contains(err.Error(), "ODOO_PAYER_PASSWORD") || !strings.Contains(err.Error(), "expired") || !strings.Contains(err.Error(), login) {
					t.Errorf("%s key: %v; want ErrKeyRefused naming the login and the setting", name, err)
				}
			}
			cfg := e.cfg
			cfg.Payer.Password = live
			c, _ := odoo.New(cfg)
			if err := c.Login(ctx); err != nil {
				t.Fatalf("a live key: %v", err)
			}
			_, acct, bill, _ := demoRecords(t, c)
			e.srv.RevokeAPIKey(e.cfg.DB, live)
			_, err = c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(100), Key: "revoked-1"})
			if !errors.Is(err, odoo.ErrKeyRefused) || !errors.Is(err, erp.ErrNotWritten) && ft.json2() || !strings.Contains(err.Error(), "Config.Payer.Password") {
				t.Errorf("a key revoked while running: %v; want ErrKeyRefused naming Config.Payer.Password", err)
			}
		})
	}
}

// TestJSON2DebugNeverShown: the traceback of a JSON-2 error (its debug)
// is in no error and in no log record above debug level; at debug level
// it is logged with the credentials removed.
func TestJSON2DebugNeverShown(t *testing.T) {
	t.Parallel()
	e := newFakeOn(t, nil, fakeTransports[3], true)
	key := e.cfg.Reader.Password
	e.srv.AnswerJSON2("res.partner", "search_read", 500, `{"name": "builtins.ValueError", "message": "bad call", "arguments": ["bad call"], "context": {},
		"debug": "Traceback (most recent call last):\n  File \"/opt/odoo/odoo/http.py\", line 1, in dispatch\n    key = '`+key+`'\nValueError: bad call"}`)
	for _, level := range []slog.Level{slog.LevelInfo, slog.LevelDebug} {
		var logged bytes.Buffer
		cfg := e.cfg
		cfg.Logger = slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: level}))
		c, _ := odoo.New(cfg)
		_, err := c.Vendors(context.Background(), provision.DemoCompany, erp.VendorQuery{})
		if !errors.Is(err, odoo.ErrServer) || strings.Contains(err.Error(), "Traceback") || strings.Contains(err.Error(), "http.py") {
			t.Errorf("error %v; want ErrServer without the traceback", err)
		}
		switch out := logged.String(); {
		case strings.Contains(out, key):
			t.Errorf("level %v: the log shows the key: %s", level, out)
		case level == slog.LevelInfo && out != "":
			t.Errorf("logged at info: %s", out)
		case level == slog.LevelDebug && !strings.Contains(out, "Traceback"):
			t.Errorf("the debug log lacks the traceback: %s", out)
		}
	}
}

// TestTransportSetting: "json2" is refused at Login on Odoo 17 and 18
// with what to set; an unknown transport is refused by New.
func TestTransportSetting(t *testing.T) {
	t.Parallel()
	for _, v := range []int{17, 18} {
		srv := odootest.NewServer(fakeMaster)
		defer srv.Close()
		srv.SetVersion(v)
		c, err := odoo.New(odoo.Config{URL: srv.URL, DB: "x", Reader: odoo.Identity{Login: "r", Password: "p"}, Transport: odoo.TransportJSON2})
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Login(context.Background()); !errors.Is(err, odoo.ErrNoJSON2) || !strings.Contains(err.Error(), `"xmlrpc"`) {
			t.Errorf("json2 on Odoo %d: %v; want ErrNoJSON2", v, err)
		}
	}
	if _, err := odoo.New(odoo.Config{URL: "http://127.0.0.1:1", DB: "x", Transport: "grpc"}); err == nil || !strings.Contains(err.Error(), "Config.Transport") {
		t.Errorf("transport grpc: %v", err)
	}
}

// TestJSON2OnlyServer: an Odoo 19 reachable over JSON-2 only (XML-RPC
// turned off, as Odoo 22 is to remove it) is read and paid with the
// transport set to json2: the version comes from GET /web/version (naming
// the database: no listing), no call goes to /xmlrpc; and so it is with
// the transport automatic, whose version read then falls back on GET
// /web/version.
func TestJSON2OnlyServer(t *testing.T) {
	t.Parallel()
	e := newFakeOn(t, nil, fakeTransport{version: 19, transport: odoo.TransportJSON2}, true)
	e.srv.SetXMLRPC(false)
	ctx := context.Background()
	c, err := odoo.New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	listings := e.srv.Listings()
	if err := c.Login(ctx); err != nil {
		t.Fatalf("login over JSON-2 only: %v", err)
	}
	if v, err := c.Version(ctx); err != nil || v.Major != 19 || v.Server != "19.0" {
		t.Errorf("version: %+v, %v", v, err)
	}
	if n := e.srv.Listings() - listings; n != 0 {
		t.Errorf("%d database listings at login", n)
	}
	_, acct, bill, _ := demoRecords(t, c)
	if _, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "j2-only"}); err != nil {
		t.Errorf("payment over JSON-2 only: %v", err)
	}
	auto := e.cfg
	auto.Transport = odoo.TransportAuto
	ac, _ := odoo.New(auto)
	if err := ac.Login(ctx); err != nil {
		t.Errorf("automatic transport without XML-RPC: %v", err)
	}
	if _, err := ac.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: bill.ID}); err != nil {
		t.Errorf("automatic transport without XML-RPC, a read: %v", err)
	}
}

// TestFakeJSON2Errors: the fake Odoo 19 answers JSON-2 as the real one
// measured (odoo18-19-api.md §3), shapes and statuses.
func TestFakeJSON2Errors(t *testing.T) {
	t.Parallel()
	e := newFakeOn(t, nil, fakeTransports[3], false)
	newFakeOn(t, e.srv, fakeTransports[3], false) // two databases: no monodb
	key := e.cfg.Reader.Password
	post := func(path, ctype, db, auth, body string) (*http.Response, string) {
		req, _ := http.NewRequest(http.MethodPost, e.srv.URL+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		if db != "" {
			req.Header.Set("X-Odoo-Database", db)
		}
		if auth != "" {
			req.Header.Set("Authorization", auth)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		return resp, b.String()
	}
	const j = "application/json"
	db, bearer := e.cfg.DB, "Bearer "+key
	adminKey, err := e.srv.APIKey(db, "admin", time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, path, ctype, db, auth, body string
		status                            int
		want                              string
	}{
		{"success", "/json/2/res.partner/search", j, db, bearer, `{"domain": [], "limit": 1}`, 200, `[`},
		{"create answers a list", "/json/2/res.partner/create", j, db, "bearer " + adminKey, `{"vals_list": {"name": "J2"}}`, 200, `[`},
		{"AccessError", "/json/2/res.partner/create", j, db, bearer, `{"vals_list": {"name": "J2"}}`, 403, `odoo.exceptions.AccessError`},
		{"None is null", "/json/2/account.move/button_cancel", j, db, "bearer " + adminKey, `{"ids": []}`, 200, `null`},
		{"no database header, two databases", "/json/2/res.partner/search", j, "", bearer, `{"domain": []}`, 404, "No database is selected"},
		{"unknown database", "/json/2/res.partner/search", j, "nodb", bearer, `{"domain": []}`, 404, "No database is selected"},
		{"no key", "/json/2/res.partner/search", j, db, "", `{"domain": []}`, 401, "User not authenticated, use an API Key"},
		{"bad key", "/json/2/res.partner/search", j, db, "bearer " + strings.Repeat("0", 40), `{"domain": []}`, 401, `"Invalid apikey"`},
		{"password as key", "/json/2/res.partner/search", j, db, "bearer admin-pw", `{"domain": []}`, 401, `"Invalid apikey"`},
		{"form-encoded", "/json/2/res.partner/search", "application/x-www-form-urlencoded", db, bearer, `domain=`, 415, "type='json2'"},
		{"malformed JSON", "/json/2/res.partner/search", j, db, bearer, `{"domain": [`, 400, "werkzeug.exceptions.BadRequest"},
		{"batch", "/json/2/batch", j, db, bearer, `{}`, 404, "Did you mean POST /json/2/<model>/<method>?"},
		{"unknown model", "/json/2/no.such.model/search", j, db, bearer, `{"domain": []}`, 404, `the model 'no.such.model' does not exist`},
		{"unknown method", "/json/2/res.partner/name_get", j, db, bearer, `{"ids": [1]}`, 404, `The method 'res.partner.name_get' does not exist`},
		{"private method", "/json/2/res.partner/_compute_display_name", j, db, bearer, `{"ids": [1]}`, 403, "Private methods"},
		{"ids to search_read", "/json/2/res.partner/search_read", j, db, bearer, `{"ids": [1], "domain": []}`, 422, "cannot call res.partner.search_read with ids"},
		{"17-style args", "/json/2/res.partner/search_read", j, db, bearer, `{"args": [[]]}`, 500, "builtins.TypeError"},
		{"unknown field", "/json/2/res.partner/search_read", j, db, bearer, `{"domain": [["no_such_field", "=", 1]]}`, 500, "builtins.ValueError"},
		{"missing record", "/json/2/res.partner/read", j, db, bearer, `{"ids": [999999], "fields": ["name"]}`, 200, `[]`},
	} {
		resp, body := post(tc.path, tc.ctype, tc.db, tc.auth, tc.body)
		if resp.StatusCode != tc.status || !strings.Contains(body, tc.want) || !resp.Close {
			t.Errorf("%s: HTTP %d (close %v) %.300s; want %d with %q and Connection: close", tc.name, resp.StatusCode, resp.Close, body, tc.status, tc.want)
		}
		if ct := resp.Header.Get("Content-Type"); resp.StatusCode != 200 && strings.HasPrefix(ct, j) {
			for _, k := range []string{`"name"`, `"message"`, `"arguments"`, `"context"`, `"debug"`} {
				if !strings.Contains(body, k) {
					t.Errorf("%s: error body without %s: %s", tc.name, k, body)
				}
			}
		}
	}
}

// TestBadAnswersJSON2: JSON-2 answers of the wrong shape are errors,
// never panics (TestBadAnswers for XML-RPC).
func TestBadAnswersJSON2(t *testing.T) {
	t.Parallel()
	e := newFakeOn(t, nil, fakeTransports[3], true)
	ctx := context.Background()
	for _, a := range []struct {
		status int
		body   string
	}{
		{200, "not json at all"},
		{200, `"x"`},
		{200, `[1]`},
		{200, `[{"id": "7"}]`},
		{200, `[{"id": 7, "partner_id": [1]}]`},
		{200, `[{"id": 1e400}]`},
		{200, `[{"id": 99999999999999999999}]`},
		{200, `[] []`},
		{422, `{"name": 5}`},
		{502, `<html>Bad Gateway</html>`},
	} {
		e.srv.AnswerJSON2("res.partner.bank", "search_read", a.status, a.body)
		if _, err := e.client.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{}); err == nil {
			t.Errorf("answer %d %.60q: no error", a.status, a.body)
		}
	}
}
