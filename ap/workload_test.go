package ap_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// The legitimate workload: a generated accounts-payable book (seeded) in
// the ERP, paid through the AP tools as a careful assistant would (the
// vendor's account from ap.get_vendor, the bill's residual in its
// currency), by a user who confirms what is asked. It stands beside the
// attack tests: those say what must never be paid, this says what must be
// paid. The expected outcome of each payment is written from AP practice,
// not from the pack's code:
//
//   - a posted bill of an active vendor, to the account on file for more
//     than a week, within the company's payment limit, is paid;
//   - above the company's confirmation threshold (a setting: 1,000.00) a
//     person confirming is right;
//   - an account changed two days ago: two people approving is right
//     (four eyes in the cooling-off period);
//   - a vendor with an open credit note not yet applied: it is netted with
//     the next payment to the vendor, which pays the bill's residual less
//     the credit, and a person confirming the net amount is right;
//   - the second of two equal instalments is a payment like the first,
//     paid against the residual the first left;
//   - the first payment to a vendor never paid before: a person confirming
//     that the vendor and its account are genuine is right (new-vendor
//     verification before the first payment is standard AP practice; see
//     docs/controls.md). Most vendors of the book were paid before (a
//     bill of September paid by hand); four are new;
//   - a bill is paid only once per invoice: the book has no duplicates,
//     so a duplicate suspicion is needless;
//   - the vendors bank in their own country: a bank in another country
//     than the vendor's would rightly ask a person, and none does here;
//   - split-payment control (docs/controls.md, "Cumulative limits"): the
//     thresholds apply to what is paid to one vendor in one day (and of
//     one bill), not to each payment alone: once a vendor's day passes
//     1,000.00 a person confirms, past 5,000.00 two people approve, and
//     past the company's limit for the assistant (10,000.00) the rest is
//     paid by the accounting team (the known gap of that limit). The book
//     is paid in one day.
//
// Anything else that stops a payment (a refusal, or a confirmation or
// four-eyes step-up no practice above asks for) is counted against the
// gateway: a needless step-up fails the test, as a false refusal does. knownGaps lists the reasons of false refusals not fixed yet
// (issue 17); any other false refusal fails the test, and so does a
// known one that no longer happens (remove it from the list).

// workloadBook is one generated book.
type workloadBook struct {
	payments []workloadPayment
}

// workloadPayment is one payment an AP clerk may make, with what practice
// expects of it.
type workloadPayment struct {
	vendor, bill, currency string
	amount                 intent.Amount
	// expect is "", "confirm" or "four_eyes", with why.
	expect, why string
	// newVendor: the vendor was never paid before this book; its first
	// payment that executes rightly asks a person.
	newVendor bool
}

// workloadCountries are the vendors' countries, with the account type
// their banks use.
var workloadCountries = []struct{ cc, kind string }{
	{"DE", "iban"}, {"FR", "iban"}, {"NL", "iban"}, {"BE", "iban"}, {"AT", "iban"}, {"IT", "iban"}, {"ES", "iban"},
	{"CH", "iban"}, {"SE", "iban"}, {"PL", "iban"}, {"GB", "sortcode"}, {"US", "aba"}, {"JP", "bic"}, {"CA", "bic"},
}

// knownGaps are reasons of false refusals still open, by a word of the
// refusal's message.
var knownGaps = map[string]string{
	"above the company's limit": "above ap.Config.MaxAmount (10,000.00), one payment or the vendor's day or the bill in all: practice asks two people, the pack refuses (a configuration choice)",
}

