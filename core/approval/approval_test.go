package approval_test

import (
	"crypto/ed25519"
	"errors"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

type seed byte

func (s seed) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(s)
	}
	return len(p), nil
}

func key(b byte) ed25519.PrivateKey {
	_, priv, _ := ed25519.GenerateKey(seed(b))
	return priv
}

var (
	alice, bob, mallory = key(1), key(2), key(3)
	keys                = approval.StaticKeys{"alice": alice.Public().(ed25519.PublicKey), "bob": bob.Public().(ed25519.PublicKey)}
	now                 = time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	op                  = intent.OperationHash{1, 2, 3}
)

func signed(t *testing.T, id, approver string, priv ed25519.PrivateKey, mutate func(*approval.Approval)) approval.Approval {
	t.Helper()
	a := approval.Approval{ID: id, Operation: op, MandateID: "m-1", Approver: approver, IssuedAt: now.Add(-time.Minute), ExpiresAt: now.Add(5 * time.Minute)}
	if mutate != nil {
		mutate(&a)
	}
	s, err := approval.Sign(a, priv)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestEvaluate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		as      func(t *testing.T) []approval.Approval
		want    intent.Level
		wantErr error
	}{
		{"none", func(t *testing.T) []approval.Approval { return nil }, intent.LevelAuto, nil},
		{"one confirms", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", alice, nil)}
		}, intent.LevelConfirm, nil},
		{"two distinct approvers: four eyes", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", alice, nil), signed(t, "b1", "bob", bob, nil)}
		}, intent.LevelFourEyes, nil},
		{"same approver twice never counts twice", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", alice, nil), signed(t, "a2", "alice", alice, nil)}
		}, "", approval.ErrDuplicate},
		{"forged by another key", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", mallory, nil)}
		}, "", approval.ErrBadSignature},
		{"tampered after signing", func(t *testing.T) []approval.Approval {
			a := signed(t, "a1", "alice", alice, nil)
			a.ExpiresAt = a.ExpiresAt.Add(time.Hour)
			return []approval.Approval{a}
		}, "", approval.ErrBadSignature},
		{"another operation", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", alice, func(a *approval.Approval) { a.Operation = intent.OperationHash{9} })}
		}, "", approval.ErrOtherOperation},
		{"another mandate", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", alice, func(a *approval.Approval) { a.MandateID = "m-2" })}
		}, "", approval.ErrOtherMandate},
		{"expired", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", alice, func(a *approval.Approval) { a.ExpiresAt = now })}
		}, "", approval.ErrExpired},
		{"not yet valid", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "a1", "alice", alice, func(a *approval.Approval) { a.IssuedAt = now.Add(time.Second) })}
		}, "", approval.ErrExpired},
		{"unknown approver", func(t *testing.T) []approval.Approval {
			return []approval.Approval{signed(t, "m1", "mallory", mallory, nil)}
		}, "", approval.ErrUnknownApprover},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			g, err := approval.Evaluate(keys, op, "m-1", now, tt.as(t))
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) {
					t.Fatalf("Evaluate() error = %v, want %v", err, tt.wantErr)
				}
				if g.Confirm || g.FourEyes {
					t.Fatal("an error still granted something")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if g.Level() != tt.want {
				t.Fatalf("Level() = %s, want %s", g.Level(), tt.want)
			}
		})
	}
}

func TestSignRefusesIncomplete(t *testing.T) {
	t.Parallel()
	if _, err := approval.Sign(approval.Approval{ID: "x", Operation: op, Approver: "alice", IssuedAt: now, ExpiresAt: now.Add(time.Minute)}, alice); err == nil {
		t.Fatal("Sign without a mandate id succeeded")
	}
	if _, err := approval.Sign(approval.Approval{ID: "x", Operation: op, MandateID: "m", Approver: "alice", IssuedAt: now, ExpiresAt: now}, alice); err == nil {
		t.Fatal("Sign with an empty validity period succeeded")
	}
}
