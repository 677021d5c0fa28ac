package ap_test

import (
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/ap/aptest"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/store/mem"
)

// memStore is the gateway's in-memory store on the clock now.
func memStore(now func() time.Time) gateway.Store { return mem.New(now) }

// TestLegitimateWorkload runs the legitimate workload (package aptest: a
// generated AP book paid through the AP tools as a careful assistant
// would, with expected outcomes from AP practice under the company's
// configured limits) on the in-memory ERP: with the default controls,
// where a vendor's day above max_vendor_total (max_amount, 10,000.00, by
// default) and a bill above max_amount are refused by the company's own
// limit; with max_vendor_total raised, as a company that pays whole vendor
// runs sets it, where only the bills above max_amount are; and with
// max_amount raised above the book's largest bill too, where nothing is.
// The same book runs on the fake Odoo and on a real Odoo 17 in package
// odoo.
func TestLegitimateWorkload(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name                string
		cfg                 ap.Config
		paid                int
		maxAmount, maxTotal int
	}{
		{"Defaults", ap.Config{}, 128, 5, 20},
		{"WholeVendorRuns", aptest.WholeVendorRuns, 148, 5, 0},
		{"WholeVendorRunsLargeBills", ap.Config{MaxVendorTotal: aptest.WholeVendorRuns.MaxVendorTotal, MaxAmount: 1_500_000}, 153, 0, 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := ap.DemoERP(func() time.Time { return t0 })
			f := aptest.Run(t, aptest.Env{Source: m, Builder: aptest.MemBuilder{Mem: m}, Company: ap.DemoCompany, Day: t0, Config: tt.cfg,
				Name: "erp.Mem, " + tt.name, NewStore: memStore})
			if f.Payments != 153 || f.Paid != tt.paid || f.Limited["max_amount"] != tt.maxAmount || f.Limited["max_vendor_total"] != tt.maxTotal || f.FalseRefusals != 0 {
				t.Errorf("%s; want 153 payments, %d paid, %d refused by max_amount and %d by max_vendor_total, 0 false refusals", f, tt.paid, tt.maxAmount, tt.maxTotal)
			}
		})
	}
}

// TestWorkloadInRuns pays the same book under the same controls as
// TestLegitimateWorkload bill by bill (aptest.Pay) and as a clerk pays
// with payment runs approved once (aptest.PayRuns: a run per vendor and
// day, and a run per day), and compares the approvals asked of people per
// 100 payments paid. Runs pay the same payments, ask for every payment
// practice says needs a person (each line is checked as Pay checks a
// payment), and must ask at most half as often as bill by bill.
func TestWorkloadInRuns(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		cfg  ap.Config
	}{
		{"Defaults", ap.Config{}},
		{"WholeVendorRuns", aptest.WholeVendorRuns},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			pay := func(runs bool, by aptest.RunsOf) aptest.Figures {
				m := ap.DemoERP(func() time.Time { return t0 })
				e := aptest.Env{Source: m, Builder: aptest.MemBuilder{Mem: m}, Company: ap.DemoCompany, Day: t0, Config: tt.cfg,
					Name: "erp.Mem, " + tt.name, NewStore: memStore}
				bk := aptest.Build(t, e)
				if runs {
					return aptest.PayRuns(t, e, bk, by)
				}
				return aptest.Pay(t, e, bk)
			}
			single := pay(false, 0)
			t.Logf("%s, bill by bill: %d approvals asked for %d paid (%.1f per 100)", tt.name, single.Confirms+single.FourEyes, single.Paid, single.PerHundred())
			for _, by := range []struct {
				name string
				by   aptest.RunsOf
			}{{"a run per vendor and day", aptest.RunPerVendor}, {"a run per day", aptest.RunPerDay}} {
				runs := pay(true, by.by)
				t.Logf("%s, %s: %d runs, %d approvals asked (%d confirmations, %d four eyes) for %d paid (%.1f per 100)",
					tt.name, by.name, runs.Runs, runs.Confirms+runs.FourEyes, runs.Confirms, runs.FourEyes, runs.Paid, runs.PerHundred())
				if runs.Paid != single.Paid || runs.FalseRefusals != 0 || runs.Needless != 0 || runs.Limited["max_amount"] != single.Limited["max_amount"] {
					t.Errorf("%s: %s; bill by bill: %s", by.name, runs, single)
				}
				if runs.PerHundred() > single.PerHundred()/2 {
					t.Errorf("%s asks %.1f per 100 payments, bill by bill %.1f: want at most half", by.name, runs.PerHundred(), single.PerHundred())
				}
			}
		})
	}
}
