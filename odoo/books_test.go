package odoo_test

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// The large books of issue 26: bookVendors vendors, each with
// bookBillsEach open bills (50,000 in all).
const (
	bookVendors   = 1000
	bookBillsEach = 50
)

// bookIBAN is the valid German IBAN of the i-th vendor of the books
// (bank code 37040044, account number i).
func bookIBAN(i int) string {
	bban := fmt.Sprintf("37040044%010d", i)
	n, _ := new(big.Int).SetString(bban+"131400", 10) // D=13, E=14, then 00
	check := 98 - new(big.Int).Mod(n, big.NewInt(97)).Int64()
	return fmt.Sprintf("DE%02d%s", check, bban)
}

func bookVendor(i int) string { return fmt.Sprintf("Book Vendor %04d", i) }

// bookOps are the operations BenchmarkLargeBooks times: the first page
// of the open bills (ap.list_open_bills, 50), a page deep in them
// (offset 25,000), one vendor's open bills, and an allowed payment of a
// bill of a vendor chosen in turn.
func bookOps(n int) map[string]func(i int) (intent.Action, map[string]any) {
	return map[string]func(i int) (intent.Action, map[string]any){
		"list": func(int) (intent.Action, map[string]any) { return ap.ActionListOpenBills, map[string]any{} },
		"page": func(int) (intent.Action, map[string]any) {
			return ap.ActionListOpenBills, map[string]any{"offset": int64(n / 2), "limit": int64(50)}
		},
		"vendor": func(i int) (intent.Action, map[string]any) {
			return ap.ActionListOpenBills, map[string]any{"vendor": bookVendor(i % bookVendors)}
		},
		"pay": func(i int) (intent.Action, map[string]any) {
			v := (i * 7) % bookVendors
			bill := fmt.Sprintf("BK%d-%d", 1000+v, 10+(i/bookVendors)%bookBillsEach)
			return ap.ActionPayBill, payArgs(bookVendor(v), bill, bookIBAN(v), intent.FormatAmount(bookAmount(v, (i/bookVendors)%bookBillsEach), 2))
		},
	}
}

// bookAmount is the total of bill j of vendor v: distinct per vendor, so
// that no two bills of a vendor look like one invoice.
func bookAmount(v, j int) intent.Amount { return intent.Amount(10_000 + 100*j + v%97) }

// BenchmarkLargeBooks lists, pages and pays in books of 1,000 vendors and
// 50,000 open bills, on erp.Mem and on the fake Odoo (17, XML-RPC): for
// each operation through the gateway, p50 and p99 (ns) and ERP calls per
// operation.
//
//	go test ./odoo -run '^$' -bench BenchmarkLargeBooks -benchtime 200x
func BenchmarkLargeBooks(b *testing.B) {
	b.Run("mem", func(b *testing.B) {
		p := newMemPayer(b)
		seedMemBooks(b, p.erp)
		runBookOps(b, func(tb testing.TB, a intent.Action, args map[string]any) gateway.Decision {
			return p.decide(tb, a, args)
		},
			func() int64 { return p.src.n.Load() })
	})
	b.Run("fake-odoo", func(b *testing.B) {
		srv := odootest.NewServer(fakeMaster)
		b.Cleanup(srv.Close)
		e := newAPEnv(b, odootest.RealServer{URL: srv.URL, Master: fakeMaster}, "books", srv)
		e.gw, e.tok = e.mount(b, e.now, e.keys, ap.Config{ConfirmAbove: 100_000_000_00, FourEyesDailyAbove: 100_000_000_00,
			MaxAmount: 100_000_000_00, MaxVendorTotal: 100_000_000_00})
		seedOdooBooks(b, e, srv)
		runBookOps(b, e.decide, e.client.Calls)
	})
}

func runBookOps(b *testing.B, decide func(testing.TB, intent.Action, map[string]any) gateway.Decision, calls func() int64) {
	ops := bookOps(bookVendors * bookBillsEach)
	for _, name := range []string{"list", "page", "vendor", "pay"} {
		b.Run(name, func(b *testing.B) {
			var took []time.Duration
			var n int64
			for i := 0; b.Loop(); i++ {
				a, args := ops[name](i)
				before, start := calls(), time.Now()
				d := decide(b, a, args)
				took = append(took, time.Since(start))
				n += calls() - before
				if !d.Executed {
					b.Fatalf("%s %v: %s", a, args, refusal(d))
				}
			}
			slices.Sort(took)
			b.ReportMetric(float64(took[len(took)/2].Nanoseconds()), "p50-ns")
			b.ReportMetric(float64(took[len(took)*99/100].Nanoseconds()), "p99-ns")
			b.ReportMetric(float64(n)/float64(b.N), "calls/op")
		})
	}
}

