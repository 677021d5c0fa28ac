// Package erptest is the conformance suite every erp.Source passes: erp.Mem,
// the Odoo connector against its fake server (17, 18 and 19; XML-RPC, and
// JSON-2 on 19), and a real Odoo 17, 18 and 19.
// It checks company scoping (another company's records are never read,
// paid or changed, and look exactly like records that do not exist), the
// validation a payment must pass whatever the caller checked before,
// idempotency keys, bank-account changes and atomic payments.
//
// It imports erp, core/intent, go-cmp and the testing package; it must
// never import a connector, a pack or core/gateway.
package erptest

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// Seeder enters a company's data into the ERP under test, as the ERP's
// own users would (Mem's Add methods; for Odoo, an administrator's calls).
// Each method returns the record as stored, with its ID.
type Seeder interface {
	AddVendor(ctx context.Context, company string, v erp.Vendor) (erp.Vendor, error)
	AddBankAccount(ctx context.Context, company string, a erp.BankAccount) (erp.BankAccount, error)
	AddBill(ctx context.Context, company string, b erp.Bill) (erp.Bill, error)
}

// Env is one ERP under test, empty of records for both companies.
type Env struct {
	Source erp.Source
	Seeder Seeder
	// Company and Other are two distinct companies the ERP knows.
	Company, Other string
	// Currency is the currency of both companies; "" means EUR.
	Currency string
}

// Run runs the suite. newEnv is called once per subtest and must return a
// fresh ERP (or fresh companies).
func Run(t *testing.T, newEnv func(t *testing.T) Env) {
	tests := []struct {
		name string
		fn   func(t *testing.T, e Env)
	}{
		{"VendorsScoped", testVendors},
		{"BankAccountsSanitizedAndScoped", testBankAccounts},
		{"BillsOpenAndCreditNotes", testBills},
		{"PaymentFullPartialIdempotent", testPayments},
		{"PaymentsReadWithBillsAndDecided", testDecidedPayments},
		{"PaymentRefusals", testPaymentRefusals},
		{"ChangeBankAccount", testChangeBankAccount},
		{"PromotedAccountRestartsCoolingOff", testPromotedAccount},
		{"ConcurrentPaymentsOfOneBill", testConcurrentPayments},
		{"VendorCountryBillDateVendorPayments", testControlFields},
		{"PaymentNettedWithCreditNotes", testNetting},
		{"HandPaymentsSince", testHandPaymentsSince},
		{"RatesLatestScopedNeverOne", testRates},
		{"DecisionReadsBoundedHistory", testDecisionRead},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newEnv(t))
		})
	}
}

// world is a small data set in both companies.
type world struct {
	acme, acmeOther, globex erp.Vendor // acmeOther: a vendor of the same name in the other company
	acmeIBAN, acmeOld       erp.BankAccount
	acmeUntrusted           erp.BankAccount
	globexIBAN              erp.BankAccount
	bill, bill2, otherBill  erp.Bill
}

const (
	ibanACME      = "DE89 3704 0044 0532 0130 00"
	ibanACMEOld   = "NL91ABNA0417164300"
	ibanUntrusted = "GB29NWBK60161331926819"
	ibanGlobex    = "FR1420041010050500013M02606"
	ibanNew       = "CH9300762011623852957"
)

func seed(t *testing.T, e Env) world {
	t.Helper()
	ctx := context.Background()
	s := e.Seeder
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("seeding: %v", err)
		}
	}
	var w world
	var err error
	w.acme, err = s.AddVendor(ctx, e.Company, erp.Vendor{Name: "ACME Supplies", Phone: "+49 30 1234567", Active: true})
	must(err)
	w.acmeOther, err = s.AddVendor(ctx, e.Other, erp.Vendor{Name: "ACME Supplies", Phone: "+33 1 7654321", Active: true})
	must(err)
	w.globex, err = s.AddVendor(ctx, e.Other, erp.Vendor{Name: "Globex Parts", Active: true})
	must(err)
	w.acmeOld, err = s.AddBankAccount(ctx, e.Company, erp.BankAccount{Vendor: w.acme.ID, Number: ibanACMEOld, Trusted: true, Active: false})
	must(err)
	w.acmeIBAN, err = s.AddBankAccount(ctx, e.Company, erp.BankAccount{Vendor: w.acme.ID, Number: ibanACME, Trusted: true, Active: true})
	must(err)
	w.acmeUntrusted, err = s.AddBankAccount(ctx, e.Company, erp.BankAccount{Vendor: w.acme.ID, Number: ibanUntrusted, Trusted: false, Active: true, Sequence: 20})
	must(err)
	w.globexIBAN, err = s.AddBankAccount(ctx, e.Other, erp.BankAccount{Vendor: w.globex.ID, Number: ibanGlobex, Trusted: true, Active: true})
	must(err)
	due := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	issued := time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC) // the invoice date of w.bill
	w.bill, err = s.AddBill(ctx, e.Company, erp.Bill{Ref: "INV-2290", Vendor: w.acme.ID, Currency: "EUR", Total: 125000, Due: due, Date: issued, BankAccount: w.acmeIBAN.ID})
	must(err)
	w.bill2, err = s.AddBill(ctx, e.Company, erp.Bill{Ref: "INV-2291", Vendor: w.acme.ID, Currency: "EUR", Total: 48000, Due: due})
	must(err)
	w.otherBill, err = s.AddBill(ctx, e.Other, erp.Bill{Ref: "INV-7001", Vendor: w.globex.ID, Currency: "EUR", Total: 99000, Due: due})
	must(err)
	return w
}

func ids[T any](rs []T, id func(T) string) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, id(r))
	}
	return out
}

func vendorID(v erp.Vendor) string       { return v.ID }
func accountID(a erp.BankAccount) string { return a.ID }
func billID(b erp.Bill) string           { return b.ID }
func paymentID(p erp.Payment) string     { return p.ID }

func testVendors(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	tests := []struct {
		name    string
		company string
		q       erp.VendorQuery
		want    []string
	}{
		{"all of the company", e.Company, erp.VendorQuery{}, []string{w.acme.ID}},
		{"by name, any case and spaces", e.Company, erp.VendorQuery{Name: "  acme SUPPLIES "}, []string{w.acme.ID}},
		{"same name in the other company", e.Other, erp.VendorQuery{Name: "ACME Supplies"}, []string{w.acmeOther.ID}},
		{"by id", e.Company, erp.VendorQuery{ID: w.acme.ID}, []string{w.acme.ID}},
		{"another company's vendor by id", e.Company, erp.VendorQuery{ID: w.globex.ID}, []string{}},
		{"another company's vendor by name", e.Company, erp.VendorQuery{Name: "Globex Parts"}, []string{}},
		{"unknown company", "no-such-company", erp.VendorQuery{}, []string{}},
	}
	for _, tt := range tests {
		got, err := e.Source.Vendors(ctx, tt.company, tt.q)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, ids(got, vendorID)); diff != "" {
			t.Errorf("%s: vendors (-want, +got):\n%s", tt.name, diff)
		}
	}
	got, _ := e.Source.Vendors(ctx, e.Company, erp.VendorQuery{ID: w.acme.ID})
	if len(got) == 1 && (got[0].Name != "ACME Supplies" || got[0].Phone != "+49 30 1234567" || !got[0].Active) {
		t.Errorf("vendor as read = %+v", got[0])
	}
}

