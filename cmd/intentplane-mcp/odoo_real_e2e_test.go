package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/kolo/xmlrpc"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// The accounts-payable pack through the built intentplane-mcp on each
// real Odoo the connector's TestRealOdoo* tests in ./odoo find
// (odootest.EachReal: ODOO_URL, ODOO_URL_17, _18 and _19 with
// ODOO_MASTER_PASSWORD; skipped without them), one subtest per version.
// With a template database (ODOO_TEMPLATE_DB, ODOO_TEMPLATE_DB_18, ...)
// each test copies it instead of creating one. Each test works in a
// database of its own, intentplane_test_*, dropped afterwards.

// realOdooEnv is a database on a real Odoo set up as `intentplane odoo
// setup` does with the demo data, and intentplane-mcp's configuration
// mounting the AP pack on it.
type realOdooEnv struct {
	*odooEnv
	admin *provision.Admin
	rpc   *adminRPC
	major int // the Odoo major version
}

// newRealOdooEnv copies ODOO_TEMPLATE_DB (or creates a database), runs
// provision.Setup with the demo data and then prepare (nil for none) as the
// administrator, and writes the configuration. Every bank account then
// in the database is dated 30 days back (see backdateAccounts).
func newRealOdooEnv(tb testing.TB, s odootest.RealServer, prepare func(a *provision.Admin)) *realOdooEnv {
	tb.Helper()
	url, master := s.URL, s.Master
	ctx := context.Background()
	db := "intentplane_test_" + secret(tb)[:8]
	admin := odoo.Identity{Login: "admin", Password: secret(tb)}
	if tpl, pw := s.TemplateDB, s.TemplatePassword; tpl != "" {
		admin.Password = pw
		t, err := provision.NewAdmin(provision.AdminConfig{URL: url, DB: tpl, MasterPassword: master, Admin: admin, Timeout: 15 * time.Minute})
		if err == nil {
			err = t.DuplicateDatabase(ctx, db)
		}
		if err != nil {
			tb.Fatalf("copying %s: %v", tpl, err)
		}
	}
	a, err := provision.NewAdmin(provision.AdminConfig{URL: url, DB: db, MasterPassword: master, Admin: admin, Timeout: 15 * time.Minute})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _, _ = a.DropDatabase(context.Background()) })
	r := odoo.Identity{Login: "intentplane-reader", Password: secret(tb)}
	p := odoo.Identity{Login: "intentplane-payer", Password: secret(tb)}
	b := odoo.Identity{Login: "intentplane-bankadmin", Password: secret(tb)}
	cfg, err := provision.Setup(ctx, a, provision.SetupConfig{Reader: r, Payer: p, BankAdmin: b, DemoData: true, Transport: s.Transport})
	if err != nil {
		tb.Fatalf("odoo setup: %v", err)
	}
	if prepare != nil {
		prepare(a)
	}
	e := &realOdooEnv{admin: a, rpc: newAdminRPC(tb, url, db, admin), major: s.Major}
	e.backdateAccounts(tb, 30*24*time.Hour)
	dir := tb.TempDir()
	e.odooEnv = &odooEnv{env: &env{t: tb, dir: dir, config: filepath.Join(dir, "intentplane.toml")}, cfg: cfg,
		passEnv: []string{"TEST_ODOO_READER_PW=" + cfg.Reader.Password, "TEST_ODOO_PAYER_PW=" + cfg.Payer.Password, "TEST_ODOO_BANKADMIN_PW=" + cfg.BankAdmin.Password}}
	// A real server shared with other tests answers a call in seconds at
	// times: the connector's default time limit, not the fake's 10s.
	e.template = strings.Replace(fmt.Sprintf(odooConfigTemplate, url, db, cfg.Companies[provision.DemoCompany]), `timeout = "10s"`, `timeout = "30s"`, 1)
	if s.Transport != "" {
		e.template += fmt.Sprintf("transport = %q\n", s.Transport)
	}
	e.template += "\n[store]\nkind = \"embedded\"\npath = \"intentplane.db\"\n"
	writeFile(tb, e.config, e.template)
	e.vars = e.passEnv
	return e
}

