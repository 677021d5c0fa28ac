package ap_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
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
