package intent

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Errors ParseAmount and ParseMoney wrap, in an *AmountError.
var (
	// ErrAmountSyntax: the text is not a plain decimal as described above.
	ErrAmountSyntax = errors.New("not a plain decimal such as 1250.00 (digits with an optional point; no sign, exponent, spaces or thousands separator)")
	// ErrAmountPrecision: more significant decimals than the exponent.
	ErrAmountPrecision = errors.New("more decimals than the currency's minor unit has")
	// ErrAmountRange: the amount in minor units does not fit an int64, or
	// the exponent is negative.
	ErrAmountRange = errors.New("too large")
	// ErrCurrency: the currency is not three upper-case ASCII letters, or
	// money is not written "<currency> <amount>".
	ErrCurrency = errors.New("not written as a currency code and an amount, such as \"EUR 12.00\" (ISO 4217: three upper-case letters, one space)")
)

// AmountError is the error of ParseAmount and ParseMoney: Text is the
// input, Exponent the number of decimals allowed, Err one of
// ErrAmountSyntax, ErrAmountPrecision, ErrAmountRange or ErrCurrency.
type AmountError struct {
	Text     string
	Exponent int
	Err      error
}

// Error returns, for example, `intent: amount "1,000.00": not a plain
// decimal ...` or `intent: amount "1.005": more than 2 decimals`.
func (e *AmountError) Error() string {
	what := "amount"
	if errors.Is(e.Err, ErrCurrency) {
		what = "money"
	}
	text := e.Text
	if len(text) > 64 {
		text = text[:64] + "..."
	}
	if errors.Is(e.Err, ErrAmountPrecision) {
		return fmt.Sprintf("intent: %s %q: more than %d decimals", what, text, e.Exponent)
	}
	return fmt.Sprintf("intent: %s %q: %v", what, text, e.Err)
}

// Unwrap returns Err.
func (e *AmountError) Unwrap() error { return e.Err }

