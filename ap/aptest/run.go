package aptest

import (
	"cmp"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// Env is one ERP to run the workload on, empty of the book's records.
type Env struct {
	// Source is the ERP the pack reads and pays through.
	Source erp.Source
	// Builder enters the book into the same ERP.
	Builder Builder
	// Company is the company whose book it is (a mandate's owner).
	Company string
	// Day is the ERP's today when the book is entered: the book's dates
	// are relative to it (a fixed day on erp.Mem, the wall clock on
	// Odoo); zero means time.Now().
	Day time.Time
	// Config is the company's controls (ap.Config); Now and Callbacks
	// are Run's.
	Config ap.Config
	// Vendors is the number of vendors of the book, five bills each
	// (about five payments); zero means 30 (the full book, ~150
	// payments).
	Vendors int
	// Name names the ERP in the log ("erp.Mem", "fake Odoo").
	Name string
	// NewStore returns the gateway's store on the clock now (store/mem's
	// New for a test): the caller's, since a pack imports no store.
	// Required.
	NewStore func(now func() time.Time) gateway.Store
}

func (e Env) vendors() int { return cmp.Or(e.Vendors, 30) }

// Figures are what the workload measured.
type Figures struct {
	// Payments is the number of payments an AP clerk may make; Paid of
	// them executed.
	Payments, Paid int
	// Limited counts, by setting ("max_amount", "max_vendor_total"), the
	// payments refused by a limit the company configured, as practice
	// expects under that configuration (see Run): each refusal named the
	// setting.
	Limited map[string]int
	// FalseRefusals are the payments refused that practice says to pay
	// (get_vendor refused included): the target is 0, and each fails the
	// test.
	FalseRefusals int
	// Confirms and FourEyes count the step-ups asked (with PayRuns, the
	// approvals asked: one per run that needs a person); Needless those no
	// practice asks for.
	Confirms, FourEyes, Needless int
	// Runs is the number of payment runs proposed (PayRuns); zero with Pay.
	Runs int
	// Why counts the step-ups by level and reason ("confirm: ...").
	Why map[string]int
	// Median is the median wall time per payment: get_vendor,
	// list_open_bills, pay_bill and any confirmation.
	Median time.Duration
	// Receipts is the number of receipts the gateway wrote.
	Receipts int
}

// limited is the number of payments refused by a configured limit.
func (f Figures) limited() int {
	n := 0
	for _, v := range f.Limited {
		n += v
	}
	return n
}

// String is the figures in one line.
func (f Figures) String() string {
	runs := ""
	if f.Runs > 0 {
		runs = fmt.Sprintf(" in %d runs", f.Runs)
	}
	return fmt.Sprintf("%d payments%s, %d paid, refused by a configured limit: %d %v, %d false refusals, %d confirmations, %d four-eyes step-ups, %d needless step-ups, median %v per payment; %.1f asked a person per 100 paid",
		f.Payments, runs, f.Paid, f.limited(), f.Limited, f.FalseRefusals, f.Confirms, f.FourEyes, f.Needless, f.Median.Round(10*time.Microsecond), f.PerHundred())
}

// PerHundred is the approvals asked of people (confirmations and
// four-eyes step-ups, each one request a person decides) per 100
// payments paid; zero when nothing was paid.
func (f Figures) PerHundred() float64 {
	if f.Paid == 0 {
		return 0
	}
	return 100 * float64(f.Confirms+f.FourEyes) / float64(f.Paid)
}

// Reasons is the step-ups by reason, one a line, most frequent first:
// first each reason alone (a step-up that names two counts under both),
// then the combinations as asked.
func (f Figures) Reasons() string {
	each := map[string]int{}
	for k, n := range f.Why {
		level, rs, _ := strings.Cut(k, ": ")
		for _, r := range strings.Split(rs, " + ") {
			each[level+": "+r] += n
		}
	}
	lines := []string{"each reason:"}
	lines = append(lines, counted(each)...)
	return strings.Join(append(append(lines, "as asked:"), counted(f.Why)...), "\n")
}

// counted is the keys of m with their counts, one a line, most frequent
// first.
func counted(m map[string]int) []string {
	keys := slices.SortedFunc(maps.Keys(m), func(a, b string) int { return cmp.Or(m[b]-m[a], strings.Compare(a, b)) })
	var lines []string
	for _, k := range keys {
		lines = append(lines, fmt.Sprintf("%3d × %s", m[k], k))
	}
	return lines
}

// WholeVendorRuns is the configuration of a company whose assistant pays
// all of a vendor's due bills in one run: max_vendor_total raised to
// 100,000.00, so that a vendor's day is bounded by four eyes above
// four_eyes_daily_above rather than refused at max_amount; a single
// payment and a bill stay bounded by max_amount (10,000.00).
var WholeVendorRuns = ap.Config{MaxVendorTotal: 10_000_000}

// Book is a generated book entered into an ERP; Pay pays it.
type Book struct {
	b   book
	day time.Time
}

// Build generates the book (seeded: the same book each time; e.Vendors
// vendors) and enters it into e's ERP through e.Builder, as of e.Day.
func Build(t testing.TB, e Env) *Book {
	t.Helper()
	if e.Day.IsZero() {
		e.Day = time.Now()
	}
	return &Book{b: generate(t, e, e.Day, rand.New(rand.NewPCG(17, 2026))), day: e.Day}
}

// Run is Build and Pay.
func Run(t testing.TB, e Env) Figures {
	t.Helper()
	return Pay(t, e, Build(t, e))
}

// limits are the company's controls (ap.Config with its defaults) that
// practice reads the book with.
type limits struct {
	confirm, fourEyes, max, vendorMax intent.Amount
	cooling                           time.Duration
}

func limitsOf(c ap.Config) limits {
	l := limits{confirm: cmp.Or(c.ConfirmAbove, ap.DefaultConfirmAbove), fourEyes: cmp.Or(c.FourEyesDailyAbove, ap.DefaultFourEyesDaily),
		max: cmp.Or(c.MaxAmount, ap.DefaultMaxAmount), cooling: cmp.Or(c.CoolingOff, ap.DefaultCoolingOff)}
	l.vendorMax = cmp.Or(c.MaxVendorTotal, l.max)
	return l
}

// expected is what practice expects of one payment: refused by the
// company's limit named limit (the setting's key), or paid after a step-up
// of level ("" none, "confirm", "four_eyes"), for why.
type expected struct {
	limit, level, why string
}

// expect is what practice expects of paying amount (the money, after any
// credit netted, converted into the company's currency: the limits are
// the company's, in EUR) for p, when paidVendor was paid to the vendor
// earlier in the run (in EUR, the same day, week and mandate: each vendor
// is paid in one day) and paidBill of the bill, and first is true when no
// payment to the vendor is on file.
func (l limits) expect(p payment, amount, paidVendor, paidBill intent.Amount, first bool) expected {
	switch {
	case amount+paidBill > l.max:
		return expected{limit: "max_amount", why: "the payment with what was paid of the bill above the company's limit for one payment"}
	case amount+paidVendor > l.vendorMax:
		return expected{limit: "max_vendor_total", why: "the vendor's day above the company's limit for one vendor"}
	}
	e := expected{level: p.expect, why: p.why}
	switch {
	case e.level != "four_eyes" && amount+paidVendor > l.fourEyes:
		e.level, e.why = "four_eyes", "the vendor's day above four_eyes_daily_above (split-payment control)"
	case e.level == "" && amount > l.confirm:
		e.level, e.why = "confirm", "above the company's confirmation threshold"
	case e.level == "" && amount+max(paidVendor, paidBill) > l.confirm:
		e.level, e.why = "confirm", "the vendor's day or the bill above confirm_above (split-payment control)"
	case e.level == "" && first:
		e.level, e.why = "confirm", "the first payment to a new vendor"
	}
	return e
}

// Pay pays bk, entered into e's ERP, through the AP tools on e.Source as a
// careful assistant would (the vendor's account from ap.get_vendor, the
// bill's residual and the vendor's open credit from ap.list_open_bills),
// with a user who confirms what is asked, under the company's controls
// e.Config, and returns the figures. It fails t on a false refusal, a
// needless step-up, a missing one, a payment executed above a configured
// limit, a limit's refusal that does not name its setting, and payments in
// the ERP that are not the ones executed.
//
// The expected outcome of each payment is written from AP practice, not
// from the pack's code:
//
//   - a posted bill of an active vendor (a company, an individual, a
//     vendor without a company, bills addressed to a contact person of the
//     vendor), to the account on file for more than a week (IBAN, US, UK
//     or national with a BIC), within the company's limits, is paid;
//   - the company's limits for the assistant are its own configuration
//     ([servers.NAME.controls] in intentplane-mcp): a payment that takes
//     the bill above max_amount (what one payment, or one bill in all,
//     may be), or the vendor's day above max_vendor_total, is refused as
//     the company asked, and the refusal must say so and name the
//     setting; the accounting team pays it in the ERP. Such refusals are
//     counted apart (Figures.Limited), never as paid;
//   - above the company's confirmation threshold (confirm_above,
//     1,000.00 by default) a person confirming is right. The company's
//     limits are in its currency (EUR): a USD bill counts converted at
//     the rate the company holds in its ERP (USDRate), and what is paid
//     to a vendor or of a bill adds up in EUR;
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
//     confirm_above a person confirms, past four_eyes_daily_above
//     (5,000.00) two people approve. Each vendor's bills are paid in one
//     day.
//
// Anything else that stops a payment (a refusal, or a confirmation or
// four-eyes step-up no practice above asks for) is counted against the
// gateway.
//
// The gateway runs on a clock of its own that starts at the book's day.
// An ERP that stamps an account's SetAt itself (Odoo) keeps every account
// as new: the clock is then moved forward, vendor by vendor, to when each
// account has the age the book gives it (two days for a changed one, more
// than a week for the others), the vendors with younger accounts first.
func Pay(t testing.TB, e Env, bk *Book) Figures {
	t.Helper()
	e.Day = bk.day
	d := newDriver(t, e)
	l := limitsOf(e.Config)
	f := Figures{Payments: len(bk.b.payments), Limited: map[string]int{}, Why: map[string]int{}}
	var times []time.Duration
	paidVendors := map[string]bool{}
	paidVendor, paidBill := map[string]intent.Amount{}, map[string]intent.Amount{} // by vendor; by bill; in EUR
	for _, p := range order(bk.b) {
		d.clock.AdvanceTo(p.at)
		acct := bk.b.accounts[p.vendor]
		if age := d.clock.Now().Sub(acct.SetAt); (age < l.cooling) != (acct.age < l.cooling) {
			t.Fatalf("%s: the account on file is %v old when paid, the book says %v", p.vendor, age, acct.age)
		}
		start := time.Now()
		args, amount, ok := d.prepare(p)
		if !ok {
			f.FalseRefusals++
			continue
		}
		eur := inEUR(p.currency, amount)
		exp := l.expect(p, eur, paidVendor[p.vendor], paidBill[p.bill], p.newVendor && !paidVendors[p.vendor])
		level, dec := d.submit(args, &f)
		times = append(times, time.Since(start))
		what := fmt.Sprintf("%s %s %s %s", p.vendor, p.bill, intent.Money{Currency: p.currency, Amount: amount}.Decimal(), p.currency)
		if level != "" && level != exp.level && !(level == "confirm" && exp.level == "four_eyes") {
			f.Needless++
			t.Logf("needless %s for %s (expected %q: %s): %s", level, what, cmp.Or(exp.level, exp.limit), exp.why, message(dec))
		}
		switch {
		case exp.limit != "":
			f.checkLimited(t, exp, what, dec)
		case dec.Executed:
			if level != exp.level && exp.level != "" && level != "four_eyes" {
				t.Errorf("%s: step-up %q; practice wants %s (%s)", what, level, exp.level, exp.why)
			}
			paidVendor[p.vendor] += eur
			paidBill[p.bill] += eur
			paidVendors[p.vendor] = true
			f.Paid++
		default:
			f.FalseRefusals++
			t.Errorf("false refusal: %s: %s %s", what, code(dec), message(dec))
		}
	}
	slices.Sort(times)
	if len(times) > 0 {
		f.Median = times[len(times)/2]
	}
	f.finish(t, d, e, "")
	return f
}

// finish checks the figures' totals and the ERP and receipts against
// them (driver.check), and logs them; how names the way the book was paid
// ("" bill by bill, " in runs").
func (f *Figures) finish(t testing.TB, d *driver, e Env, how string) {
	t.Helper()
	if f.Needless > 0 {
		t.Errorf("%d needless step-ups (logged above): each asks a person for no reason AP practice gives", f.Needless)
	}
	if f.Paid+f.limited()+f.FalseRefusals != f.Payments {
		t.Errorf("%d payments: %d paid, %d refused by a configured limit, %d false refusals", f.Payments, f.Paid, f.limited(), f.FalseRefusals)
	}
	d.check(e, f)
	t.Logf("legitimate workload%s on %s: %s", how, cmp.Or(e.Name, "the ERP"), f)
	t.Logf("step-ups and why:\n%s", f.Reasons())
}

// checkLimited counts a payment practice expects the company's limit
// exp.limit to refuse: it must be refused, and the refusal must say it is
// the company's configuration and name the setting.
func (f *Figures) checkLimited(t testing.TB, exp expected, what string, dec gateway.Decision) {
	t.Helper()
	switch setting := "[servers.NAME.controls] " + exp.limit; {
	case dec.Executed:
		f.Paid++
		t.Errorf("%s: executed, above the company's limit %s (%s)", what, exp.limit, exp.why)
	case !strings.Contains(message(dec), setting):
		f.FalseRefusals++
		t.Errorf("%s: refused, but the refusal does not name the limit that refuses it (%s: %s): %s %s", what, setting, exp.why, code(dec), message(dec))
	default:
		f.Limited[exp.limit]++
	}
}