func testBankAccounts(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	if w.acmeIBAN.Sanitized != "DE89370400440532013000" {
		t.Errorf("sanitized number = %q, want DE89370400440532013000", w.acmeIBAN.Sanitized)
	}
	tests := []struct {
		name    string
		company string
		q       erp.BankAccountQuery
		want    []string
	}{
		{"the vendor's, archived included", e.Company, erp.BankAccountQuery{Vendor: w.acme.ID}, []string{w.acmeOld.ID, w.acmeIBAN.ID, w.acmeUntrusted.ID}},
		{"by number as typed differently", e.Company, erp.BankAccountQuery{Number: "de89-3704-0044-0532-0130-00"}, []string{w.acmeIBAN.ID}},
		{"archived by number", e.Company, erp.BankAccountQuery{Number: ibanACMEOld}, []string{w.acmeOld.ID}},
		{"another company's number", e.Company, erp.BankAccountQuery{Number: ibanGlobex}, []string{}},
		{"another company's account by id", e.Company, erp.BankAccountQuery{ID: w.globexIBAN.ID}, []string{}},
		{"another company's vendor", e.Company, erp.BankAccountQuery{Vendor: w.globex.ID}, []string{}},
		{"the other company sees its own", e.Other, erp.BankAccountQuery{}, []string{w.globexIBAN.ID}},
		{"active only", e.Company, erp.BankAccountQuery{Vendor: w.acme.ID, Active: true}, []string{w.acmeIBAN.ID, w.acmeUntrusted.ID}},
		{"archived number, active only", e.Company, erp.BankAccountQuery{Number: ibanACMEOld, Active: true}, []string{}},
		{"a number with its holder's other accounts", e.Company, erp.BankAccountQuery{Number: ibanACME, Active: true, Holders: true}, []string{w.acmeIBAN.ID, w.acmeUntrusted.ID}},
	}
	for _, tt := range tests {
		got, err := e.Source.BankAccounts(ctx, tt.company, tt.q)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, ids(got, accountID)); diff != "" {
			t.Errorf("%s: accounts (-want, +got):\n%s", tt.name, diff)
		}
	}
	checkOtherHolders(t, e, w)
	got, _ := e.Source.BankAccounts(ctx, e.Company, erp.BankAccountQuery{ID: w.acmeUntrusted.ID})
	if len(got) != 1 || got[0].Trusted || !got[0].Active || got[0].Vendor != w.acme.ID || got[0].SetAt.IsZero() || got[0].SetAt.Location() != time.UTC {
		t.Errorf("untrusted account as read = %+v", got)
	}
	all, _ := e.Source.BankAccounts(ctx, e.Company, erp.BankAccountQuery{Vendor: w.acme.ID})
	if cur, ok := erp.Current(all, w.acme.ID); !ok || cur.ID != w.acmeIBAN.ID {
		t.Errorf("current account = %+v, %v; want %s", cur, ok, w.acmeIBAN.ID)
	}
}

// checkOtherHolders: a read with Holders names the other partners holding
// an active account of the number (erp.BankAccount.OtherHolders), whatever
// the spelling of the number; a partner of another company does not count
// (an Odoo bank account belongs to its partner's company).
func checkOtherHolders(t *testing.T, e Env, w world) {
	t.Helper()
	ctx := context.Background()
	q := erp.BankAccountQuery{Number: ibanACME, Active: true, Holders: true}
	got, err := e.Source.BankAccounts(ctx, e.Company, q)
	if err != nil || len(got) != 2 || anyOtherHolders(got) {
		t.Fatalf("a number no one else holds: %+v, %v; want two accounts, no other holders", got, err)
	}
	if _, err := e.Seeder.AddBankAccount(ctx, e.Other, erp.BankAccount{Vendor: w.globex.ID, Number: "de89-3704-0044-0532-0130-00", Active: true}); err != nil {
		t.Fatalf("seeding: %v", err)
	}
	got, err = e.Source.BankAccounts(ctx, e.Company, q)
	if err != nil || len(got) != 2 || anyOtherHolders(got) {
		t.Errorf("the number held in the other company: %+v, %v; want no other holders", got, err)
	}
	twin, err := e.Seeder.AddVendor(ctx, e.Company, erp.Vendor{Name: "Twin Supplies", Active: true})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	twinAcct, err := e.Seeder.AddBankAccount(ctx, e.Company, erp.BankAccount{Vendor: twin.ID, Number: "DE89 3704 0044 0532 0130 00 ", Active: true})
	if err != nil {
		t.Fatalf("seeding: %v", err)
	}
	got, err = e.Source.BankAccounts(ctx, e.Company, q)
	if err != nil || len(got) != 3 {
		t.Fatalf("the number held by another vendor: %+v, %v; want three accounts", got, err)
	}
	for _, a := range got {
		var want []string
		switch a.ID {
		case w.acmeIBAN.ID:
			want = []string{twin.ID}
		case twinAcct.ID:
			want = []string{w.acme.ID}
		}
		if diff := cmp.Diff(want, a.OtherHolders); diff != "" {
			t.Errorf("other holders of account %s (-want, +got):\n%s", a.ID, diff)
		}
	}
	if got, _ := e.Source.BankAccounts(ctx, e.Company, erp.BankAccountQuery{Number: ibanACME}); len(got) != 2 || anyOtherHolders(got) {
		t.Errorf("without Holders: %+v; want no other holders given", got)
	}
}

// anyOtherHolders reports whether an account of accts names other holders.
func anyOtherHolders(accts []erp.BankAccount) bool {
	return slices.ContainsFunc(accts, func(a erp.BankAccount) bool { return a.OtherHolders != nil })
}