// backdateAccounts moves the write_date of every bank account in the
// database back by age: the accounts were set up that long ago, past the
// pack's cooling-off period (5 days). On the fake Odoo the tests set its
// clock back instead; Odoo sets write_date itself and ignores it in a
// write, so this runs one UPDATE as an administrator's server action.
func (e *realOdooEnv) backdateAccounts(tb testing.TB, age time.Duration) {
	tb.Helper()
	model := e.rpc.ids(tb, "ir.model", []any{[]any{"model", "=", "res.partner.bank"}})
	code := fmt.Sprintf("env.cr.execute(\"UPDATE res_partner_bank SET write_date = write_date - interval '%d seconds'\")", int64(age.Seconds()))
	var id int64
	e.rpc.exec(tb, &id, "ir.actions.server", "create", []any{map[string]any{
		"name": "intentplane test: accounts set up earlier", "model_id": model[0], "state": "code", "code": code}}, nil)
	var out any
	e.rpc.exec(tb, &out, "ir.actions.server", "run", []any{[]any{id}}, nil)
}

// adminRPC calls Odoo's XML-RPC API as the administrator, apart from the
// connector: what the tests check in Odoo is read by it.
type adminRPC struct {
	c        *xmlrpc.Client
	db, pass string
	uid      int64
}

func newAdminRPC(tb testing.TB, url, db string, admin odoo.Identity) *adminRPC {
	tb.Helper()
	common, err := xmlrpc.NewClient(url+"/xmlrpc/2/common", nil)
	if err != nil {
		tb.Fatal(err)
	}
	defer common.Close()
	var uid any
	if err := common.Call("authenticate", []any{db, admin.Login, admin.Password, map[string]any{}}, &uid); err != nil {
		tb.Fatalf("authenticate: %v", err)
	}
	n, ok := uid.(int64)
	if !ok {
		tb.Fatalf("authenticate: %v", uid)
	}
	c, err := xmlrpc.NewClient(url+"/xmlrpc/2/object", nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { _ = c.Close() })
	return &adminRPC{c: c, db: db, pass: admin.Password, uid: n}
}

// exec runs model.method(*args, **kw) and decodes the answer into out.
func (r *adminRPC) exec(tb testing.TB, out any, model, method string, args []any, kw map[string]any) {
	tb.Helper()
	if kw == nil {
		kw = map[string]any{}
	}
	if err := r.c.Call("execute_kw", []any{r.db, r.uid, r.pass, model, method, args, kw}, out); err != nil {
		tb.Fatalf("%s.%s: %v", model, method, err)
	}
}

// ids searches model.
func (r *adminRPC) ids(tb testing.TB, model string, domain []any) []int64 {
	tb.Helper()
	var ids []int64
	r.exec(tb, &ids, model, "search", []any{domain}, nil)
	if len(ids) == 0 {
		tb.Fatalf("no %s with %v", model, domain)
	}
	return ids
}

// odooBill is a vendor bill as Odoo has it, read by the administrator.
type odooBill struct {
	PaymentState string  // payment_state
	Residual     float64 // amount_residual, in the bill's currency
}

// bill reads the company's posted vendor bill with this reference.
func (e *realOdooEnv) bill(tb testing.TB, ref string) odooBill {
	tb.Helper()
	var rs []map[string]any
	e.rpc.exec(tb, &rs, "account.move", "search_read", []any{[]any{
		[]any{"ref", "=", ref}, []any{"move_type", "=", "in_invoice"}, []any{"state", "=", "posted"}}},
		map[string]any{"fields": []any{"payment_state", "amount_residual"}, "limit": 2})
	if len(rs) != 1 {
		tb.Fatalf("%d posted bills %s in Odoo", len(rs), ref)
	}
	st, _ := rs[0]["payment_state"].(string)
	res, _ := rs[0]["amount_residual"].(float64)
	return odooBill{PaymentState: st, Residual: res}
}

