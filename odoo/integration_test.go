package odoo_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/erp/erptest"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

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

// TestRealOdooConformance runs erptest against each real Odoo (odootest.EachReal): one
// database is set up with two companies and the three users, then each
// subtest gets a copy of it (duplicate_database, under a second).
func TestRealOdooConformance(t *testing.T) {
	odootest.EachReal(t, realConformance)
}

func realConformance(t *testing.T, s odootest.RealServer) {
	url, master := s.URL, s.Master
	ctx := context.Background()
	base := "intentplane_test_" + randomHex(t, 4)
	adminPW := fromTemplate(t, s, base, odoo.Identity{Login: "admin", Password: randomHex(t, 12)}).Password
	r, p, b := identities(t)
	tpl, err := provision.NewAdmin(provision.AdminConfig{URL: url, DB: base, MasterPassword: master, Admin: odoo.Identity{Login: "admin", Password: adminPW}, Timeout: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = tpl.DropDatabase(context.Background()) })
	start := time.Now()
	cfg, err := provision.Setup(ctx, tpl, provision.SetupConfig{
		Company: "northwind", CompanyName: "Northwind", Others: map[string]string{"southwind": "Southwind"},
		Reader: r, Payer: p, BankAdmin: b, Transport: s.Transport,
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
		a, err := provision.NewAdmin(provision.AdminConfig{URL: url, DB: db, MasterPassword: master, Admin: odoo.Identity{Login: "admin", Password: adminPW},
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
	t.Logf("calls of the connector to Odoo in the suite (%s): %d", s.Name, calls.Load())
}

// TestRealOdooPayment measures one allowed payment on each real Odoo and
// replays the traps of the fake there: a lost answer, look-alike account
// numbers, the rights probes, a default-template user.
func TestRealOdooPayment(t *testing.T) {
	odootest.EachReal(t, realPayment)
}

func realPayment(t *testing.T, s odootest.RealServer) {
	url, master := s.URL, s.Master
	ctx := context.Background()
	db := "intentplane_test_" + randomHex(t, 4)
	r, p, b := identities(t)
	admin := fromTemplate(t, s, db, odoo.Identity{Login: "admin", Password: randomHex(t, 12)})
	a, err := provision.NewAdmin(provision.AdminConfig{URL: url, DB: db, MasterPassword: master, Admin: admin, Timeout: 15 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = a.DropDatabase(context.Background()) })
	cfg, err := provision.Setup(ctx, a, provision.SetupConfig{Reader: r, Payer: p, BankAdmin: b, DemoData: true, Transport: s.Transport})
	if err != nil {
		t.Fatal(err)
	}
	c, err := odoo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	vendor, acct, bill, bill2 := demoRecords(t, c)
	if err := c.Login(ctx); err != nil {
		t.Fatal(err)
	}
	before, start := c.Calls(), time.Now()
	pay, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(85000), Key: "real-1"})
	if err != nil {
		t.Fatal(err)
	}
	n, took := c.Calls()-before, time.Since(start)
	t.Logf("one allowed payment on Odoo %s: %d calls, %s; payment %+v", s.Name, n, took.Round(time.Millisecond), pay)
	if n > 6 {
		t.Errorf("%d calls, want at most 6", n)
	}
	before, start = c.Calls(), time.Now()
	if again, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(85000), Key: "real-1"}); err != nil || again.ID != pay.ID {
		t.Errorf("the same key again: %+v, %v", again, err)
	}
	t.Logf("the same key again: %d call, %s", c.Calls()-before, time.Since(start).Round(time.Millisecond))

	t.Run("LostAnswer", func(t *testing.T) {
		cut := &cutAfter{marker: "action_create_payments"}
		lc := cfg
		lc.HTTPClient = &http.Client{Transport: cut}
		lossy, _ := odoo.New(lc)
		_, err := lossy.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill2.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "real-lost"})
		if !errors.Is(err, odoo.ErrNetwork) {
			t.Errorf("lost answer and lost read-back: %v, want ErrNetwork", err)
		}
		// Asked again once the network is back: found by its key, not paid twice.
		p2, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill2.ID, BankAccount: acct.ID, Amount: eur(1000), Key: "real-lost"})
		ps, _ := c.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: bill2.ID})
		if err != nil || len(ps) != 1 || ps[0].ID != p2.ID {
			t.Errorf("after the lost answer: %+v, %v; payments %+v", p2, err, ps)
		}
	})
	t.Run("TwoProcessesOneBill", func(t *testing.T) {
		// Two connectors sharing nothing pay what bill2 still owes at the
		// same moment: Odoo posts both; the slow one's is cancelled.
		owed, before := paidOnBill(t, c, bill2.ID, "")
		err := payAtTheSameMoment(t, cfg, c, bill2.ID, acct.ID, owed, owed)
		if !errors.Is(err, erp.ErrNotWritten) {
			t.Errorf("the slow process: %v; want nothing written (its payment cancelled)", err)
		}
		residual, after := paidOnBill(t, c, bill2.ID, "")
		if residual != 0 || after-before != owed {
			t.Errorf("bill2 after two processes paid its %d: residual %d, posted %d more; want 0 and %d", owed, residual, after-before, owed)
		}
	})
	t.Run("ResetToDraftSinceDecision", func(t *testing.T) {
		// Odoo 18 and 19 pay a draft bill; the bill read posted for the
		// decision and reset to draft since is refused, nothing paid.
		nb, err := a.AddBill(ctx, provision.DemoCompany, erp.Bill{Ref: "DRAFT-1", Vendor: vendor.ID, Currency: "EUR", Total: 5000})
		if err != nil {
			t.Fatal(err)
		}
		bs, err := c.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: nb.ID, WithPayments: true})
		if err != nil || len(bs) != 1 || bs[0].State != erp.StatePosted {
			t.Fatalf("the bill as decided: %+v, %v", bs, err)
		}
		if err := a.ResetToDraft(ctx, provision.DemoCompany, nb.ID); err != nil {
			t.Fatal(err)
		}
		p, err := c.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: nb.ID, BankAccount: acct.ID, Amount: eur(5000), Key: "real-draft",
			Decided: &bs[0], Account: &acct})
		if !errors.Is(err, erp.ErrRefused) || !strings.Contains(err.Error(), "posted") {
			t.Errorf("paying the bill reset to draft: %+v, %v; want refused as not posted", p, err)
		} else {
			t.Log(err)
		}
		if ps, err := c.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: nb.ID}); err != nil || len(ps) != 0 {
			t.Errorf("payments of the draft bill: %+v, %v; want none", ps, err)
		}
	})
	t.Run("LookAlikeNumber", func(t *testing.T) {
		odd, err := a.AddBankAccount(ctx, provision.DemoCompany, erp.BankAccount{Vendor: vendor.ID, Number: "CH93 0076 2011 6238 5295 \u04107", Trusted: true, Active: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("Odoo stored %q as sanitized %q", odd.Number, odd.Sanitized)
		as, err := c.BankAccounts(ctx, provision.DemoCompany, erp.BankAccountQuery{Number: "CH9300762011623852957"})
		if err != nil || len(as) != 0 {
			t.Errorf("look-alike matched: %+v, %v", as, err)
		}
	})
	t.Run("DefaultTemplateUserCaught", func(t *testing.T) {
		if _, err := a.EnsureUser(ctx, provision.User{Name: "too much", Identity: p, Groups: []string{"account.group_account_invoice", "base.group_partner_manager"},
			Companies: []string{provision.DemoCompany}}); err != nil {
			t.Fatal(err)
		}
		var re *odoo.RightsError
		if err := c.CheckRights(ctx, provision.DemoCompany); !errors.As(err, &re) {
			t.Errorf("CheckRights = %v; want the payer caught", err)
		}
		if _, err := a.EnsureUser(ctx, provision.User{Name: "payer", Identity: p, Groups: provision.PayerGroups, Companies: []string{provision.DemoCompany}}); err != nil {
			t.Fatal(err)
		}
		if err := c.CheckRights(ctx, provision.DemoCompany); err != nil {
			t.Errorf("CheckRights after the fix: %v", err)
		}
	})
}
