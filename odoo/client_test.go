package odoo_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

func eur(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }

// demoRecords returns the demo vendor, its account on file and its bills.
func demoRecords(t testing.TB, c *odoo.Client) (erp.Vendor, erp.BankAccount, erp.Bill, erp.Bill) {
	t.Helper()
	ctx := context.Background()
	vs, err := c.Vendors(ctx, provision.DemoCompany, erp.VendorQuery{Name: provision.DemoVendor})
	if err != nil || len(vs) != 1 {
		t.Fatalf("vendor: %v, %d", err, len(vs))
	}
	as, err := c.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{Vendor: vs[0].ID, Number: provision.DemoIBAN})
	if err != nil || len(as) != 1 {
		t.Fatalf("account: %v, %d", err, len(as))
	}
	open, err := c.Bills(ctx, provision.DemoCompany, erp.BillQuery{Vendor: vs[0].ID, Open: true})
	if err != nil || len(open) != 3 {
		t.Fatalf("bills: %v, %d; want the demo's two and the one left for intentplane-mcp", err, len(open))
	}
	byRef := map[string]erp.Bill{}
	for _, b := range open {
		byRef[b.Ref] = b
	}
	return vs[0], as[0], byRef[provision.DemoBill], byRef[provision.DemoBill2]
}

// TestRoundTripsOfOnePayment counts the XML-RPC calls of one allowed
// payment once the uids and the currency are cached.
func TestRoundTripsOfOnePayment(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		_, acct, bill, _ := demoRecords(t, e.client)
		ctx := context.Background()
		if err := e.client.Login(ctx); err != nil { // uids cached
			t.Fatal(err)
		}
		before := e.srv.Calls()
		p, err := e.client.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(85000), Key: "op-1"})
		if err != nil {
			t.Fatal(err)
		}
		n := e.srv.Calls() - before
		t.Logf("one allowed payment: %d calls", n)
		if n > 6 {
			t.Errorf("one payment took %d calls, want at most 6", n)
		}
		if p.State != erp.PaymentPosted || p.Key != "op-1" || p.BankAccount != acct.ID {
			t.Errorf("payment = %+v", p)
		}
		bs, _ := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: bill.ID})
		if len(bs) != 1 || bs[0].PaymentState != erp.Paid || bs[0].Residual != 0 {
			t.Errorf("bill after payment = %+v", bs)
		}
		before = e.srv.Calls()
		if again, err := e.client.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(85000), Key: "op-1"}); err != nil || again.ID != p.ID {
			t.Errorf("the same key again = %+v, %v", again, err)
		}
		if n := e.srv.Calls() - before; n != 1 {
			t.Errorf("a repeated key took %d calls, want 1 (the lookup)", n)
		}
	})
}

// BenchmarkRegisterPayment pays a small part of one bill per iteration
// against the fake server and reports the XML-RPC calls per payment.
func BenchmarkRegisterPayment(b *testing.B) {
	e := newFake(b, nil, false)
	ctx := context.Background()
	v, err := e.admin.AddVendor(ctx, "northwind", erp.Vendor{Name: "Bench Supplies", Active: true})
	if err != nil {
		b.Fatal(err)
	}
	a, err := e.admin.AddBankAccount(ctx, "northwind", erp.BankAccount{Vendor: v.ID, Number: "DE89370400440532013000", Trusted: true, Active: true})
	if err != nil {
		b.Fatal(err)
	}
	bill, err := e.admin.AddBill(ctx, "northwind", erp.Bill{Ref: "BENCH-1", Vendor: v.ID, Currency: "EUR", Total: 1 << 40})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := e.client.Bills(ctx, "northwind", erp.BillQuery{ID: bill.ID}); err != nil { // uids and currency cached
		b.Fatal(err)
	}
	if err := e.client.Login(ctx); err != nil {
		b.Fatal(err)
	}
	start := e.srv.Calls()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		if _, err := e.client.RegisterPayment(ctx, "northwind", erp.PaymentRequest{Bill: bill.ID, BankAccount: a.ID, Amount: eur(1), Key: "bench-" + strings.Repeat("x", i%3) + itoaInt(i)}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(e.srv.Calls()-start)/float64(b.N), "calls/op")
}

