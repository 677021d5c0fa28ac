package erp

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Rate is an exchange rate as the ERP keeps it: how many units of
// Currency one unit of the company's currency (Company) is worth on a day.
// In Odoo it is a res.currency.rate record of the company (or of no
// company): its company_rate, which Odoo's rates list shows as "USD per
// EUR", dated by its name.
type Rate struct {
	// Currency is the ISO 4217 code of the currency converted from
	// ("USD"), and Decimals the decimal places of its minor unit (2; 0
	// for JPY).
	Currency string
	Decimals int
	// Company is the ISO 4217 code of the company's currency ("EUR"),
	// and CompanyDecimals the decimal places of its minor unit.
	Company         string
	CompanyDecimals int
	// Value is the number of units of Currency one unit of Company is
	// worth, as a plain decimal ("1.0869565", or as Odoo sends a float:
	// "1e-05"); "1" when Currency is Company. Never a float in memory:
	// ParseRateValue reads it exactly.
	Value string
	// Day is the rate's date, YYYY-MM-DD: the latest rate dated on or
	// before the day asked for; for the company's own currency, the day
	// asked for.
	Day string
	// Source says where the rate was read, for the receipt ("Odoo
	// res.currency.rate 12", "company currency").
	Source string
}

// Rates reads a company's exchange rates.
type Rates interface {
	// Rate returns the rate of currency (an ISO 4217 code) into the
	// company's currency on day (YYYY-MM-DD, in the company's calendar):
	// the ERP's latest rate of the currency dated on or before day that
	// applies to the company, the one the ERP's own conversion of an
	// amount dated day uses. For the company's own currency it returns
	// CompanyRate, and an implementation reads nothing it has not read
	// before. It returns an error wrapping ErrNoRate when the ERP holds
	// no such rate (never a rate of 1 in its place), with a Rate that
	// names the currencies and their decimals, Value empty; ErrRefused for a day
	// that is not YYYY-MM-DD, and ErrNotFound for a company or currency
	// the ERP does not know. Safe for concurrent use; never cached across
	// calls: a rate entered in the ERP counts from the next call on.
	Rate(ctx context.Context, company, currency, day string) (Rate, error)
}

// ErrNoRate is wrapped by Rates.Rate when the ERP holds no rate of the
// currency dated on or before the day for the company. In Odoo a rate is
// set under Accounting > Configuration > Currencies, the currency, its
// Rates.
var ErrNoRate = errors.New("erp: no exchange rate")

// CompanyRate is the Rate of a company's own currency on day.
func CompanyRate(currency string, decimals int, day string) Rate {
	return Rate{Currency: currency, Decimals: decimals, Company: currency, CompanyDecimals: decimals, Value: "1", Day: day, Source: "company currency"}
}

// ParseRateValue reads a rate's Value exactly: a decimal number above
// zero, with an exponent of at most 30 either way ("1.0869565", "0.92",
// "150", "1e-05", "1.5E+2", as Odoo sends a float). It refuses anything
// else (a fraction, a sign, a non-finite value, more than 64 characters)
// with an error wrapping ErrRefused.
func ParseRateValue(s string) (*big.Rat, error) {
	mant, exp, hasExp := strings.Cut(strings.ToLower(s), "e")
	ok := len(s) <= 64 && digitsDot(mant)
	if hasExp {
		e, err := strconv.Atoi(exp)
		ok = ok && err == nil && e >= -30 && e <= 30
	}
	var r *big.Rat
	if ok {
		r, ok = new(big.Rat).SetString(s)
	}
	if !ok || r.Sign() <= 0 {
		return nil, fmt.Errorf("%w: the exchange rate %q is not a decimal number above zero", ErrRefused, s)
	}
	return r, nil
}

// digitsDot reports whether s is digits with at most one dot, and at
// least one digit.
func digitsDot(s string) bool {
	digits, dots := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.':
			dots++
		default:
			return false
		}
	}
	return digits > 0 && dots <= 1
}

// Convert returns amount, in minor units of r.Currency, in minor units of
// r.Company: amount × 10^CompanyDecimals / (10^Decimals × Value),
// computed exactly and rounded half up (a half minor unit away from
// zero), the rounding of Odoo's own conversion (res.currency._convert,
// float_round HALF-UP), so that the amount is the one Odoo shows in the
// company's currency. The one rounding is at the end: 1,000.00 USD at
// 1.0869565 USD per EUR is 920.00 EUR (920.000018...). It returns an
// error wrapping ErrRefused for a malformed Value, decimal places
// outside 0 to 6, or a result beyond the range of an Amount.
func (r Rate) Convert(amount intent.Amount) (intent.Amount, error) {
	if r.Decimals < 0 || r.Decimals > 6 || r.CompanyDecimals < 0 || r.CompanyDecimals > 6 {
		return 0, fmt.Errorf("%w: decimal places %d and %d; 0 to 6 are supported", ErrRefused, r.Decimals, r.CompanyDecimals)
	}
	v, err := ParseRateValue(r.Value)
	if err != nil {
		return 0, err
	}
	q := new(big.Rat).SetInt64(int64(amount))
	q.Mul(q, new(big.Rat).SetInt(pow10(r.CompanyDecimals)))
	q.Quo(q, new(big.Rat).Mul(new(big.Rat).SetInt(pow10(r.Decimals)), v))
	out := roundHalfUp(q)
	if !out.IsInt64() {
		return 0, fmt.Errorf("%w: %s %s converts beyond the range of an amount", ErrRefused, intent.FormatAmount(amount, uint8(r.Decimals)), r.Currency)
	}
	return intent.Amount(out.Int64()), nil
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// roundHalfUp rounds q to the nearest integer, a half away from zero.
func roundHalfUp(q *big.Rat) *big.Int {
	num, den := new(big.Int).Abs(q.Num()), q.Denom()
	// (2|num| + den) / (2 den), truncated: |q| + 1/2 rounded down.
	n := new(big.Int).Add(new(big.Int).Lsh(num, 1), den)
	n.Quo(n, new(big.Int).Lsh(den, 1))
	if q.Sign() < 0 {
		n.Neg(n)
	}
	return n
}

// Text says the rate for people: "1.0869565 USD per EUR (rate of
// 2026-12-01, Odoo res.currency.rate 12)"; "" for the company's own
// currency.
func (r Rate) Text() string {
	if r.Currency == r.Company {
		return ""
	}
	return fmt.Sprintf("%s %s per %s (rate of %s, %s)", r.Value, r.Currency, r.Company, r.Day, r.Source)
}

// CheckDay returns an error wrapping ErrRefused if day is not YYYY-MM-DD.
func CheckDay(day string) error {
	if _, err := time.Parse(time.DateOnly, day); err != nil {
		return fmt.Errorf("%w: the day %q is not YYYY-MM-DD", ErrRefused, day)
	}
	return nil
}

// Decimals returns the decimal places of the minor unit of an ISO 4217
// currency (ISO 4217 list one): 0 for JPY, 3 for KWD, 2 for EUR, USD and
// every code it does not list otherwise.
//
// It is the vocabulary's table (intent.CurrencyExponent), the one table
// of minor units: erp keeps none of its own.
func Decimals(currency string) int {
	return intent.Money{Currency: currency}.Exponent()
}