// payments returns the bank account (partner_bank_id) of each posted
// outbound payment to partner, newest first, read by the administrator:
// state posted on Odoo 17, in_process or paid from 18 on.
func (e *realOdooEnv) payments(tb testing.TB, partner string) []int64 {
	tb.Helper()
	posted := []any{"posted"}
	if e.major >= 18 {
		posted = []any{"in_process", "paid"}
	}
	var rs []map[string]any
	e.rpc.exec(tb, &rs, "account.payment", "search_read", []any{[]any{
		[]any{"partner_id", "=", atoi(tb, partner)}, []any{"payment_type", "=", "outbound"}, []any{"state", "in", posted}}},
		map[string]any{"fields": []any{"partner_bank_id"}, "order": "id desc", "limit": 50})
	var out []int64
	for _, r := range rs {
		m, _ := r["partner_bank_id"].([]any)
		if len(m) > 0 {
			id, _ := m[0].(int64)
			out = append(out, id)
		} else {
			out = append(out, 0)
		}
	}
	return out
}

// accountOf returns the ID of partner's active bank account numbered
// number, as Odoo has it.
func (e *realOdooEnv) accountOf(tb testing.TB, partner, number string) int64 {
	tb.Helper()
	ids := e.rpc.ids(tb, "res.partner.bank", []any{[]any{"partner_id", "=", atoi(tb, partner)}, []any{"acc_number", "=", number}})
	return ids[0]
}

// wantPaid checks in Odoo that the bill ref is paid, and that partner
// has n payments, the newest to its account numbered number.
func (e *realOdooEnv) wantPaid(tb testing.TB, partner, ref, number string, n int) {
	tb.Helper()
	if b := e.bill(tb, ref); !b.settled() {
		tb.Errorf("Odoo shows %s %s with %.2f left", ref, b.PaymentState, b.Residual)
	}
	if ps, onFile := e.payments(tb, partner), e.accountOf(tb, partner, number); len(ps) != n || n > 0 && ps[0] != onFile {
		tb.Errorf("the payments to partner %s in Odoo go to accounts %v (newest first); want %d, the newest to its account %d (%s)", partner, ps, n, onFile, number)
	}
}

// settled reports whether Odoo shows the bill paid (in_payment until the
// bank statement is reconciled) with nothing left to pay.
func (b odooBill) settled() bool {
	return (b.PaymentState == "paid" || b.PaymentState == "in_payment") && b.Residual == 0
}

// The extra records of TestRealOdooMCP, as Odoo's UI makes them in a
// single-company database.
const (
	sharedVendor  = "Shared Widgets" // without a company (company_id False)
	sharedIBAN    = "GB29 NWBK 6016 1331 9268 19"
	sharedBill    = "SW-1"             // 300.00 EUR
	contactVendor = "Contact Holdings" // a bill addressed to its Jane Doe
	contactIBAN   = "FR14 2004 1010 0505 0001 3M02 606"
	contactBill   = "CH-7" // 45.00 EUR
)

// TestRealOdooMCP drives intentplane-mcp with the AP pack over stdio on a
// real Odoo (each, odootest.EachReal), as a finance team's assistant would, and checks each
// outcome in Odoo with the administrator's XML-RPC reads.
func TestRealOdooMCP(t *testing.T) {
	odootest.EachReal(t, realOdooMCP)
}

