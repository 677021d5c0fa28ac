package odoo_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

// TestTwoProcessesPayOneBill: two connectors that share nothing (two
// intentplane-mcp processes, each with its own store, as a new user ran
// them) pay the same bill at the same moment: the second's payment wizard
// is opened before the first pays and run after. Odoo 17 checks what is
// left to pay only when the wizard opens, so it posts the second payment
// in full and leaves what the bill no longer owed unmatched (found on a
// real Odoo 17: two posted payments of one 163.41 bill, one unreconciled).
// The connector sees that the payment is not matched in whole, cancels it
// and says nothing was paid by that request; the bill is paid once.
func TestTwoProcessesPayOneBill(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name            string
		first, other    intent.Amount // what the slow process asks; what the other pays meanwhile
		residual        intent.Amount // the bill's residual in the end
		posted          intent.Amount // what the posted payments of the bill add up to
		wantFirstFailed bool
	}{
		{"both pay the whole bill", 140000, 140000, 0, 140000, true},
		{"together above the residual", 100000, 60000, 80000, 60000, true},
		{"together within the residual", 50000, 60000, 30000, 110000, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			eachVersion(t, func(t *testing.T, srv *odootest.Server) {
				e := newFake(t, srv, true)
				_, acct, _, bill := demoRecords(t, e.client)
				ctx := context.Background()
				// bill2 owes 2,400.00: pay 1,000.00 first so that 1,400.00 is left.
				if _, err := e.client.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill.ID, BankAccount: acct.ID, Amount: eur(100000), Key: "before"}); err != nil {
					t.Fatal(err)
				}
				err := payAtTheSameMoment(t, e.cfg, e.client, bill.ID, acct.ID, tc.first, tc.other)
				switch {
				case tc.wantFirstFailed && (!errors.Is(err, erp.ErrNotWritten) || !strings.Contains(err.Error(), "at the same moment")):
					t.Fatalf("the slow process: %v; want nothing written, saying the bill was paid at the same moment", err)
				case !tc.wantFirstFailed && err != nil:
					t.Fatalf("the slow process: %v; both payments fit in the residual", err)
				}
				residual, posted := paidOnBill(t, e.client, bill.ID, "before")
				if residual != tc.residual || posted != tc.posted {
					t.Errorf("bill residual %d, paid by the two processes %d; want %d and %d", residual, posted, tc.residual, tc.posted)
				}
			})
		})
	}
}

// payAtTheSameMoment has a connector on cfg (the slow process) pay first
// of bill to acct, and another connector, other, pay otherAmount of it
// in full while the slow one's payment wizard is open (just before its
// action_create_payments goes out): the moment two processes that share
// nothing meet. It returns the slow process's error.
func payAtTheSameMoment(t *testing.T, cfg odoo.Config, other *odoo.Client, bill, acct string, first, otherAmount intent.Amount) error {
	t.Helper()
	ctx := context.Background()
	var otherErr error
	hook := &beforeCall{marker: "action_create_payments", fn: func() {
		_, otherErr = other.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill, BankAccount: acct, Amount: eur(otherAmount), Key: "other-process"})
	}}
	cfg.HTTPClient = &http.Client{Transport: hook}
	slow, err := odoo.New(cfg) // another process: its own locks, nothing shared
	if err != nil {
		t.Fatal(err)
	}
	_, err = slow.RegisterPayment(ctx, provision.DemoCompany, erp.PaymentRequest{Bill: bill, BankAccount: acct, Amount: eur(first), Key: "slow-process"})
	if otherErr != nil {
		t.Fatalf("the other process's payment: %v", otherErr)
	}
	if !hook.ran.Load() {
		t.Fatal("the other process never ran: the slow one opened no payment wizard")
	}
	return err
}

// paidOnBill returns bill's residual and what its posted payments, other
// than those under key except, add up to; it fails t on a posted payment
// Odoo did not match in whole with its bill (an overpayment).
func paidOnBill(t *testing.T, c *odoo.Client, bill, except string) (residual, posted intent.Amount) {
	t.Helper()
	ctx := context.Background()
	bs, err := c.Bills(ctx, provision.DemoCompany, erp.BillQuery{ID: bill})
	if err != nil || len(bs) != 1 {
		t.Fatalf("bill: %v", err)
	}
	ps, err := c.Payments(ctx, provision.DemoCompany, erp.PaymentQuery{Bill: bill, Posted: true})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ps {
		if p.Key != except {
			posted += p.Amount.Amount
		}
		if !p.Reconciled {
			t.Errorf("payment %s (%s) is posted and not matched in whole with the bill: an overpayment", p.ID, p.Key)
		}
	}
	return bs[0].Residual, posted
}

// beforeCall is a RoundTripper that runs fn once, before sending the
// first call whose body holds marker.
type beforeCall struct {
	marker string
	fn     func()
	once   sync.Once
	ran    atomic.Bool
}

func (b *beforeCall) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Body != nil {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return nil, err
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		if bytes.Contains(body, []byte(b.marker)) || strings.HasSuffix(r.URL.Path, "/"+b.marker) { // XML-RPC, JSON-2
			b.once.Do(func() { b.fn(); b.ran.Store(true) })
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}
