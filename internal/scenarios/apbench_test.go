package scenarios_test

import (
	"context"
	"fmt"
	"math/big"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/internal/pgtest"
	"github.com/intentplane/intentplane/internal/testclock"
	"github.com/intentplane/intentplane/store/postgres"
)

// benchVendors is how many vendors the AP benchmark pays: the AP pack
// holds one vendor at a time (its record lock), so 64 clients pay 64
// vendors.
const benchVendors = 64

// germanIBAN returns a valid German IBAN whose account number is n.
func germanIBAN(n int) string {
	bban := fmt.Sprintf("37040044%010d", n)
	// Check digits: 98 - (BBAN + "DE00" as digits) mod 97; D=13, E=14.
	v, _ := new(big.Int).SetString(bban+"131400", 10)
	check := 98 - new(big.Int).Mod(v, big.NewInt(97)).Int64()
	return fmt.Sprintf("DE%02d%s", check, bban)
}

// apBenchERP returns an in-memory ERP where the company "bench" has
// benchVendors vendors, each with a trusted account set a year ago and one
// open bill of 10,000,000.00 EUR, paid in instalments by the benchmark (so
// that the ERP's scans of the company's bills stay short).
func apBenchERP(b *testing.B) (*erp.Mem, []erp.Bill, []string) {
	b.Helper()
	ctx := context.Background()
	m := erp.NewMem(nil)
	bills := make([]erp.Bill, benchVendors)
	names := make([]string, benchVendors)
	for v := range benchVendors {
		names[v] = fmt.Sprintf("Vendor %02d", v)
		vend, err := m.AddVendor(ctx, "bench", erp.Vendor{Name: names[v], Phone: "+49 30 1234567", Active: true})
		if err != nil {
			b.Fatal(err)
		}
		acct, err := m.AddBankAccount(ctx, "bench", erp.BankAccount{Vendor: vend.ID, Number: germanIBAN(v + 1), Trusted: true, Active: true, SetAt: time.Now().AddDate(-1, 0, 0)})
		if err != nil {
			b.Fatal(err)
		}
		// A bill paid before, so that the benchmark's payments are not
		// a vendor's first (which needs a person's confirmation).
		paid, err := m.AddBill(ctx, "bench", erp.Bill{Ref: fmt.Sprintf("V%02d-0000", v), Vendor: vend.ID, Currency: "EUR", Total: 100})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := m.AddPayment(ctx, "bench", erp.Payment{Bill: paid.ID, BankAccount: acct.ID, Amount: intent.Money{Currency: "EUR", Amount: 100},
			Date: time.Now().AddDate(0, -1, 0), Day: time.Now().AddDate(0, -1, 0).Format("2006-01-02")}); err != nil {
			b.Fatal(err)
		}
		bill, err := m.AddBill(ctx, "bench", erp.Bill{Ref: fmt.Sprintf("V%02d-0001", v), Vendor: vend.ID, Currency: "EUR", Total: 1_000_000_000})
		if err != nil {
			b.Fatal(err)
		}
		bills[v] = bill
	}
	return m, bills, names
}

// BenchmarkAPDecide measures allowed accounts-payable decisions (ap.pay_bill
// of an instalment to the vendor's account on file: resolution of vendor,
// bill and IBAN, the vendor's record lock, the pack's facts, Cedar, budget,
// nonce, the in-memory ERP's payment and the receipt) with 64 concurrent
// clients on one mandate, per store, with one gateway and with four
// gateways (each with its own store handle and, for PostgreSQL, its own
// connection pool) sharing the store and the ERP. Client c pays vendor c's
// bill, each instalment one cent more than its last (1.00, 1.01, ...), so
// each is a distinct operation. ns/op is wall time per decision;
// decisions/s, p50-ms and p99-ms are reported besides, and for PostgreSQL
// round-trips/decision (statements and batches sent, all replicas). The bill's payments
// are read on each decision, so run it with a fixed -benchtime, e.g.
// -benchtime=4000x.
func BenchmarkAPDecide(b *testing.B) {
	for _, k := range kinds {
		for _, replicas := range []int{1, 2, 4} {
			if k.name == "mem" && replicas > 1 {
				continue // an in-memory store is not shared
			}
			if k.name == "embedded" && replicas > 1 {
				continue // one process holds the file
			}
			b.Run(fmt.Sprintf("store=%s/replicas=%d/clients=64", k.name, replicas), func(b *testing.B) {
				books, bills, names := apBenchERP(b)
				pack, err := ap.NewPack(books, ap.Config{})
				if err != nil {
					b.Fatal(err)
				}
				var stores []gateway.Store
				var pgs []*postgres.Store
				if k.name == "postgres" {
					// Each replica its own pool on one schema, as in
					// store/postgres's BenchmarkDecide.
					dsn, _ := pgtest.Schema(b)
					for range replicas {
						st, err := postgres.Open(context.Background(), dsn, postgres.Config{MaxConns: int32(32 / replicas)})
						if err != nil {
							b.Fatal(err)
						}
						b.Cleanup(st.Close)
						stores = append(stores, st)
						pgs = append(pgs, st)
					}
				} else {
					st, _ := k.open(b, time.Now)
					stores = append(stores, st)
				}
				h := newHarness(b, storeKind{name: k.name, open: func(testing.TB, func() time.Time) (gateway.Store, func() gateway.Store) {
					return stores[0], func() gateway.Store { return stores[0] }
				}}, time.Now(), pack, testclock.New(time.Now()))
				gws := []*gateway.Gateway{h.gw}
				for _, st := range stores[1:] {
					gw, err := gateway.New(h.cfg, st, pack)
					if err != nil {
						b.Fatal(err)
					}
					gws = append(gws, gw)
				}
				tok := h.mandate(mandate.Mandate{ID: "m-apbench", Owner: "bench", Scope: apActions, Budget: intent.Money{Currency: "EUR", Amount: 1 << 50}})
				var next [benchVendors]atomic.Int64
				lat := make([]time.Duration, b.N)
				var done atomic.Int64
				var failed atomic.Value
				var wg sync.WaitGroup
				trips := func() (n uint64) {
					for _, st := range pgs {
						n += st.RoundTrips()
					}
					return n
				}
				trips0 := trips()
				b.ResetTimer()
				start := time.Now()
				for c := range benchVendors {
					gw := gws[c%len(gws)]
					wg.Add(1)
					go func() {
						defer wg.Done()
						for {
							i := done.Add(1) - 1
							if i >= int64(b.N) {
								return
							}
							j := next[c].Add(1) - 1
							args := map[string]any{"vendor": names[c], "bill": bills[c].Ref, "iban": germanIBAN(c + 1), "amount": intent.FormatAmount(intent.Amount(100+j), 2), "currency": "EUR"}
							t0 := time.Now()
							d, err := gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: proposal(b, ap.ActionPayBill, args)})
							lat[i] = time.Since(t0)
							if err == nil && !d.Executed {
								err = fmt.Errorf("%s %s: %s %s", bills[c].Ref, args["amount"], d.Verdict, message(d))
							}
							if err != nil {
								failed.CompareAndSwap(nil, err)
								done.Store(int64(b.N))
								return
							}
						}
					}()
				}
				wg.Wait()
				elapsed := time.Since(start)
				b.StopTimer()
				if err, _ := failed.Load().(error); err != nil {
					b.Fatal(err)
				}
				slices.Sort(lat)
				b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
				if len(pgs) > 0 {
					b.ReportMetric(float64(trips()-trips0)/float64(b.N), "round-trips/decision")
				}
			})
		}
	}
}
