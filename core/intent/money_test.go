package intent_test

import (
	"errors"
	"math/big"
	"regexp"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/intent"
)

// decimalRE is the grammar of ParseAmount, written as a regexp.
var decimalRE = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.([0-9]+))?$`)

// parseAmountOracle is the reference ParseAmount must match: a regexp for
// the grammar and math/big for the value. It returns the amount or the
// sentinel ParseAmount's error must wrap.
func parseAmountOracle(s string, exponent int) (intent.Amount, error) {
	m := decimalRE.FindStringSubmatch(s)
	if m == nil {
		return 0, intent.ErrAmountSyntax
	}
	if exponent < 0 {
		return 0, intent.ErrAmountRange
	}
	frac := strings.TrimRight(m[3], "0")
	if len(frac) > exponent {
		return 0, intent.ErrAmountPrecision
	}
	n, _ := new(big.Int).SetString(m[1]+frac+strings.Repeat("0", exponent-len(frac)), 10)
	if !n.IsInt64() {
		return 0, intent.ErrAmountRange
	}
	return intent.Amount(n.Int64()), nil
}

// parseMoneyOracle is the reference ParseMoney must match.
func parseMoneyOracle(s string) (intent.Money, error) {
	m := regexp.MustCompile(`(?s)^([A-Z]{3}) (.*)$`).FindStringSubmatch(s)
	if m == nil {
		return intent.Money{}, intent.ErrCurrency
	}
	exp := map[string]int{"JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3, "CLF": 4}[m[1]]
	if _, listed := map[string]bool{"JPY": true, "KRW": true, "KWD": true, "BHD": true, "CLF": true}[m[1]]; !listed {
		exp, _ = intent.CurrencyExponent(m[1])
	}
	a, err := parseAmountOracle(m[2], exp)
	return intent.Money{Currency: m[1], Amount: a}, err
}

func checkAmount(t *testing.T, s string, exponent int) {
	t.Helper()
	got, err := intent.ParseAmount(s, exponent)
	want, werr := parseAmountOracle(s, exponent)
	var ae *intent.AmountError
	switch {
	case werr == nil && (err != nil || got != want):
		t.Fatalf("ParseAmount(%q, %d) = %d, %v; want %d", s, exponent, got, err, want)
	case werr != nil && (!errors.Is(err, werr) || !errors.As(err, &ae) || got != 0):
		t.Fatalf("ParseAmount(%q, %d) = %d, %v; want an *AmountError wrapping %q", s, exponent, got, err, werr)
	}
}

func TestParseAmount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s        string
		exponent int
		want     intent.Amount
		err      error
	}{
		{"12.50", 2, 1250, nil},
		{"12.5", 2, 1250, nil},
		{"12", 2, 1200, nil},
		{"0", 2, 0, nil},
		{"0.00", 2, 0, nil},
		{"1.500", 2, 150, nil},
		{"500", 0, 500, nil},
		{"500.0", 0, 500, nil},
		{"1.250", 3, 1250, nil},
		{"92233720368547758.07", 2, 9223372036854775807, nil},
		{"92233720368547758.08", 2, 0, intent.ErrAmountRange},
		{"1", -1, 0, intent.ErrAmountRange},
		{"1", 19, 0, intent.ErrAmountRange},
		{"0", 200, 0, nil},
		{"1.005", 2, 0, intent.ErrAmountPrecision},
		{"0.5", 0, 0, intent.ErrAmountPrecision},
		{"", 2, 0, intent.ErrAmountSyntax},
		{".5", 2, 0, intent.ErrAmountSyntax},
		{"5.", 2, 0, intent.ErrAmountSyntax},
		{"01", 2, 0, intent.ErrAmountSyntax},
		{"-1", 2, 0, intent.ErrAmountSyntax},
		{"+1", 2, 0, intent.ErrAmountSyntax},
		{"1e3", 2, 0, intent.ErrAmountSyntax},
		{"1,000.00", 2, 0, intent.ErrAmountSyntax},
		{" 1", 2, 0, intent.ErrAmountSyntax},
		{"1 ", 2, 0, intent.ErrAmountSyntax},
		{"1.2.3", 2, 0, intent.ErrAmountSyntax},
		{"١٢", 2, 0, intent.ErrAmountSyntax},
	}
	for _, tt := range tests {
		got, err := intent.ParseAmount(tt.s, tt.exponent)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("ParseAmount(%q, %d) = %d, %v; want %d, %v", tt.s, tt.exponent, got, err, tt.want, tt.err)
		}
		checkAmount(t, tt.s, tt.exponent)
	}
}

func TestAmountErrorText(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		got  func() error
		want string
	}{
		{func() error { _, err := intent.ParseAmount("1.005", 2); return err }, `intent: amount "1.005": more than 2 decimals`},
		{func() error { _, err := intent.ParseAmount("1,000", 2); return err }, `intent: amount "1,000": not a plain decimal such as 1250.00`},
		{func() error { _, err := intent.ParseMoney("eur 1"); return err }, `intent: money "eur 1": not written as a currency code and an amount, such as "EUR 12.00"`},
		{func() error { _, err := intent.ParseMoney("JPY 1.5"); return err }, `intent: amount "1.5": more than 0 decimals`},
	} {
		if err := tt.got(); err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("error = %v, want it to begin %q", err, tt.want)
		}
	}
}

func TestParseMoney(t *testing.T) {
	t.Parallel()
	tests := []struct {
		s    string
		want intent.Money
		err  error
	}{
		{"EUR 12.00", intent.Money{Currency: "EUR", Amount: 1200}, nil},
		{"EUR 0", intent.Money{Currency: "EUR", Amount: 0}, nil},
		{"JPY 500", intent.Money{Currency: "JPY", Amount: 500}, nil},
		{"KWD 1.250", intent.Money{Currency: "KWD", Amount: 1250}, nil},
		{"CLF 1.2345", intent.Money{Currency: "CLF", Amount: 12345}, nil},
		{"JPY 1.5", intent.Money{}, intent.ErrAmountPrecision},
		{"EUR 1.005", intent.Money{}, intent.ErrAmountPrecision},
		{"eur 12.00", intent.Money{}, intent.ErrCurrency},
		{"EURO 12.00", intent.Money{}, intent.ErrCurrency},
		{"EUR  12.00", intent.Money{}, intent.ErrAmountSyntax},
		{"EUR12.00", intent.Money{}, intent.ErrCurrency},
		{"12.00 EUR", intent.Money{}, intent.ErrCurrency},
		{"EUR", intent.Money{}, intent.ErrCurrency},
		{"EUR -1", intent.Money{}, intent.ErrAmountSyntax},
		{"", intent.Money{}, intent.ErrCurrency},
	}
	for _, tt := range tests {
		got, err := intent.ParseMoney(tt.s)
		if got != tt.want || !errors.Is(err, tt.err) || (tt.err == nil) != (err == nil) {
			t.Errorf("ParseMoney(%q) = %+v, %v; want %+v, %v", tt.s, got, err, tt.want, tt.err)
		}
		want, werr := parseMoneyOracle(tt.s)
		if (werr == nil) != (err == nil) || werr == nil && got != want {
			t.Errorf("ParseMoney(%q) = %+v, %v; the oracle gives %+v, %v", tt.s, got, err, want, werr)
		}
	}
}

func TestCurrencyExponent(t *testing.T) {
	t.Parallel()
	for code, want := range map[string]int{"EUR": 2, "USD": 2, "GBP": 2, "CHF": 2, "JPY": 0, "KRW": 0, "KWD": 3, "BHD": 3, "TND": 3, "CLF": 4} {
		if got, ok := intent.CurrencyExponent(code); got != want || !ok {
			t.Errorf("CurrencyExponent(%q) = %d, %v; want %d, true", code, got, ok, want)
		}
	}
	for _, code := range []string{"", "EU", "EURO", "eur", "Eur", "E1R", "ÉUR"} {
		if _, ok := intent.CurrencyExponent(code); ok {
			t.Errorf("CurrencyExponent(%q) accepted a malformed code", code)
		}
	}
}

// FuzzParseAmount: ParseAmount agrees with the regexp and math/big oracle.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"12.50", "01.5", "0", "1.000", "92233720368547758.08", "1e3", "-1", ".5", "1."} {
		f.Add(s, int8(2))
	}
	f.Fuzz(func(t *testing.T, s string, exponent int8) {
		checkAmount(t, s, int(exponent)%24)
	})
}

// FuzzParseMoney: ParseMoney agrees with its oracle, and what it accepts
// formats back to an amount it reads the same.
func FuzzParseMoney(f *testing.F) {
	for _, s := range []string{"EUR 12.00", "JPY 500", "KWD 1.250", "eur 1", "EUR  1", "XYZ 0.10"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, err := intent.ParseMoney(s)
		want, werr := parseMoneyOracle(s)
		if (err == nil) != (werr == nil) || err == nil && got != want || werr != nil && !errors.Is(err, werr) {
			t.Fatalf("ParseMoney(%q) = %+v, %v; the oracle gives %+v, %v", s, got, err, want, werr)
		}
		if err != nil {
			return
		}
		exp, _ := intent.CurrencyExponent(got.Currency)
		back, err := intent.ParseAmount(intent.FormatAmount(got.Amount, uint8(exp)), exp)
		if err != nil || back != got.Amount {
			t.Fatalf("FormatAmount(%d, %d) does not read back: %d, %v", got.Amount, exp, back, err)
		}
	})
}

// TestMoneyString (issue 24): money is written with its currency's
// exponent, and a parsed amount writes back as it was read.
func TestMoneyString(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		m    intent.Money
		want string
	}{
		{intent.Money{Currency: "EUR", Amount: 125000}, "1250.00 EUR"},
		{intent.Money{Currency: "JPY", Amount: 100}, "100 JPY"},
		{intent.Money{Currency: "JPY", Amount: 50000}, "50000 JPY"},
		{intent.Money{Currency: "KWD", Amount: 100000}, "100.000 KWD"},
		{intent.Money{Currency: "KWD", Amount: 1250}, "1.250 KWD"},
		{intent.Money{Currency: "CLF", Amount: 1}, "0.0001 CLF"},
		{intent.Money{Currency: "", Amount: 5}, "0.05"},
		{intent.Money{Currency: "eur", Amount: 5}, "0.05 eur"},
	} {
		if got := c.m.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.m, got, c.want)
		}
	}
	for _, s := range []string{"JPY 100", "KWD 100.000", "EUR 12.50", "BHD 0.001", "CLP 7"} {
		m, err := intent.ParseMoney(s)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Currency + " " + m.Decimal(); got != s {
			t.Errorf("ParseMoney(%q) writes back as %q", s, got)
		}
	}
}

// TestISOCurrency: the active codes, of every exponent, and not the
// codes with no minor unit or for testing.
func TestISOCurrency(t *testing.T) {
	t.Parallel()
	for _, c := range []string{"EUR", "USD", "JPY", "KWD", "CLF", "CHF", "BHD", "VND"} {
		if !intent.ISOCurrency(c) {
			t.Errorf("ISOCurrency(%q) = false", c)
		}
	}
	for _, c := range []string{"XTS", "XAU", "XXX", "eur", "EURO", "", "ZZZ", "ЕUR"} {
		if intent.ISOCurrency(c) {
			t.Errorf("ISOCurrency(%q) = true", c)
		}
	}
}
