package approval_test

import (
	"errors"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// TestSignedBytesFrozen: an approval without a channel is signed over the
// bytes it was before channels existed, so that approvals signed then (and
// held by a waiting front door) still verify; the channel and the passkey
// add members only when set.
func TestSignedBytesFrozen(t *testing.T) {
	t.Parallel()
	a := approval.Approval{ID: "a1", Operation: op, MandateID: "m-1", Approver: "alice",
		IssuedAt: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC), ExpiresAt: time.Date(2026, 11, 30, 12, 5, 0, 0, time.UTC)}
	const old = "intentplane-approval-v1\x00" + `{"approver":"alice","expires":"2026-11-30T12:05:00.000000000Z","id":"a1","issued":"2026-11-30T12:00:00.000000000Z","mandate":"m-1","operation":"0102030000000000000000000000000000000000000000000000000000000000"}`
	if b, err := a.SignedBytes(); err != nil || string(b) != old {
		t.Fatalf("SignedBytes() = %q, %v; want the bytes of before channels, %q", b, err, old)
	}
	a.Channel = "passkey"
	a.Passkey = intent.Assertion{CredentialID: []byte{1}}
	const now = "intentplane-approval-v1\x00" + `{"approver":"alice","channel":"passkey","expires":"2026-11-30T12:05:00.000000000Z","id":"a1","issued":"2026-11-30T12:00:00.000000000Z","mandate":"m-1","operation":"0102030000000000000000000000000000000000000000000000000000000000","passkey":"711bc54c61f3855ee5ea5453d48083e8d37d6547d6dd35309a09dd616790f40f"}`
	if b, err := a.SignedBytes(); err != nil || string(b) != now {
		t.Fatalf("SignedBytes() with a channel = %q, %v; want %q", b, err, now)
	}
}

// TestChannelSigned: the channel and the passkey assertion are under the
// approver's signature. A front door that relabels a confirmation given in
// the MCP client as one given on the page, drops the label, or swaps the
// assertion presents an approval that does not verify.
func TestChannelSigned(t *testing.T) {
	t.Parallel()
	pk := intent.Assertion{CredentialID: []byte{1}, AuthenticatorData: []byte{2}, ClientDataJSON: []byte("{}"), Signature: []byte{3}}
	el := signed(t, "a1", "alice", alice, func(a *approval.Approval) { a.Channel = "elicitation" })
	if _, err := approval.Evaluate(keys, op, "m-1", now, []approval.Approval{el}); err != nil {
		t.Fatalf("Evaluate(signed channel) error = %v", err)
	}
	withKey := signed(t, "a2", "alice", alice, func(a *approval.Approval) { a.Channel, a.Passkey = "passkey", pk })
	tests := []struct {
		name string
		a    approval.Approval
		edit func(*approval.Approval)
	}{
		{"relabelled as page", el, func(a *approval.Approval) { a.Channel = "page" }},
		{"label dropped", el, func(a *approval.Approval) { a.Channel = "" }},
		{"assertion swapped", withKey, func(a *approval.Approval) { a.Passkey.Signature = []byte{4} }},
		{"assertion dropped", withKey, func(a *approval.Approval) { a.Passkey = intent.Assertion{} }},
		{"bytes moved between fields", withKey, func(a *approval.Approval) {
			a.Passkey.CredentialID, a.Passkey.AuthenticatorData = []byte{1, 2}, nil
		}},
	}
	for _, tt := range tests {
		a := tt.a
		a.Passkey = intent.Assertion{CredentialID: a.Passkey.CredentialID, AuthenticatorData: a.Passkey.AuthenticatorData, ClientDataJSON: a.Passkey.ClientDataJSON, Signature: a.Passkey.Signature}
		tt.edit(&a)
		if _, err := approval.Evaluate(keys, op, "m-1", now, []approval.Approval{a}); !errors.Is(err, approval.ErrBadSignature) {
			t.Errorf("%s: Evaluate() error = %v, want ErrBadSignature", tt.name, err)
		}
	}
}
