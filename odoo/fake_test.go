package odoo_test

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/intentplane/intentplane/erp/erptest"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
)

const fakeMaster = "fake-master-password"

// fakeEnv is a database on a fake Odoo set up as Setup does, with two
// companies, the three users and an administrator.
type fakeEnv struct {
	srv    *odootest.Server
	admin  *odoo.Admin
	cfg    odoo.Config
	client *odoo.Client
}

var fakeDBs atomic.Int64

func newFake(t testing.TB, srv *odootest.Server, demo bool) fakeEnv {
	t.Helper()
	if srv == nil {
		srv = odootest.NewServer(fakeMaster)
		t.Cleanup(srv.Close)
	}
	db := fmt.Sprintf("fake_%d", fakeDBs.Add(1))
	a, err := odoo.NewAdmin(odoo.AdminConfig{URL: srv.URL, DB: db, MasterPassword: fakeMaster, Admin: odoo.Identity{Login: "admin", Password: "admin-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	r, p, b := identities(t)
	cfg, err := odoo.Setup(context.Background(), a, odoo.SetupConfig{
		Others: map[string]string{"southwind": "Southwind"}, Reader: r, Payer: p, BankAdmin: b, DemoData: demo,
	})
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	c, err := odoo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return fakeEnv{srv: srv, admin: a, cfg: cfg, client: c}
}

// fakeOf returns a fake Odoo of the major version, closed with the test.
func fakeOf(t testing.TB, major int) *odootest.Server {
	srv := odootest.NewServer(fakeMaster)
	srv.SetVersion(major)
	t.Cleanup(srv.Close)
	return srv
}

// eachVersion runs f as a subtest per Odoo version the fake serves
// (odootest.Versions), named by it ("17"), each on its own fake server.
func eachVersion(t *testing.T, f func(t *testing.T, srv *odootest.Server)) {
	for _, v := range odootest.Versions {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			t.Parallel()
			f(t, fakeOf(t, v))
		})
	}
}

func TestFakeConformance(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server) {
		erptest.Run(t, func(t *testing.T) erptest.Env {
			e := newFake(t, srv, false)
			return erptest.Env{Source: e.client, Seeder: e.admin, Company: "northwind", Other: "southwind"}
		})
	})
}
