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
	reg := pack.Registries[banking.RegistryBeneficiaries]
	switch {
	case cfg.noResolution:
		pack.Registries[banking.RegistryBeneficiaries] = resolve.RegistryFunc(
			func(_ context.Context, _ intent.Owner, v string) (resolve.Record, error) {
				return resolve.Record{ID: "unchecked", Value: v}, nil
			})
	case len(cfg.hidden) > 0 || cfg.seen != nil:
		pack.Registries[banking.RegistryBeneficiaries] = resolve.RegistryFunc(
			func(ctx context.Context, o intent.Owner, v string) (resolve.Record, error) {
				if cfg.seen != nil {
					cfg.seen[v] = true
				}
				if cfg.hidden[v] {
					return resolve.Record{}, resolve.ErrNoMatch
				}
				return reg.Lookup(ctx, o, v)
			})
	}
	clock := func() time.Time { return replayNow }
	gw, err := gateway.New(gateway.Config{
		Audience: replayAudience,
		Issuers:  mandate.StaticKeys{replayIssuer: issuerKey.Public().(ed25519.PublicKey)},
		Approvers: approval.StaticKeys{
			replayApprover: userKey.Public().(ed25519.PublicKey),
			cosigner:       cosignerKey.Public().(ed25519.PublicKey),
		},
		Now: clock,
	}, mem.New(clock), pack)
	if err != nil {
		return nil, err
	}
	mode := cfg.mode
	if mode == "" {
		mode = mandate.ModeKnownCounterparties
	}
	m := mandate.Mandate{
		ID: mandateID, Audience: replayAudience, Owner: Owner,
		Scope:     ut.Mandate.Scope,
		Budget:    intent.Money{Currency: "EUR", Amount: ut.Mandate.Budget},
		Claims:    ut.Mandate.Claims,
		Mode:      mode,
		NotBefore: replayNow.Add(-time.Minute), Expiry: replayNow.Add(time.Hour),
	}
	token, err := mandate.Issue(m, replayIssuer, issuerKey)
	if err != nil {
		return nil, fmt.Errorf("agentdojo: mandate of %s: %w", ut.Name(), err)
	}
	s := &session{gw: gw, token: token, mandateID: mandateID, approver: cfg.approver}
	if s.approver == nil {
		s.approver = &FallibleApprover{}
	}
	g := &gatewayAgent{gw: gw, mandateID: mandateID}
	for _, c := range ut.Calls {
		if op, ok := g.operation(c); ok {
			s.expected = append(s.expected, op)
		}
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
