package odoo_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
	"github.com/intentplane/intentplane/store/mem"
)

// historySizes are the vendors' histories BenchmarkVendorHistory pays
// against: documents (bills and credit notes) besides their payments.
var historySizes = []int{10, 1000, 20000}

// historyDoc is the i-th document of a generated history of n: a bill
// (a credit note one time in ten) of 10.00 to 5,000.00 EUR, dated over
// the ten years before 2026-11, its reference numbered per year as a
// vendor numbers its invoices ("INV-2019-00042").
func historyDoc(r *rand.Rand, i, n int) (ref string, total intent.Amount, date time.Time, credit bool) {
	date = time.Date(2016, 11, 1, 0, 0, 0, 0, time.UTC).AddDate(0, 0, i*3650/max(n, 1))
	return fmt.Sprintf("INV-%d-%05d", date.Year(), i), intent.Amount(1000 + r.IntN(499_000)), date, i%10 == 9
}

// historyBill is the i-th bill BenchmarkVendorHistory pays: a reference
// and an amount no document of the history has (amounts of history
// documents stay below 5,000.00).
func historyBill(i int) (string, intent.Amount) {
	return fmt.Sprintf("INV-2026-9%04d", i), intent.Amount(600_000 + 100*i)
}

// BenchmarkVendorHistory pays bills of a vendor whose history holds 10,
// 1,000 and 20,000 documents (bills, one in ten a credit note, and a
// payment for each bill), all settled, over ten years: on erp.Mem and on
// the fake Odoo (17, XML-RPC), an allowed ap.pay_bill end to end per
// op. A decision reads only what its controls need (erp.BillQuery.
// Decision), so each size costs the same ERP calls (calls/op) and about
// the same time (ns/op). Compare the sizes in one run:
//
//	go test ./odoo -run '^$' -bench BenchmarkVendorHistory -benchtime 300x
func BenchmarkVendorHistory(b *testing.B) {
	for _, n := range historySizes {
		b.Run(fmt.Sprintf("mem/docs=%d", n), func(b *testing.B) { benchHistoryMem(b, n) })
	}
	for _, n := range historySizes {
		b.Run(fmt.Sprintf("fake-odoo/docs=%d", n), func(b *testing.B) { benchHistoryOdoo(b, n) })
	}
}

// countingSource counts the calls of an erp.Source.
type countingSource struct {
	erp.Source
	n atomic.Int64
}

func (c *countingSource) Vendors(ctx context.Context, co string, q erp.VendorQuery) ([]erp.Vendor, error) {
	c.n.Add(1)
	return c.Source.Vendors(ctx, co, q)
}

func (c *countingSource) BankAccounts(ctx context.Context, co string, q erp.BankAccountQuery) ([]erp.BankAccount, error) {
	c.n.Add(1)
	return c.Source.BankAccounts(ctx, co, q)
}

func (c *countingSource) Bills(ctx context.Context, co string, q erp.BillQuery) ([]erp.Bill, error) {
	c.n.Add(1)
	return c.Source.Bills(ctx, co, q)
}

func (c *countingSource) Payments(ctx context.Context, co string, q erp.PaymentQuery) ([]erp.Payment, error) {
	c.n.Add(1)
	return c.Source.Payments(ctx, co, q)
}

func (c *countingSource) Rate(ctx context.Context, co, currency, day string) (erp.Rate, error) {
	c.n.Add(1)
	return c.Source.Rate(ctx, co, currency, day)
}

func (c *countingSource) RegisterPayment(ctx context.Context, co string, r erp.PaymentRequest) (erp.Payment, error) {
	c.n.Add(1)
	return c.Source.RegisterPayment(ctx, co, r)
}

// memPayer is the pack on erp.Mem (the demo ERP), through a gateway, with
// thresholds no payment reaches: what is measured is an allowed payment
// no person is asked about.
type memPayer struct {
	erp *erp.Mem
	src *countingSource
	gw  *gateway.Gateway
	tok string
}

