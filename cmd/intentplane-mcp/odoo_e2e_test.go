package main_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// odooEnv is a fake Odoo 17 set up as `intentplane odoo setup` does, and
// a proxy configuration mounting the accounts-payable pack on it.
type odooEnv struct {
	*env
	srv      *odootest.Server
	cfg      odoo.Config // the connector's configuration, for checks
	passEnv  []string    // the passwords, as the proxy's environment
	template string      // the configuration, before test edits
}

func secret(t testing.TB) string {
	b := make([]byte, 12)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(b)
}

const odooConfigTemplate = `# intentplane-mcp on Odoo
[mandate]
owner = "northwind"
budget = "EUR 12000.00"

[servers.books]
pack = "ap"
erp = "odoo"
prefix = "ap_"

[servers.books.odoo]
url = %q
db = %q
timeout = "10s"
reader = { login = "intentplane-reader", password_env = "TEST_ODOO_READER_PW" }
payer = { login = "intentplane-payer", password_env = "TEST_ODOO_PAYER_PW" }
bank_admin = { login = "intentplane-bankadmin", password_env = "TEST_ODOO_BANKADMIN_PW" }
companies = { northwind = %d }
`

func newOdooEnv(t *testing.T) *odooEnv {
	t.Helper()
	return newOdooEnvOn(t, 17)
}

// newOdooEnvOn is newOdooEnv on a fake Odoo of that major version: on
// 19 the connector goes over JSON-2 with the API keys setup made.
func newOdooEnvOn(t *testing.T, version int) *odooEnv {
	t.Helper()
	return newOdooEnvOver(t, version, odoo.TransportAuto)
}

// newOdooEnvOver is newOdooEnvOn with the connector's transport set
// (odoo.Config.Transport, the configuration's transport).
func newOdooEnvOver(t *testing.T, version int, transport string) *odooEnv {
	t.Helper()
	srv := odootest.NewServer("fake-master")
	srv.SetVersion(version)
	t.Cleanup(srv.Close)
	// The accounts were set up a month ago: past their cooling-off period.
	srv.SetNow(func() time.Time { return time.Now().Add(-30 * 24 * time.Hour) })
	a, err := provision.NewAdmin(provision.AdminConfig{URL: srv.URL, DB: "ap", MasterPassword: "fake-master", Admin: odoo.Identity{Login: "admin", Password: secret(t)}})
	if err != nil {
		t.Fatal(err)
	}
	r := odoo.Identity{Login: "intentplane-reader", Password: secret(t)}
	p := odoo.Identity{Login: "intentplane-payer", Password: secret(t)}
	b := odoo.Identity{Login: "intentplane-bankadmin", Password: secret(t)}
	cfg, err := provision.Setup(context.Background(), a, provision.SetupConfig{Reader: r, Payer: p, BankAdmin: b, DemoData: true, Transport: transport})
	if err != nil {
		t.Fatalf("odoo setup: %v", err)
	}
	srv.SetNow(nil)
	cfg.URL = srv.URL
	dir := t.TempDir()
	e := &odooEnv{env: &env{t: t, dir: dir, config: filepath.Join(dir, "intentplane.toml")}, srv: srv, cfg: cfg,
		passEnv: []string{"TEST_ODOO_READER_PW=" + cfg.Reader.Password, "TEST_ODOO_PAYER_PW=" + cfg.Payer.Password, "TEST_ODOO_BANKADMIN_PW=" + cfg.BankAdmin.Password}}
	e.template = fmt.Sprintf(odooConfigTemplate, srv.URL, "ap", cfg.Companies[provision.DemoCompany])
	if transport != odoo.TransportAuto {
		e.template += fmt.Sprintf("transport = %q\n", transport)
	}
	writeFile(t, e.config, e.template)
	return e
}

// bill returns a demo bill as Odoo has it now.
func (e *odooEnv) bill(t *testing.T, ref string) erp.Bill {
	t.Helper()
	c, err := odoo.New(e.cfg)
	if err != nil {
		t.Fatal(err)
	}
	bs, err := c.Bills(context.Background(), provision.DemoCompany, erp.BillQuery{})
	if err != nil {
		t.Fatal(err)
	}
	for _, b := range bs {
		if b.Ref == ref {
			return b
		}
	}
	t.Fatalf("no bill %s in Odoo", ref)
	return erp.Bill{}
}

