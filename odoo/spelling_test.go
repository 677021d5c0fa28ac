package odoo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestAPAccountSpellingsOnFakeOdoo (issue 24): a vendor's account typed in
// Odoo the ways people paste an IBAN (an "IBAN " or "IBAN: " prefix in
// any case, no-break or narrow no-break spaces from a PDF, hyphens, lower
// case, spaces around) is payable when the agent names it in any
// spelling, and the payment goes to that account; get_vendor shows it in
// print format. What Odoo stores is left as typed.
func TestAPAccountSpellingsOnFakeOdoo(t *testing.T) {
	t.Parallel()
	srv := odootest.NewServer("fake-master")
	t.Cleanup(srv.Close)
	e := newAPEnv(t, odootest.RealServer{URL: srv.URL, Master: "fake-master"}, "spellings", srv)
	ctx := context.Background()
	for i, c := range []struct{ typed, iban string }{
		{"IBAN DE75 5121 0800 1245 1261 99", "DE75512108001245126199"},
		{"IBAN: GB29 NWBK 6016 1331 9268 19", "GB29NWBK60161331926819"},
		{"FR14\u00a02004\u00a01010\u00a00505\u00a00001\u00a03M02\u00a0606", "FR1420041010050500013M02606"},
		{"NL91\u202fABNA\u202f0417\u202f1643\u202f00", "NL91ABNA0417164300"},
		{"be68 5390 0754 7034", "BE68539007547034"},
		{"CH93-0076-2011-6238-5295-7", "CH9300762011623852957"},
		{"iban it60 x054 2811 1010 0000 0123 456", "IT60X0542811101000000123456"},
		{" ES91 2100 0418 4502 0005 1332\u00a0", "ES9121000418450200051332"},
	} {
		t.Run(fmt.Sprint(i), func(t *testing.T) {
			if got, err := normalize.IBAN(c.typed); err != nil || got != c.iban {
				t.Fatalf("the test's IBAN %q: %q, %v", c.typed, got, err)
			}
			name := fmt.Sprintf("Spelling %d GmbH", i)
			v, err := e.admin.AddPartner(ctx, provision.DemoCompany, provision.Partner{Name: name, Company: true})
			if err != nil {
				t.Fatal(err)
			}
			a := e.addAccount(t, v, c.typed)
			ref := fmt.Sprintf("SP-%d", i)
			b := e.addBill(t, v, "", ref, 10000)
			g := e.decide(t, ap.ActionGetVendor, map[string]any{"vendor": name})
			if !g.Executed || !strings.Contains(g.Output, normalize.FormatIBAN(c.iban)) {
				t.Errorf("get_vendor of an account typed %q: %s %s; want %s shown", c.typed, g.Output, refusal(g), normalize.FormatIBAN(c.iban))
			}
			d := e.decideFirst(t, payArgs(name, ref, normalize.FormatIBAN(c.iban), "100.00"))
			if !d.Executed {
				t.Fatalf("account typed %q: %s", c.typed, refusal(d))
			}
			bs, err := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: b.ID, WithPayments: true})
			if err != nil || len(bs) != 1 || len(bs[0].Payments) != 1 || bs[0].Payments[0].BankAccount != a.ID {
				t.Errorf("account typed %q: bill %+v, %v; want one payment to bank account %s", c.typed, bs, err, a.ID)
			}
		})
	}
	// The same number typed without the prefix at another vendor is the
	// same account: held by two vendors, it is paid to neither.
	twin, err := e.admin.AddPartner(ctx, provision.DemoCompany, provision.Partner{Name: "Spelling Twin", Company: true})
	if err != nil {
		t.Fatal(err)
	}
	e.addAccount(t, twin, "DE75512108001245126199")
	e.addBill(t, twin, "", "SP-TWIN", 10000)
	for _, p := range [][2]string{{"Spelling 0 GmbH", "SP-0"}, {"Spelling Twin", "SP-TWIN"}} {
		d := e.decide(t, ap.ActionPayBill, payArgs(p[0], p[1], "DE75512108001245126199", "50.00"))
		if d.Executed || d.Refusal == nil || !strings.Contains(d.Refusal.Message, "more than one vendor") {
			t.Errorf("%s after the same number was typed at another vendor without its prefix: %s", p[0], refusal(d))
		}
	}
}