func itoaInt(i int) string {
	const digits = "0123456789"
	if i == 0 {
		return "0"
	}
	var s []byte
	for ; i > 0; i /= 10 {
		s = append([]byte{digits[i%10]}, s...)
	}
	return string(s)
}

// TestLostAnswerDoesNotPayTwice loses the wizard's answer after Odoo
// committed the payment: the client finds the payment by its key instead
// of paying again, now and when asked again.
func TestLostAnswerDoesNotPayTwice(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		_, acct, _, bill2 := demoRecords(t, e.client)
		ctx := context.Background()
		e.srv.LoseAnswer("account.payment.register", "action_create_payments", 1)
		r := erp.PaymentRequest{Bill: bill2.ID, BankAccount: acct.ID, Amount: eur(100000), Key: "lost-1"}
		p, err := e.client.RegisterPayment(ctx, provision.DemoCompany, r)
		if err != nil {
			t.Fatalf("payment with a lost answer: %v; want it found by its key", err)
		}
		again, err := e.client.RegisterPayment(ctx, provision.DemoCompany, r)
		if err != nil || again.ID != p.ID {
			t.Errorf("asked again: %+v, %v; want payment %s", again, err, p.ID)
		}
		ps, _ := e.client.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: bill2.ID})
		bs, _ := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: bill2.ID})
		if len(ps) != 1 || len(bs) != 1 || bs[0].Residual != 140000 {
			t.Errorf("after a lost answer: %d payments, bill %+v; want 1 payment and 1,400.00 left", len(ps), bs)
		}
	})
}

// TestLostAnswerUnknownOutcome: when neither the answer nor the payment
// can be found (the network fails from the wizard's run on), the error
// says the outcome is unknown, and nothing is retried.
func TestLostAnswerUnknownOutcome(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		_, acct, bill, _ := demoRecords(t, e.client)
		ctx := context.Background()
		cut := &cutAfter{marker: "action_create_payments"}
		cfg := e.cfg
		cfg.HTTPClient = &http.Client{Transport: cut}
		c, _ := odoo.New(cfg)
		_, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(85000), Key: "lost-2"})
		if !errors.Is(err, odoo.ErrNetwork) || errors.Is(err, erp.ErrRefused) || !strings.Contains(err.Error(), "may or may not") {
			t.Fatalf("error = %v; want an unknown outcome wrapping ErrNetwork", err)
		}
		if n := cut.after.Load(); n != 1 {
			t.Errorf("%d calls after the lost one; want 1 (the lookup by key), no retry", n)
		}
		ps, _ := e.client.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: bill.ID})
		if len(ps) != 1 {
			t.Errorf("%d payments; want exactly the one the lost call made", len(ps))
		}
	})
}

// cutAfter is a RoundTripper that lets calls through until one whose body
// holds marker; that one runs but its answer is lost, and every later call
// fails.
type cutAfter struct {
	marker string
	cut    atomic.Bool
	after  atomic.Int64
}

func (c *cutAfter) RoundTrip(r *http.Request) (*http.Response, error) {
	if c.cut.Load() {
		c.after.Add(1)
		return nil, errors.New("connection reset by peer")
	}
	var body []byte
	if r.Body != nil { // GET /web/version has none
		body, _ = io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
	}
	resp, err := http.DefaultTransport.RoundTrip(r)
	if bytes.Contains(body, []byte(c.marker)) || strings.HasSuffix(r.URL.Path, "/"+c.marker) { // XML-RPC, JSON-2
		c.cut.Store(true)
		if err == nil {
			resp.Body.Close()
		}
		return nil, errors.New("unexpected EOF")
	}
	return resp, err
}

