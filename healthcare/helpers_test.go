package healthcare_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/healthcare"
	"github.com/intentplane/intentplane/store/mem"
)

const (
	audience = "intentplane-test"
	issuer   = "hospital-portal"
	approver = "dr-grey-phone"
)

// Test keys, derived from fixed seeds: never use them outside tests.
var (
	issuerKey   = ed25519.NewKeyFromSeed(seed(1))
	approverKey = ed25519.NewKeyFromSeed(seed(2))
)

func seed(b byte) []byte {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = b
	}
	return s
}

// now is the test clock: during dr-grey's active encounter E-2001.
var now = time.Date(2026, time.March, 2, 10, 0, 0, 0, time.UTC)

func clock() time.Time { return now }

// env is a gateway with the healthcare pack over the demo EHR.
type env struct {
	t     *testing.T
	ehr   *healthcare.Mem
	store *mem.Store
	gw    *gateway.Gateway

	mu        sync.Mutex
	decisions map[intent.Owner]int // decisions made per owner
}

func newEnv(t *testing.T) *env {
	t.Helper()
	ehr := healthcare.DemoEHR()
	pack, err := healthcare.NewPack(ehr)
	if err != nil {
		t.Fatal(err)
	}
	st := mem.New(clock)
	gw, err := gateway.New(gateway.Config{
		Audience:  audience,
		Issuers:   mandate.StaticKeys{issuer: issuerKey.Public().(ed25519.PublicKey)},
		Approvers: approval.StaticKeys{approver: approverKey.Public().(ed25519.PublicKey)},
		Now:       clock,
	}, st, pack)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ehr: ehr, store: st, gw: gw, decisions: map[intent.Owner]int{}}
}

var allActions = []intent.Action{
	healthcare.ActionListEncounters,
	healthcare.ActionOpenRecord,
	healthcare.ActionReadNotes,
	healthcare.ActionAnnotateRecord,
}

// mandateFor issues a mandate for the clinician over every action of the
// pack, in mode known_counterparties unless patients are named, in which
// case it is strict and names them.
func (e *env) mandateFor(clinician string, patients ...string) string {
	e.t.Helper()
	m := mandate.Mandate{
		ID:        "m-" + clinician + "-" + strings.Join(patients, "-"),
		Audience:  audience,
		Owner:     intent.Owner(clinician),
		Scope:     allActions,
		Budget:    intent.Money{Currency: "EUR"},
		Mode:      mandate.ModeKnownCounterparties,
		NotBefore: now.Add(-time.Minute),
		Expiry:    now.Add(time.Hour),
	}
	if len(patients) > 0 {
		m.Mode = mandate.ModeStrict
		m.Claims = map[string][]string{healthcare.PatientsClaim: patients}
	}
	tok, err := mandate.Issue(m, issuer, issuerKey)
	if err != nil {
		e.t.Fatal(err)
	}
	return tok
}

// decide sends a proposal under the mandate and counts the decision for
// the receipt check.
func (e *env) decide(tok string, action intent.Action, args map[string]string, approvals ...approval.Approval) gateway.Decision {
	e.t.Helper()
	a := map[string]any{}
	for k, v := range args {
		a[k] = v
	}
	body, err := json.Marshal(map[string]any{"action": action, "args": a})
	if err != nil {
		e.t.Fatal(err)
	}
	d, err := e.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: body, Approvals: approvals})
	if err != nil {
		e.t.Fatalf("Decide: %v", err)
	}
	e.mu.Lock()
	e.decisions[d.Receipt.Owner]++
	e.mu.Unlock()
	return d
}

// approve signs a confirmation of the decision's operation.
func (e *env) approve(d gateway.Decision, id string) approval.Approval {
	e.t.Helper()
	a, err := approval.Sign(approval.Approval{
		ID:        id,
		Operation: d.OperationHash,
		MandateID: d.Operation.MandateID,
		Approver:  approver,
		IssuedAt:  now,
		ExpiresAt: now.Add(5 * time.Minute),
	}, approverKey)
	if err != nil {
		e.t.Fatal(err)
	}
	return a
}

// checkReceipts checks that every decision made through e appended exactly
// one receipt to its owner's chain, and that the chain links.
func (e *env) checkReceipts() {
	e.t.Helper()
	e.mu.Lock()
	defer e.mu.Unlock()
	for owner, n := range e.decisions {
		rs, err := e.store.Receipts(context.Background(), owner, 0, 0)
		if err != nil {
			e.t.Fatalf("receipts of %q: %v", owner, err)
		}
		if len(rs) != n {
			e.t.Errorf("owner %q: %d receipts for %d decisions", owner, len(rs), n)
		}
		var prev receipt.Hash
		for i, r := range rs {
			if r.Seq != uint64(i+1) || r.Prev != prev {
				e.t.Errorf("owner %q: receipt %d has seq %d and prev %s; the chain does not link", owner, i, r.Seq, r.Prev)
			}
			prev = r.Hash
		}
	}
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
