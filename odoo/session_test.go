package odoo_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"sync/atomic"
	"testing"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestCallsCarryADatabaseSession: without a session naming the database,
// Odoo 17 lists its databases on every request, each time over a new
// PostgreSQL connection (the floor of every call on a real server). After
// Login the client's calls carry one session, asked for once, and a
// payment makes Odoo list nothing.
func TestCallsCarryADatabaseSession(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server) {
		e := newFakeXMLRPC(t, srv, true)
		if v, _ := e.client.Version(context.Background()); v.Major >= 19 {
			t.Skip("Odoo 19 takes the X-Odoo-Database header, no session (TestCallsNameTheirDatabase)")
		}
		_, acct, bill, _ := demoRecords(t, e.client)
		ctx := context.Background()
		if err := e.client.Login(ctx); err != nil {
			t.Fatal(err)
		}
		listed, calls, first := e.srv.Listings(), e.srv.Calls(), len(e.srv.Cookies())
		if _, err := e.client.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "sess-1"}); err != nil {
			t.Fatal(err)
		}
		if n := e.srv.Listings() - listed; n != 0 {
			t.Errorf("Odoo listed its databases for %d of the payment's %d calls; want none", n, e.srv.Calls()-calls)
		}
		cookies := e.srv.Cookies()[first:]
		if len(cookies) == 0 {
			t.Fatal("no calls seen")
		}
		for i, c := range cookies {
			if c == "" || c != cookies[0] {
				t.Errorf("call %d carried session %q; want the one session %q", i, c, cookies[0])
			}
		}
	})
}

// TestWithoutDatabaseSession: a server that gives no session (a proxy
// that refuses GET /web/login, a server without the web module) is
// called as before, and asked again only after a while, not at every
// call.
func TestWithoutDatabaseSession(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server) {
		e := newFakeXMLRPC(t, srv, true)
		if v, _ := e.client.Version(context.Background()); v.Major >= 19 {
			t.Skip("Odoo 19 takes the X-Odoo-Database header, no session (TestCallsNameTheirDatabase)")
		}
		target, err := url.Parse(e.srv.URL)
		if err != nil {
			t.Fatal(err)
		}
		var asked atomic.Int64
		proxy := httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path == "/web/login" {
				asked.Add(1)
				http.NotFound(w, r)
				return
			}
			proxy.ServeHTTP(w, r)
		}))
		defer front.Close()
		cfg := e.cfg
		cfg.URL = front.URL
		c, err := odoo.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		first := len(e.srv.Cookies())
		if err := c.Login(ctx); err != nil {
			t.Fatal(err)
		}
		_, acct, bill, _ := demoRecords(t, c)
		if _, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "nosess-1"}); err != nil {
			t.Fatal(err)
		}
		if n := asked.Load(); n != 1 {
			t.Errorf("asked for a session %d times; want once", n)
		}
		for i, s := range e.srv.Cookies()[first:] {
			if s != "" {
				t.Errorf("call %d carried session %q; want none", i, s)
			}
		}
	})
}

// TestCallsNameTheirDatabase: on every version and transport a payment
// makes Odoo list no database: on 17 and 18 the calls carry the session
// cookie, on 19 (XML-RPC and JSON-2) the X-Odoo-Database header and no
// cookie (19 refuses a cookie and a header naming different databases,
// and needs no session).
func TestCallsNameTheirDatabase(t *testing.T) {
	t.Parallel()
	for _, ft := range fakeTransports {
		v := ft.version
		t.Run(ft.name, func(t *testing.T) {
			t.Parallel()
			e := newFakeOn(t, nil, ft, true)
			srv := e.srv
			_, acct, bill, _ := demoRecords(t, e.client)
			ctx := context.Background()
			if err := e.client.Login(ctx); err != nil {
				t.Fatal(err)
			}
			listed, first := srv.Listings(), len(srv.Cookies())
			if _, err := e.client.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "hdr-1"}); err != nil {
				t.Fatal(err)
			}
			if n := srv.Listings() - listed; n != 0 {
				t.Errorf("Odoo %d listed its databases for %d of the payment's calls; want none", v, n)
			}
			for i, c := range srv.Cookies()[first:] {
				if (c == "") != (v >= 19) {
					t.Errorf("Odoo %d: call %d carried session %q", v, i, c)
				}
			}
		})
	}
}