func testBills(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	draft, err := e.Seeder.AddBill(ctx, e.Company, erp.Bill{Ref: "INV-2292", Vendor: w.acme.ID, Currency: "EUR", Total: 1000, State: erp.StateDraft})
	if err != nil {
		t.Fatal(err)
	}
	credit, err := e.Seeder.AddBill(ctx, e.Company, erp.Bill{Ref: "CN-2291", Vendor: w.acme.ID, Kind: erp.KindCreditNote, Currency: "EUR", Total: 8000, Reverses: w.bill2.ID})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		company string
		q       erp.BillQuery
		want    []string
	}{
		{"open bills", e.Company, erp.BillQuery{Open: true}, []string{w.bill.ID, w.bill2.ID}},
		{"every document of the vendor", e.Company, erp.BillQuery{Vendor: w.acme.ID}, []string{w.bill.ID, w.bill2.ID, draft.ID, credit.ID}},
		{"another company's bill by id", e.Company, erp.BillQuery{ID: w.otherBill.ID}, []string{}},
		{"another company's vendor", e.Company, erp.BillQuery{Vendor: w.globex.ID}, []string{}},
		{"the other company's open bills", e.Other, erp.BillQuery{Open: true}, []string{w.otherBill.ID}},
		{"open bills, first page", e.Company, erp.BillQuery{Open: true, Limit: 1}, []string{w.bill.ID}},
		{"open bills, second page", e.Company, erp.BillQuery{Open: true, Limit: 1, Offset: 1}, []string{w.bill2.ID}},
		{"open bills, past the end", e.Company, erp.BillQuery{Open: true, Limit: 1, Offset: 2}, []string{}},
		{"lookup by another spelling of the reference", e.Company, erp.BillQuery{Lookup: "inv 02290"}, []string{w.bill.ID}},
		{"lookup of another company's reference", e.Company, erp.BillQuery{Lookup: "INV-7001"}, []string{}},
	}
	for _, tt := range tests {
		got, err := e.Source.Bills(ctx, tt.company, tt.q)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if diff := cmp.Diff(tt.want, ids(got, billID)); diff != "" {
			t.Errorf("%s: bills (-want, +got):\n%s", tt.name, diff)
		}
	}
	for _, v := range []string{w.bill2.ID, w.bill2.Name, strings.ToLower(w.bill2.Name)} {
		// Lookup keeps every candidate; it may keep others too.
		got, err := e.Source.Bills(ctx, e.Company, erp.BillQuery{Lookup: v, Limit: 50})
		if err != nil || !slices.Contains(ids(got, billID), w.bill2.ID) {
			t.Errorf("lookup %q: %v, %v; want %s among them", v, ids(got, billID), err, w.bill2.ID)
		}
	}
	got, _ := e.Source.Bills(ctx, e.Company, erp.BillQuery{ID: w.bill2.ID})
	if len(got) != 1 || got[0].Residual != 40000 || got[0].Total != 48000 || got[0].PaymentState != erp.Partial {
		t.Errorf("bill reduced by a credit note of 80.00: %+v; want residual 40000, partial", got)
	}
	got, _ = e.Source.Bills(ctx, e.Company, erp.BillQuery{ID: w.bill.ID})
	want := erp.Bill{
		ID: w.bill.ID, Name: got[0].Name, Ref: "INV-2290", Vendor: w.acme.ID, VendorName: "ACME Supplies", Kind: erp.KindBill, Currency: "EUR",
		Total: 125000, Residual: 125000, Due: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Date: time.Date(2026, 11, 2, 0, 0, 0, 0, time.UTC),
		BankAccount: w.acmeIBAN.ID,
		State:       erp.StatePosted, PaymentState: erp.NotPaid,
	}
	if diff := cmp.Diff(want, got[0]); diff != "" || got[0].Name == "" {
		t.Errorf("bill as read (-want, +got):\n%s", diff)
	}
}

func residual(t *testing.T, e Env, company, bill string) (intent.Amount, erp.PaymentState) {
	t.Helper()
	bs, err := e.Source.Bills(context.Background(), company, erp.BillQuery{ID: bill})
	if err != nil || len(bs) != 1 {
		t.Fatalf("reading bill %s: %v (%d found)", bill, err, len(bs))
	}
	return bs[0].Residual, bs[0].PaymentState
}

func testPayments(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	eur := func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }
	p, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: w.bill2.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(8000), Key: "k-partial"})
	if err != nil {
		t.Fatalf("partial payment: %v", err)
	}
	if p.Bill != w.bill2.ID || p.Vendor != w.acme.ID || p.BankAccount != w.acmeIBAN.ID || p.Amount != eur(8000) || p.State != erp.PaymentPosted || p.Key != "k-partial" || p.Date.IsZero() {
		t.Errorf("payment = %+v", p)
	}
	if r, s := residual(t, e, e.Company, w.bill2.ID); r != 40000 || s != erp.Partial {
		t.Errorf("after a partial payment: residual %d, %s; want 40000, partial", r, s)
	}
	again, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: w.bill2.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(8000), Key: "k-partial"})
	if err != nil || again.ID != p.ID {
		t.Errorf("same key again = %+v, %v; want the first payment", again, err)
	}
	if r, _ := residual(t, e, e.Company, w.bill2.ID); r != 40000 {
		t.Errorf("the same key paid twice: residual %d", r)
	}
	if _, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: w.bill2.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(40000), Key: "k-rest"}); err != nil {
		t.Fatalf("paying the rest: %v", err)
	}
	if r, s := residual(t, e, e.Company, w.bill2.ID); r != 0 || s != erp.Paid {
		t.Errorf("after paying the rest: residual %d, %s; want 0, paid", r, s)
	}
	ps, err := e.Source.Payments(ctx, e.Company, erp.PaymentQuery{Bill: w.bill2.ID})
	if err != nil || len(ps) != 2 {
		t.Fatalf("payments of the bill: %d, %v; want 2", len(ps), err)
	}
	if other, _ := e.Source.Payments(ctx, e.Other, erp.PaymentQuery{Bill: w.bill2.ID}); len(other) != 0 {
		t.Errorf("the other company sees %d payments of this company's bill", len(other))
	}
	checkPaymentsByKey(t, e, p)
}

// checkPaymentsByKey: PaymentQuery.Key selects exactly that key's payment
// p, never a key it prefixes or extends, never another company's.
func checkPaymentsByKey(t *testing.T, e Env, p erp.Payment) {
	t.Helper()
	ctx := context.Background()
	for _, k := range []struct {
		key  string
		want []string
	}{{"k-partial", []string{p.ID}}, {"k-part", nil}, {"k-partial-2", nil}, {"K-PARTIAL", nil}, {"never made", nil}} {
		got, err := e.Source.Payments(ctx, e.Company, erp.PaymentQuery{Key: k.key})
		if err != nil || !slices.Equal(ids(got, paymentID), k.want) {
			t.Errorf("payments under key %q = %v, %v; want %v", k.key, ids(got, paymentID), err, k.want)
		}
	}
	if other, _ := e.Source.Payments(ctx, e.Other, erp.PaymentQuery{Key: "k-partial"}); len(other) != 0 {
		t.Errorf("the other company sees %d payments under this company's key", len(other))
	}
}

