package aptest

import (
	"context"
	"fmt"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// book is one generated book, as entered into the ERP.
type book struct {
	payments []payment
	// accounts are the vendors' accounts by vendor name, as the ERP keeps
	// them (SetAt is the ERP's), with how long before the book's day they
	// were set.
	accounts map[string]bookAccount
}

// bookAccount is a vendor's account on file and its age on the day the
// book is paid.
type bookAccount struct {
	erp.BankAccount
	age time.Duration
}

// payment is one payment an AP clerk may make, with what practice expects
// of it.
type payment struct {
	vendor, bill, currency string
	amount                 intent.Amount
	// expect is "", "confirm" or "four_eyes", with why, for what the book
	// itself says of the payment (a changed account, a credit note); the
	// thresholds are the company's configuration (limits.expect).
	expect, why string
	// newVendor: the vendor was never paid before this book; its first
	// payment that executes rightly asks a person.
	newVendor bool
	// at is when it is made (see order).
	at time.Time
}

// countries are the vendors' countries, with the account type their banks
// use.
var countries = []struct{ cc, kind string }{
	{"DE", "iban"}, {"FR", "iban"}, {"NL", "iban"}, {"BE", "iban"}, {"AT", "iban"}, {"IT", "iban"}, {"ES", "iban"},
	{"CH", "iban"}, {"SE", "iban"}, {"PL", "iban"}, {"GB", "sortcode"}, {"US", "aba"}, {"JP", "bic"}, {"CA", "bic"},
}

// Ages of the accounts on file: months for most, two days for an account
// changed two days before the book is paid.
const (
	ageOnFile  = 6 * 30 * 24 * time.Hour
	ageChanged = 48 * time.Hour
)

// generate enters the book of e.Vendors vendors (30 in the full book) of
// 14 countries into e's ERP, as of the day day: companies, individuals,
// vendors without a company, bills addressed to contact persons, IBAN,
// US, UK and national+BIC accounts (three changed two days before), a
// bill of September paid by hand for most vendors, open credit notes on a
// few, and five posted bills per vendor from 83.00 to 12,054.00 in EUR
// and USD (two paid in instalments); it returns the payments an AP clerk
// may make.
func generate(t testing.TB, e Env, day time.Time, rng *rand.Rand) book {
	t.Helper()
	g := &generator{t: t, ctx: context.Background(), e: e, day: day, rng: rng, bk: book{accounts: map[string]bookAccount{}}}
	// The company (EUR) holds the USD rate of a month ago in its ERP.
	if err := e.Builder.SetRate(g.ctx, e.Company, "USD", day.AddDate(0, -1, 0).Format(time.DateOnly), USDRate); err != nil {
		t.Fatalf("the USD rate: %v", err)
	}
	for i := 0; i < e.vendors(); i++ {
		g.vendor(i)
	}
	return g.bk
}

// generator enters one book; n numbers its bills.
type generator struct {
	t   testing.TB
	ctx context.Context
	e   Env
	day time.Time
	rng *rand.Rand
	n   int
	bk  book
}

// vendor enters the book's vendor number i: the vendor (and its contact
// person), its account, its history and its open bills.
func (g *generator) vendor(i int) {
	c := countries[i%len(countries)]
	v := Vendor{Vendor: erp.Vendor{Name: fmt.Sprintf("%s Vendor %02d", c.cc, i), Phone: fmt.Sprintf("+1 555 01%02d", i), Active: true, Country: c.cc},
		Individual: i%4 == 2, Shared: i%3 != 1}
	if v.Individual {
		v.Name = fmt.Sprintf("Sam Freelance %02d", i)
	} else if i%5 == 1 {
		v.Contact = fmt.Sprintf("Jo Accounts %02d", i) // the bills are addressed to a contact person
	}
	vendor, contact, err := g.e.Builder.AddVendor(g.ctx, g.e.Company, v)
	if err != nil {
		g.t.Fatalf("vendor %s: %v", v.Name, err)
	}
	changed := i%10 == 7 // three accounts changed two days ago
	g.bk.accounts[v.Name] = g.account(i, c.cc, c.kind, vendor.ID, changed)
	currency := "EUR"
	if c.cc == "US" || c.cc == "CA" {
		currency = "USD"
	}
	newVendor := i%7 == 5 // four vendors never paid before (in EUR)
	if !newVendor {       // a bill of September, paid by hand
		g.paidInSeptember(i, vendor.ID, contact, currency)
	}
	credit := i%9 == 4 // an open credit note not yet applied
	if credit {
		g.n++
		if _, err := g.e.Builder.AddBill(g.ctx, g.e.Company, erp.Bill{Name: fmt.Sprintf("RBILL/2026/10/%04d", g.n), Ref: fmt.Sprintf("CN-%d", i), Vendor: vendor.ID,
			Contact: contact, Kind: erp.KindCreditNote, Currency: currency, Total: 5000}); err != nil {
			g.t.Fatal(err)
		}
	}
	for j := 0; j < 5; j++ {
		b := g.bill(i, j, vendor.ID, contact, currency)
		amounts := []intent.Amount{b.Total}
		if j == 0 && i%13 == 1 { // two equal instalments
			amounts = []intent.Amount{b.Total / 2, b.Total - b.Total/2}
		}
		for _, a := range amounts {
			p := payment{vendor: v.Name, bill: b.Name, currency: currency, amount: a, newVendor: newVendor}
			switch {
			case changed:
				p.expect, p.why = "four_eyes", "the account was changed two days ago"
			case credit && j == 0:
				p.expect, p.why = "confirm", "the vendor's open credit note is netted with its next payment"
			}
			g.bk.payments = append(g.bk.payments, p)
		}
	}
}

// account enters the trusted account of the vendor number i with the ID
// vendor, of country cc and kind (iban, sortcode, aba, bic), set months
// before the book's day or, if changed, two days before.
func (g *generator) account(i int, cc, kind, vendor string, changed bool) bookAccount {
	acct := erp.BankAccount{Vendor: vendor, Country: cc, Trusted: true, Active: true}
	switch kind {
	case "iban":
		acct.Number = iban(g.t, g.rng, cc)
	case "sortcode":
		acct.Number, acct.BIC = fmt.Sprintf("%08d", g.rng.IntN(1e8)), "601613"
		if i%2 == 0 {
			acct.Number, acct.BIC = "60-16-13 "+acct.Number, ""
		}
	case "aba":
		acct.Number, acct.BIC = fmt.Sprintf("%010d", g.rng.IntN(1e10)), "021000021"
	case "bic":
		acct.Number, acct.BIC = fmt.Sprintf("%09d", g.rng.IntN(1e9)), map[string]string{"JP": "BOTKJPJT", "CA": "ROYCCAT2"}[cc]
	}
	age := ageOnFile
	if changed {
		age = ageChanged
	}
	acct.SetAt = g.day.Add(-age)
	stored, err := g.e.Builder.AddBankAccount(g.ctx, g.e.Company, acct)
	if err != nil {
		g.t.Fatalf("%s: %v", acct.Number, err)
	}
	return bookAccount{BankAccount: stored, age: age}
}

// paidInSeptember enters a bill of the vendor number i dated three months
// before the book's day, paid in full by hand two months before.
func (g *generator) paidInSeptember(i int, vendor, contact, currency string) {
	g.n++
	old, err := g.e.Builder.AddBill(g.ctx, g.e.Company, erp.Bill{Name: fmt.Sprintf("BILL/2026/09/%04d", g.n), Ref: fmt.Sprintf("INV-%d-S", i),
		Vendor: vendor, Contact: contact, Currency: currency, Total: intent.Amount(8300 + g.rng.IntN(100000)), Date: g.day.AddDate(0, -3, 0), Due: g.day.AddDate(0, -2, 0)})
	if err != nil {
		g.t.Fatal(err)
	}
	paid := g.day.AddDate(0, -2, -3)
	if _, err := g.e.Builder.AddPayment(g.ctx, g.e.Company, erp.Payment{Bill: old.ID, Amount: intent.Money{Currency: currency, Amount: old.Total},
		Date: paid, Day: paid.Format(time.DateOnly)}); err != nil {
		g.t.Fatal(err)
	}
}

// bill enters the open bill number j of the vendor number i: most small
// (83.00 to 1,083.00), a third up to 12,054.00; the book's first bill is
// 83.00 and its second 12,054.00.
func (g *generator) bill(i, j int, vendor, contact, currency string) erp.Bill {
	g.n++
	total := intent.Amount(8300 + g.rng.IntN(1205400-8300+1))
	if g.rng.IntN(3) > 0 {
		total = intent.Amount(8300 + g.rng.IntN(100000)) // most bills are small
	}
	if g.n == 1 {
		total = 8300
	} else if g.n == 2 {
		total = 1205400
	}
	b, err := g.e.Builder.AddBill(g.ctx, g.e.Company, erp.Bill{Name: fmt.Sprintf("BILL/2026/10/%04d", g.n), Ref: fmt.Sprintf("INV-%d-%d", i, j),
		Vendor: vendor, Contact: contact, Currency: currency, Total: total, Date: g.day.AddDate(0, 0, -20+4*j), Due: g.day.AddDate(0, 0, 10)})
	if err != nil {
		g.t.Fatal(err)
	}
	return b
}

// iban returns a valid IBAN of country cc with a random BBAN.
func iban(t testing.TB, rng *rand.Rand, cc string) string {
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
		s := withCheck(cc, b.String())
		if _, err := normalize.IBAN(s); err == nil {
			return s
		}
	}
	t.Fatalf("no valid %s IBAN generated", cc)
	return ""
}

// withCheck returns the IBAN of cc and bban with its mod-97 check digits.
func withCheck(cc, bban string) string {
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

// USDRate is the rate of USD the book's company (in EUR) holds in its
// ERP, as Odoo's rates list shows it: USD per EUR. 1,000.00 USD is 920.00
// EUR at it.
const USDRate = "1.0869565"

// inEUR returns amount of currency (EUR or USD) in EUR cents, as a
// company's books convert at USDRate: amount / 1.0869565, rounded half up
// (amounts here are never negative).
func inEUR(currency string, amount intent.Amount) intent.Amount {
	if currency == "EUR" {
		return amount
	}
	const num, den = 10869565, 10000000 // USDRate
	return intent.Amount((int64(amount)*2*den + num) / (2 * num))
}
