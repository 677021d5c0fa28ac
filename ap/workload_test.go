package ap_test

import (
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/ap/aptest"
)

// TestLegitimateWorkload runs the legitimate workload (package aptest: a
// generated AP book paid through the AP tools as a careful assistant
// would, with expected outcomes from AP practice) on the in-memory ERP,
// with the company's default controls. The same book runs on the fake
// Odoo and on a real Odoo 17 in package odoo.
func TestLegitimateWorkload(t *testing.T) {
	t.Parallel()
	m := ap.DemoERP(func() time.Time { return t0 })
	f := aptest.Run(t, aptest.Env{Source: m, Builder: aptest.MemBuilder{Mem: m}, Company: ap.DemoCompany, Day: t0, Name: "erp.Mem"})
	if f.Payments < 130 || f.Paid < 120 {
		t.Errorf("%d payments, %d paid: the book is smaller than it should be", f.Payments, f.Paid)
	}
}
