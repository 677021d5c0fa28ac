package ap_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/internal/testclock"
	"github.com/intentplane/intentplane/store/mem"
)

const (
	audience = "intentplane-test"
	issuer   = "cfo-console"
)

// Test keys, derived from fixed seeds: never use them outside tests.
var (
	issuerKey    = ed25519.NewKeyFromSeed(seed(1))
	approverKeys = map[string]ed25519.PrivateKey{"alice": ed25519.NewKeyFromSeed(seed(2)), "bob": ed25519.NewKeyFromSeed(seed(3))}
)

func seed(b byte) []byte { return bytes.Repeat([]byte{b}, ed25519.SeedSize) }

// t0 is when every test starts: a Monday in November 2026.
var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// clock is the module's test clock.
type clock = testclock.Clock

// env is a gateway with the ap pack over the demo ERP.
type env struct {
	t         *testing.T
	clock     *clock
	erp       *erp.Mem
	callbacks *ap.CallbackMem
	store     *mem.Store
	gw        *gateway.Gateway
}

func newEnv(t *testing.T) *env { return newEnvConfig(t, ap.Config{}) }

func newEnvConfig(t *testing.T, cfg ap.Config) *env { return newEnvWrapped(t, cfg, nil) }

// newEnvWrapped is newEnvConfig with the pack reading and writing the demo
// ERP through wrap(erp), if wrap is not nil.
func newEnvWrapped(t *testing.T, cfg ap.Config, wrap func(erp.Source) erp.Source) *env {
	t.Helper()
	c := testclock.New(t0)
	e := &env{t: t, clock: c, erp: ap.DemoERP(c.Now), callbacks: &ap.CallbackMem{}, store: mem.New(c.Now)}
	cfg.Callbacks, cfg.Now = e.callbacks, c.Now
	var src erp.Source = e.erp
	if wrap != nil {
		src = wrap(e.erp)
	}
	pack, err := ap.NewPack(src, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := approval.StaticKeys{}
	for name, k := range approverKeys {
		keys[name] = k.Public().(ed25519.PublicKey)
	}
	e.gw, err = gateway.New(gateway.Config{
		Audience:  audience,
		Issuers:   mandate.StaticKeys{issuer: issuerKey.Public().(ed25519.PublicKey)},
		Approvers: keys,
		Now:       c.Now,
	}, e.store, pack)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

var allActions = []intent.Action{ap.ActionPayBill, ap.ActionChangeVendorBank, ap.ActionListOpenBills, ap.ActionGetVendor}

// mandate issues a mandate for company over every action of the pack,
// with a budget of 50,000.00 in currency, valid for 30 days.
func (e *env) mandate(id, company, currency string) string {
	e.t.Helper()
	tok, err := mandate.Issue(mandate.Mandate{
		ID: id, Audience: audience, Owner: intent.Owner(company), Scope: allActions,
		Budget: intent.Money{Currency: currency, Amount: 5000000}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: t0.Add(-time.Minute), Expiry: t0.Add(30 * 24 * time.Hour),
	}, issuer, issuerKey)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

func (e *env) decide(tok string, action intent.Action, args map[string]any, as ...approval.Approval) gateway.Decision {
	e.t.Helper()
	body, err := json.Marshal(map[string]any{"action": action, "args": args})
	if err != nil {
		e.t.Fatal(err)
	}
	return e.decideRaw(tok, body, as...)
}

func (e *env) decideRaw(tok string, body []byte, as ...approval.Approval) gateway.Decision {
	e.t.Helper()
	d, err := e.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: body, Approvals: as})
	if err != nil {
		e.t.Fatalf("Decide: %v", err)
	}
	return d
}

// approve signs who's approval of the decision's operation.
func (e *env) approve(who string, d gateway.Decision) approval.Approval {
	e.t.Helper()
	return e.approveAs(who, "", d)
}

// approveAs is approve with suffix added to the approval's ID, so that
// the same operation can be approved again (the second of two equal
// instalments).
func (e *env) approveAs(who, suffix string, d gateway.Decision) approval.Approval {
	e.t.Helper()
	if d.Operation == nil {
		e.t.Fatalf("no operation to approve: %+v", d.Refusal)
	}
	now := e.clock.Now()
	a, err := approval.Sign(approval.Approval{
		ID: who + "-" + d.OperationHash.String()[:12] + suffix, Operation: d.OperationHash, MandateID: d.Operation.MandateID,
		Approver: who, IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute),
	}, approverKeys[who])
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// approveOnce is approve with an approval ID of its own, for a second
// operation with the same hash (the second of two equal instalments).
func (e *env) approveOnce(who string, d gateway.Decision) approval.Approval {
	e.t.Helper()
	return e.approveAs(who, fmt.Sprintf("-%d", approvals.Add(1)), d)
}

// approvals numbers the approvals approveOnce signs.
var approvals atomic.Int64

// bill returns the company's bill with the vendor reference ref.
func (e *env) bill(company, ref string) erp.Bill {
	e.t.Helper()
	bs, err := e.erp.Bills(context.Background(), company, erp.BillQuery{})
	if err != nil {
		e.t.Fatal(err)
	}
	for _, b := range bs {
		if b.Ref == ref {
			return b
		}
	}
	e.t.Fatalf("no bill %s for %s", ref, company)
	return erp.Bill{}
}

// vendor returns the company's vendor named name.
func (e *env) vendor(company, name string) erp.Vendor {
	e.t.Helper()
	vs, err := e.erp.Vendors(context.Background(), company, erp.VendorQuery{Name: name})
	if err != nil || len(vs) != 1 {
		e.t.Fatalf("vendor %s of %s: %v (%d)", name, company, err, len(vs))
	}
	return vs[0]
}

// paidBefore records, by hand in the ERP, a paid bill of the company's
// vendor named name (of 100.00 EUR, dated 2026-09-01, paid on
// 2026-09-15), so that paying the vendor is not a first payment: for the
// tests of other controls.
func (e *env) paidBefore(company, name string) {
	e.t.Helper()
	ctx := context.Background()
	v := e.vendor(company, name)
	b, err := e.erp.AddBill(ctx, company, erp.Bill{Ref: "HIST-" + v.ID, Vendor: v.ID, Currency: "EUR", Total: 10000,
		Date: time.Date(2026, 9, 1, 0, 0, 0, 0, time.UTC), Due: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		e.t.Fatal(err)
	}
	if _, err := e.erp.AddPayment(ctx, company, erp.Payment{Bill: b.ID, Amount: intent.Money{Currency: "EUR", Amount: 10000},
		Date: time.Date(2026, 9, 15, 10, 0, 0, 0, time.UTC)}); err != nil {
		e.t.Fatal(err)
	}
}

// payments returns every payment of the company made through the gateway
// (with an idempotency key).
func (e *env) payments(company string) []erp.Payment {
	e.t.Helper()
	ps, err := e.erp.Payments(context.Background(), company, erp.PaymentQuery{})
	if err != nil {
		e.t.Fatal(err)
	}
	// The demo's payment made by hand before the test (ap.DemoPaidBill)
	// is not one the test made.
	return slices.DeleteFunc(ps, func(p erp.Payment) bool { return p.Key == "" })
}

// verifyReceipts checks that the company's receipt chain links and
// verifies offline.
func (e *env) verifyReceipts(company string) int {
	e.t.Helper()
	rs, err := e.store.Receipts(context.Background(), intent.Owner(company), 1, 0)
	if err != nil {
		e.t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		e.t.Fatal(err)
	}
	if _, err := receipt.Verify(&buf, nil); err != nil {
		e.t.Fatalf("receipts of %s do not verify: %v", company, err)
	}
	return len(rs)
}

func pay(vendor, bill, iban, amount string) map[string]any {
	return map[string]any{"vendor": vendor, "bill": bill, "iban": iban, "amount": amount, "currency": "EUR"}
}

func code(d gateway.Decision) intent.Code {
	if d.Refusal == nil {
		return ""
	}
	return d.Refusal.Code
}

func message(d gateway.Decision) string {
	if d.Refusal == nil {
		return ""
	}
	return d.Refusal.Message
}

// issue issues a mandate for company over every action with a budget of
// budget cents of EUR.
func issue(company string, budget intent.Amount) (string, error) {
	return mandate.Issue(mandate.Mandate{
		ID: fmt.Sprintf("m-%s-%d", company, budget), Audience: audience, Owner: intent.Owner(company), Scope: allActions,
		Budget: intent.Money{Currency: "EUR", Amount: budget}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: t0.Add(-time.Minute), Expiry: t0.Add(30 * 24 * time.Hour),
	}, issuer, issuerKey)
}

type approvalT = approval.Approval
