package odoo_test

import (
	"context"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap/aptest"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
	"github.com/intentplane/intentplane/store/mem"
)

// workloadBuilder enters the legitimate workload's book (package aptest)
// into Odoo as its UI does: vendors as res.partner companies or
// individuals, without a company when the book says so, contact persons
// under their company; accounts, bills and hand payments through the
// administrator.
type workloadBuilder struct{ *provision.Admin }

// AddVendor enters v as a partner, and its contact person if it has one.
func (b workloadBuilder) AddVendor(ctx context.Context, company string, v aptest.Vendor) (erp.Vendor, string, error) {
	id, err := b.AddPartner(ctx, company, provision.Partner{Name: v.Name, Phone: v.Phone, Company: !v.Individual, Shared: v.Shared, Country: v.Country})
	if err != nil {
		return erp.Vendor{}, "", err
	}
	v.ID = id
	if v.Contact == "" {
		return v.Vendor, "", nil
	}
	contact, err := b.AddPartner(ctx, company, provision.Partner{Name: v.Contact, Parent: id, Shared: v.Shared, Country: v.Country})
	return v.Vendor, contact, err
}

// workloadOdoo sets up database db on the Odoo at url (a fake one when
// fake, else a copy of ODOO_TEMPLATE_DB when set) as provision.Setup does, with
// one company, and returns the workload's environment on it, the
// administrator and the connector's configuration.
func workloadOdoo(t *testing.T, s odootest.RealServer, db string, fake bool) (aptest.Env, *provision.Admin, odoo.Config) {
	t.Helper()
	url, master := s.URL, s.Master
	ctx := context.Background()
	r, p, b := identities(t)
	admin := odoo.Identity{Login: "admin", Password: randomHex(t, 12)}
	if !fake {
		admin = fromTemplate(t, s, db, admin)
	}
	a, err := provision.NewAdmin(provision.AdminConfig{URL: url, DB: db, MasterPassword: master, Admin: admin, Timeout: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.DropDatabase(context.Background()) })
	cfg, err := provision.Setup(ctx, a, provision.SetupConfig{Reader: r, Payer: p, BankAdmin: b, Transport: s.Transport})
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	cfg.Timeout = 2 * time.Minute
	return aptest.Env{Source: workloadClient(t, cfg), Builder: workloadBuilder{a}, Company: provision.DemoCompany,
		NewStore: func(now func() time.Time) gateway.Store { return mem.New(now) }}, a, cfg
}

// workloadClient returns a logged-in connector configured by cfg.
func workloadClient(t *testing.T, cfg odoo.Config) *odoo.Client {
	t.Helper()
	c, err := odoo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Login(context.Background()); err != nil {
		t.Fatal(err)
	}
	return c
}

// runWorkloadOdoo enters the legitimate workload's book (vendors vendors)
// into a new database on the Odoo at url, copies the database, and pays
// the book in the first with the company's default controls and in the
// copy with aptest.WholeVendorRuns. Practice expects no false refusal in
// either; in the second, no vendor's day is refused.
func runWorkloadOdoo(t *testing.T, s odootest.RealServer, db string, fake bool, name string, vendors int) {
	url, master := s.URL, s.Master
	ctx := context.Background()
	e, a, cfg := workloadOdoo(t, s, db, fake)
	e.Name, e.Vendors = name, vendors
	start := time.Now()
	bk := aptest.Build(t, e)
	t.Logf("the book entered into %s in %v", name, time.Since(start).Round(time.Millisecond))
	whole := e
	whole.Name, whole.Config = name+", max_vendor_total raised", aptest.WholeVendorRuns
	cfg.DB = db + "_whole"
	if err := a.DuplicateDatabase(ctx, cfg.DB); err != nil {
		t.Fatalf("copying the book: %v", err)
	}
	t.Cleanup(func() {
		if c, err := provision.NewAdmin(provision.AdminConfig{URL: url, DB: cfg.DB, MasterPassword: master}); err == nil {
			_, _ = c.DropDatabase(context.Background())
		}
	})
	whole.Source = workloadClient(t, cfg)
	t.Run("Defaults", func(t *testing.T) {
		if f := aptest.Pay(t, e, bk); f.FalseRefusals != 0 || f.Paid == 0 {
			t.Errorf("%s", f)
		}
	})
	t.Run("WholeVendorRuns", func(t *testing.T) {
		if f := aptest.Pay(t, whole, bk); f.FalseRefusals != 0 || f.Limited["max_vendor_total"] != 0 || f.Paid == 0 {
			t.Errorf("%s", f)
		}
	})
}

// TestLegitimateWorkloadFakeOdoo runs the legitimate workload on the fake
// Odoo (the full book, 153 payments).
func TestLegitimateWorkloadFakeOdoo(t *testing.T) {
	t.Parallel()
	srv := odootest.NewServer(fakeMaster)
	defer srv.Close()
	runWorkloadOdoo(t, odootest.RealServer{URL: srv.URL, Master: fakeMaster}, "fake_workload", true, "the fake Odoo", 0)
}

// TestRealOdooLegitimateWorkload runs the legitimate workload on each
// real Odoo (odootest.EachReal; a copy of its template database when
// set). Odoo stamps each account's write_date, so the gateway's clock is moved to each
// account's age (see aptest.Pay). INTENTPLANE_WORKLOAD_VENDORS, if set,
// is the number of vendors of the book (30, the full book, by default;
// 14 still has every kind of vendor, account and bill): each vendor is
// about 30 XML-RPC calls to enter and 50 to pay.
func TestRealOdooLegitimateWorkload(t *testing.T) {
	vendors := 0
	if v := os.Getenv("INTENTPLANE_WORKLOAD_VENDORS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("INTENTPLANE_WORKLOAD_VENDORS=%q is not a number of vendors", v)
		}
		vendors = n
	}
	odootest.EachReal(t, func(t *testing.T, s odootest.RealServer) {
		runWorkloadOdoo(t, s, "intentplane_test_workload_"+randomHex(t, 4), false, "Odoo "+s.Name, vendors)
	})
}
