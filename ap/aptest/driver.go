package aptest

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
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
)

// Test keys of the workload's gateway, derived from fixed seeds: never use
// them outside tests.
var (
	issuerKey    = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{17}, ed25519.SeedSize))
	approverKeys = map[string]ed25519.PrivateKey{
		"alice": ed25519.NewKeyFromSeed(bytes.Repeat([]byte{18}, ed25519.SeedSize)),
		"bob":   ed25519.NewKeyFromSeed(bytes.Repeat([]byte{19}, ed25519.SeedSize)),
	}
)

const (
	audience = "intentplane-workload"
	issuer   = "workload-cfo"
)

// clock is the gateway's clock: it stands still and is moved forward by
// the driver only.
type clock = testclock.Clock

// driver is the careful assistant and the user who confirms, on one
// gateway with the pack over the ERP.
type driver struct {
	t     testing.TB
	gw    *gateway.Gateway
	store gateway.Store
	clock *clock
	tok   string
	n     int // approvals signed
}

// newDriver mounts the pack over e.Source on a gateway of its own, with a
// mandate for e.Company with a budget in EUR and in USD.
func newDriver(t testing.TB, e Env) *driver {
	t.Helper()
	c := testclock.New(e.Day)
	cfg := e.Config
	cfg.Now = c.Now
	pack, err := ap.NewPack(e.Source, cfg)
	if err != nil {
		t.Fatal(err)
	}
	keys := approval.StaticKeys{}
	for name, k := range approverKeys {
		keys[name] = k.Public().(ed25519.PublicKey)
	}
	if e.NewStore == nil {
		t.Fatal("aptest: Env.NewStore is required")
	}
	st := e.NewStore(c.Now)
	gw, err := gateway.New(gateway.Config{
		Audience: audience, Issuers: mandate.StaticKeys{issuer: issuerKey.Public().(ed25519.PublicKey)}, Approvers: keys, Now: c.Now,
	}, st, pack)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-workload", Audience: audience, Owner: intent.Owner(e.Company),
		Scope: []intent.Action{ap.ActionPayBill, ap.ActionChangeVendorBank, ap.ActionListOpenBills, ap.ActionGetVendor},
		// The company pays its USD bills too: the mandate has a budget in
		// each currency (docs/mandates.md, several budgets).
		Budget: intent.Money{Currency: "EUR", Amount: 100_000_000}, Budgets: []intent.Money{{Currency: "USD", Amount: 100_000_000}},
		Mode: mandate.ModeKnownCounterparties, NotBefore: e.Day.Add(-time.Minute), Expiry: e.Day.Add(30 * 24 * time.Hour),
	}, issuer, issuerKey)
	if err != nil {
		t.Fatal(err)
	}
	return &driver{t: t, gw: gw, store: st, clock: c, tok: tok}
}

// order returns the book's payments in the order they are made, each
// with when it is made: vendor by vendor, at the time the vendor's account
// has the age the book gives it (on an ERP that keeps SetAt as given, the
// book's day for every vendor, in the book's order). The driver's clock
// never moves back: the vendors whose accounts were set last come last.
func order(bk book) []payment {
	ps := slices.Clone(bk.payments)
	for i := range ps {
		a := bk.accounts[ps[i].vendor]
		ps[i].at = a.SetAt.Add(min(a.age, 8*24*time.Hour))
	}
	slices.SortStableFunc(ps, func(a, b payment) int { return a.at.Compare(b.at) })
	return ps
}

// prepare is what the careful assistant does before paying p:
// ap.get_vendor for the account on file, ap.list_open_bills for the
// bill's residual and the vendor's open credit. It returns ap.pay_bill's
// arguments and the amount they pay (the bill's amount less the credit);
// ok is false when get_vendor was refused (counted by the caller).
func (d *driver) prepare(p payment) (args map[string]any, amount intent.Amount, ok bool) {
	g := d.decide(ap.ActionGetVendor, map[string]any{"vendor": p.vendor})
	var shown struct {
		Account *struct {
			IBAN string `json:"iban"`
		} `json:"current_account"`
	}
	if !g.Executed || json.Unmarshal([]byte(g.Output), &shown) != nil || shown.Account == nil {
		d.t.Errorf("false refusal: %s: get_vendor %s %s", p.vendor, code(g), message(g))
		return nil, 0, false
	}
	amount, residual := p.amount, ""
	if listed, ok := d.listed(p.vendor, p.bill); ok {
		residual = listed.Residual
		if listed.Credit != "" {
			credit, _ := intent.ParseAmount(listed.Credit, intent.Money{Currency: p.currency}.Exponent())
			amount -= credit
		}
	}
	args = map[string]any{"vendor": p.vendor, "bill": p.bill, "iban": shown.Account.IBAN, "amount": intent.Money{Currency: p.currency, Amount: amount}.Decimal(), "currency": p.currency}
	if residual != "" {
		args["residual"] = residual
	}
	return args, amount, true
}