// ParseAmount reads s as minor units of a currency whose minor unit has
// exponent decimals (2 for EUR cents, 0 for JPY, 3 for KWD):
// ParseAmount("12.50", 2) is 1250. It is the one amount parser: every
// front door, pack and connector reads amounts written as text through it
// (or ParseMoney), so that "12.50" means the same everywhere. The rules:
//
//   - s is a plain decimal: one or more ASCII digits, without leading
//     zeros (except "0" itself), optionally followed by a point and one or
//     more digits: "0", "12", "12.5", "1250.00". No sign, no exponent
//     ("1e3"), no thousands separator ("1,000"), no spaces, no leading or
//     trailing point (".5", "5."): ErrAmountSyntax.
//   - It has at most exponent significant decimals; trailing zeros beyond
//     them are exact and accepted ("1.500" is 150 cents):
//     ErrAmountPrecision.
//   - The result, in minor units, must fit an int64, and exponent must not
//     be negative: ErrAmountRange. Zero is accepted; callers that need a
//     positive amount check it.
//
// Errors are *AmountError wrapping one of those sentinels.
func ParseAmount(s string, exponent int) (Amount, error) {
	fail := func(err error) (Amount, error) {
		return 0, &AmountError{Text: s, Exponent: exponent, Err: err}
	}
	whole, frac, dot := strings.Cut(s, ".")
	if !digits(whole) || len(whole) > 1 && whole[0] == '0' || dot && !digits(frac) {
		return fail(ErrAmountSyntax)
	}
	if exponent < 0 {
		return fail(ErrAmountRange)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > exponent {
		return fail(ErrAmountPrecision)
	}
	// The digits of whole, frac, then zeros up to exponent decimals.
	var n int64
	for i := range len(whole) + exponent {
		d := int64(0)
		switch {
		case i < len(whole):
			d = int64(whole[i] - '0')
		case i-len(whole) < len(frac):
			d = int64(frac[i-len(whole)] - '0')
		}
		if n > (math.MaxInt64-d)/10 {
			return fail(ErrAmountRange)
		}
		n = n*10 + d
	}
	return Amount(n), nil
}

// ParseMoney reads money written "<currency> <amount>" with one space
// between, for example "EUR 12.00", "JPY 500" or "KWD 1.250". The
// currency is an ISO 4217 code of three upper-case ASCII letters
// (otherwise ErrCurrency); the amount is read by ParseAmount with the
// currency's exponent from CurrencyExponent. Errors are *AmountError.
func ParseMoney(s string) (Money, error) {
	cur, amt, ok := strings.Cut(s, " ")
	exp, known := CurrencyExponent(cur)
	if !ok || !known {
		return Money{}, &AmountError{Text: s, Exponent: exp, Err: ErrCurrency}
	}
	a, err := ParseAmount(amt, exp)
	if err != nil {
		return Money{}, err
	}
	return Money{Currency: cur, Amount: a}, nil
}

// CurrencyExponent returns the number of decimals of the minor unit of
// the ISO 4217 currency code (0 for JPY, 2 for EUR, 3 for KWD), and false
// if code is not three upper-case ASCII letters. A code not in the table
// of exceptions below has 2 decimals, as most ISO 4217 currencies do.
func CurrencyExponent(code string) (int, bool) {
	if len(code) != 3 {
		return 0, false
	}
	for i := 0; i < 3; i++ {
		if code[i] < 'A' || code[i] > 'Z' {
			return 0, false
		}
	}
	if e, ok := minorUnits[code]; ok {
		return e, true
	}
	return 2, true
}

// Exponent returns the number of decimals of the minor unit of m's
// currency (CurrencyExponent): 2 for EUR, 0 for JPY, 3 for KWD; 2 when
// Currency is not an ISO 4217 code.
func (m Money) Exponent() int {
	if e, ok := CurrencyExponent(m.Currency); ok {
		return e
	}
	return 2
}

// Decimal returns m's amount as an exact decimal with its currency's
// exponent (FormatAmount): "1250.00" for EUR 125000, "100" for JPY 100,
// "1.250" for KWD 1250.
func (m Money) Decimal() string { return FormatAmount(m.Amount, uint8(m.Exponent())) }

// String returns m for messages: its Decimal, a space and its currency,
// "1250.00 EUR", "100 JPY", "1.250 KWD"; the Decimal alone when Currency
// is empty. It is the one way the gateway writes money for people.
func (m Money) String() string {
	if m.Currency == "" {
		return m.Decimal()
	}
	return m.Decimal() + " " + m.Currency
}

// minorUnits lists the ISO 4217 currencies whose minor unit does not have
// 2 decimals (source: the ISO 4217 list of codes, "Minor unit" column).
var minorUnits = map[string]int{
	// No minor unit.
	"BIF": 0, "CLP": 0, "DJF": 0, "GNF": 0, "ISK": 0, "JPY": 0, "KMF": 0, "KRW": 0,
	"PYG": 0, "RWF": 0, "UGX": 0, "UYI": 0, "VND": 0, "VUV": 0, "XAF": 0, "XOF": 0, "XPF": 0,
	// Thousandths.
	"BHD": 3, "IQD": 3, "JOD": 3, "KWD": 3, "LYD": 3, "OMR": 3, "TND": 3,
	// Ten-thousandths.
	"CLF": 4, "UYW": 4,
}

// ISOCurrency reports whether code is an active ISO 4217 currency code
// (list one of ISO 4217, funds codes included, as of 2025): "EUR", "JPY"
// and "KWD" are; "XTS" (the testing code), "XAU" (gold, no minor unit)
// and any other three letters are not. A payment in a currency it does
// not know is not one whose minor unit can be trusted.
func ISOCurrency(code string) bool {
	_, ok := activeCodes[code]
	return ok
}

// activeCodes are the active ISO 4217 currency codes whose minor unit has
// 2 decimals (ISO 4217 list one, 2025, funds codes included), and those
// of minorUnits.
var activeCodes = func() map[string]struct{} {
	m := map[string]struct{}{}
	for _, c := range strings.Fields("AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD " +
		"CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS " +
		"GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL " +
		"MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK " +
		"PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS " +
		"TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG") {
		m[c] = struct{}{}
	}
	for c := range minorUnits {
		m[c] = struct{}{}
	}
	return m
}()

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
