package gateway_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
)

// propFixture is the property test's world, without random bank failures,
// for hand-written regressions. Its store and gateway share one fake clock,
// as they share the real one in production.
func propFixture(t *testing.T) *propWorld {
	t.Helper()
	w := newPropWorld(t, 1, 0, rand.New(rand.NewPCG(1, 2)), &propStats{})
	w.steady = true
	return w
}

// mandateFor issues a known-counterparties mandate for owner, valid from
// now for d, with budget 50,000.00 EUR.
func (w *propWorld) mandateFor(owner intent.Owner, d time.Duration) string {
	w.t.Helper()
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-regression-" + string(owner), Audience: propAudience, Owner: owner,
		Scope: []intent.Action{actSend}, Budget: intent.Money{Currency: "EUR", Amount: 5000000},
		Mode: mandate.ModeKnownCounterparties, NotBefore: w.now, Expiry: w.now.Add(d),
	}, propIssuerID, w.issuer)
	if err != nil {
		w.t.Fatal(err)
	}
	return tok
}

func (w *propWorld) must(tok, body string) gateway.Decision {
	w.t.Helper()
	d, err := w.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: []byte(body)})
	if err != nil {
		w.t.Fatalf("Decide: %v", err)
	}
	return d
}

// TestRegressionReplayInSkewWindow: a mandate is accepted until 30s (the
// verifier's clock-skew tolerance) after its expiry, but the operation's
// nonce was consumed with the mandate's expiry as its own, so a store may
// forget it as soon as the mandate expires. In that window the very same
// operation executed a second time. Found by TestProperty ("operation
// executed twice"), minimized by hand.
func TestRegressionReplayInSkewWindow(t *testing.T) {
	t.Parallel()
	w := propFixture(t)
	tok := w.mandateFor("emma", 10*time.Minute)
	body := fmt.Sprintf(`{"action":"pay.send","args":{"recipient":%q,"amount":"10.00"}}`, w.files["emma"][0].iban)
	if d := w.must(tok, body); !d.Executed {
		t.Fatalf("first payment: %s %+v", d.Verdict, d.Refusal)
	}
	// Ten seconds after the expiry: the mandate is still accepted (skew).
	w.now = w.now.Add(10*time.Minute + 10*time.Second)
	// Other traffic: the store sweeps keys it may forget every 1024 keys.
	for i := range 1024 {
		if err := w.store.Consume(context.Background(), fmt.Sprintf("other-%d", i), w.now.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	d := w.must(tok, body)
	if d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeReplayed {
		t.Fatalf("replay 10s after the mandate's expiry: executed %v, %s %+v; want a refusal %s", d.Executed, d.Verdict, d.Refusal, intent.CodeReplayed)
	}
	if len(w.calls) != 1 {
		t.Fatalf("the executor ran %d times, want once", len(w.calls))
	}
}

// TestRegressionSentBase64Prefix: a receipt's Sent holds the proposal
// verbatim, or "base64:" and its encoding when it is not UTF-8. A UTF-8
// proposal that itself begins with "base64:" was stored verbatim, so the
// receipt read as if the agent had sent the bytes it encodes (here a
// well-formed payment): the two forms collided. receipt.SentText escapes
// that case.
func TestRegressionSentBase64Prefix(t *testing.T) {
	t.Parallel()
	w := propFixture(t)
	tok := w.mandateFor("emma", time.Hour)
	body := "base64:eyJhY3Rpb24iOiJwYXkuc2VuZCIsImFyZ3MiOnt9fQ==" // {"action":"pay.send","args":{}}
	d := w.must(tok, body)
	if got, want := d.Receipt.Sent, receipt.SentText([]byte(body)); got != want {
		t.Fatalf("receipt Sent = %q, want %q (what the agent sent, unambiguously)", got, want)
	}
}

// TestRegressionOversizedProposalReceipt: the gateway refuses a proposal
// over the body limit (64 KiB), but its receipt keeps the whole body, and
// the receipt line escapes each control byte to 6 bytes. A 1.4 MB proposal
// of control bytes makes an 8.4 MB line, beyond receipt.MaxLine, and the
// owner-less receipt chain no longer verifies: the agent can break offline
// verification of the audit log at will (and grow it without bound).
//
// Fixed: a receipt keeps at most the first 4 KiB of a proposal, followed by
// its size and SHA-256.
func TestRegressionOversizedProposalReceipt(t *testing.T) {
	t.Parallel()
	w := propFixture(t)
	body := strings.Repeat("\x01", receipt.MaxLine/6+1)
	d := w.must("", body)
	if d.Verdict != intent.Deny {
		t.Fatalf("verdict %s", d.Verdict)
	}
	rs, err := w.store.Receipts(context.Background(), "", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(&buf, nil); err != nil {
		t.Fatalf("the receipt chain does not verify after an oversized proposal: %v", err)
	}
	if len(rs[0].Sent) > 4*4096 || !strings.Contains(rs[0].Sent, fmt.Sprintf("cut: %d bytes in all, sha256:", len(body))) {
		t.Fatalf("receipt keeps %d bytes of the proposal without saying it was cut", len(rs[0].Sent))
	}
}