// TestPaymentsOfABill: Odoo cannot filter payments on reconciled_bill_ids
// (the fake, like Odoo, ignores such a leaf); the client reads it and
// gives each bill its own payments only.
func TestPaymentsOfABill(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		_, acct, bill, bill2 := demoRecords(t, e.client)
		ctx := context.Background()
		for i, b := range []erp.Bill{bill, bill2} {
			if _, err := e.client.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: b.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "k" + itoaInt(i)}); err != nil {
				t.Fatal(err)
			}
		}
		for _, b := range []erp.Bill{bill, bill2} {
			ps, err := e.client.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: b.ID})
			if err != nil || len(ps) != 1 || ps[0].Bill != b.ID {
				t.Errorf("payments of %s: %+v, %v", b.ID, ps, err)
			}
		}
		all, err := e.client.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{})
		if err != nil || len(all) != 3 { // and the demo's payment of provision.DemoPaidBill
			t.Errorf("all payments: %d, %v; want 3", len(all), err)
		}
	})
}

// TestLookAlikeNumbers: Odoo's clean-up keeps Unicode letters and the
// underscore; the client never matches or writes such a number.
func TestLookAlikeNumbers(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		v, _, _, _ := demoRecords(t, e.client)
		ctx := context.Background()
		// A clerk typed the number with a Cyrillic A in it.
		odd, err := e.admin.AddBankAccount(ctx, provision.DemoCompany, erp.BankAccount{Vendor: v.ID, Number: "CH93 0076 2011 6238 5295 \u04107", Trusted: true, Active: true})
		if err != nil {
			t.Fatal(err)
		}
		if odd.Sanitized == erp.Sanitize(odd.Number) {
			t.Fatalf("Odoo's sanitized number %q should keep the look-alike", odd.Sanitized)
		}
		for _, q := range []string{"CH9300762011623852957", "CH93 0076 2011 6238 5295 \u04107", "CH93_0076"} {
			as, err := e.client.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{Number: q})
			if err != nil || len(as) != 0 {
				t.Errorf("BankAccounts(%q) = %+v, %v; want none", q, as, err)
			}
		}
		if _, err := e.client.ChangeBankAccount(ctx, provision.DemoCompany, erp.BankChange{Vendor: v.ID, Number: "CH93 0076 2011 6238 5295 \u04107", Key: "c1"}); !errors.Is(err, erp.ErrRefused) {
			t.Errorf("writing a look-alike number: %v, want ErrRefused", err)
		}
	})
}

// TestRightsAreChecked: the default user template (no groups given) can
// edit bank accounts, which CheckRights catches.
func TestRightsAreChecked(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		ctx := context.Background()
		if _, err := e.admin.EnsureUser(ctx, provision.User{Name: "too much", Identity: e.cfg.Payer, Groups: []string{"account.group_account_invoice", "base.group_partner_manager"},
			Companies: []string{"northwind"}}); err != nil {
			t.Fatal(err)
		}
		c, _ := odoo.New(e.cfg)
		var re *odoo.RightsError
		if err := c.CheckRights(ctx, provision.DemoCompany); !errors.As(err, &re) || re.Role != "payer" {
			t.Fatalf("CheckRights = %v; want the payer caught", err)
		}
		as, _ := c.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{})
		for _, a := range as {
			// Unlinked: gone on 17; from 18 Odoo archives it instead.
			if strings.HasPrefix(a.Number, "PROBE") && a.Active {
				t.Errorf("the probe's account %s was left behind active", a.ID)
			}
		}
	})
}