func realOdooMCP(t *testing.T, s odootest.RealServer) {
	var shared, holdings string
	e := newRealOdooEnv(t, s, func(a *provision.Admin) {
		ctx := context.Background()
		var err error
		if shared, err = a.AddPartner(ctx, provision.DemoCompany, provision.Partner{Name: sharedVendor, Company: true, Shared: true}); err != nil {
			t.Fatal(err)
		}
		if holdings, err = a.AddPartner(ctx, provision.DemoCompany, provision.Partner{Name: contactVendor, Company: true, Shared: true}); err != nil {
			t.Fatal(err)
		}
		jane, err := a.AddPartner(ctx, provision.DemoCompany, provision.Partner{Name: "Jane Doe", Parent: holdings, Shared: true})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range []struct {
			vendor, contact, iban, ref string
			total                      intent.Amount
		}{{shared, "", sharedIBAN, sharedBill, 30000}, {holdings, jane, contactIBAN, contactBill, 4500}} {
			if _, err := a.AddBankAccount(ctx, provision.DemoCompany, erp.BankAccount{Vendor: x.vendor, Number: x.iban, Trusted: true, Active: true}); err != nil {
				t.Fatal(err)
			}
			if _, err := a.AddBill(ctx, provision.DemoCompany, erp.Bill{Ref: x.ref, Vendor: x.vendor, Contact: x.contact, Currency: "EUR", Total: x.total}); err != nil {
				t.Fatal(err)
			}
		}
	})
	vendor, ok, err := e.admin.FindVendor(context.Background(), provision.DemoCompany, provision.DemoVendor)
	if err != nil || !ok {
		t.Fatalf("demo vendor: %v", err)
	}
	// The client's user confirms what the policy asks a person to
	// confirm (a first payment to a vendor); four eyes never comes from
	// the client.
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
	c := e.start(mcp.ProtocolVersion20251125, el)
	paid := len(e.payments(t, vendor.ID)) // the demo's payments to ACME

	t.Run("ListPaged", func(t *testing.T) {
		var page struct {
			Bills []struct {
				Ref        string `json:"ref"`
				VendorName string `json:"vendor_name"`
			} `json:"bills"`
			NextOffset int `json:"next_offset"`
		}
		var seen []string
		for offset := 0; offset >= 0 && len(seen) < 10; {
			r := call(t, c, "ap_list_open_bills", fmt.Sprintf(`{"limit":2,"offset":%d}`, offset))
			wantOK(t, r)
			page.NextOffset = 0
			if err := json.Unmarshal([]byte(text(r)), &page); err != nil || len(page.Bills) == 0 || len(page.Bills) > 2 {
				t.Fatalf("page at %d: %v %s", offset, err, text(r))
			}
			for _, b := range page.Bills {
				seen = append(seen, b.Ref+"/"+b.VendorName)
			}
			offset = page.NextOffset
			if offset == 0 {
				offset = -1
			}
		}
		want := []string{provision.DemoBill + "/" + provision.DemoVendor, provision.DemoBill2 + "/" + provision.DemoVendor, provision.DemoOpenBill + "/" + provision.DemoVendor,
			sharedBill + "/" + sharedVendor, contactBill + "/" + contactVendor}
		if len(seen) != len(want) {
			t.Fatalf("the pages list %v, want the %d open bills %v", seen, len(want), want)
		}
		for _, w := range want {
			if !strings.Contains(strings.Join(seen, " "), w) {
				t.Errorf("the pages list %v, without %s", seen, w)
			}
		}
		r := call(t, c, "ap_list_open_bills", fmt.Sprintf(`{"vendor":%q,"limit":1,"offset":1}`, provision.DemoVendor))
		wantOK(t, r, provision.DemoVendor)
		if err := json.Unmarshal([]byte(text(r)), &page); err != nil || len(page.Bills) != 1 || page.Bills[0].VendorName != provision.DemoVendor {
			t.Errorf("second page of %s's bills: %v %s", provision.DemoVendor, err, text(r))
		}
		wantError(t, call(t, c, "ap_list_open_bills", `{"limit":1000}`))
	})
	t.Run("RefuseEmailIBAN", func(t *testing.T) {
		r := call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":%q,"bill":%q,"iban":%q,"amount":"850.00","currency":"EUR"}`, provision.DemoVendor, provision.DemoBill, ibanFromEmail))
		wantError(t, r, "on file")
		if b := e.bill(t, provision.DemoBill); b.PaymentState != "not_paid" || b.Residual != 850 {
			t.Errorf("after the refusal, Odoo shows %s %s with %.2f left", provision.DemoBill, b.PaymentState, b.Residual)
		}
		if n := len(e.payments(t, vendor.ID)); n != paid {
			t.Errorf("%d payments to %s in Odoo, want %d", n, provision.DemoVendor, paid)
		}
	})
	t.Run("PayToAccountOnFile", func(t *testing.T) {
		r := call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"acme supplies","bill":"inv-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanSpaced))
		wantOK(t, r, `"residual":"0.00"`)
		e.wantPaid(t, vendor.ID, provision.DemoBill, provision.DemoIBAN, paid+1)
	})
	t.Run("RefuseSecondPayment", func(t *testing.T) {
		r := call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":%q,"bill":%q,"iban":%q,"amount":"850.00","currency":"EUR"}`, provision.DemoVendor, provision.DemoBill, ibanOnFile))
		wantError(t, r)
		if n := len(e.payments(t, vendor.ID)); n != paid+1 {
			t.Errorf("%d payments to %s in Odoo, want %d", n, provision.DemoVendor, paid+1)
		}
	})
	t.Run("RefuseBankChangeWithoutCallback", func(t *testing.T) {
		before := e.rpc.ids(t, "res.partner.bank", []any{[]any{"partner_id", "=", atoi(t, vendor.ID)}})
		r := call(t, c, "ap_change_vendor_bank", fmt.Sprintf(`{"vendor":%q,"iban":%q}`, provision.DemoVendor, ibanFromEmail))
		wantError(t, r, "call-back")
		wantReason(t, r, "resolve.no_trusted_source", "deny")
		after := e.rpc.ids(t, "res.partner.bank", []any{[]any{"partner_id", "=", atoi(t, vendor.ID)}})
		if fmt.Sprint(before) != fmt.Sprint(after) {
			t.Errorf("%s's accounts in Odoo were %v, now %v", provision.DemoVendor, before, after)
		}
	})
	t.Run("VendorWithoutCompany", func(t *testing.T) {
		// Its first payment: the user is asked to confirm, and does.
		asked := el.count()
		r := call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":%q,"bill":%q,"iban":%q,"amount":"300.00","currency":"EUR"}`, sharedVendor, sharedBill, sharedIBAN))
		wantOK(t, r)
		if el.count() == asked {
			t.Errorf("the first payment to %s was not confirmed by the user", sharedVendor)
		}
		e.wantPaid(t, shared, sharedBill, sharedIBAN, 1)
	})
	t.Run("BillToContactPerson", func(t *testing.T) {
		// Named as the contact person, the vendor is not found: the
		// bill is the company's.
		wantError(t, call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"Jane Doe","bill":%q,"iban":%q,"amount":"45.00","currency":"EUR"}`, contactBill, contactIBAN)))
		r := call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":%q,"bill":%q,"iban":%q,"amount":"45.00","currency":"EUR"}`, contactVendor, contactBill, contactIBAN))
		wantOK(t, r)
		e.wantPaid(t, holdings, contactBill, contactIBAN, 1)
	})
}

