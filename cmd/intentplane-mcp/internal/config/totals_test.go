package config_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
)

// payment is base with send_money paying an amount to a payee on file,
// with a running total per payee and day.
var payment = strings.Replace(strings.Replace(base, "action = \"bank.send_money\"\n", "action = \"bank.send_money\"\nbudget = \"amount\"\n", 1), `[tools.get_balance]`, `[tools.send_money.params.amount]
type = "amount"
scale = 2

[[tools.send_money.totals]]
name = "paid_payee_day"
by = ["iban"]
window = "day"
time_zone = "Europe/Berlin"
confirm_above = "1000.00"
refuse_above = "10000.00"

[tools.get_balance]`, 1)

// paymentTotals is payment's totals table.
const paymentTotals = `[[tools.send_money.totals]]
name = "paid_payee_day"
by = ["iban"]
window = "day"
time_zone = "Europe/Berlin"
confirm_above = "1000.00"
refuse_above = "10000.00"
`

func TestToolTotals(t *testing.T) {
	t.Parallel()
	c, _, err := load(t, payment)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ToolTotals("send_money")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].Zone == nil || got[0].Zone.String() != "Europe/Berlin" {
		t.Fatalf("ToolTotals = %+v", got)
	}
	got[0].Zone = nil
	type total struct {
		Name                  string
		By                    []string
		Window                contract.Window
		Confirm, Four, Refuse intent.Amount
	}
	want := total{"paid_payee_day", []string{"iban"}, contract.Day, 100000, 0, 1000000}
	g := total{got[0].Name, got[0].By, got[0].Window, got[0].ConfirmAbove, got[0].FourEyesAbove, got[0].RefuseAbove}
	if d := cmp.Diff(want, g); d != "" {
		t.Errorf("ToolTotals (-want, +got):\n%s", d)
	}
}

// TestToolTotalsErrors: each mistake in a tool's totals, and a payment
// tool without totals nor a reason, is refused at its line.
func TestToolTotalsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, from, to string
		anchor         string // the error is at the first line holding it
		want           string
	}{
		{"no totals", paymentTotals, "", "[tools.send_money]", `tool "send_money" pays (the amount "amount" to the "iban" on file) without running totals`},
		{"blank reason", `budget = "amount"`, "budget = \"amount\"\nno_totals = \" \"", "no_totals", "must not be blank"},
		{"totals and a reason", `budget = "amount"`, "budget = \"amount\"\nno_totals = \"the bank caps it\"", "no_totals", "has totals and no_totals"},
		{"bad name", `name = "paid_payee_day"`, `name = "Paid-Day"`, `name = "Paid-Day"`, "a total needs a name of lowercase letters"},
		{"by not critical", `by = ["iban"]`, `by = ["amount"]`, `by = ["amount"]`, `"amount" is not a critical parameter of tool "send_money"`},
		{"no by", `by = ["iban"]`, ``, `[[tools.send_money.totals]]`, `total "paid_payee_day" needs by`},
		{"unknown window", `window = "day"`, `window = "month"`, `window = "month"`, `window "month" is not one of day, week, mandate, ever`},
		{"zone of an ever window", `window = "day"`, `window = "ever"`, `time_zone =`, `time_zone applies to the day and week windows only`},
		{"unknown zone", `time_zone = "Europe/Berlin"`, `time_zone = "Mars/Olympus"`, `time_zone =`, `time_zone "Mars/Olympus" is not an IANA time zone`},
		{"bad threshold", `confirm_above = "1000.00"`, `confirm_above = "1000.001"`, `confirm_above =`, `confirm_above "1000.001" is not an amount above zero`},
		{"zero threshold", `confirm_above = "1000.00"`, `confirm_above = "0"`, `confirm_above =`, `confirm_above "0" is not an amount above zero`},
		{"threshold order", `refuse_above = "10000.00"`, `refuse_above = "999.99"`, `refuse_above =`, `refuse_above 999.99 is below confirm_above 1000.00`},
		{"no threshold", "confirm_above = \"1000.00\"\nrefuse_above = \"10000.00\"\n", "", `[[tools.send_money.totals]]`, `total "paid_payee_day" needs a threshold`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(payment, tc.from) {
				t.Fatalf("payment has no %q", tc.from)
			}
			text := strings.Replace(payment, tc.from, tc.to, 1)
			_, path, err := load(t, text)
			if err == nil {
				t.Fatal("loaded")
			}
			want := fmt.Sprintf("%s:%d: ", path, lineOf(text, tc.anchor))
			if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v, want %s…%s", err, want, tc.want)
			}
		})
	}
}
