package provision_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

const master = "fake-master-password"

// versions are the fake Odoo's versions and the connector's transport to
// each: 17 and 18 over XML-RPC, 19 over XML-RPC (configured) and over
// JSON-2 (automatic, with the API keys Setup makes).
var versions = []struct {
	name      string
	major     int
	transport string
}{
	{"17-xmlrpc", 17, odoo.TransportAuto},
	{"18-xmlrpc", 18, odoo.TransportAuto},
	{"19-xmlrpc", 19, odoo.TransportXMLRPC},
	{"19-json2", 19, odoo.TransportAuto},
}

// eachVersion runs test as a parallel subtest on a new fake Odoo of each
// of versions, with the connector's transport to it.
func eachVersion(t *testing.T, test func(t *testing.T, srv *odootest.Server, transport string)) {
	for _, v := range versions {
		t.Run(v.name, func(t *testing.T) {
			t.Parallel()
			srv := odootest.NewServer(master)
			srv.SetVersion(v.major)
			t.Cleanup(srv.Close)
			test(t, srv, v.transport)
		})
	}
}

// users returns the connector's three users with random passwords.
func users(t testing.TB) provision.SetupConfig {
	pw := func() string {
		b := make([]byte, 12)
		if _, err := rand.Read(b); err != nil {
			t.Fatal(err)
		}
		return hex.EncodeToString(b)
	}
	return provision.SetupConfig{Reader: odoo.Identity{Login: "ip-reader", Password: pw()},
		Payer: odoo.Identity{Login: "ip-payer", Password: pw()}, BankAdmin: odoo.Identity{Login: "ip-bankadmin", Password: pw()}}
}

// newAdmin returns an Admin of a new database db on srv (not created).
func newAdmin(t testing.TB, srv *odootest.Server, db string) *provision.Admin {
	t.Helper()
	a, err := provision.NewAdmin(provision.AdminConfig{URL: srv.URL, DB: db, MasterPassword: master, Admin: odoo.Identity{Login: "admin", Password: "admin-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// openDemoBills returns the open bills of the demo vendor as cfg's
// reader sees them, failing the test unless the vendor and its account
// on file are there.
func openDemoBills(t testing.TB, cfg odoo.Config) []erp.Bill {
	t.Helper()
	ctx := context.Background()
	c, err := odoo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vs, err := c.Vendors(ctx, provision.DemoCompany, erp.VendorQuery{Name: provision.DemoVendor})
	if err != nil || len(vs) != 1 {
		t.Fatalf("vendor: %v, %d", err, len(vs))
	}
	as, err := c.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{Vendor: vs[0].ID})
	if err != nil || len(as) != 2 {
		t.Fatalf("%s's accounts: %v, %d; want the one on file and the archived one", provision.DemoVendor, err, len(as))
	}
	open, err := c.Bills(ctx, provision.DemoCompany, erp.BillQuery{Vendor: vs[0].ID, Open: true})
	if err != nil {
		t.Fatal(err)
	}
	return open
}

// TestSetupIsIdempotent: three runs of Setup on one database enter the
// demo data once, and the long step says so as it starts.
func TestSetupIsIdempotent(t *testing.T) {
	t.Parallel()
	srv := odootest.NewServer(master)
	defer srv.Close()
	a := newAdmin(t, srv, "demo")
	sc := users(t)
	sc.DemoData = true
	var steps []string
	sc.Progress = func(s string) { steps = append(steps, s) }
	var cfg odoo.Config
	for range 3 {
		var err error
		if cfg, err = provision.Setup(context.Background(), a, sc); err != nil {
			t.Fatal(err)
		}
	}
	if open := openDemoBills(t, cfg); len(open) != 3 {
		t.Errorf("%d open bills after three setups, want 3 (the demo's two and the one left for intentplane-mcp)", len(open))
	}
	if !strings.Contains(strings.Join(steps, "\n"), "installing account") {
		t.Errorf("no progress shown for the long step: %q", steps)
	}
}

// TestSetupWithoutDatabaseService: a server whose API cannot create
// databases (Odoo 20) is set up in the existing database, saying so; a
// database that does not exist there is an error saying what to do.
func TestSetupWithoutDatabaseService(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server, transport string) {
		a := newAdmin(t, srv, "fake")
		sc := users(t)
		sc.Transport, sc.Others = transport, map[string]string{"southwind": "Southwind"}
		if _, err := provision.Setup(context.Background(), a, sc); err != nil {
			t.Fatalf("setup: %v", err)
		}
		srv.NoDatabaseService()
		var steps []string
		sc.DemoData, sc.Progress = true, func(s string) { steps = append(steps, s) }
		cfg, err := provision.Setup(context.Background(), a, sc)
		if err != nil || !strings.Contains(strings.Join(steps, "\n"), "no database service") {
			t.Fatalf("setup without a db service: %v, %q", err, steps)
		}
		if open := openDemoBills(t, cfg); len(open) != 3 {
			t.Errorf("%d open demo bills, want 3", len(open))
		}
		missing := newAdmin(t, srv, "missing")
		if _, err := provision.Setup(context.Background(), missing, users(t)); err == nil {
			t.Errorf("setup of a database that does not exist, without a db service: no error")
		}
	})
}

// TestNoneFaultIsDone: button_cancel commits and then fails to marshal
// None (the Admin calls over XML-RPC); the Admin takes it as done, on
// each version.
func TestNoneFaultIsDone(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server, transport string) {
		a := newAdmin(t, srv, "none")
		sc := users(t)
		sc.Transport, sc.DemoData = transport, true
		if _, err := provision.Setup(context.Background(), a, sc); err != nil {
			t.Fatalf("setup: %v", err)
		}
		vendor, ok, err := a.FindVendor(context.Background(), provision.DemoCompany, provision.DemoVendor)
		if err != nil || !ok {
			t.Fatalf("demo vendor: %v, %v", ok, err)
		}
		b, err := a.AddBill(context.Background(), provision.DemoCompany, erp.Bill{Ref: "INV-X", Vendor: vendor.ID, Currency: "EUR", Total: 100, State: erp.StateCancelled})
		if err != nil || b.State != erp.StateCancelled {
			t.Fatalf("cancelled bill = %+v, %v", b, err)
		}
	})
}

// TestSetupSurvivesReload: the install's answer is lost (a threaded
// Odoo reloads after installing and drops the connection) but the module
// is installed: setup goes on and enters the demo bills.
func TestSetupSurvivesReload(t *testing.T) {
	eachVersion(t, func(t *testing.T, srv *odootest.Server, transport string) {
		srv.LoseAnswer("ir.module.module", "button_immediate_install", 1)
		sc := users(t)
		sc.DemoData, sc.Transport = true, transport
		cfg, err := provision.Setup(context.Background(), newAdmin(t, srv, "reload"), sc)
		if err != nil {
			t.Fatalf("setup: %v", err)
		}
		if bills := openDemoBills(t, cfg); len(bills) == 0 {
			t.Fatal("no demo bills after setup")
		}
	})
}
