package passkey_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/approvals/passkey/passkeytest"
	"github.com/intentplane/intentplane/core/intent"
)

var (
	rp = passkey.RP{ID: "approve.example.com", Origin: "https://approve.example.com"}
	op = intent.OperationHash{0x89, 0xda, 0x66}
	at = time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
)

func TestChallenge(t *testing.T) {
	t.Parallel()
	c := passkey.Challenge(op, "a1")
	if len(c) != 32 {
		t.Fatalf("Challenge() is %d bytes, want 32", len(c))
	}
	for _, other := range [][]byte{passkey.Challenge(intent.OperationHash{0x89, 0xda, 0x67}, "a1"), passkey.Challenge(op, "a2")} {
		if slices.Equal(c, other) {
			t.Fatal("Challenge() does not depend on the operation and the approval ID")
		}
	}
}

func TestRPOf(t *testing.T) {
	t.Parallel()
	got, err := passkey.RPOf("https://approve.example.com:8443")
	if err != nil || got != (passkey.RP{ID: "approve.example.com", Origin: "https://approve.example.com:8443"}) {
		t.Fatalf("RPOf() = %+v, %v", got, err)
	}
	for _, bad := range []string{"", "ftp://x", "approve.example.com", "https://"} {
		if _, err := passkey.RPOf(bad); err == nil {
			t.Errorf("RPOf(%q) gave no error", bad)
		}
	}
}

// TestVerify: an assertion verifies only for its operation and approval,
// under its credential and relying party, with the user verified and
// every byte as signed.
func TestVerify(t *testing.T) {
	t.Parallel()
	auth := passkeytest.New(rp, "cred-lena")
	cred := auth.Credential("lena", at)
	good := auth.Assert(passkey.Challenge(op, "a1"))
	if err := passkey.Verify(cred, op, "a1", good); err != nil {
		t.Fatalf("Verify(good) error = %v", err)
	}
	noUV := passkeytest.New(rp, "cred-lena")
	noUV.NoUV = true
	otherRP := passkeytest.New(passkey.RP{ID: "evil.example", Origin: "https://evil.example"}, "cred-lena")
	other := passkeytest.New(rp, "cred-lena") // same ID, another key
	flip := func(b []byte, i int) []byte { b = slices.Clone(b); b[i%len(b)] ^= 1; return b }
	tests := []struct {
		name string
		cred passkey.Credential
		op   intent.OperationHash
		id   string
		a    intent.Assertion
		want error
	}{
		{"another operation", cred, intent.OperationHash{1}, "a1", good, passkey.ErrChallenge},
		{"another approval", cred, op, "a2", good, passkey.ErrChallenge},
		{"user not verified", noUV.Credential("lena", at), op, "a1", noUV.Assert(passkey.Challenge(op, "a1")), passkey.ErrNotVerified},
		{"another relying party", onRP(otherRP.Credential("lena", at)), op, "a1", otherRP.Assert(passkey.Challenge(op, "a1")), passkey.ErrInvalid},
		{"another key", other.Credential("lena", at), op, "a1", good, passkey.ErrInvalid},
		{"another credential", passkeytest.New(rp, "cred-omar").Credential("omar", at), op, "a1", good, passkey.ErrOtherCredential},
		{"signature tampered", cred, op, "a1", intent.Assertion{CredentialID: good.CredentialID, AuthenticatorData: good.AuthenticatorData, ClientDataJSON: good.ClientDataJSON, Signature: flip(good.Signature, 40)}, passkey.ErrInvalid},
		{"counter tampered", cred, op, "a1", intent.Assertion{CredentialID: good.CredentialID, AuthenticatorData: flip(good.AuthenticatorData, 36), ClientDataJSON: good.ClientDataJSON, Signature: good.Signature}, passkey.ErrInvalid},
		{"garbage", cred, op, "a1", intent.Assertion{CredentialID: good.CredentialID, AuthenticatorData: []byte{1}, ClientDataJSON: []byte("{"), Signature: []byte{2}}, passkey.ErrMalformed},
	}
	for _, tt := range tests {
		if err := passkey.Verify(tt.cred, tt.op, tt.id, tt.a); !errors.Is(err, tt.want) {
			t.Errorf("%s: Verify() error = %v, want %v", tt.name, err, tt.want)
		}
	}
}

// onRP returns c registered with the page's relying party.
func onRP(c passkey.Credential) passkey.Credential {
	c.RP = rp
	return c
}

// TestOf reads a browser's answer into the assertion the receipt keeps.
func TestOf(t *testing.T) {
	t.Parallel()
	auth := passkeytest.New(rp, "cred-lena")
	a := auth.Assert(passkey.Challenge(op, "a1"))
	got, err := passkey.Of(passkeytest.AssertionJSON(a))
	if err != nil || !got.Equal(a) {
		t.Fatalf("Of() = %+v, %v; want the assertion", got, err)
	}
	if _, err := passkey.Of([]byte(`{"id":"x"}`)); !errors.Is(err, passkey.ErrMalformed) {
		t.Fatalf("Of(malformed) error = %v, want ErrMalformed", err)
	}
}

// FuzzVerify: any bytes in a receipt's assertion are refused with one of
// Verify's errors, never a panic, unless they are the genuine assertion.
func FuzzVerify(f *testing.F) {
	auth := passkeytest.New(rp, "cred-lena")
	cred := auth.Credential("lena", at)
	good := auth.Assert(passkey.Challenge(op, "a1"))
	f.Add(good.AuthenticatorData, good.ClientDataJSON, good.Signature)
	f.Add([]byte{}, []byte(`{"type":"webauthn.get"}`), []byte{0x30})
	f.Fuzz(func(t *testing.T, ad, cd, sig []byte) {
		err := passkey.Verify(cred, op, "a1", intent.Assertion{CredentialID: cred.ID, AuthenticatorData: ad, ClientDataJSON: cd, Signature: sig})
		genuine := string(ad) == string(good.AuthenticatorData) && string(cd) == string(good.ClientDataJSON) && string(sig) == string(good.Signature)
		if err == nil && !genuine {
			t.Fatalf("Verify accepted forged bytes %x %q %x", ad, cd, sig)
		}
		if err != nil && !errors.Is(err, passkey.ErrMalformed) && !errors.Is(err, passkey.ErrChallenge) && !errors.Is(err, passkey.ErrNotVerified) && !errors.Is(err, passkey.ErrInvalid) {
			t.Fatalf("Verify error %v is none of its sentinels", err)
		}
	})
}