func newMemPayer(tb testing.TB) *memPayer {
	tb.Helper()
	now := time.Now
	m := ap.DemoERP(now)
	p := &memPayer{erp: m, src: &countingSource{Source: m}}
	pack, err := ap.NewPack(p.src, ap.Config{Now: now, ConfirmAbove: 100_000_000_00, FourEyesDailyAbove: 100_000_000_00,
		MaxAmount: 100_000_000_00, MaxVendorTotal: 100_000_000_00})
	if err != nil {
		tb.Fatal(err)
	}
	keys := approval.StaticKeys{}
	for name, k := range apApprovers {
		keys[name] = k.Public().(ed25519.PublicKey)
	}
	p.gw, err = gateway.New(gateway.Config{Audience: apAudience, Issuers: mandate.StaticKeys{"cfo": apIssuer.Public().(ed25519.PublicKey)},
		Approvers: keys, Now: now}, mem.New(now), pack)
	if err != nil {
		tb.Fatal(err)
	}
	p.tok, err = mandate.Issue(mandate.Mandate{ID: "m-hist", Audience: apAudience, Owner: ap.DemoCompany, Scope: []intent.Action{ap.ActionPayBill, ap.ActionListOpenBills},
		Budget: intent.Money{Currency: "EUR", Amount: 100_000_000_000_00}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: now().Add(-time.Minute), Expiry: now().Add(24 * time.Hour)}, "cfo", apIssuer)
	if err != nil {
		tb.Fatal(err)
	}
	return p
}

func (p *memPayer) decide(tb testing.TB, action intent.Action, args map[string]any) gateway.Decision {
	tb.Helper()
	body, err := json.Marshal(map[string]any{"action": action, "args": args})
	if err != nil {
		tb.Fatal(err)
	}
	d, err := p.gw.Decide(context.Background(), gateway.Request{Mandate: p.tok, Proposal: body})
	if err != nil {
		tb.Fatalf("Decide: %v", err)
	}
	return d
}

// vendor returns the ID of the demo vendor.
func (p *memPayer) vendor(tb testing.TB) string {
	vs, err := p.erp.Vendors(context.Background(), ap.DemoCompany, erp.VendorQuery{Name: ap.DemoVendor})
	if err != nil || len(vs) != 1 {
		tb.Fatalf("demo vendor: %v, %v", vs, err)
	}
	return vs[0].ID
}

// seedMemHistory gives the demo vendor of m the history of n documents
// (historyDoc), each settled: a bill paid in full by hand, and a credit
// note applied to the bill before it, which is then paid the rest.
func seedMemHistory(tb testing.TB, m *erp.Mem, vendor string, n int) {
	tb.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(26, uint64(n)))
	pending := ""
	payRest := func(id string, day time.Time) {
		bs, err := m.Bills(ctx, ap.DemoCompany, erp.BillQuery{ID: id})
		if err != nil || len(bs) != 1 {
			tb.Fatalf("bill %s: %v, %v", id, bs, err)
		}
		if bs[0].Residual > 0 {
			if _, err := m.AddPayment(ctx, ap.DemoCompany, erp.Payment{Bill: id, Amount: intent.Money{Currency: "EUR", Amount: bs[0].Residual},
				Day: day.Format(time.DateOnly), Date: day}); err != nil {
				tb.Fatal(err)
			}
		}
	}
	var day time.Time
	for i := range n {
		ref, total, date, credit := historyDoc(r, i, n)
		b := erp.Bill{Ref: ref, Vendor: vendor, Currency: "EUR", Total: total, Date: date, Due: date.AddDate(0, 0, 30)}
		if credit && pending != "" {
			b.Kind, b.Reverses, b.Total = erp.KindCreditNote, pending, 100 // applied to the bill before it
		}
		added, err := m.AddBill(ctx, ap.DemoCompany, b)
		if err != nil {
			tb.Fatal(err)
		}
		if pending != "" {
			payRest(pending, day)
			pending = ""
		}
		if added.Kind == erp.KindBill {
			pending, day = added.ID, date.AddDate(0, 0, 20)
		}
	}
	if pending != "" {
		payRest(pending, day)
	}
}

func benchHistoryMem(b *testing.B, n int) {
	p := newMemPayer(b)
	vendor := p.vendor(b)
	seedMemHistory(b, p.erp, vendor, n)
	pay := func(tb testing.TB, i int) gateway.Decision { // the first, untimed
		ref, amount := historyBill(i)
		if _, err := p.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: vendor, Currency: "EUR", Total: amount,
			Date: time.Now().UTC().Truncate(24 * time.Hour)}); err != nil {
			tb.Fatal(err)
		}
		return p.decide(tb, ap.ActionPayBill, payArgs(ap.DemoVendor, ref, ap.DemoIBAN, intent.FormatAmount(amount, 2)))
	}
	if d := pay(b, 0); !d.Executed { // the vendor is paid this week: the decisions to measure need not ask the ERP
		b.Fatalf("first payment: %s", refusal(d))
	}
	measureHistory(b, func(i int) (func() gateway.Decision, int64) {
		ref, amount := historyBill(i + 1)
		if _, err := p.erp.AddBill(context.Background(), ap.DemoCompany, erp.Bill{Ref: ref, Vendor: vendor, Currency: "EUR", Total: amount,
			Date: time.Now().UTC().Truncate(24 * time.Hour)}); err != nil {
			b.Fatal(err)
		}
		return func() gateway.Decision {
			return p.decide(b, ap.ActionPayBill, payArgs(ap.DemoVendor, ref, ap.DemoIBAN, intent.FormatAmount(amount, 2)))
		}, p.src.n.Load()
	}, func() int64 { return p.src.n.Load() })
}