func atoi(tb testing.TB, s string) int64 {
	tb.Helper()
	var n int64
	if _, err := fmt.Sscan(s, &n); err != nil {
		tb.Fatalf("%q: %v", s, err)
	}
	return n
}

// BenchmarkRealOdooMCPPayment measures one allowed ap_pay_bill through the
// built intentplane-mcp over stdio on each real Odoo and transport
// (odootest.EachRealB: 17-xmlrpc, 18-xmlrpc, 19-json2, 19-xmlrpc), with
// 500 other open bills in the company, each paying a new bill of the demo
// vendor (of an amount of its own) to its account on file. It reports,
// per payment: ms/op, the wall time of the client's call; odoo-ms/op, the
// time Odoo spent in the payment's own two calls (the wizard's opening
// and action_create_payments, as Odoo's web client makes them), from the
// proxy's debug log of the same run; x-odoo, the first over the second
// (issue 23's budget: at most 1.5); where the rest goes:
// other-odoo-ms/op, the time of the payment's other calls (the reads that
// decide and the read-back), gateway-ms/op, the decision's latency as the
// proxy logs it (what is left of ms/op is MCP over stdio); and calls/op,
// the calls to Odoo the proxy made, which must not exceed
// paymentCallBudget (7; the benchmark fails above it). Run it with the
// variables odootest.EachReal reads (ODOO_URL_17, ..., ODOO_MASTER_PASSWORD)
// set:
//
//	go test -run '^$' -bench BenchmarkRealOdooMCPPayment -benchtime 5x ./cmd/intentplane-mcp/
func BenchmarkRealOdooMCPPayment(b *testing.B) {
	odootest.EachRealB(b, realMCPPayment)
}

