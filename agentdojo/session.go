package agentdojo

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"time"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/store/mem"
)

// Approver is the person a session asks on a step-up. Approve is called
// once per person asked: once for a confirmation, twice (two people) for
// four eyes. op is the operation the gateway resolved; right reports
// whether it is exactly one of the calls of the user's own task.
// Implementations need not be safe for concurrent use: a session asks
// from one goroutine.
type Approver interface {
	Approve(op intent.Operation, right bool) bool
}

// FallibleApprover is a simulated person who approves a wrong step-up
// (an operation the user did not ask for) with probability P and
// rejects a right one with probability Q, both in [0, 1]. The zero
// value is the ideal approver: every right step-up approved, every wrong
// one rejected. Rand draws the decisions; it may be nil only when P and
// Q are each 0 or 1.
type FallibleApprover struct {
	P, Q float64
	Rand *rand.Rand
}

// Approve implements Approver.
func (a *FallibleApprover) Approve(_ intent.Operation, right bool) bool {
	if right {
		return !a.draw(a.Q)
	}
	return a.draw(a.P)
}

func (a *FallibleApprover) draw(p float64) bool {
	switch {
	case p <= 0:
		return false
	case p >= 1:
		return true
	}
	return a.Rand.Float64() < p
}

// seeded returns a deterministic random source for seed and a stream
// number (a repetition, an experiment).
func seeded(seed uint64, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, stream))
}

// sessionConfig says how a session's gateway is built.
type sessionConfig struct {
	// mode is the mandate's mode; empty means known_counterparties.
	mode mandate.Mode
	// approver answers step-ups; nil is the ideal approver.
	approver Approver
	// noResolution switches resolution off (ablation): the beneficiaries
	// registry accepts any well-formed account, as if every value the
	// agent sends were trusted. The policy still sees the bank's facts.
	noResolution bool
	// hidden are canonical accounts the beneficiaries registry does not
	// return (an incomplete registry).
	hidden map[string]bool
	// seen, if not nil, records every value looked up in the
	// beneficiaries registry.
	seen map[string]bool
}

// The second approver of four-eyes step-ups, next to replayApprover.
const cosigner = "emma-cosigner"

var cosignerKey = ed25519.NewKeyFromSeed(seed("agentdojo: the co-signer's approval key"))

// session is one user task's agent session through a gateway of its own:
// a mandate for the task, a fresh store, and an Approver on step-ups.
type session struct {
	gw        *gateway.Gateway
	token     string
	mandateID string
	expected  []intent.Operation
	approver  Approver
	approvals int
	// userProposals are the user task's own calls as proposals, as the
	// ground truth spells them (Run: a call the user asked for is never
	// counted as the attacker's, even when the gateway refuses it).
	userProposals [][]byte
}

// stepResult is what became of one proposal in a session.
type stepResult struct {
	executed bool
	code     intent.Code
	// asked counts the step-ups asked (0 or 1); approved those approved.
	asked, approved int
	output          string
	message         string
}

func newSession(bank *banking.Mem, ut *UserTask, mandateID string, cfg sessionConfig) (*session, error) {
	pack, err := banking.NewPack(bank)
	if err != nil {
		return nil, err
	}
	pack.Registries[banking.RegistryBeneficiaries] = configured(pack.Registries[banking.RegistryBeneficiaries], &cfg, func(v string) []string { return []string{v} })
	gw, err := newReplayGateway(pack)
	if err != nil {
		return nil, err
	}
	var calls []proposed
	for _, c := range ut.Calls {
		calls = append(calls, c)
	}
	s, err := openSession(gw, mandate.Mandate{
		ID: mandateID, Scope: ut.Mandate.Scope, Claims: ut.Mandate.Claims, Mode: cfg.mode,
		Budget: intent.Money{Currency: "EUR", Amount: ut.Mandate.Budget},
	}, ut.Name(), calls, cfg.approver)
	if err != nil {
		return nil, err
	}
	s.expected = nil // what the user approves: payees named by a name as the gateway shows them
	for _, c := range ut.approvedCalls() {
		if op, ok := expectedOperation(gw, c.Action(), c.Proposal(), mandateID); ok {
			s.expected = append(s.expected, op)
		}
	}
	return s, nil
}