// measureHistory runs the benchmark's loop: prepare (untimed) enters the
// i-th bill and returns the payment to time and the ERP calls so far;
// calls gives the calls after it. It reports calls/op.
func measureHistory(b *testing.B, prepare func(i int) (func() gateway.Decision, int64), calls func() int64) {
	var total int64
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		pay, before := prepare(i)
		b.StartTimer()
		d := pay()
		total += calls() - before
		if !d.Executed {
			b.Fatalf("payment %d not made: %s", i, refusal(d))
		}
	}
	b.ReportMetric(float64(total)/float64(b.N), "calls/op")
}

func benchHistoryOdoo(b *testing.B, n int) {
	srv := odootest.NewServer(fakeMaster)
	b.Cleanup(srv.Close)
	e := newAPEnv(b, odootest.RealServer{URL: srv.URL, Master: fakeMaster}, "history", srv)
	e.gw, _ = e.mount(b, e.now, e.keys, ap.Config{ConfirmAbove: 100_000_000_00, FourEyesDailyAbove: 100_000_000_00,
		MaxAmount: 100_000_000_00, MaxVendorTotal: 100_000_000_00})
	seedOdooHistory(b, e, srv, n)
	add := func(i int) map[string]any {
		ref, amount := historyBill(i)
		bill := e.addBill(b, e.vendor.ID, "", ref, amount)
		return payArgs(provision.DemoVendor, bill.Ref, provision.DemoIBAN, intent.FormatAmount(amount, 2))
	}
	if d := e.decide(b, ap.ActionPayBill, add(0)); !d.Executed {
		b.Fatalf("first payment: %s", refusal(d))
	}
	measureHistory(b, func(i int) (func() gateway.Decision, int64) {
		args := add(i + 1)
		return func() gateway.Decision { return e.decide(b, ap.ActionPayBill, args) }, e.client.Calls()
	}, e.client.Calls)
}

// seedOdooHistory gives the demo vendor of e's fake Odoo the history of n
// documents (historyDoc), settled, each bill with the payment that
// settled it (odootest.Server.SeedHistory).
func seedOdooHistory(tb testing.TB, e *apEnv, srv *odootest.Server, n int) {
	tb.Helper()
	ctx := context.Background()
	r := rand.New(rand.NewPCG(26, uint64(n)))
	docs := make([]odootest.HistoryDoc, n)
	for i := range docs {
		ref, total, date, credit := historyDoc(r, i, n)
		docs[i] = odootest.HistoryDoc{Ref: ref, Total: float64(total) / 100, Date: date.Format(time.DateOnly), CreditNote: credit, Paid: !credit}
	}
	eur, err := e.admin.Currency(ctx, "EUR")
	if err != nil {
		tb.Fatal(err)
	}
	vendor, _ := strconv.ParseInt(e.vendor.ID, 10, 64)
	if err := srv.SeedHistory(e.cfg.DB, e.admin.Companies()[provision.DemoCompany], vendor, eur, docs); err != nil {
		tb.Fatal(err)
	}
	bs, err := e.client.Bills(ctx, provision.DemoCompany, erp.BillQuery{Vendor: e.vendor.ID, Limit: 20, Offset: n - 10, NoVendorName: true})
	if err != nil || len(bs) < 10 {
		tb.Fatalf("the vendor's last documents after seeding: %d, %v; want at least 10", len(bs), err)
	}
	if slices.ContainsFunc(bs, func(b erp.Bill) bool {
		return slices.ContainsFunc(docs, func(h odootest.HistoryDoc) bool { return h.Ref == b.Ref }) && b.Residual != 0
	}) {
		tb.Fatal("a seeded document is open")
	}
}