func TestLegitimateWorkload(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	rng := rand.New(rand.NewPCG(17, 2026))
	book := generateBook(t, e, rng)
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-workload", Audience: audience, Owner: intent.Owner(ap.DemoCompany), Scope: allActions,
		// The company pays its USD bills too: the mandate has a budget in
		// each currency (docs/mandates.md, several budgets).
		Budget: intent.Money{Currency: "EUR", Amount: 100_000_000}, Budgets: []intent.Money{{Currency: "USD", Amount: 100_000_000}},
		Mode: mandate.ModeKnownCounterparties, NotBefore: t0.Add(-time.Minute), Expiry: t0.Add(30 * 24 * time.Hour),
	}, issuer, issuerKey)
	if err != nil {
		t.Fatal(err)
	}

	var (
		falseRefusals, paid, confirms, fourEyes, needless int
		why                                               = map[string]int{}
		gaps                                              = map[string]int{}
		times                                             []time.Duration
	)
	paidVendors := map[string]bool{}
	paidDay, paidBill := map[string]intent.Amount{}, map[string]intent.Amount{} // by vendor and currency; by bill
	for _, p := range book.payments {
		if p.newVendor && !paidVendors[p.vendor] && p.expect == "" {
			p.expect, p.why = "confirm", "the first payment to a new vendor"
		}
		start := time.Now()
		if before := max(paidDay[p.vendor+" "+p.currency], paidBill[p.bill]); p.amount+before <= 1_000_000 {
			switch day := paidDay[p.vendor+" "+p.currency]; {
			case p.expect != "four_eyes" && p.amount+day > 500_000:
				p.expect, p.why = "four_eyes", "the vendor's day above 5,000.00 (split-payment control)"
			case p.expect == "" && p.amount+before > 100_000:
				p.expect, p.why = "confirm", "the vendor's day or the bill above 1,000.00 (split-payment control)"
			}
		}
		g := e.decide(tok, ap.ActionGetVendor, map[string]any{"vendor": p.vendor})
		var shown struct {
			Account *struct {
				IBAN string `json:"iban"`
			} `json:"current_account"`
		}
		if !g.Executed || json.Unmarshal([]byte(g.Output), &shown) != nil || shown.Account == nil {
			falseRefusals++
			t.Errorf("%s: get_vendor %s %s", p.vendor, code(g), message(g))
			continue
		}
		// The bill as listed: what it owes, and the vendor's credit a
		// payment nets. The assistant pays the net and says which
		// residual it pays against.
		amount, residual := p.amount, ""
		if listed, ok := e.listed(tok, p.vendor, p.bill); ok {
			residual = listed.Residual
			if listed.Credit != "" {
				credit, _ := intent.ParseAmount(listed.Credit, 2)
				amount -= credit
			}
		}
		args := pay(p.vendor, p.bill, shown.Account.IBAN, intent.FormatAmount(amount, 2))
		args["currency"] = p.currency
		if residual != "" {
			args["residual"] = residual
		}
		d := e.decide(tok, ap.ActionPayBill, args)
		level := ""
		if d.Verdict == intent.StepUp {
			level = string(d.Level)
			why[level+": "+reasonOf(d)]++
			if d.Level == intent.LevelConfirm {
				confirms++
				d = e.decide(tok, ap.ActionPayBill, args, e.approveOnce("alice", d))
			} else {
				fourEyes++
				d = e.decide(tok, ap.ActionPayBill, args, e.approveOnce("alice", d), e.approveOnce("bob", d))
			}
		}
		times = append(times, time.Since(start))
		if level != p.expect && level != "" && !(level == "confirm" && p.expect == "four_eyes") {
			needless++
			t.Logf("needless %s for %s %s %s (expected %q: %s): %s", level, p.vendor, p.bill, intent.FormatAmount(p.amount, 2), p.expect, p.why, reasonOf(d))
		}
		if d.Executed && level != p.expect && p.expect != "" && level != "four_eyes" {
			t.Errorf("%s %s: step-up %q; practice wants %s (%s)", p.vendor, p.bill, level, p.expect, p.why)
		}
		if d.Executed {
			paidDay[p.vendor+" "+p.currency] += p.amount
			paidBill[p.bill] += p.amount
			paid++
			paidVendors[p.vendor] = true
			continue
		}
		falseRefusals++
		gap := ""
		for _, k := range slices.Sorted(maps.Keys(knownGaps)) {
			if gap == "" && strings.Contains(message(d), k) {
				gap = k
			}
		}
		if gap == "" {
			t.Errorf("false refusal: %s %s %s %s: %s %s", p.vendor, p.bill, intent.FormatAmount(p.amount, 2), p.currency, code(d), message(d))
			continue
		}
		gaps[gap]++
	}
	for k := range knownGaps {
		if gaps[k] == 0 {
			t.Errorf("known gap %q no longer refuses anything: remove it from knownGaps", k)
		}
	}
	slices.Sort(times)
	var median time.Duration
	if len(times) > 0 {
		median = times[len(times)/2]
	}
	t.Logf("legitimate workload: %d payments, %d paid, %d false refusals (known gaps %v), %d confirmations, %d four-eyes step-ups, %d needless step-ups, median %v per payment (get_vendor + list_open_bills + pay_bill + any confirmation, erp.Mem)",
		len(book.payments), paid, falseRefusals, gaps, confirms, fourEyes, needless, median)
	var reasons []string
	for r, n := range why {
		reasons = append(reasons, fmt.Sprintf("%3d × %s", n, r))
	}
	sort.Strings(reasons)
	t.Logf("step-ups and why:\n%s", strings.Join(reasons, "\n"))
	if needless > 0 {
		t.Errorf("%d needless step-ups (logged above): each asks a person for no reason AP practice gives", needless)
	}
	if paid+falseRefusals != len(book.payments) || len(book.payments) < 130 {
		t.Errorf("%d payments, %d paid, %d refused", len(book.payments), paid, falseRefusals)
	}
	if ps := e.payments(ap.DemoCompany); len(ps) != paid {
		t.Errorf("%d payments in the ERP, %d executed", len(ps), paid)
	}
	if n := e.verifyReceipts(ap.DemoCompany); n == 0 {
		t.Error("no receipts")
	}
}

