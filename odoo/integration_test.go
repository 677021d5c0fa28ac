package odoo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/erp/erptest"
	"github.com/intentplane/intentplane/odoo"
)

// realOdoo returns the URL and master password of a real Odoo 17 to test
// against, or skips the test.
func realOdoo(t *testing.T) (url, master string) {
	t.Helper()
	url, master = os.Getenv("ODOO_URL"), os.Getenv("ODOO_MASTER_PASSWORD")
	if url == "" || master == "" {
		t.Skip("no real Odoo 17: set ODOO_URL (e.g. http://127.0.0.1:8069) and ODOO_MASTER_PASSWORD to run the integration tests " +
			"against a running server (examples/odoo/docker-compose.yml starts one); they create and drop databases named intentplane_test_*")
	}
	return url, master
}

func randomHex(t testing.TB, n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

// identities returns the connector's three users with random passwords.
func identities(t testing.TB) (reader, payer, bankAdmin odoo.Identity) {
	return odoo.Identity{Login: "ip-reader", Password: randomHex(t, 12)},
		odoo.Identity{Login: "ip-payer", Password: randomHex(t, 12)},
		odoo.Identity{Login: "ip-bankadmin", Password: randomHex(t, 12)}
}

// TestRealOdooConformance runs erptest against a real Odoo 17: one
// database is set up with two companies and the three users, then each
// subtest gets a copy of it (duplicate_database, under a second).
func TestRealOdooConformance(t *testing.T) {
	url, master := realOdoo(t)
	ctx := context.Background()
	base := "intentplane_test_" + randomHex(t, 4)
	adminPW := randomHex(t, 12)
	r, p, b := identities(t)
	tpl, err := odoo.NewAdmin(odoo.AdminConfig{URL: url, DB: base, MasterPassword: master, Admin: odoo.Identity{Login: "admin", Password: adminPW}, Timeout: 5 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tpl.DropDatabase(context.Background()) })
	start := time.Now()
	cfg, err := odoo.Setup(ctx, tpl, odoo.SetupConfig{
		Company: "northwind", CompanyName: "Northwind", Others: map[string]string{"southwind": "Southwind"},
		Reader: r, Payer: p, BankAdmin: b,
		Progress: func(s string) { t.Logf("setup: %s", s) },
	})
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	t.Logf("setup took %s", time.Since(start).Round(time.Millisecond))
	var n atomic.Int64
	var calls atomic.Int64
	erptest.Run(t, func(t *testing.T) erptest.Env {
		db := fmt.Sprintf("%s_%d", base, n.Add(1))
		a, err := odoo.NewAdmin(odoo.AdminConfig{URL: url, DB: db, MasterPassword: master, Admin: odoo.Identity{Login: "admin", Password: adminPW},
			Companies: cfg.Companies, Timeout: 2 * time.Minute})
		if err != nil {
			t.Fatal(err)
		}
		if err := tpl.DuplicateDatabase(ctx, db); err != nil {
			t.Fatalf("duplicating the database: %v", err)
		}
		t.Cleanup(func() { _, _ = a.DropDatabase(context.Background()) })
		c := cfg
		c.DB, c.Timeout = db, time.Minute
		client, err := odoo.New(c)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { calls.Add(client.Calls()) })
		return erptest.Env{Source: client, Seeder: a, Company: "northwind", Other: "southwind"}
	})
	t.Logf("XML-RPC calls of the connector in the suite: %d", calls.Load())
}
