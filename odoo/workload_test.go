package odoo_test

import (
	"context"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap/aptest"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
)

// workloadBuilder enters the legitimate workload's book (package aptest)
// into Odoo as its UI does: vendors as res.partner companies or
// individuals, without a company when the book says so, contact persons
// under their company; accounts, bills and hand payments through the
// administrator.
type workloadBuilder struct{ *odoo.Admin }

// AddVendor enters v as a partner, and its contact person if it has one.
func (b workloadBuilder) AddVendor(ctx context.Context, company string, v aptest.Vendor) (erp.Vendor, string, error) {
	id, err := b.AddPartner(ctx, company, odoo.Partner{Name: v.Name, Phone: v.Phone, Company: !v.Individual, Shared: v.Shared, Country: v.Country})
	if err != nil {
		return erp.Vendor{}, "", err
	}
	v.ID = id
	if v.Contact == "" {
		return v.Vendor, "", nil
	}
	contact, err := b.AddPartner(ctx, company, odoo.Partner{Name: v.Contact, Parent: id, Shared: v.Shared, Country: v.Country})
	return v.Vendor, contact, err
}

// workloadOdoo sets up database db on the Odoo at url (a fake one when
// fake is not nil) as odoo.Setup does, with one company, and returns the
// workload's environment on it.
func workloadOdoo(t *testing.T, url, master, db string, fake bool) aptest.Env {
	t.Helper()
	ctx := context.Background()
	r, p, b := identities(t)
	admin := odoo.Identity{Login: "admin", Password: randomHex(t, 12)}
	if !fake {
		admin = fromTemplate(t, url, master, db, admin)
	}
	a, err := odoo.NewAdmin(odoo.AdminConfig{URL: url, DB: db, MasterPassword: master, Admin: admin, Timeout: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.DropDatabase(context.Background()) })
	cfg, err := odoo.Setup(ctx, a, odoo.SetupConfig{Reader: r, Payer: p, BankAdmin: b})
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	cfg.Timeout = 2 * time.Minute
	c, err := odoo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	return aptest.Env{Source: c, Builder: workloadBuilder{a}, Company: odoo.DemoCompany}
}

// TestLegitimateWorkloadFakeOdoo runs the legitimate workload on the fake
// Odoo, with the company's default controls.
func TestLegitimateWorkloadFakeOdoo(t *testing.T) {
	t.Parallel()
	srv := odootest.NewServer(fakeMaster)
	defer srv.Close()
	e := workloadOdoo(t, srv.URL, fakeMaster, "fake_workload", true)
	e.Name = "the fake Odoo"
	aptest.Run(t, e)
}

// TestRealOdooLegitimateWorkload runs the legitimate workload on a real
// Odoo 17 (ODOO_URL; a copy of ODOO_TEMPLATE_DB when set), with the
// company's default controls. Odoo stamps each account's write_date, so
// the gateway's clock is moved to each account's age (see aptest.Run).
func TestRealOdooLegitimateWorkload(t *testing.T) {
	url, master := realOdoo(t)
	e := workloadOdoo(t, url, master, "intentplane_workload_"+randomHex(t, 4), false)
	e.Name = "Odoo 17"
	aptest.Run(t, e)
}
