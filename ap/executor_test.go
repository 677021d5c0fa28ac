package ap_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// failingPayer is an ERP whose RegisterPayment fails with err.
type failingPayer struct {
	erp.Source
	err error
}

func (f failingPayer) RegisterPayment(context.Context, string, erp.PaymentRequest) (erp.Payment, error) {
	return erp.Payment{}, f.err
}

// TestOutcomeOfAFailedPayment: an ERP failure after which nothing was
// written (erp.ErrNotWritten: the connection refused, an access fault)
// is reported as refused (execution.refused: nothing happened), with a
// reason in general words; any other failure (an answer lost after
// sending) as an unknown outcome (execution.failed).
func TestOutcomeOfAFailedPayment(t *testing.T) {
	for _, c := range []struct {
		name, want, never string
		code              intent.Code
		err               error
	}{
		{"connection refused", "Nothing was done", "127.0.0.1", intent.CodeExecutionRefused, fmt.Errorf("%w: odoo: not sent: dial tcp 127.0.0.1:8069: connection refused", erp.ErrNotWritten)},
		{"access fault", "nothing was written", "account.payment", intent.CodeExecutionRefused, fmt.Errorf("%w: odoo: fault 4: You are not allowed to create 'Payments' (account.payment)", erp.ErrNotWritten)},
		{"lost answer", "may or may not have taken effect", "reset", intent.CodeExecutionFailed, errors.New("odoo: network error: connection reset")},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEnvWrapped(t, ap.Config{}, func(s erp.Source) erp.Source { return failingPayer{s, c.err} })
			tok := e.mandate("m-fail", ap.DemoCompany, "EUR")
			d := e.decide(tok, ap.ActionPayBill, pay("ACME Supplies", "INV-2290", ap.DemoIBAN, "850.00"))
			if d.Executed || code(d) != c.code || !strings.Contains(message(d), c.want) || strings.Contains(message(d), c.never) {
				t.Errorf("%s %s", code(d), message(d))
			}
			if ps := e.payments(ap.DemoCompany); len(ps) != 0 {
				t.Errorf("payments %+v", ps)
			}
		})
	}
}

// billQueries is an erp.Source that records the bill queries asked of it
// and counts its reads of vendors.
type billQueries struct {
	erp.Source
	mu      sync.Mutex
	qs      []erp.BillQuery
	vendors int
}

func (s *billQueries) Vendors(ctx context.Context, company string, q erp.VendorQuery) ([]erp.Vendor, error) {
	s.mu.Lock()
	s.vendors++
	s.mu.Unlock()
	return s.Source.Vendors(ctx, company, q)
}

func (s *billQueries) Bills(ctx context.Context, company string, q erp.BillQuery) ([]erp.Bill, error) {
	s.mu.Lock()
	s.qs = append(s.qs, q)
	s.mu.Unlock()
	return s.Source.Bills(ctx, company, q)
}

// TestPayBillVendorNameFromRegistry (issue 12): a payment's decision reads
// the bills without their vendor's name (a third to a half of a read of
// bills on Odoo 17); the approver is still shown the vendor's name on
// file (vendor_name), as the vendors registry read it in the same
// decision, not read again.
func TestPayBillVendorNameFromRegistry(t *testing.T) {
	t.Parallel()
	var src *billQueries
	e := newEnvWrapped(t, ap.Config{ConfirmAbove: 100}, func(s erp.Source) erp.Source {
		src = &billQueries{Source: s}
		return src
	})
	tok := e.mandate("m-1", ap.DemoCompany, "EUR")
	d := e.decide(tok, ap.ActionPayBill, pay(ap.DemoVendor, ap.DemoBill, ap.DemoIBAN, "850.00"))
	if d.Verdict != intent.StepUp || d.Facts["vendor_name"] != intent.Str(ap.DemoVendor) {
		t.Fatalf("%s %s, vendor_name %v; want a step-up showing %s", d.Verdict, message(d), d.Facts["vendor_name"], ap.DemoVendor)
	}
	src.mu.Lock()
	defer src.mu.Unlock()
	if len(src.qs) == 0 || src.vendors != 1 {
		t.Fatalf("%d reads of bills, %d of vendors; want some, and one", len(src.qs), src.vendors)
	}
	for _, q := range src.qs {
		if !q.NoVendorName {
			t.Errorf("bills read with their vendor's name: %+v", q)
		}
	}
}
