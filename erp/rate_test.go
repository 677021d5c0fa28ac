package erp_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// TestRateConvert: conversions into the company's currency are exact,
// rounded once, half up, with each currency's decimal places.
func TestRateConvert(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name           string
		cur, company   string
		value          string
		amount, want   intent.Amount
		decimals, cdec int
	}{
		{"USD into EUR at 1.0869565", "USD", "EUR", "1.0869565", 100000, 92000, 2, 2},  // 920.000018...
		{"USD into EUR at 0.9259259", "USD", "EUR", "0.9259259", 100000, 108000, 2, 2}, // 1080.0000864...
		{"half a cent rounds up", "USD", "EUR", "8", 100, 13, 2, 2},                    // 12.5 cents
		{"below half a cent rounds down", "USD", "EUR", "8", 99, 12, 2, 2},             // 12.375
		{"one cent", "USD", "EUR", "3", 1, 0, 2, 2},                                    // 0.333
		{"JPY has no decimals", "JPY", "EUR", "160", 100000, 62500, 0, 2},              // ¥100,000 is 625.00 EUR
		{"JPY half rounds up", "JPY", "EUR", "160", 1, 1, 0, 2},                        // 0.625 cent
		{"into JPY", "USD", "JPY", "0.0066", 100000, 151515, 2, 0},                     // 151515.15...
		{"into JPY, half up", "EUR", "JPY", "0.004", 2, 5, 2, 0},                       // 0.02/0.004 = 5
		{"KWD has three", "KWD", "EUR", "0.33", 330, 100, 3, 2},                        // 0.330 KWD is 1.00 EUR
		{"Odoo's float repr", "XAU", "EUR", "1e-05", 1, 100000, 2, 2},                  // 0.01 / 0.00001 = 1000.00
		{"rate of 1", "CHF", "EUR", "1", 123456, 123456, 2, 2},
		{"exponent form", "USD", "EUR", "1.25E+0", 125, 100, 2, 2},
		{"zero", "USD", "EUR", "1.1", 0, 0, 2, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := erp.Rate{Currency: tt.cur, Decimals: tt.decimals, Company: tt.company, CompanyDecimals: tt.cdec, Value: tt.value}
			got, err := r.Convert(tt.amount)
			if err != nil || got != tt.want {
				t.Errorf("Convert(%d %s at %s) = %d, %v; want %d", tt.amount, tt.cur, tt.value, got, err, tt.want)
			}
		})
	}
}

// TestRateConvertRefused: a malformed or impossible rate is an error,
// never a rate of 1.
func TestRateConvertRefused(t *testing.T) {
	t.Parallel()
	for _, v := range []string{"", "0", "0.0", "-1.1", "1/3", "+1", "abc", "1e999999", "Inf", "NaN", "1..2", ".", "1e", "0x10", " 1.1", strings.Repeat("1", 65)} {
		r := erp.Rate{Currency: "USD", Decimals: 2, Company: "EUR", CompanyDecimals: 2, Value: v}
		if got, err := r.Convert(100); !errors.Is(err, erp.ErrRefused) {
			t.Errorf("Convert at %q = %d, %v; want ErrRefused", v, got, err)
		}
	}
	r := erp.Rate{Currency: "USD", Decimals: 2, Company: "EUR", CompanyDecimals: 2, Value: "1e-30"}
	if got, err := r.Convert(1 << 62); !errors.Is(err, erp.ErrRefused) {
		t.Errorf("Convert beyond int64 = %d, %v; want ErrRefused", got, err)
	}
	r = erp.Rate{Currency: "USD", Decimals: 7, Company: "EUR", CompanyDecimals: 2, Value: "1"}
	if _, err := r.Convert(1); !errors.Is(err, erp.ErrRefused) {
		t.Errorf("Convert with 7 decimals: %v; want ErrRefused", err)
	}
}

// TestMemRate: Mem's rates are the latest on or before the day, the
// company's own before one for every company, and a missing rate is
// ErrNoRate.
func TestMemRate(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	m := erp.NewMem(nil)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(m.SetRate(ctx, "", "USD", "2026-11-01", "1.2"))
	must(m.SetRate(ctx, "northwind", "USD", "2026-11-20", "1.1"))
	must(m.SetRate(ctx, "northwind", "USD", "2026-11-25", "1.05"))
	must(m.SetRate(ctx, "", "USD", "2026-11-30", "1.3"))
	must(m.SetCompanyCurrency("eastwind", "JPY"))
	tests := []struct {
		company, cur, day, want, wantDay string
	}{
		{"northwind", "USD", "2026-12-01", "1.05", "2026-11-25"},
		{"northwind", "USD", "2026-11-24", "1.1", "2026-11-20"},
		{"northwind", "USD", "2026-11-10", "1.2", "2026-11-01"}, // before the company's first: the global one
		{"southwind", "USD", "2026-12-01", "1.3", "2026-11-30"},
		{"northwind", "EUR", "2026-12-01", "1", "2026-12-01"},
	}
	for _, tt := range tests {
		r, err := m.Rate(ctx, tt.company, tt.cur, tt.day)
		if err != nil || r.Value != tt.want || r.Day != tt.wantDay || r.Company != "EUR" {
			t.Errorf("Rate(%s, %s, %s) = %+v, %v; want %s of %s", tt.company, tt.cur, tt.day, r, err, tt.want, tt.wantDay)
		}
	}
	if _, err := m.Rate(ctx, "northwind", "USD", "2026-10-31"); !errors.Is(err, erp.ErrNoRate) {
		t.Errorf("before any rate: %v; want ErrNoRate", err)
	}
	if _, err := m.Rate(ctx, "northwind", "GBP", "2026-12-01"); !errors.Is(err, erp.ErrNoRate) {
		t.Errorf("GBP: %v; want ErrNoRate", err)
	}
	if r, err := m.Rate(ctx, "eastwind", "EUR", "2026-12-01"); !errors.Is(err, erp.ErrNoRate) || r.Value != "" {
		t.Errorf("EUR of a JPY company: %+v %v; want ErrNoRate", r, err)
	}
	if r, err := m.Rate(ctx, "eastwind", "JPY", "2026-12-01"); err != nil || r.Decimals != 0 || r.Value != "1" {
		t.Errorf("JPY of a JPY company: %+v %v", r, err)
	}
	if _, err := m.Rate(ctx, "northwind", "USD", "1.12.2026"); !errors.Is(err, erp.ErrRefused) {
		t.Errorf("malformed day: %v; want ErrRefused", err)
	}
	if err := m.SetRate(ctx, "northwind", "USD", "2026-12-01", "0"); !errors.Is(err, erp.ErrRefused) {
		t.Errorf("SetRate 0: %v; want ErrRefused", err)
	}
}