// TestAPCurrencyExponentsOnFakeOdoo (issue 24): bills in JPY (no
// decimals) and KWD (three) are paid through the pack on the fake Odoo at
// their own minor unit, against budgets in their currencies: Odoo
// registers ¥50,000 and 60.250 KWD, and the bills owe the rest.
func TestAPCurrencyExponentsOnFakeOdoo(t *testing.T) {
	t.Parallel()
	srv := odootest.NewServer("fake-master")
	t.Cleanup(srv.Close)
	e := newAPEnv(t, odootest.RealServer{URL: srv.URL, Master: "fake-master"}, "exponents", srv)
	ctx := context.Background()
	for _, c := range []struct {
		currency, rate    string
		total             intent.Amount
		pay, left         string
		paid, leftInMinor intent.Amount
	}{
		{"JPY", "160", 80000, "50000", "30000", 50000, 30000},
		{"KWD", "0.33", 100000, "60.250", "39.750", 60250, 39750},
	} {
		t.Run(c.currency, func(t *testing.T) {
			if err := e.admin.SetRate(ctx, provision.DemoCompany, c.currency, time.Now().AddDate(0, 0, -40).Format(time.DateOnly), c.rate); err != nil {
				t.Fatal(err)
			}
			ref := "EXP-" + c.currency
			b, err := e.admin.AddBill(ctx, provision.DemoCompany, erp.Bill{Ref: ref, Vendor: e.vendor.ID, Currency: c.currency, Total: c.total})
			if err != nil {
				t.Fatal(err)
			}
			now := e.now()
			tok, err := mandate.Issue(mandate.Mandate{
				ID: "m-" + c.currency, Audience: apAudience, Owner: provision.DemoCompany, Scope: []intent.Action{ap.ActionPayBill, ap.ActionListOpenBills},
				Budget: intent.Money{Currency: c.currency, Amount: 10 * c.total}, Mode: mandate.ModeKnownCounterparties,
				NotBefore: now.Add(-time.Minute), Expiry: now.Add(time.Hour),
			}, "cfo", apIssuer)
			if err != nil {
				t.Fatal(err)
			}
			args := payArgs(provision.DemoVendor, ref, provision.DemoIBAN, c.pay)
			args["currency"] = c.currency
			d := e.decideWith(t, tok, args)
			if d.Verdict == intent.StepUp {
				d = e.decideWith(t, tok, args, e.confirm(t, d))
			}
			if !d.Executed {
				t.Fatalf("%s %s: %s", c.pay, c.currency, refusal(d))
			}
			bs, err := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: b.ID, WithPayments: true})
			if err != nil || len(bs) != 1 || len(bs[0].Payments) != 1 {
				t.Fatalf("bill %+v, %v; want one payment", bs, err)
			}
			if p := bs[0].Payments[0].Amount; p != (intent.Money{Currency: c.currency, Amount: c.paid}) || bs[0].Residual != c.leftInMinor {
				t.Errorf("Odoo registered %v, the bill owes %d; want %s %s paid, %d left", p, bs[0].Residual, c.pay, c.currency, c.leftInMinor)
			}
			if !strings.Contains(d.Output, `"residual":"`+c.left+`"`) {
				t.Errorf("payment output %s; want the residual %s", d.Output, c.left)
			}
		})
	}
}

// decideWith decides an ap.pay_bill of args under the mandate tok, with
// approvals as.
func (e *apEnv) decideWith(tb testing.TB, tok string, args map[string]any, as ...approval.Approval) gateway.Decision {
	tb.Helper()
	body, err := json.Marshal(map[string]any{"action": ap.ActionPayBill, "args": args})
	if err != nil {
		tb.Fatal(err)
	}
	d, err := e.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: body, Approvals: as})
	if err != nil {
		tb.Fatalf("Decide: %v", err)
	}
	return d
}

// confirm is alice's approval of the operation d stepped up.
func (e *apEnv) confirm(tb testing.TB, d gateway.Decision) approval.Approval {
	tb.Helper()
	at := time.Now().Add(e.skew)
	a, err := approval.Sign(approval.Approval{ID: "alice-" + randomHex(tb, 8), Operation: d.OperationHash, MandateID: d.Operation.MandateID,
		Approver: "alice", IssuedAt: at, ExpiresAt: at.Add(10 * time.Minute)}, apApprovers["alice"])
	if err != nil {
		tb.Fatal(err)
	}
	return a
}