// submit calls ap.pay_bill with args, and again with a person's
// confirmation or two people's approval when asked, as the user gives
// them. It returns the level asked ("" if none) and the final decision.
func (d *driver) submit(args map[string]any, f *Figures) (level string, dec gateway.Decision) {
	dec = d.decide(ap.ActionPayBill, args)
	if dec.Verdict != intent.StepUp {
		return "", dec
	}
	level = string(dec.Level)
	f.Why[level+": "+why(dec)]++
	if dec.Level == intent.LevelConfirm {
		f.Confirms++
		return level, d.decide(ap.ActionPayBill, args, d.approve("alice", dec))
	}
	f.FourEyes++
	return level, d.decide(ap.ActionPayBill, args, d.approve("alice", dec), d.approve("bob", dec))
}

func (d *driver) decide(action intent.Action, args map[string]any, as ...approval.Approval) gateway.Decision {
	d.t.Helper()
	body, err := json.Marshal(map[string]any{"action": action, "args": args})
	if err != nil {
		d.t.Fatal(err)
	}
	dec, err := d.gw.Decide(context.Background(), gateway.Request{Mandate: d.tok, Proposal: body, Approvals: as})
	if err != nil {
		d.t.Fatalf("Decide: %v", err)
	}
	return dec
}

// approve signs who's approval of the decision's operation, with an
// approval ID of its own (the second of two equal instalments is the same
// operation again).
func (d *driver) approve(who string, dec gateway.Decision) approval.Approval {
	d.t.Helper()
	if dec.Operation == nil {
		d.t.Fatalf("no operation to approve: %+v", dec.Refusal)
	}
	d.n++
	now := d.clock.Now()
	a, err := approval.Sign(approval.Approval{
		ID: fmt.Sprintf("%s-%s-%d", who, dec.OperationHash.String()[:12], d.n), Operation: dec.OperationHash, MandateID: dec.Operation.MandateID,
		Approver: who, IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute),
	}, approverKeys[who])
	if err != nil {
		d.t.Fatal(err)
	}
	return a
}

// listedBill is a bill as ap.list_open_bills shows it.
type listedBill struct {
	Number, Residual, Credit string
}

// listed returns the bill numbered number as ap.list_open_bills shows the
// vendor's open bills; ok is false if it is not listed.
func (d *driver) listed(vendor, number string) (listedBill, bool) {
	d.t.Helper()
	dec := d.decide(ap.ActionListOpenBills, map[string]any{"vendor": vendor, "limit": ap.MaxListLimit})
	var out struct{ Bills []listedBill }
	if err := json.Unmarshal([]byte(dec.Output), &out); err != nil {
		d.t.Errorf("list_open_bills %s: %v %s", vendor, err, message(dec))
		return listedBill{}, false
	}
	for _, b := range out.Bills {
		if b.Number == number {
			return b, true
		}
	}
	return listedBill{}, false
}

// check compares the payments in the ERP made through the gateway (with an
// idempotency key) with those executed, and verifies the receipts offline.
func (d *driver) check(e Env, f *Figures) {
	d.t.Helper()
	ctx := context.Background()
	ps, err := e.Source.Payments(ctx, e.Company, erp.PaymentQuery{})
	if err != nil {
		d.t.Fatal(err)
	}
	ps = slices.DeleteFunc(ps, func(p erp.Payment) bool { return p.Key == "" || p.State != erp.PaymentPosted })
	if len(ps) != f.Paid {
		d.t.Errorf("%d payments in the ERP, %d executed", len(ps), f.Paid)
	}
	rs, err := d.store.Receipts(ctx, intent.Owner(e.Company), 1, 0)
	if err != nil {
		d.t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		d.t.Fatal(err)
	}
	if _, err := receipt.Verify(&buf, nil); err != nil {
		d.t.Errorf("the receipts do not verify: %v", err)
	}
	if f.Receipts = len(rs); f.Receipts == 0 {
		d.t.Error("no receipts")
	}
}

// reasons are the step-up reasons the figures name, each by a phrase of
// the pack's message and whether it asks two people.
var reasons = []struct {
	phrase, label string
	fourEyes      bool
}{
	{"paid of the bill is above it", "the payment or the bill above confirm_above", false},
	{"paid to the vendor today is above the company's confirmation threshold", "the vendor's day above confirm_above", false},
	{"first payment to this vendor", "the first payment to the vendor", false},
	{"credit note of the vendor concerns this bill", "a credit note netted", false},
	{"bank account was changed recently", "the account changed recently (cooling_off)", true},
	{"daily limit for one person's confirmation", "the vendor's day above four_eyes_daily_above", true},
}

// why names the reasons of a step-up: for four eyes those that ask two
// people, for a confirmation all; a message naming none of reasons is
// given by its first sentence.
func why(d gateway.Decision) string {
	var all, four []string
	for _, r := range reasons {
		if strings.Contains(message(d), r.phrase) {
			all = append(all, r.label)
			if r.fourEyes {
				four = append(four, r.label)
			}
		}
	}
	if d.Level == intent.LevelFourEyes && len(four) > 0 {
		all = four
	}
	if len(all) == 0 {
		return reasonOf(d)
	}
	return strings.Join(all, " + ")
}

// reasonOf is the message of a step-up or refusal, cut to its first
// sentence.
func reasonOf(d gateway.Decision) string {
	m := message(d)
	if i := strings.Index(m, ". "); i > 0 {
		m = m[:i]
	}
	return m
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