// testDecidedPayments: the payments of a bill are read with it
// (WithPayments), and a payment decided on that read is made once.
func testDecidedPayments(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	eur := func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }
	for _, k := range []string{"k-partial", "k-rest"} {
		if _, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: w.bill2.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(24000), Key: k}); err != nil {
			t.Fatalf("payment %s: %v", k, err)
		}
	}
	for _, q := range []erp.BillQuery{{ID: w.bill2.ID, WithPayments: true}, {Vendor: w.acme.ID, WithPayments: true}} {
		bs, err := e.Source.Bills(ctx, e.Company, q)
		var keys []string
		for _, b := range bs {
			if b.ID != w.bill2.ID {
				continue
			}
			for _, p := range b.Payments {
				if p.State != erp.PaymentPosted || p.Bill != w.bill2.ID || p.Day == "" {
					t.Errorf("%+v: payment %+v", q, p)
				}
				keys = append(keys, p.Key)
			}
		}
		if err != nil || !slices.Contains(keys, "k-partial") || !slices.Contains(keys, "k-rest") {
			t.Errorf("%+v: payments under keys %v, %v; want k-partial and k-rest", q, keys, err)
		}
	}
	b := bills(t, e, w.bill.ID)
	decided := erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(1000), Key: "k-decided", Decided: &b, Account: &w.acmeIBAN}
	if p, err := e.Source.RegisterPayment(ctx, e.Company, decided); err != nil || p.Amount != eur(1000) || p.Bill != w.bill.ID {
		t.Errorf("a payment decided on what was read: %+v, %v", p, err)
	}
	b = bills(t, e, w.bill.ID)
	decided.Decided = &b
	if again, err := e.Source.RegisterPayment(ctx, e.Company, decided); err != nil || again.Key != "k-decided" {
		t.Errorf("its key again, decided on a read that shows it: %+v, %v", again, err)
	}
	if r, _ := residual(t, e, e.Company, w.bill.ID); r != 124000 {
		t.Errorf("after one decided payment of 10.00: residual %d, want 124000", r)
	}
}

// bills reads one bill with its payments.
func bills(t *testing.T, e Env, id string) erp.Bill {
	t.Helper()
	bs, err := e.Source.Bills(context.Background(), e.Company, erp.BillQuery{ID: id, WithPayments: true})
	if err != nil || len(bs) != 1 {
		t.Fatalf("bill %s: %+v, %v", id, bs, err)
	}
	return bs[0]
}

func testPaymentRefusals(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	draft, _ := e.Seeder.AddBill(ctx, e.Company, erp.Bill{Ref: "INV-2292", Vendor: w.acme.ID, Currency: "EUR", Total: 1000, State: erp.StateDraft})
	credit, _ := e.Seeder.AddBill(ctx, e.Company, erp.Bill{Ref: "CN-1", Vendor: w.acme.ID, Kind: erp.KindCreditNote, Currency: "EUR", Total: 500})
	eur := func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }
	tests := []struct {
		name    string
		company string
		r       erp.PaymentRequest
		want    error
	}{
		{"another company's bill", e.Company, erp.PaymentRequest{Bill: w.otherBill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(100)}, erp.ErrNotFound},
		{"no such bill", e.Company, erp.PaymentRequest{Bill: "999999", BankAccount: w.acmeIBAN.ID, Amount: eur(100)}, erp.ErrNotFound},
		{"to another company's account", e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.globexIBAN.ID, Amount: eur(100)}, erp.ErrRefused},
		{"from the other company to this one's account", e.Other, erp.PaymentRequest{Bill: w.otherBill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(100)}, erp.ErrRefused},
		{"untrusted account", e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeUntrusted.ID, Amount: eur(100)}, erp.ErrRefused},
		{"archived account", e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeOld.ID, Amount: eur(100)}, erp.ErrRefused},
		{"above the residual", e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(125001)}, erp.ErrRefused},
		{"zero", e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(0)}, erp.ErrRefused},
		{"negative", e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(-100)}, erp.ErrRefused},
		{"other currency", e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: intent.Money{Currency: "USD", Amount: 100}}, erp.ErrRefused},
		{"draft bill", e.Company, erp.PaymentRequest{Bill: draft.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(100)}, erp.ErrRefused},
		{"credit note", e.Company, erp.PaymentRequest{Bill: credit.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(100)}, erp.ErrRefused},
	}
	for i, tt := range tests {
		tt.r.Key = fmt.Sprintf("refused-%d", i)
		if _, err := e.Source.RegisterPayment(ctx, tt.company, tt.r); !errors.Is(err, tt.want) {
			t.Errorf("%s: error %v, want %v", tt.name, err, tt.want)
		}
	}
	if r, s := residual(t, e, e.Company, w.bill.ID); r != 125000 || s != erp.NotPaid {
		t.Errorf("a refused payment changed the bill: residual %d, %s", r, s)
	}
	if r, _ := residual(t, e, e.Other, w.otherBill.ID); r != 99000 {
		t.Errorf("a refused payment changed the other company's bill: residual %d", r)
	}
	for _, c := range []string{e.Company, e.Other} {
		if ps, _ := e.Source.Payments(ctx, c, erp.PaymentQuery{}); len(ps) != 0 {
			t.Errorf("refused payments were recorded: %+v", ps)
		}
	}
	// Paid in full, then nothing is left to pay.
	if _, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(125000), Key: "full"}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(1), Key: "after"}); !errors.Is(err, erp.ErrRefused) {
		t.Errorf("paying a paid bill: %v, want ErrRefused", err)
	}
}

func testChangeBankAccount(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	before := time.Now().Add(-time.Hour)
	a, err := e.Source.ChangeBankAccount(ctx, e.Company, erp.BankChange{Vendor: w.acme.ID, Number: ibanNew, Key: "change-1"})
	if err != nil {
		t.Fatal(err)
	}
	if a.Sanitized != ibanNew || !a.Trusted || !a.Active || a.Vendor != w.acme.ID || a.SetAt.Before(before) {
		t.Errorf("new account = %+v", a)
	}
	checkOnlyActive(t, e, w.acme.ID, a.ID)
	again, err := e.Source.ChangeBankAccount(ctx, e.Company, erp.BankChange{Vendor: w.acme.ID, Number: ibanNew, Key: "change-1"})
	if err != nil || again.ID != a.ID {
		t.Errorf("same key again = %+v, %v", again, err)
	}
	// Back to an archived account of the vendor: reused, trusted again.
	back, err := e.Source.ChangeBankAccount(ctx, e.Company, erp.BankChange{Vendor: w.acme.ID, Number: "de89 3704 0044 0532 0130 00", Key: "change-2"})
	if err != nil || back.ID != w.acmeIBAN.ID || !back.Active || !back.Trusted {
		t.Errorf("change back = %+v, %v; want account %s reused", back, err, w.acmeIBAN.ID)
	}
	testChangeRefused(t, e, w)
}