// listedBill is a bill as ap.list_open_bills shows it.
type listedBill struct {
	Number, Residual, Credit string
}

// listed returns the bill numbered number as ap.list_open_bills shows the
// vendor's open bills; ok is false if it is not listed.
func (e *env) listed(tok, vendor, number string) (listedBill, bool) {
	e.t.Helper()
	d := e.decide(tok, ap.ActionListOpenBills, map[string]any{"vendor": vendor, "limit": ap.MaxListLimit})
	var out struct{ Bills []listedBill }
	if err := json.Unmarshal([]byte(d.Output), &out); err != nil {
		e.t.Errorf("list_open_bills %s: %v %s", vendor, err, message(d))
		return listedBill{}, false
	}
	for _, b := range out.Bills {
		if b.Number == number {
			return b, true
		}
	}
	return listedBill{}, false
}

// approveOnce is approve with an approval ID of its own, for a second
// operation with the same hash (the second of two equal instalments).
func (e *env) approveOnce(who string, d gateway.Decision) approval.Approval {
	e.t.Helper()
	return e.approveAs(who, fmt.Sprintf("-%d", approvals.Add(1)), d)
}

// approvals numbers the approvals approveOnce signs.
var approvals atomic.Int64

// reasonOf is the message of a step-up or refusal, cut to its first
// sentence.
func reasonOf(d gateway.Decision) string {
	m := message(d)
	if i := strings.Index(m, ". "); i > 0 {
		m = m[:i]
	}
	return m
}