func TestFaults(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		ctx := context.Background()
		secret := e.cfg.Reader.Password
		tests := []struct {
			name string
			run  func() error
			want []error
		}{
			{"wrong password", func() error {
				cfg := e.cfg
				cfg.Reader.Password = "wrong-" + secret
				c, _ := odoo.New(cfg)
				_, err := c.Vendors(ctx, provision.DemoCompany, erp.VendorQuery{})
				return err
			}, []error{odoo.ErrAccessDenied}},
			{"unknown database", func() error {
				cfg := e.cfg
				cfg.DB = "nodb"
				c, _ := odoo.New(cfg)
				return c.Login(ctx)
			}, []error{odoo.ErrServer}},
			{"wrong master password", func() error {
				a, _ := provision.NewAdmin(provision.AdminConfig{URL: e.srv.URL, DB: "x", MasterPassword: "wrong"})
				return a.CreateDatabase(ctx)
			}, []error{odoo.ErrAccessDenied}},
			{"no payer", func() error {
				cfg := e.cfg
				cfg.Payer = odoo.Identity{}
				c, _ := odoo.New(cfg)
				_, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: "1", BankAccount: "1", Amount: eur(1), Key: "k"})
				return err
			}, []error{odoo.ErrNoIdentity}},
			{"unknown company", func() error {
				_, err := e.client.RegisterPayment(ctx, "nosuch", erp.PaymentRequest{Bill: "1", BankAccount: "1", Amount: eur(1), Key: "k"})
				return err
			}, []error{erp.ErrNotFound}},
			{"no key", func() error {
				_, err := e.client.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: "1", BankAccount: "1", Amount: eur(1)})
				return err
			}, []error{erp.ErrRefused}},
			{"cancelled", func() error {
				cctx, cancel := context.WithCancel(ctx)
				cancel()
				_, err := e.client.Vendors(cctx, provision.DemoCompany, erp.VendorQuery{})
				return err
			}, []error{context.Canceled}},
		}
		for _, tt := range tests {
			err := tt.run()
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("%s: error %v, want %v", tt.name, err, w)
				}
			}
			if err != nil && strings.Contains(err.Error(), secret) {
				t.Errorf("%s: the error shows a password: %v", tt.name, err)
			}
		}
	})
}

// TestFaultsHideCredentials: a fault string echoing a password (a
// traceback quoting the call) is cleaned before it is returned.
func TestFaultsHideCredentials(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server) {
		e := newFakeXMLRPC(t, srv, true)
		pw := e.cfg.Reader.Password
		e.srv.Answer("res.partner", "search_read", `<?xml version='1.0'?><methodResponse><fault><value><struct>`+
			`<member><name>faultCode</name><value><int>1</int></value></member>`+
			`<member><name>faultString</name><value><string>Traceback (most recent call last):
  File "x", line 1
ValueError: bad call ('db', 2, '`+pw+`')</string></value></member></struct></value></fault></methodResponse>`)
		_, err := e.client.Vendors(context.Background(), provision.DemoCompany, erp.VendorQuery{})
		var f *odoo.Fault
		if !errors.As(err, &f) || f.Code != 1 || !errors.Is(err, odoo.ErrServer) {
			t.Fatalf("error = %v; want a *Fault 1", err)
		}
		if strings.Contains(err.Error(), pw) || !strings.Contains(f.Message, "ValueError: bad call") {
			t.Errorf("fault = %q", f.Message)
		}
	})
}

// TestBadAnswers: answers of the wrong shape are errors, never panics.
func TestBadAnswers(t *testing.T) {
	t.Parallel()
	eachVersion(t, func(t *testing.T, srv *odootest.Server) {
		e := newFakeXMLRPC(t, srv, true)
		ctx := context.Background()
		for _, body := range []string{
			"not xml at all",
			`<?xml version='1.0'?><methodResponse><params><param><value><string>x</string></value></param></params></methodResponse>`,
			`<?xml version='1.0'?><methodResponse><params><param><value><array><data><value><int>1</int></value></data></array></value></param></params></methodResponse>`,
			`<?xml version='1.0'?><methodResponse><params><param><value><array><data><value><struct><member><name>id</name><value><string>7</string></value></member></struct></value></data></array></value></param></params></methodResponse>`,
			`<?xml version='1.0'?><methodResponse><params><param><value><array><data><value><struct><member><name>id</name><value><int>7</int></value></member><member><name>partner_id</name><value><array><data><value><int>1</int></value></data></array></value></member></struct></value></data></array></value></param></params></methodResponse>`,
			`<?xml version='1.0'?><methodResponse><fault><value><struct><member><name>faultCode</name><value><string>warning -- AccessError</string></value></member></struct></value></fault></methodResponse>`,
		} {
			e.srv.Answer("res.partner.bank", "search_read", body)
			if _, err := e.client.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{}); err == nil {
				t.Errorf("answer %.60q: no error", body)
			}
		}
	})
}