// testChangeRefused: a change for another company's vendor is not found
// and leaves its accounts as they were; a number that is not one, or a
// change without a key, is refused.
func testChangeRefused(t *testing.T, e Env, w world) {
	ctx := context.Background()
	if _, err := e.Source.ChangeBankAccount(ctx, e.Company, erp.BankChange{Vendor: w.globex.ID, Number: ibanNew, Key: "x"}); !errors.Is(err, erp.ErrNotFound) {
		t.Errorf("changing another company's vendor: %v, want ErrNotFound", err)
	}
	if got, _ := e.Source.BankAccounts(ctx, e.Other, erp.BankAccountQuery{Vendor: w.globex.ID}); len(got) != 1 {
		t.Errorf("the other company's vendor has %d accounts after a refused change", len(got))
	}
	for _, bad := range []erp.BankChange{{Vendor: w.acme.ID, Number: " - ", Key: "k"}, {Vendor: w.acme.ID, Number: ibanNew}} {
		if _, err := e.Source.ChangeBankAccount(ctx, e.Company, bad); !errors.Is(err, erp.ErrRefused) {
			t.Errorf("change %+v: %v, want ErrRefused", bad, err)
		}
	}
}

// checkOnlyActive checks that account is vendor's current account and its
// only active one.
func checkOnlyActive(t *testing.T, e Env, vendor, account string) {
	t.Helper()
	all, _ := e.Source.BankAccounts(context.Background(), e.Company, erp.BankAccountQuery{Vendor: vendor})
	active := 0
	for _, x := range all {
		if x.Active {
			active++
		}
	}
	if cur, ok := erp.Current(all, vendor); !ok || cur.ID != account || active != 1 {
		t.Errorf("after the change: current %+v, %d active accounts; want %s only", cur, active, account)
	}
}

// nextSecond waits until the next whole second of the clock has begun, so
// that a time stamped after it differs from any stamped before it even
// where the ERP keeps whole seconds only (Odoo's write_date).
func nextSecond() {
	now := time.Now()
	time.Sleep(now.Truncate(time.Second).Add(time.Second + 10*time.Millisecond).Sub(now))
}

// testPromotedAccount: a change to a number the vendor already has as a
// trusted, active account that is not its current one (equal in sequence
// with a higher ID, or later in sequence) makes it the current account
// with SetAt the time of the change, so that its cooling-off period
// starts; a change that re-confirms the current account leaves SetAt as
// it was. The ERP may keep whole seconds only, so SetAt is compared with
// the second the change began in.
func testPromotedAccount(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	change := func(number, key string) erp.BankAccount {
		t.Helper()
		a, err := e.Source.ChangeBankAccount(ctx, e.Company, erp.BankChange{Vendor: w.acme.ID, Number: number, Key: key})
		if err != nil {
			t.Fatalf("change to %s: %v", number, err)
		}
		all, err := e.Source.BankAccounts(ctx, e.Company, erp.BankAccountQuery{Vendor: w.acme.ID})
		if err != nil {
			t.Fatal(err)
		}
		cur, ok := erp.Current(all, w.acme.ID)
		if !ok || cur.ID != a.ID || !cur.SetAt.Equal(a.SetAt) {
			t.Errorf("change to %s returned %+v; the current account as listed is %+v, %v", number, a, cur, ok)
		}
		return a
	}
	var got erp.BankAccount
	for i, tc := range []struct {
		name, number string
		seq          int
	}{
		{"equal in sequence, higher ID", "BE68 5390 0754 7034", 10},
		{"later in sequence", "IT60 X054 2811 1010 0000 0123 456", 20},
	} {
		second, err := e.Seeder.AddBankAccount(ctx, e.Company, erp.BankAccount{Vendor: w.acme.ID, Number: tc.number, Trusted: true, Active: true, Sequence: tc.seq})
		if err != nil {
			t.Fatalf("%s: seeding: %v", tc.name, err)
		}
		all, _ := e.Source.BankAccounts(ctx, e.Company, erp.BankAccountQuery{Vendor: w.acme.ID})
		if cur, ok := erp.Current(all, w.acme.ID); !ok || cur.ID == second.ID {
			t.Fatalf("%s: the seeded account %s is already current (%+v)", tc.name, second.ID, cur)
		}
		nextSecond()
		before := time.Now().Truncate(time.Second)
		got = change(tc.number, fmt.Sprintf("promote-%d", i))
		if got.ID != second.ID || !got.Trusted || !got.Active || got.SetAt.Before(before) {
			t.Errorf("%s: promoted account = %+v; want account %s with SetAt at or after %s", tc.name, got, second.ID, before)
		}
	}
	nextSecond()
	if again := change(got.Number, "confirm"); again.ID != got.ID || !again.SetAt.Equal(got.SetAt) {
		t.Errorf("re-confirming the current account %s: SetAt %s, want %s kept (%+v)", got.ID, again.SetAt, got.SetAt, again)
	}
}

func testConcurrentPayments(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	const n = 50
	var wg sync.WaitGroup
	var mu sync.Mutex
	ok := 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{
				Bill: w.bill.ID, BankAccount: w.acmeIBAN.ID, Amount: intent.Money{Currency: "EUR", Amount: 125000}, Key: fmt.Sprintf("c-%d", i),
			})
			if err == nil {
				mu.Lock()
				ok++
				mu.Unlock()
			} else if !errors.Is(err, erp.ErrRefused) {
				t.Errorf("concurrent payment: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok != 1 {
		t.Fatalf("%d of %d concurrent full payments of one bill succeeded, want 1", ok, n)
	}
	ps, _ := e.Source.Payments(ctx, e.Company, erp.PaymentQuery{Bill: w.bill.ID})
	if diff := cmp.Diff(1, len(ids(ps, paymentID))); diff != "" {
		t.Errorf("payments recorded (-want, +got):\n%s", diff)
	}
}