// check runs the proxy with --check and returns its output.
func (e *odooEnv) check(env []string) (string, error) {
	cmd := exec.Command(bins.proxy, "--config", e.config, "--check")
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestOdooPackMount lists open bills, pays a bill to the account on file,
// refuses the email's IBAN and a second payment, and asks the user to
// confirm a payment above the threshold, through the built proxy on the
// fake Odoo 17, 18 and 19 over XML-RPC and 19 over JSON-2.
func TestOdooPackMount(t *testing.T) {
	t.Parallel()
	for _, x := range []struct {
		name      string
		version   int
		transport string
	}{{"17-xmlrpc", 17, odoo.TransportAuto}, {"18-xmlrpc", 18, odoo.TransportAuto}, {"19-xmlrpc", 19, odoo.TransportXMLRPC}, {"19-json2", 19, odoo.TransportJSON2}} {
		t.Run(x.name, func(t *testing.T) {
			t.Parallel()
			testOdooPackMount(t, newOdooEnvOver(t, x.version, x.transport))
		})
	}
}

func testOdooPackMount(t *testing.T, e *odooEnv) {
	e.vars = e.passEnv
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
	c := e.start(mcp.ProtocolVersion20251125, el)

	r := call(t, c, "ap_list_open_bills", `{}`)
	wantOK(t, r, provision.DemoBill, provision.DemoBill2)

	before := e.bill(t, provision.DemoBill)
	if before.PaymentState != erp.NotPaid {
		t.Fatalf("INV-2290 is %s before the payment", before.PaymentState)
	}
	r = call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanFromEmail))
	wantError(t, r, "on file")
	if got := e.bill(t, provision.DemoBill).PaymentState; got != erp.NotPaid {
		t.Fatalf("after the refused payment, INV-2290 is %s", got)
	}
	r = call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"acme supplies","bill":"inv-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanSpaced))
	wantOK(t, r)
	after := e.bill(t, provision.DemoBill)
	if !after.PaymentState.Settled() || after.Residual != 0 {
		t.Fatalf("after the payment, INV-2290 is %s with %d left", after.PaymentState, after.Residual)
	}
	// Paid once only.
	r = call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanOnFile))
	wantError(t, r)
	if n := el.count(); n != 0 {
		t.Fatalf("%d confirmations asked for payments under the threshold", n)
	}
	// Above the threshold (1,000.00 to the vendor today): the user is
	// asked, confirms, and the bill is paid.
	r = call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2291","iban":%q,"amount":"2400.00","currency":"EUR"}`, ibanOnFile))
	wantOK(t, r)
	if n := el.count(); n != 1 {
		t.Errorf("%d confirmations asked for 2,400.00; want 1", n)
	}
	if b := e.bill(t, provision.DemoBill2); !b.PaymentState.Settled() {
		t.Errorf("after the confirmed payment, INV-2291 is %s", b.PaymentState)
	}
}

// TestOdooStartRefusals: a literal password, a missing variable, a wrong
// password and an identity with too many rights each stop the start.
func TestOdooStartRefusals(t *testing.T) {
	t.Parallel()
	e := newOdooEnv(t)
	line := func(cfg, anchor string) int { return 1 + strings.Count(cfg[:strings.Index(cfg, anchor)], "\n") }
	for _, tc := range []struct {
		name     string
		from, to string
		env      []string
		anchor   string
		want     string
	}{
		{"literal password", `password_env = "TEST_ODOO_PAYER_PW"`, `password = "hunter2-hunter2"`, e.passEnv, "hunter2", "a password is never written in the configuration"},
		{"variable not set", "", "", e.passEnv[:1], `password_env = "TEST_ODOO_PAYER_PW"`, "environment variable TEST_ODOO_PAYER_PW (the payer's password) is not set"},
		{"wrong password", "", "", []string{e.passEnv[0], "TEST_ODOO_PAYER_PW=wrong", e.passEnv[2]}, "[servers.books.odoo]", "the payer's login was refused"},
		// The bank administrator's identity given as the payer's: the
		// "payer" can create bank accounts.
		{"payer with too many rights", `login = "intentplane-payer", password_env = "TEST_ODOO_PAYER_PW"`, `login = "intentplane-bankadmin", password_env = "TEST_ODOO_BANKADMIN_PW"`, e.passEnv, "[servers.books.odoo]", "the payer (company northwind) can"},
		{"owner not mapped", `owner = "northwind"`, `owner = "southwind"`, e.passEnv, "companies =", `the mandate's owner "southwind" is not mapped`},
		{"credentials in the URL", "url = \"http://", "url = \"http://admin:pw@", e.passEnv, "url =", "url must not carry credentials"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := e.template
			if tc.from != "" {
				if !strings.Contains(cfg, tc.from) {
					t.Fatalf("config has no %q", tc.from)
				}
				cfg = strings.Replace(cfg, tc.from, tc.to, 1)
			}
			p := filepath.Join(t.TempDir(), "intentplane.toml")
			writeFile(t, p, cfg)
			cmd := exec.Command(bins.proxy, "--config", p, "--check")
			cmd.Env = tc.env
			b, err := cmd.CombinedOutput()
			out := string(b)
			if err == nil {
				t.Fatalf("accepted: %s", out)
			}
			at := fmt.Sprintf("intentplane.toml:%d: ", line(cfg, tc.anchor))
			if !strings.Contains(out, at) || !strings.Contains(out, tc.want) {
				t.Errorf("got %q, want it to contain %q and %q", out, at, tc.want)
			}
			for _, kv := range e.passEnv {
				if _, pw, _ := strings.Cut(kv, "="); strings.Contains(out, pw) {
					t.Errorf("the error shows a password: %s", out)
				}
			}
		})
	}
	out, err := e.check(e.passEnv)
	if err != nil || !strings.Contains(out, "ap_pay_bill") {
		t.Fatalf("--check on the good configuration: %v\n%s", err, out)
	}
}

// TestOdooStartRefusesExpiredKey: on Odoo 19 (JSON-2) an expired API key
// stops the start with a message naming it as such and the variable to
// change, not a bare "access denied".
func TestOdooStartRefusesExpiredKey(t *testing.T) {
	t.Parallel()
	e := newOdooEnvOn(t, 19)
	expired, err := e.srv.APIKey("ap", "intentplane-payer", time.Now().Add(-time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	out, err := e.check([]string{e.passEnv[0], "TEST_ODOO_PAYER_PW=" + expired, e.passEnv[2]})
	if err == nil || !strings.Contains(out, "the key expired, was revoked or is wrong") || !strings.Contains(out, "environment variable TEST_ODOO_PAYER_PW") ||
		strings.Contains(out, expired) {
		t.Errorf("start with an expired key: %v\n%s", err, out)
	}
}