// seedMemBooks enters the books into m: each vendor with a trusted
// account set two years ago and its open bills.
func seedMemBooks(tb testing.TB, m *erp.Mem) {
	tb.Helper()
	ctx := context.Background()
	set := time.Now().AddDate(-2, 0, 0)
	for v := range bookVendors {
		vendor, err := m.AddVendor(ctx, ap.DemoCompany, erp.Vendor{Name: bookVendor(v), Active: true, Country: "DE"})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := m.AddBankAccount(ctx, ap.DemoCompany, erp.BankAccount{Vendor: vendor.ID, Number: bookIBAN(v), Trusted: true, Active: true, SetAt: set}); err != nil {
			tb.Fatal(err)
		}
		for j := range bookBillsEach {
			if _, err := m.AddBill(ctx, ap.DemoCompany, erp.Bill{Ref: fmt.Sprintf("BK%d-%d", 1000+v, 10+j), Vendor: vendor.ID, Currency: "EUR",
				Total: bookAmount(v, j), Date: set.AddDate(0, 0, j), Due: time.Now().AddDate(0, 1, 0)}); err != nil {
				tb.Fatal(err)
			}
		}
		// Paid before: no payment of the benchmark asks a person about a
		// first payment.
		paid, err := m.AddBill(ctx, ap.DemoCompany, erp.Bill{Ref: fmt.Sprintf("BK-%04d-PAID", v), Vendor: vendor.ID, Currency: "EUR", Total: 5_00, Date: set})
		if err != nil {
			tb.Fatal(err)
		}
		if _, err := m.AddPayment(ctx, ap.DemoCompany, erp.Payment{Bill: paid.ID, Amount: intent.Money{Currency: "EUR", Amount: 5_00}}); err != nil {
			tb.Fatal(err)
		}
	}
}

// seedOdooBooks enters the books into e's fake Odoo: vendors and
// accounts through the administrator's calls a month back (out of their
// cooling-off period), a settled bill with its payment per vendor
// (SeedHistory: each was paid before), the open bills in batches.
func seedOdooBooks(tb testing.TB, e *apEnv, srv *odootest.Server) {
	tb.Helper()
	ctx := context.Background()
	srv.SetNow(func() time.Time { return time.Now().Add(-30 * 24 * time.Hour) })
	defer srv.SetNow(nil)
	eur, err := e.admin.Currency(ctx, "EUR")
	if err != nil {
		tb.Fatal(err)
	}
	var bills []erp.Bill
	for v := range bookVendors {
		vendor, err := e.admin.AddVendor(ctx, provision.DemoCompany, erp.Vendor{Name: bookVendor(v), Active: true, Country: "DE"})
		if err != nil {
			tb.Fatal(err)
		}
		id, _ := strconv.ParseInt(vendor.ID, 10, 64)
		if err := srv.SeedHistory(e.cfg.DB, e.admin.Companies()[provision.DemoCompany], id, eur,
			[]odootest.HistoryDoc{{Ref: fmt.Sprintf("BK-%04d-PAID", v), Total: 5, Date: "2025-01-02", Paid: true}}); err != nil {
			tb.Fatal(err)
		}
		if _, err := e.admin.AddBankAccount(ctx, provision.DemoCompany, erp.BankAccount{Vendor: vendor.ID, Number: bookIBAN(v), Trusted: true, Active: true}); err != nil {
			tb.Fatal(err)
		}
		for j := range bookBillsEach {
			bills = append(bills, erp.Bill{Ref: fmt.Sprintf("BK%d-%d", 1000+v, 10+j), Vendor: vendor.ID, Currency: "EUR", Total: bookAmount(v, j)})
		}
	}
	for len(bills) > 0 {
		n := min(len(bills), 5000)
		if err := e.admin.AddBills(ctx, provision.DemoCompany, bills[:n]); err != nil {
			tb.Fatal(err)
		}
		bills = bills[n:]
	}
}