// testControlFields: what the payment controls read (issue 13): a
// vendor's country, a bill's invoice date, and whether a vendor was ever
// paid (PaymentQuery Vendor, Posted, Limit), scoped to the company.
func testControlFields(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	ch, err := e.Seeder.AddVendor(ctx, e.Company, erp.Vendor{Name: "Helvetia Tools", Active: true, Country: "CH"})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := e.Source.Vendors(ctx, e.Company, erp.VendorQuery{ID: ch.ID})
	if err != nil || len(vs) != 1 || vs[0].Country != "CH" {
		t.Errorf("vendor with country CH read as %+v, %v", vs, err)
	}
	if vs, _ := e.Source.Vendors(ctx, e.Company, erp.VendorQuery{ID: w.acme.ID}); len(vs) != 1 || vs[0].Country != "" {
		t.Errorf("vendor without a country read as %+v", vs)
	}
	dated := time.Date(2026, 10, 28, 0, 0, 0, 0, time.UTC)
	b, err := e.Seeder.AddBill(ctx, e.Company, erp.Bill{Ref: "HT-17", Vendor: ch.ID, Currency: "EUR", Total: 2000, Date: dated, Due: dated.AddDate(0, 0, 30)})
	if err != nil {
		t.Fatal(err)
	}
	if got := bills(t, e, b.ID); !got.Date.Equal(dated) {
		t.Errorf("invoice date read as %v, want %v", got.Date, dated)
	}
	paid := func(company, vendor string) []erp.Payment {
		t.Helper()
		ps, err := e.Source.Payments(ctx, company, erp.PaymentQuery{Vendor: vendor, Posted: true, Limit: 1})
		if err != nil {
			t.Fatalf("payments of vendor %s: %v", vendor, err)
		}
		return ps
	}
	if ps := paid(e.Company, w.acme.ID); len(ps) != 0 {
		t.Errorf("a vendor never paid has payments %+v", ps)
	}
	eur := intent.Money{Currency: "EUR", Amount: 1000}
	for i, bill := range []string{w.bill.ID, w.bill2.ID} {
		if _, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: bill, BankAccount: w.acmeIBAN.ID, Amount: eur, Key: fmt.Sprintf("k-vendor-%d", i)}); err != nil {
			t.Fatal(err)
		}
	}
	if ps := paid(e.Company, w.acme.ID); len(ps) != 1 || ps[0].Vendor != w.acme.ID || ps[0].State != erp.PaymentPosted {
		t.Errorf("a vendor paid twice, Limit 1: %+v; want one posted payment to it", ps)
	}
	all, err := e.Source.Payments(ctx, e.Company, erp.PaymentQuery{Vendor: w.acme.ID})
	if err != nil || len(all) != 2 {
		t.Errorf("payments of the vendor: %d, %v; want 2", len(all), err)
	}
	if ps := paid(e.Company, ch.ID); len(ps) != 0 {
		t.Errorf("another vendor's payments %+v", ps)
	}
	if ps := paid(e.Other, w.acme.ID); len(ps) != 0 {
		t.Errorf("the other company sees payments to this company's vendor: %+v", ps)
	}
}

// testNetting: a payment netted with the vendor's open credit notes
// (PaymentRequest.Credits) pays the net amount and reconciles the credit
// notes with the bill; credit notes that are not the vendor's open credit
// in the bill's currency, or that exceed with the amount what is owed, are
// refused with nothing written. BillQuery.OpenCredit finds them.
func testNetting(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	eur := func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }
	addCredit := func(vendor, company, currency string, total intent.Amount) erp.Bill {
		t.Helper()
		c, err := e.Seeder.AddBill(ctx, company, erp.Bill{Ref: fmt.Sprintf("CN-%d", total), Vendor: vendor, Kind: erp.KindCreditNote, Currency: currency, Total: total})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	cn1, cn2 := addCredit(w.acme.ID, e.Company, "EUR", 10000), addCredit(w.acme.ID, e.Company, "EUR", 5000)
	draft, err := e.Seeder.AddBill(ctx, e.Company, erp.Bill{Ref: "CN-DRAFT", Vendor: w.acme.ID, Kind: erp.KindCreditNote, Currency: "EUR", Total: 700, State: erp.StateDraft})
	if err != nil {
		t.Fatal(err)
	}
	other := addCredit(w.globex.ID, e.Other, "EUR", 3000)
	open, err := e.Source.Bills(ctx, e.Company, erp.BillQuery{OpenCredit: true, Vendor: w.acme.ID})
	if diff := cmp.Diff([]string{cn1.ID, cn2.ID}, ids(open, billID)); err != nil || diff != "" {
		t.Fatalf("OpenCredit (-want, +got): %v\n%s", err, diff)
	}
	checkNettingRefused(t, e, w, []struct {
		name    string
		credits []string
		amount  intent.Amount
	}{
		{"a draft credit note", []string{draft.ID}, 1000},
		{"a bill as credit", []string{w.bill.ID}, 1000},
		{"another company's credit note", []string{other.ID}, 1000},
		{"a credit note named twice", []string{cn1.ID, cn1.ID}, 1000},
		{"with the amount above what is owed", []string{cn1.ID, cn2.ID}, 48000 - 15000 + 1},
	})
	p, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: w.bill2.ID, BankAccount: w.acmeIBAN.ID, Amount: eur(20000),
		Key: "net", Credits: []string{cn1.ID, cn2.ID}})
	if err != nil || p.Amount != eur(20000) || len(p.Unreconciled) != 0 {
		t.Fatalf("netted payment: %+v, %v", p, err)
	}
	if r, s := residual(t, e, e.Company, w.bill2.ID); r != 48000-15000-20000 || s != erp.Partial {
		t.Errorf("bill after netting: residual %d, %s; want 13000, partial", r, s)
	}
	for _, c := range []erp.Bill{cn1, cn2} {
		if r, _ := residual(t, e, e.Company, c.ID); r != 0 {
			t.Errorf("credit note %s after netting: residual %d, want 0", c.Name, r)
		}
	}
	if ps, err := e.Source.Payments(ctx, e.Company, erp.PaymentQuery{Bill: w.bill2.ID}); err != nil || len(ps) != 1 || ps[0].Amount != eur(20000) {
		t.Errorf("payments of the bill: %+v, %v; want one of 200.00", ps, err)
	}
	if open, _ := e.Source.Bills(ctx, e.Company, erp.BillQuery{OpenCredit: true}); len(open) != 0 {
		t.Errorf("open credit after netting: %v", ids(open, billID))
	}
	if r, _ := residual(t, e, e.Other, other.ID); r != 3000 {
		t.Errorf("the other company's credit note changed: residual %d", r)
	}
}