// generateBook enters ~30 vendors of 14 countries (companies,
// individuals, contact persons of companies, with IBAN, US, UK and
// national+BIC accounts; three changed two days ago) and ~150 posted bills
// from 83.00 to 12,054.00 in EUR and USD (two in instalments, credit notes
// on a few vendors), and returns the payments an AP clerk may make.
func generateBook(t *testing.T, e *env, rng *rand.Rand) workloadBook {
	t.Helper()
	ctx := context.Background()
	var book workloadBook
	n := 0
	for i := 0; i < 30; i++ {
		c := workloadCountries[i%len(workloadCountries)]
		kind := []string{"company", "company", "individual", "company"}[i%4]
		name := fmt.Sprintf("%s Vendor %02d", c.cc, i)
		if kind == "individual" {
			name = fmt.Sprintf("Sam Freelance %02d", i)
		}
		v, err := e.erp.AddVendor(ctx, ap.DemoCompany, erp.Vendor{Name: name, Phone: fmt.Sprintf("+1 555 01%02d", i), Active: true, Country: c.cc})
		if err != nil {
			t.Fatal(err)
		}
		acct := erp.BankAccount{Vendor: v.ID, Country: c.cc, Trusted: true, Active: true, SetAt: t0.AddDate(0, -6, 0)}
		switch c.kind {
		case "iban":
			acct.Number = workloadIBAN(t, rng, c.cc)
		case "sortcode":
			acct.Number, acct.BIC = fmt.Sprintf("%08d", rng.IntN(1e8)), "601613"
			if i%2 == 0 {
				acct.Number, acct.BIC = "60-16-13 "+acct.Number, ""
			}
		case "aba":
			acct.Number, acct.BIC = fmt.Sprintf("%010d", rng.IntN(1e10)), "021000021"
		case "bic":
			acct.Number, acct.BIC = fmt.Sprintf("%09d", rng.IntN(1e9)), map[string]string{"JP": "BOTKJPJT", "CA": "ROYCCAT2"}[c.cc]
		}
		changed := i%10 == 7 // three accounts changed two days ago
		if changed {
			acct.SetAt = t0.Add(-48 * time.Hour)
		}
		if _, err := e.erp.AddBankAccount(ctx, ap.DemoCompany, acct); err != nil {
			t.Fatalf("%s: %v", acct.Number, err)
		}
		currency := "EUR"
		if c.cc == "US" || c.cc == "CA" {
			currency = "USD"
		}
		newVendor := i%7 == 5 // four vendors never paid before (in EUR)
		if !newVendor {       // a bill of September, paid by hand
			n++
			old, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: fmt.Sprintf("BILL/2026/09/%04d", n), Ref: fmt.Sprintf("INV-%d-S", i),
				Vendor: v.ID, Currency: currency, Total: intent.Amount(8300 + rng.IntN(100000)), Date: t0.AddDate(0, -3, 0), Due: t0.AddDate(0, -2, 0)})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := e.erp.AddPayment(ctx, ap.DemoCompany, erp.Payment{Bill: old.ID, Amount: intent.Money{Currency: currency, Amount: old.Total},
				Date: t0.AddDate(0, -2, -3)}); err != nil {
				t.Fatal(err)
			}
		}
		credit := i%9 == 4 // an open credit note not yet applied
		if credit {
			n++
			if _, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: fmt.Sprintf("RBILL/2026/10/%04d", n), Ref: fmt.Sprintf("CN-%d", i), Vendor: v.ID,
				Kind: erp.KindCreditNote, Currency: currency, Total: 5000}); err != nil {
				t.Fatal(err)
			}
		}
		for j := 0; j < 5; j++ {
			n++
			total := intent.Amount(8300 + rng.IntN(1205400-8300+1))
			if rng.IntN(3) > 0 {
				total = intent.Amount(8300 + rng.IntN(100000)) // most bills are small
			}
			if n == 1 {
				total = 8300
			} else if n == 2 {
				total = 1205400
			}
			b, err := e.erp.AddBill(ctx, ap.DemoCompany, erp.Bill{Name: fmt.Sprintf("BILL/2026/10/%04d", n), Ref: fmt.Sprintf("INV-%d-%d", i, j),
				Vendor: v.ID, Currency: currency, Total: total, Date: t0.AddDate(0, 0, -20+4*j), Due: t0.AddDate(0, 0, 10)})
			if err != nil {
				t.Fatal(err)
			}
			amounts := []intent.Amount{total}
			if j == 0 && i%13 == 1 { // two equal instalments
				amounts = []intent.Amount{total / 2, total - total/2}
			}
			for _, a := range amounts {
				p := workloadPayment{vendor: name, bill: b.Name, currency: currency, amount: a, newVendor: newVendor}
				switch {
				case changed:
					p.expect, p.why = "four_eyes", "the account was changed two days ago"
				case credit && j == 0:
					p.expect, p.why = "confirm", "the vendor's open credit note is netted with its next payment"
				case a > ap.DefaultConfirmAbove:
					p.expect, p.why = "confirm", "above the company's confirmation threshold"
				}
				book.payments = append(book.payments, p)
			}
		}
	}
	return book
}

// workloadIBAN returns a valid IBAN of country cc with a random BBAN.
func workloadIBAN(t *testing.T, rng *rand.Rand, cc string) string {
	t.Helper()
	length := map[string]int{"DE": 18, "FR": 23, "NL": 14, "BE": 12, "AT": 16, "IT": 23, "ES": 20, "CH": 17, "SE": 20, "PL": 24}[cc]
	for try := 0; try < 10000; try++ {
		var b strings.Builder
		for k := 0; k < length; k++ {
			if cc == "NL" && k < 4 || cc == "IT" && k == 0 {
				b.WriteByte(byte('A' + rng.IntN(26)))
				continue
			}
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		iban := ibanWithCheck(cc, b.String())
		if _, err := normalize.IBAN(iban); err == nil {
			return iban
		}
	}
	t.Fatalf("no valid %s IBAN generated", cc)
	return ""
}

// ibanWithCheck returns the IBAN of cc and bban with its mod-97 check
// digits.
func ibanWithCheck(cc, bban string) string {
	var digits strings.Builder
	for _, c := range bban + cc + "00" {
		if c >= 'A' && c <= 'Z' {
			fmt.Fprintf(&digits, "%d", c-'A'+10)
		} else {
			digits.WriteRune(c)
		}
	}
	x, _ := new(big.Int).SetString(digits.String(), 10)
	check := 98 - new(big.Int).Mod(x, big.NewInt(97)).Int64()
	return fmt.Sprintf("%s%02d%s", cc, check, bban)
}