// TestTimeout: a server that does not answer in time gives ErrNetwork.
func TestTimeout(t *testing.T) {
	t.Parallel()
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	defer slow.Close()
	c, err := odoo.New(odoo.Config{URL: slow.URL, DB: "x", Reader: odoo.Identity{Login: "r", Password: "p"}, Timeout: 50 * time.Millisecond,
		Companies: map[string]int64{"c": 1}})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err = c.Vendors(context.Background(), "c", erp.VendorQuery{})
	if !errors.Is(err, odoo.ErrNetwork) || time.Since(start) > 2*time.Second {
		t.Errorf("error %v after %s; want ErrNetwork within the timeout", err, time.Since(start))
	}
}

// TestNothingWritten: a payment that fails before Odoo ran it (the
// connection refused, a fault of the wizard's run, which Odoo rolls back)
// wraps erp.ErrNotWritten; a lost answer does not.
func TestNothingWritten(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		e := newFakeOn(t, nil, ft, true)
		_, acct, bill, bill2 := demoRecords(t, e.client)
		ctx := context.Background()
		decided := func(b erp.Bill, key string) erp.PaymentRequest {
			return erp.PaymentRequest{Bill: b.ID, BankAccount: acct.ID, Amount: eur(1000), Key: key, Decided: &b, Account: &acct}
		}
		cfg := e.cfg
		cfg.URL = "http://127.0.0.1:1" // nothing listens: the connection is refused
		down, _ := odoo.New(cfg)
		for _, r := range []erp.PaymentRequest{decided(bill, "down-1"), {Bill: bill.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "down-2"}} {
			if _, err := down.RegisterPayment(ctx, provision.DemoCompany, r); !errors.Is(err, erp.ErrNotWritten) || !errors.Is(err, odoo.ErrNotSent) {
				t.Errorf("connection refused (decided %t): %v; want ErrNotWritten and ErrNotSent", r.Decided != nil, err)
			}
		}
		answerFault(e, ft, "account.payment.register", "action_create_payments", 4, "You are not allowed to create 'Payments' (account.payment) records.")
		if _, err := e.client.RegisterPayment(ctx, provision.DemoCompany, decided(bill2, "denied-1")); !errors.Is(err, erp.ErrNotWritten) || !errors.Is(err, odoo.ErrAccess) {
			t.Errorf("an access fault of the wizard's run: %v; want ErrNotWritten", err)
		}
		answerFault(e, ft, "account.payment.register", "action_create_payments", 0, "")
		if ps, _ := e.client.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: bill2.ID}); len(ps) != 0 {
			t.Errorf("payments after the faults: %+v", ps)
		}
		e.srv.LoseAnswer("account.payment.register", "action_create_payments", 1)
		cut := &cutAfter{marker: "action_create_payments"}
		lossy := e.cfg
		lossy.HTTPClient = &http.Client{Transport: cut}
		lc, _ := odoo.New(lossy)
		if _, err := lc.RegisterPayment(ctx, provision.DemoCompany, decided(bill2, "lost-3")); err == nil || errors.Is(err, erp.ErrNotWritten) || errors.Is(err, erp.ErrRefused) {
			t.Errorf("a lost answer: %v; want an unknown outcome", err)
		}
	})
}
