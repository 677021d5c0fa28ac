package scenarios_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/internal/pgtest"
	"github.com/intentplane/intentplane/internal/testclock"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/postgres"
)

// storeKind opens a new, empty store of one kind for a test; the store is
// closed when the test ends. reopen closes the store and opens it again
// from where it keeps its state, as a restarted process would (the same
// object for mem, whose state a real restart would lose).
type storeKind struct {
	name string
	open func(t testing.TB, now func() time.Time) (st gateway.Store, reopen func() gateway.Store)
}

// kinds are the stores every scenario runs on.
var kinds = []storeKind{
	{"mem", func(t testing.TB, now func() time.Time) (gateway.Store, func() gateway.Store) {
		s := mem.New(now)
		return s, func() gateway.Store { return s }
	}},
	{"embedded", func(t testing.TB, now func() time.Time) (gateway.Store, func() gateway.Store) {
		path := filepath.Join(t.TempDir(), "state.db")
		open := func() *embedded.Store {
			s, err := embedded.Open(path, embedded.Options{Now: now})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		}
		s := open()
		return s, func() gateway.Store {
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			return open()
		}
	}},
	{"postgres", func(t testing.TB, now func() time.Time) (gateway.Store, func() gateway.Store) {
		dsn, _ := pgtest.Schema(t)
		open := func() *postgres.Store {
			s, err := postgres.Open(context.Background(), dsn, postgres.Config{MaxConns: 8, Timeout: 30 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(s.Close)
			return s
		}
		s := open()
		return s, func() gateway.Store {
			s.Close()
			return open()
		}
	}},
}

// eachStore runs f as a parallel subtest per store kind.
func eachStore(t *testing.T, f func(t *testing.T, k storeKind)) {
	t.Helper()
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			t.Parallel()
			f(t, k)
		})
	}
}

// Test keys, derived from fixed seeds: never use them outside tests.
var (
	issuerKey    = ed25519.NewKeyFromSeed(bytes.Repeat([]byte{1}, ed25519.SeedSize))
	approverKeys = map[string]ed25519.PrivateKey{
		"alice": ed25519.NewKeyFromSeed(bytes.Repeat([]byte{2}, ed25519.SeedSize)),
		"bob":   ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize)),
	}
)

const (
	audience = "intentplane-scenarios"
	issuer   = "scenario-issuer"
)

// clock is the module's test clock.
type clock = testclock.Clock

// harness is a gateway over one store with one pack, and what a scenario
// needs to drive it: mandates, approvals, decisions, and the checks every
// scenario ends with.
type harness struct {
	t      testing.TB
	clock  *clock
	store  gateway.Store
	reopen func() gateway.Store
	cfg    gateway.Config
	gw     *gateway.Gateway

	mu        sync.Mutex
	decisions map[intent.Owner]int // decisions per owner, for the receipt check
}

// newHarness builds a gateway over a new store of kind k with pack, its
// clock starting at start.
func newHarness(t testing.TB, k storeKind, start time.Time, pack gateway.Pack, c *clock) *harness {
	t.Helper()
	if c == nil {
		c = testclock.New(start)
	}
	st, reopen := k.open(t, c.Now)
	keys := approval.StaticKeys{}
	for name, key := range approverKeys {
		keys[name] = key.Public().(ed25519.PublicKey)
	}
	cfg := gateway.Config{
		Audience:  audience,
		Issuers:   mandate.StaticKeys{issuer: issuerKey.Public().(ed25519.PublicKey)},
		Approvers: keys,
		Now:       c.Now,
	}
	gw, err := gateway.New(cfg, st, pack)
	if err != nil {
		t.Fatal(err)
	}
	return &harness{t: t, clock: c, store: st, reopen: reopen, cfg: cfg, gw: gw, decisions: map[intent.Owner]int{}}
}

// restart closes the store and opens it again, and builds a new gateway
// over it with pack, as a restarted process would.
func (h *harness) restart(pack gateway.Pack) {
	h.t.Helper()
	h.store = h.reopen()
	gw, err := gateway.New(h.cfg, h.store, pack)
	if err != nil {
		h.t.Fatal(err)
	}
	h.gw = gw
}

// mandate issues m, valid from a minute before the clock for 30 days, with
// the harness's audience and mode known_counterparties unless set.
func (h *harness) mandate(m mandate.Mandate) string {
	h.t.Helper()
	now := h.clock.Now()
	m.Audience, m.NotBefore, m.Expiry = audience, now.Add(-time.Minute), now.Add(30*24*time.Hour)
	if m.Mode == "" {
		m.Mode = mandate.ModeKnownCounterparties
	}
	tok, err := mandate.Issue(m, issuer, issuerKey)
	if err != nil {
		h.t.Fatal(err)
	}
	return tok
}

func proposal(t testing.TB, action intent.Action, args map[string]any) []byte {
	t.Helper()
	b, err := json.Marshal(map[string]any{"action": action, "args": args})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// decide sends the proposal and counts the decision; a Decide error (a
// receipt not stored) fails the test.
func (h *harness) decide(tok string, action intent.Action, args map[string]any, as ...approval.Approval) gateway.Decision {
	h.t.Helper()
	d, err := h.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: proposal(h.t, action, args), Approvals: as})
	if err != nil {
		h.t.Fatalf("Decide: %v", err)
	}
	h.count(d)
	return d
}

func (h *harness) count(d gateway.Decision) {
	h.mu.Lock()
	h.decisions[d.Receipt.Owner]++
	h.mu.Unlock()
}

// approve signs who's approval of the decision's operation.
func (h *harness) approve(who string, d gateway.Decision) approval.Approval {
	h.t.Helper()
	if d.Operation == nil {
		h.t.Fatalf("no operation to approve: %+v", d.Refusal)
	}
	id, err := approval.NewID(nil)
	if err != nil {
		h.t.Fatal(err)
	}
	now := h.clock.Now()
	a, err := approval.Sign(approval.Approval{
		ID: id, Operation: d.OperationHash, MandateID: d.Operation.MandateID,
		Approver: who, IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute),
	}, approverKeys[who])
	if err != nil {
		h.t.Fatal(err)
	}
	return a
}

// checkReceipts checks that every decision appended exactly one receipt to
// its owner's chain, and that each chain verifies.
func (h *harness) checkReceipts() {
	h.t.Helper()
	h.mu.Lock()
	defer h.mu.Unlock()
	for owner, n := range h.decisions {
		rs, err := h.store.Receipts(context.Background(), owner, 1, 0)
		if err != nil {
			h.t.Fatalf("receipts of %q: %v", owner, err)
		}
		if len(rs) != n {
			h.t.Errorf("owner %q: %d receipts for %d decisions", owner, len(rs), n)
		}
		var buf bytes.Buffer
		if err := receipt.WriteJSONL(&buf, rs); err != nil {
			h.t.Fatal(err)
		}
		if _, err := receipt.Verify(&buf, nil); err != nil {
			h.t.Errorf("owner %q: the chain does not verify: %v", owner, err)
		}
	}
}

// checkBudget checks the mandate's ledger: committed exactly, nothing left
// reserved.
func (h *harness) checkBudget(mandateID string, committed intent.Amount) {
	h.t.Helper()
	u, err := h.store.Usage(context.Background(), mandateID)
	if err != nil {
		h.t.Fatal(err)
	}
	if u.Committed != committed || u.Reserved != 0 {
		h.t.Errorf("mandate %s: committed %d reserved %d, want committed %d and nothing reserved", mandateID, u.Committed, u.Reserved, committed)
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