// checkNettingRefused pays w.bill2 (480.00 owed) with each case's credit
// notes and amount, expects erp.ErrRefused for each, and the bill
// unchanged afterwards.
func checkNettingRefused(t *testing.T, e Env, w world, cases []struct {
	name    string
	credits []string
	amount  intent.Amount
}) {
	t.Helper()
	for i, tt := range cases {
		_, err := e.Source.RegisterPayment(context.Background(), e.Company, erp.PaymentRequest{Bill: w.bill2.ID, BankAccount: w.acmeIBAN.ID,
			Amount: intent.Money{Currency: "EUR", Amount: tt.amount}, Key: fmt.Sprintf("net-refused-%d", i), Credits: tt.credits})
		if !errors.Is(err, erp.ErrRefused) {
			t.Errorf("%s: %v, want ErrRefused", tt.name, err)
		}
	}
	if r, s := residual(t, e, e.Company, w.bill2.ID); r != 48000 || s != erp.NotPaid {
		t.Fatalf("refused netting changed the bill: residual %d, %s", r, s)
	}
}

// HandPayer is a Seeder that also registers payments by hand, as the
// ERP's own users do (no idempotency key): p.Bill, p.Amount and p.Day
// (YYYY-MM-DD) are given. erp.Mem and the Odoo connector's Admin are.
type HandPayer interface {
	AddPayment(ctx context.Context, company string, p erp.Payment) (erp.Payment, error)
}

// testHandPaymentsSince: a payment made by hand to a vendor, dated today,
// is given once among the Payments of the vendor's bills read with
// PaymentsSince, posted and without a key; a PaymentsSince that is not a
// day is refused.
func testHandPaymentsSince(t *testing.T, e Env) {
	hp, ok := e.Seeder.(HandPayer)
	if !ok {
		t.Skip("the seeder registers no payment by hand")
	}
	ctx := context.Background()
	w := seed(t, e)
	today := time.Now().UTC()
	p := erp.Payment{Bill: w.bill2.ID, Amount: intent.Money{Currency: "EUR", Amount: 3000}, Day: today.Format(time.DateOnly)}
	if _, err := hp.AddPayment(ctx, e.Company, p); err != nil {
		t.Fatalf("hand payment: %v", err)
	}
	bs, err := e.Source.Bills(ctx, e.Company, erp.BillQuery{Vendor: w.acme.ID, WithPayments: true,
		PaymentsSince: today.AddDate(0, 0, -1).Format(time.DateOnly)})
	if err != nil {
		t.Fatal(err)
	}
	var hand []erp.Payment
	for _, b := range bs {
		for _, pm := range b.Payments {
			if pm.Key == "" {
				hand = append(hand, pm)
			}
		}
	}
	if len(hand) != 1 || hand[0].Amount != p.Amount || hand[0].State != erp.PaymentPosted || hand[0].Vendor != w.acme.ID ||
		hand[0].Bill != "" && hand[0].Bill != w.bill2.ID {
		t.Errorf("payments without a key %+v; want the hand payment of 30.00 once", hand)
	}
	if _, err := e.Source.Bills(ctx, e.Company, erp.BillQuery{Vendor: w.acme.ID, WithPayments: true, PaymentsSince: "yesterday"}); !errors.Is(err, erp.ErrRefused) {
		t.Errorf("PaymentsSince yesterday: %v; want ErrRefused", err)
	}
}

// RateSetter is a Seeder that also enters exchange rates, as the ERP's
// own users do: value units of currency per unit of the company's
// currency from day (YYYY-MM-DD) on, for company. erp.Mem and the Odoo
// connector's Admin are.
type RateSetter interface {
	SetRate(ctx context.Context, company, currency, day, value string) error
}

// testRates: a rate is the latest of the company dated on or before the
// day, never another company's, and a rate of no company only when the
// company has none; the company's own currency is 1 without a rate; a
// currency without a rate is ErrNoRate, never 1; each currency has its
// own decimals.
func testRates(t *testing.T, e Env) {
	rs, ok := e.Seeder.(RateSetter)
	if !ok {
		t.Skip("the seeder enters no rate")
	}
	ctx := context.Background()
	own := e.Currency
	if own == "" {
		own = "EUR"
	}
	foreign := "USD"
	if own == foreign {
		foreign = "EUR"
	}
	for _, r := range []struct{ company, cur, day, value string }{
		{e.Company, foreign, "2026-11-20", "1.0869565"},
		{e.Company, foreign, "2026-11-25", "0.9259259"},
		{e.Other, foreign, "2026-11-10", "2"},
		{e.Company, "JPY", "2026-11-20", "160"},
		// Rates of no company apply to every company, after its own
		// whatever their dates (Odoo's order): a newer global USD rate
		// changes neither company's USD rate.
		{"", foreign, "2026-11-23", "5"},
		{"", "JPY", "2026-11-01", "150"},
	} {
		if err := rs.SetRate(ctx, r.company, r.cur, r.day, r.value); err != nil {
			t.Fatalf("SetRate(%+v): %v", r, err)
		}
	}
	tests := []rateCase{
		{e.Company, foreign, "2026-11-24", "1.0869565", "2026-11-20", 100000, 92000},
		{e.Company, foreign, "2026-11-25", "0.9259259", "2026-11-25", 100000, 108000},
		{e.Company, foreign, "2026-12-31", "0.9259259", "2026-11-25", 100000, 108000},
		{e.Other, foreign, "2026-11-24", "2", "2026-11-10", 100000, 50000},
		{e.Company, "JPY", "2026-11-24", "160", "2026-11-20", 100000, 62500},
		{e.Company, own, "2026-11-24", "1", "2026-11-24", 100000, 100000},
		{e.Other, "JPY", "2026-11-24", "150", "2026-11-01", 150000, 100000},
		{e.Other, foreign, "2026-11-23", "2", "2026-11-10", 100000, 50000},
	}
	for _, tt := range tests {
		checkRate(t, e, tt, own)
	}
	if r, err := e.Source.Rate(ctx, e.Company, foreign, "2026-11-19"); !errors.Is(err, erp.ErrNoRate) || r.Value != "" || r.Company != own || r.Currency != foreign {
		t.Errorf("before the company's first rate: %+v, %v; want ErrNoRate", r, err)
	}
	if r, err := e.Source.Rate(ctx, e.Other, "JPY", "2026-10-31"); !errors.Is(err, erp.ErrNoRate) {
		t.Errorf("JPY of the other company before any: %+v, %v; want ErrNoRate", r, err)
	}
	if _, err := e.Source.Rate(ctx, e.Company, foreign, "24.11.2026"); !errors.Is(err, erp.ErrRefused) {
		t.Errorf("a day that is not YYYY-MM-DD: %v; want ErrRefused", err)
	}
}

