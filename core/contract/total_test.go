package contract_test

import (
	"errors"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/contract"
)

func TestTotalsChecked(t *testing.T) {
	t.Parallel()
	params := []contract.Parameter{
		{Name: "payee", Type: contract.String(64), Required: true, Critical: true, Sources: []contract.Source{contract.FromMandate("payees")}},
		{Name: "memo", Type: contract.String(64)},
		{Name: "amount", Type: contract.Amount(2), Required: true},
	}
	ok := contract.Total{Name: "paid_today", By: []string{"payee"}, Window: contract.Day}
	cases := []struct {
		name           string
		budget         string
		totals         []contract.Total
		valid          bool
		amount, curFct string // TotalsAmount, TotalsCurrency
	}{
		{"converted", "amount", []contract.Total{ok}, true, "amount_company", "company_currency"},
		{"converted, no currency fact", "amount", []contract.Total{ok}, false, "amount_company", ""},
		{"converted, no amount fact", "amount", []contract.Total{ok}, false, "", "company_currency"},
		{"converted, bad fact name", "amount", []contract.Total{ok}, false, "Amount!", "company_currency"},
		{"converted without totals", "amount", nil, false, "amount_company", "company_currency"},
		{"valid", "amount", []contract.Total{ok}, true, "", ""},
		{"no budget", "", []contract.Total{ok}, false, "", ""},
		{"no by", "amount", []contract.Total{{Name: "t", Window: contract.Day}}, false, "", ""},
		{"by not critical", "amount", []contract.Total{{Name: "t", By: []string{"memo"}}}, false, "", ""},
		{"by unknown", "amount", []contract.Total{{Name: "t", By: []string{"nobody"}}}, false, "", ""},
		{"bad name", "amount", []contract.Total{{Name: "Paid Today", By: []string{"payee"}}}, false, "", ""},
		{"name twice", "amount", []contract.Total{ok, ok}, false, "", ""},
		{"bad window", "amount", []contract.Total{{Name: "t", By: []string{"payee"}, Window: 9}}, false, "", ""},
		{"bad outside", "amount", []contract.Total{{Name: "t", By: []string{"payee"}, Outside: "Outside!"}}, false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, err := contract.New(contract.Contract{Action: "pay.send", Params: params, Budget: c.budget, Totals: c.totals,
				TotalsAmount: c.amount, TotalsCurrency: c.curFct})
			if c.valid != (err == nil) || err != nil && !errors.Is(err, contract.ErrInvalidContract) {
				t.Errorf("New: %v, want valid %v", err, c.valid)
			}
		})
	}
}

func TestTotalPeriod(t *testing.T) {
	t.Parallel()
	// Sunday 2026-11-29 23:30 UTC is Monday 2026-11-30 in UTC+1: ISO week 49.
	at := time.Date(2026, 11, 29, 23, 30, 0, 0, time.UTC)
	cet := time.FixedZone("UTC+1", 3600)
	cases := []struct {
		t    contract.Total
		want string
	}{
		{contract.Total{Window: contract.Ever}, ""},
		{contract.Total{Window: contract.Mandate}, "m-1"},
		{contract.Total{Window: contract.Day}, "2026-11-29"},
		{contract.Total{Window: contract.Day, Zone: cet}, "2026-11-30"},
		{contract.Total{Window: contract.Week}, "2026-W48"},
		{contract.Total{Window: contract.Week, Zone: cet}, "2026-W49"},
	}
	for _, c := range cases {
		if got := c.t.Period(at, "m-1"); got != c.want {
			t.Errorf("%s in %v: %q, want %q", c.t.Window, c.t.Zone, got, c.want)
		}
	}
}