// paymentCallBudget is the most calls to Odoo an allowed payment through
// the MCP front door may make (issue 23).
const paymentCallBudget = 7

func realMCPPayment(b *testing.B, s odootest.RealServer) {
	e := newRealOdooEnv(b, s, func(a *provision.Admin) {
		ctx := context.Background()
		other, err := a.AddPartner(ctx, provision.DemoCompany, provision.Partner{Name: "Bulk Supplies", Company: true})
		if err != nil {
			b.Fatal(err)
		}
		bulk := make([]erp.Bill, 500)
		for i := range bulk {
			bulk[i] = erp.Bill{Ref: fmt.Sprintf("BULK-%d", i), Vendor: other, Currency: "EUR", Total: 1000 + intent.Amount(i)}
		}
		if err := a.AddBills(ctx, provision.DemoCompany, bulk); err != nil {
			b.Fatal(err)
		}
	})
	vendor, ok, err := e.admin.FindVendor(context.Background(), provision.DemoCompany, provision.DemoVendor)
	if err != nil || !ok {
		b.Fatalf("demo vendor: %v", err)
	}
	// A company whose assistant pays many bills of one vendor a day: the
	// vendor's day stays under every threshold (the cumulative limits
	// would ask a person from the second payment on), so that what is
	// measured is a payment the policy allows outright.
	writeFile(b, e.config, e.template+"\n[servers.books.controls]\nconfirm_above = \"1000000.00\"\nfour_eyes_daily_above = \"1000000.00\"\nmax_amount = \"1000000.00\"\n")
	var stderr lockedBuffer
	e.stderr, e.args = &stderr, []string{"--log-level", "debug", "--log-format", "json"}
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
	c := e.start(mcp.ProtocolVersion20251125, el)
	log := proxyLog{buf: &stderr}
	// A first payment, not measured: the log up to its decision holds
	// the start (logins, the rights check), the client's connections are
	// open after it, and the vendor has been paid before (a first payment
	// to a vendor may ask the user to confirm).
	wantOK(b, call(b, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":%q,"bill":%q,"iban":%q,"amount":"850.00","currency":"EUR"}`, provision.DemoVendor, provision.DemoBill, ibanOnFile)))
	log.next(b)
	confirmed := el.count()
	var total, wizard, reads, gateway time.Duration
	var calls int
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		// Each bill of its own amount: two bills of the vendor of the
		// same amount and close dates ask a person (the duplicate
		// control).
		ref := fmt.Sprintf("BENCH-%d", i)
		if _, err := e.admin.AddBill(context.Background(), provision.DemoCompany, erp.Bill{Ref: ref, Vendor: vendor.ID, Currency: "EUR", Total: intent.Amount(10000 + 100*i)}); err != nil {
			b.Fatal(err)
		}
		args := fmt.Sprintf(`{"vendor":%q,"bill":%q,"iban":%q,"amount":"%d.00","currency":"EUR"}`, provision.DemoVendor, ref, ibanOnFile, 100+i)
		b.StartTimer()
		start := time.Now()
		r := call(b, c, "ap_pay_bill", args)
		total += time.Since(start)
		b.StopTimer()
		wantOK(b, r)
		s := log.next(b)
		wizard += s.wizard
		reads += s.odoo - s.wizard
		gateway += s.latency
		calls += s.calls
		b.Logf("payment %d: %s in all; calls to Odoo: %s", i, s.latency.Round(time.Millisecond), strings.Join(s.each, ", "))
		b.StartTimer()
	}
	if n := el.count() - confirmed; n > 0 {
		b.Fatalf("%d payments asked the user to confirm; the benchmark measures payments the policy allows outright", n)
	}
	b.ReportMetric(float64(total.Microseconds())/1000/float64(b.N), "ms/op")
	b.ReportMetric(float64(wizard.Microseconds())/1000/float64(b.N), "odoo-ms/op")
	b.ReportMetric(float64(reads.Microseconds())/1000/float64(b.N), "other-odoo-ms/op")
	b.ReportMetric(float64(gateway.Microseconds())/1000/float64(b.N), "gateway-ms/op")
	b.ReportMetric(float64(calls)/float64(b.N), "calls/op")
	if wizard > 0 {
		b.ReportMetric(float64(total)/float64(wizard), "x-odoo")
	}
	if per := float64(calls) / float64(b.N); per > paymentCallBudget {
		b.Errorf("%.1f calls to Odoo per payment; the budget is %d", per, paymentCallBudget)
	}
}

// proxyLog reads intentplane-mcp's JSON log (--log-format json
// --log-level debug) one decision at a time.
type proxyLog struct {
	buf  *lockedBuffer
	done int // the bytes of buf already read
}

// decisionStats is what the log shows of one decision: the calls to Odoo
// made for it, the time they took (odoo) and of it the time in Odoo's
// payment wizard (the account.payment.register calls), and the
// decision's latency.
type decisionStats struct {
	calls        int
	odoo, wizard time.Duration
	latency      time.Duration
	each         []string // each call and its time, in order: "res.partner.search_read 310ms"
}

// next waits (up to a minute: the child's stderr may lag behind its
// answer) for the next decision line and returns what the log shows of
// that decision.
func (l *proxyLog) next(tb testing.TB) decisionStats {
	tb.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		all := l.buf.String()
		var s decisionStats
		at := l.done
		for at < len(all) {
			end := strings.IndexByte(all[at:], '\n')
			if end < 0 {
				break
			}
			line := all[at : at+end]
			at += end + 1
			var m struct {
				Msg      string   `json:"msg"`
				Call     string   `json:"call"`
				Duration int64    `json:"duration"`   // nanoseconds
				Latency  *float64 `json:"latency_ms"` // the proxy's decision line only
			}
			if json.Unmarshal([]byte(line), &m) != nil {
				continue
			}
			switch m.Msg {
			case "odoo call":
				s.calls++
				s.odoo += time.Duration(m.Duration)
				s.each = append(s.each, fmt.Sprintf("%s %s", m.Call, time.Duration(m.Duration).Round(time.Millisecond)))
				if strings.HasPrefix(m.Call, "account.payment.register.") {
					s.wizard += time.Duration(m.Duration)
				}
			case "decision":
				if m.Latency == nil {
					continue // the gateway's own line; the proxy's follows
				}
				s.latency = time.Duration(*m.Latency * float64(time.Millisecond))
				l.done = at
				return s
			}
		}
		if time.Now().After(deadline) {
			tb.Fatalf("no decision line in the proxy's log after byte %d:\n%s", l.done, all[l.done:])
		}
		time.Sleep(10 * time.Millisecond)
	}
}
