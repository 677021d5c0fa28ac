package passkey_test

import (
	"encoding/base64"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/approvals/passkey/passkeytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// approved is the receipt of op approved by approver with a.
func approved(at time.Time, op intent.OperationHash, id, approver string, a intent.Assertion) receipt.Receipt {
	return receipt.Receipt{Owner: "emma", Time: at, Action: "ap.pay_bill", Verdict: intent.Allow, Result: receipt.ResultExecuted, Operation: op.String(),
		Approvals: []receipt.Evidence{{ID: id, Approver: approver, Level: "confirm", Channel: receipt.ChannelPasskey, Passkey: a}}}
}

func TestCheck(t *testing.T) {
	t.Parallel()
	auth := passkeytest.New(rp, "cred-lena")
	reg := passkey.RegistrationReceipt(auth.Credential("lena", at))
	good := auth.Assert(passkey.Challenge(op, "a1"))
	later := at.Add(time.Hour)
	if n, ps := passkey.Check([]receipt.Receipt{reg, approved(later, op, "a1", "lena", good)}, nil); n != 1 || len(ps) != 0 {
		t.Fatalf("Check(good chain) = %d, %v; want 1 checked, no problem", n, ps)
	}
	tampered := slices.Clone(good.Signature)
	tampered[len(tampered)-1] ^= 1
	otherOp := auth.Assert(passkey.Challenge(intent.OperationHash{0xee}, "a1"))
	tests := []struct {
		name string
		rs   []receipt.Receipt
		want error
	}{
		{"tampered signature", []receipt.Receipt{reg, approved(later, op, "a1", "lena", intent.Assertion{CredentialID: good.CredentialID, AuthenticatorData: good.AuthenticatorData, ClientDataJSON: good.ClientDataJSON, Signature: tampered})}, passkey.ErrInvalid},
		{"challenge of another operation", []receipt.Receipt{reg, approved(later, op, "a1", "lena", otherOp)}, passkey.ErrChallenge},
		{"another approval ID", []receipt.Receipt{reg, approved(later, op, "a2", "lena", good)}, passkey.ErrChallenge},
		{"no registration", []receipt.Receipt{approved(later, op, "a1", "lena", good)}, passkey.ErrUnregistered},
		{"registered after", []receipt.Receipt{approved(at.Add(-time.Hour), op, "a1", "lena", good), reg}, passkey.ErrUnregistered},
		{"another approver's passkey", []receipt.Receipt{reg, approved(later, op, "a1", "omar", good)}, passkey.ErrUnregistered},
		{"channel without assertion", []receipt.Receipt{reg, approved(later, op, "a1", "lena", intent.Assertion{})}, passkey.ErrNoAssertion},
	}
	for _, tt := range tests {
		n, ps := passkey.Check(tt.rs, nil)
		if n != 1 || len(ps) != 1 || !errors.Is(ps[0].Err, tt.want) {
			t.Errorf("%s: Check() = %d, %v; want 1 checked, one problem %v", tt.name, n, ps, tt.want)
		}
	}
	// A registration outside the file, given as a credentials file.
	creds, err := passkey.ReadCredentials(strings.NewReader(`{"approver":"lena","id":"Y3JlZC1sZW5h","public_key":"` + b64std(auth.PublicKey()) + `","rp":{"rp_id":"approve.example.com","origin":"https://approve.example.com"}}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if n, ps := passkey.Check([]receipt.Receipt{approved(later, op, "a1", "lena", good)}, creds); n != 1 || len(ps) != 0 {
		t.Fatalf("Check(with a credentials file) = %d, %v; want no problem", n, ps)
	}
	if _, err := passkey.ReadCredentials(strings.NewReader("{}\n")); err == nil {
		t.Fatal("ReadCredentials({}) gave no error")
	}
	// The approval of a run is checked against the run's hash.
	run := intent.OperationHash{0x77}
	line := approved(later, op, "a1", "lena", auth.Assert(passkey.Challenge(run, "a1")))
	line.Approvals[0].Run = run.String()
	if n, ps := passkey.Check([]receipt.Receipt{reg, line}, nil); n != 1 || len(ps) != 0 {
		t.Fatalf("Check(run) = %d, %v; want no problem", n, ps)
	}
}

func b64std(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestCheckRevoked: an assertion made with a passkey before its
// revocation receipt (or at its instant) still verifies; one made after
// it is refused, with who revoked it; a passkey registered again after
// its revocation verifies again; a revocation whose facts do not read is
// a problem.
func TestCheckRevoked(t *testing.T) {
	t.Parallel()
	auth := passkeytest.New(rp, "cred-lena")
	reg := passkey.RegistrationReceipt(auth.Credential("lena", at))
	revokedAt := at.Add(2 * time.Hour)
	rev := passkey.RevocationReceipt(passkey.Revocation{Approver: "lena", ID: auth.ID, At: revokedAt, By: "ops-anna", Means: passkey.MeansOperator, Reason: "phone lost"})
	if rev.Action != passkey.ActionRevoke || rev.Facts["passkey.credential"].Str != base64.RawURLEncoding.EncodeToString(auth.ID) ||
		rev.Facts["passkey.revoked_by"].Str != "ops-anna" || rev.Facts["passkey.means"].Str != "operator_cli" || rev.Facts["passkey.reason"].Str != "phone lost" {
		t.Fatalf("revocation receipt %+v", rev)
	}
	before := approved(revokedAt.Add(-time.Minute), op, "a1", "lena", auth.Assert(passkey.Challenge(op, "a1")))
	after := approved(revokedAt.Add(time.Minute), op, "a2", "lena", auth.Assert(passkey.Challenge(op, "a2")))
	n, ps := passkey.Check([]receipt.Receipt{reg, before, rev, after}, nil)
	if n != 2 || len(ps) != 1 || ps[0].Approval != "a2" || !errors.Is(ps[0].Err, passkey.ErrRevoked) || !strings.Contains(ps[0].Error(), "by ops-anna") {
		t.Fatalf("Check(revoked) = %d, %v; want a2 refused as revoked by ops-anna", n, ps)
	}
	// An approval at the revocation's very instant stands.
	same := approved(revokedAt, op, "a3", "lena", auth.Assert(passkey.Challenge(op, "a3")))
	if _, ps := passkey.Check([]receipt.Receipt{reg, rev, same}, nil); len(ps) != 0 {
		t.Fatalf("Check(approval at the revocation's instant) = %v; want no problem", ps)
	}
	// The approval's own time decides, not the receipt's: approved before
	// the revocation, executed after, it stands.
	late := approved(revokedAt.Add(time.Hour), op, "a1", "lena", before.Approvals[0].Passkey)
	late.Approvals[0].IssuedAt = revokedAt.Add(-time.Minute)
	if n, ps := passkey.Check([]receipt.Receipt{reg, rev, late}, nil); n != 1 || len(ps) != 0 {
		t.Fatalf("Check(issued before, executed after) = %d, %v; want no problem", n, ps)
	}
	// A revocation covers a key given in a credentials file too.
	if _, ps := passkey.Check([]receipt.Receipt{rev, after}, []passkey.Credential{auth.Credential("lena", time.Time{})}); len(ps) != 1 || !errors.Is(ps[0].Err, passkey.ErrRevoked) {
		t.Fatalf("Check(file key, revoked) = %v; want revoked", ps)
	}
	// Another approver's revocation of the same ID ends nothing of lena's.
	other := passkey.RevocationReceipt(passkey.Revocation{Approver: "omar", ID: auth.ID, At: revokedAt, By: "omar", Means: passkey.MeansPage, ConfirmedWith: auth.ID})
	if _, ps := passkey.Check([]receipt.Receipt{reg, other, after}, nil); len(ps) != 0 {
		t.Fatalf("Check(omar's revocation) = %v; want no problem", ps)
	}
	again := passkey.RegistrationReceipt(auth.Credential("lena", revokedAt.Add(30*time.Second)))
	if _, ps := passkey.Check([]receipt.Receipt{reg, rev, again, after}, nil); len(ps) != 0 {
		t.Fatalf("Check(registered again) = %v; want no problem", ps)
	}
	broken := rev
	broken.Facts = map[string]intent.Value{"passkey.approver": intent.Str("lena")}
	if _, ps := passkey.Check([]receipt.Receipt{reg, broken, before}, nil); len(ps) != 1 || !strings.Contains(ps[0].Error(), "revocation receipt") {
		t.Fatalf("Check(broken revocation) = %v; want it named", ps)
	}
}