// rateCase is a rate testRates expects, and an amount converted with it.
type rateCase struct {
	company, cur, day, value, rateDay string
	amount, inCompany                 intent.Amount
}

// checkRate reads the rate of tt and checks it and its conversion.
func checkRate(t *testing.T, e Env, tt rateCase, own string) {
	t.Helper()
	r, err := e.Source.Rate(context.Background(), tt.company, tt.cur, tt.day)
	if err != nil {
		t.Errorf("Rate(%s, %s, %s): %v", tt.company, tt.cur, tt.day, err)
		return
	}
	got, err := r.Convert(tt.amount)
	v, verr := erp.ParseRateValue(r.Value)
	w, _ := erp.ParseRateValue(tt.value)
	if verr != nil || v.Cmp(w) != 0 || r.Day != tt.rateDay || r.Company != own || r.Currency != tt.cur || r.Source == "" ||
		r.Decimals != erp.Decimals(tt.cur) || r.CompanyDecimals != erp.Decimals(own) || err != nil || got != tt.inCompany {
		t.Errorf("Rate(%s, %s, %s) = %+v, converting %d: %d, %v; want %s of %s, %d", tt.company, tt.cur, tt.day, r, tt.amount, got, err,
			tt.value, tt.rateDay, tt.inCompany)
	}
}

// testDecisionRead: a read with BillQuery.Decision gives, of the vendor,
// the bill, the credit notes reversing it, the open documents, and the
// bills Suspects selects however old (a reference holding the pattern,
// ignoring case; the same total; a total near it dated within the
// window), with the credit notes reversing them; nothing else of the
// history, nothing of another vendor. With WithPayments and
// PaymentsSince, each payment of the vendor of those days is given once:
// with its bill when read, else with the first bill.
func testDecisionRead(t *testing.T, e Env) {
	ctx := context.Background()
	w := seed(t, e)
	add := func(b erp.Bill) erp.Bill {
		t.Helper()
		if b.Vendor == "" {
			b.Vendor = w.acme.ID
		}
		b.Currency = "EUR"
		got, err := e.Seeder.AddBill(ctx, e.Company, b)
		if err != nil {
			t.Fatalf("seeding %q: %v", b.Ref, err)
		}
		return got
	}
	keys := 0
	payAll := func(b erp.Bill) {
		t.Helper()
		r, _ := residual(t, e, e.Company, b.ID)
		keys++
		if _, err := e.Source.RegisterPayment(ctx, e.Company, erp.PaymentRequest{Bill: b.ID, BankAccount: w.acmeIBAN.ID,
			Amount: intent.Money{Currency: "EUR", Amount: r}, Key: fmt.Sprintf("k-history-%d", keys)}); err != nil {
			t.Fatalf("paying %q: %v", b.Ref, err)
		}
	}
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	sameKey := add(erp.Bill{Ref: "inv 0229o", Total: 7700, Date: day(2019, 3, 4)})   // the pattern, any case
	sameAmount := add(erp.Bill{Ref: "XYZ-1", Total: 125000, Date: day(2018, 6, 1)})  // the same total
	unrelated := add(erp.Bill{Ref: "INV-7777", Total: 33300, Date: day(2017, 1, 2)}) // nothing in common
	near := add(erp.Bill{Ref: "Q-5", Total: 124900, Date: day(2026, 11, 4)})         // a near total, close dates
	farNear := add(erp.Bill{Ref: "Q-6", Total: 124900, Date: day(2020, 1, 2)})       // a near total, far dates: any date
	ofSuspect := add(erp.Bill{Ref: "CN-1", Total: 10000, Kind: erp.KindCreditNote, Reverses: sameAmount.ID, Date: day(2018, 6, 9)})
	ofUnrelated := add(erp.Bill{Ref: "CN-2", Total: 33300, Kind: erp.KindCreditNote, Reverses: unrelated.ID, Date: day(2017, 1, 9)})
	ofBill := add(erp.Bill{Ref: "CN-3", Total: 5000, Kind: erp.KindCreditNote, Reverses: w.bill.ID, Date: day(2026, 11, 5)})
	for _, b := range []erp.Bill{sameKey, sameAmount, near, farNear} {
		payAll(b)
	}
	other, err := e.Seeder.AddVendor(ctx, e.Company, erp.Vendor{Name: "Other Parts", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	add(erp.Bill{Vendor: other.ID, Ref: "INV-2290", Total: 125000, Date: day(2026, 11, 2)}) // another vendor's
	dq := &erp.DecisionQuery{Bill: w.bill.ID, Suspects: erp.Suspects{Refs: []erp.RefPattern{{"2Z", "2Z", "9", "0O"}},
		Currency: "EUR", Amount: 125000, Near: 100, From: day(2026, 10, 26), To: day(2026, 11, 9)}}
	since := time.Now().UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	bs, err := e.Source.Bills(ctx, e.Company, erp.BillQuery{Vendor: w.acme.ID, Decision: dq, WithPayments: true, PaymentsSince: since})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{w.bill.ID, w.bill2.ID, sameKey.ID, sameAmount.ID, near.ID, farNear.ID, ofSuspect.ID, ofBill.ID}
	slices.SortFunc(want, erp.CompareIDs)
	if diff := cmp.Diff(want, ids(bs, billID)); diff != "" {
		t.Errorf("a decision's read (-want, +got), not %s (%s) nor %s (%s):\n%s", unrelated.ID, unrelated.Ref,
			ofUnrelated.ID, ofUnrelated.Ref, diff)
	}
	seen := map[string]int{}
	for i, b := range bs {
		for _, p := range b.Payments {
			seen[p.Key]++
			if p.Key != "" && p.Bill != b.ID && (i != 0 || slices.Contains(ids(bs, billID), p.Bill)) {
				t.Errorf("payment %s of bill %s given with bill %s", p.Key, p.Bill, b.ID)
			}
		}
	}
	for k := 1; k <= keys; k++ {
		if n := seen[fmt.Sprintf("k-history-%d", k)]; n != 1 {
			t.Errorf("payment k-history-%d given %d times; want once", k, n)
		}
	}
	if bs, err := e.Source.Bills(ctx, e.Company, erp.BillQuery{Decision: dq}); err != nil || len(bs) != 0 {
		t.Errorf("a decision's read without a vendor: %v, %v; want nothing", ids(bs, billID), err)
	}
	if bs, err := e.Source.Bills(ctx, e.Other, erp.BillQuery{Vendor: w.acme.ID, Decision: dq}); err != nil || len(bs) != 0 {
		t.Errorf("the other company reads the vendor's documents: %v, %v", ids(bs, billID), err)
	}
}