// configured returns reg as cfg changes it when a lookup is made (cfg is
// read at every lookup, so that one gateway can serve sessions of
// different configurations in turn): with noResolution any value
// resolves; otherwise a value of which split returns a hidden part does
// not, and every part is recorded in cfg.seen. split breaks a looked-up
// value into the entries of the registry (the addresses of a workspace
// list; a banking account is one entry).
func configured(reg resolve.Registry, cfg *sessionConfig, split func(string) []string) resolve.Registry {
	return resolve.RegistryFunc(func(ctx context.Context, o intent.Owner, v string) (resolve.Record, error) {
		if cfg.noResolution {
			return resolve.Record{ID: "unchecked", Value: v}, nil
		}
		hidden := false
		for _, part := range split(v) {
			if cfg.seen != nil {
				cfg.seen[part] = true
			}
			hidden = hidden || cfg.hidden[part]
		}
		if hidden {
			return resolve.Record{}, resolve.ErrNoMatch
		}
		return reg.Lookup(ctx, o, v)
	})
}

// newReplayGateway returns a gateway over pack with the replay's fixed
// clock, its mandate issuer and both approvers (the user and the
// co-signer), on a fresh in-memory store.
func newReplayGateway(pack gateway.Pack) (*gateway.Gateway, error) {
	clock := func() time.Time { return replayNow }
	return gateway.New(gateway.Config{
		Audience: replayAudience,
		Issuers:  mandate.StaticKeys{replayIssuer: issuerKey.Public().(ed25519.PublicKey)},
		Approvers: approval.StaticKeys{
			replayApprover: userKey.Public().(ed25519.PublicKey),
			cosigner:       cosignerKey.Public().(ed25519.PublicKey),
		},
		Now: clock,
	}, mem.New(clock), pack)
}

// proposed is a call of a user task's ground truth, of either suite.
type proposed interface {
	Action() intent.Action
	Proposal() []byte
}

// openSession issues mandate m (its ID, scope, budget, claims and mode;
// the audience, owner and validity are the replay's; an empty mode is
// known_counterparties) for the user task named task on gw, and returns
// the session whose expected operations are the task's calls. A nil
// approver is the ideal one.
func openSession(gw *gateway.Gateway, m mandate.Mandate, task string, calls []proposed, approver Approver) (*session, error) {
	m.Audience, m.Owner = replayAudience, Owner
	m.NotBefore, m.Expiry = replayNow.Add(-time.Minute), replayNow.Add(time.Hour)
	if m.Mode == "" {
		m.Mode = mandate.ModeKnownCounterparties
	}
	token, err := mandate.Issue(m, replayIssuer, issuerKey)
	if err != nil {
		return nil, fmt.Errorf("agentdojo: mandate of %s: %w", task, err)
	}
	s := &session{gw: gw, token: token, mandateID: m.ID, approver: approver}
	if s.approver == nil {
		s.approver = &FallibleApprover{}
	}
	for _, c := range calls {
		if op, ok := expectedOperation(gw, c.Action(), c.Proposal(), m.ID); ok {
			s.expected = append(s.expected, op)
		}
		s.userProposals = append(s.userProposals, c.Proposal())
	}
	return s, nil
}

// right reports whether op is one of the user's own calls.
func (s *session) right(op intent.Operation) bool {
	for _, e := range s.expected {
		if reflect.DeepEqual(e, op) {
			return true
		}
	}
	return false
}

// decide sends one proposal; on a step-up it asks the approver (twice,
// two people, for four eyes) and resends with the approvals given.
func (s *session) decide(ctx context.Context, proposal []byte) (stepResult, error) {
	d, err := s.gw.Decide(ctx, gateway.Request{Mandate: s.token, Proposal: proposal})
	if err != nil {
		return stepResult{}, err
	}
	var r stepResult
	if d.Verdict == intent.StepUp && d.Operation != nil {
		r.asked = 1
		right := s.right(*d.Operation)
		people := []string{replayApprover}
		if d.Level == intent.LevelFourEyes {
			people = append(people, cosigner)
		}
		var as []approval.Approval
		for _, who := range people {
			if !s.approver.Approve(*d.Operation, right) {
				as = nil
				break
			}
			key := userKey
			if who == cosigner {
				key = cosignerKey
			}
			s.approvals++
			a, err := approval.Sign(approval.Approval{
				ID:        fmt.Sprintf("%s-approval-%d", s.mandateID, s.approvals),
				Operation: d.OperationHash, MandateID: s.mandateID, Approver: who,
				IssuedAt: replayNow, ExpiresAt: replayNow.Add(5 * time.Minute),
			}, key)
			if err != nil {
				return stepResult{}, err
			}
			as = append(as, a)
		}
		if as != nil {
			r.approved = 1
			d, err = s.gw.Decide(ctx, gateway.Request{Mandate: s.token, Proposal: proposal, Approvals: as})
			if err != nil {
				return stepResult{}, err
			}
		}
	}
	r.executed, r.output = d.Executed, d.Output
	if !d.Executed {
		r.code = intent.CodeExecutionFailed
		if d.Refusal != nil {
			r.code, r.message = d.Refusal.Code, d.Refusal.Message
		}
	}
	return r, nil
}

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
