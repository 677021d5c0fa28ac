package odootest

import (
	"os"
	"testing"
)

// Real returns the base URL and master password of the real Odoo 17 that
// the environment names (ODOO_URL, e.g. http://127.0.0.1:8069, and
// ODOO_MASTER_PASSWORD), for the tests that run against one (named
// TestRealOdoo*, in ./odoo and ./cmd/intentplane-mcp); without them it
// skips tb. Such tests create and drop databases named intentplane_test_*.
func Real(tb testing.TB) (url, master string) {
	tb.Helper()
	url, master = os.Getenv("ODOO_URL"), os.Getenv("ODOO_MASTER_PASSWORD")
	if url == "" || master == "" {
		tb.Skip("no real Odoo 17: set ODOO_URL (e.g. http://127.0.0.1:8069) and ODOO_MASTER_PASSWORD to run the real-Odoo tests " +
			"against a running server (examples/odoo/docker-compose.yml starts one, or odoo/dockertest); they create and drop databases named intentplane_test_*")
	}
	return url, master
}

// Template returns the database ODOO_TEMPLATE_DB names and its
// administrator's password (login admin, ODOO_TEMPLATE_PASSWORD): a
// database with the account module installed and no demo data, which
// real-Odoo tests copy (a second) instead of creating one (minutes on a
// busy host). db is "" when none is set.
func Template() (db, adminPassword string) {
	return os.Getenv("ODOO_TEMPLATE_DB"), os.Getenv("ODOO_TEMPLATE_PASSWORD")
}
