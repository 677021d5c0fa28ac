// Package passkeytest is a software authenticator for tests: it registers
// a P-256 passkey and answers WebAuthn challenges as a browser with a
// platform authenticator would, without a browser. Its CBOR and COSE
// encodings are the go-webauthn library's.
package passkeytest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"time"

	"github.com/go-webauthn/webauthn/protocol/webauthncbor"
	"github.com/go-webauthn/webauthn/protocol/webauthncose"

	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/core/intent"
)

// Authenticator is one passkey of one relying party.
type Authenticator struct {
	// RP is the relying party it answers for: its RP ID is hashed into
	// the authenticator data and its origin written in the client data.
	RP passkey.RP
	// ID is the credential's raw ID.
	ID []byte
	// NoUV, when set, answers without verifying the user (UV flag off).
	NoUV  bool
	key   *ecdsa.PrivateKey
	count uint32
}

// New returns an authenticator for rp with a fresh key and credential ID
// id. It panics only if the system's randomness fails.
func New(rp passkey.RP, id string) *Authenticator {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return &Authenticator{RP: rp, ID: []byte(id), key: k}
}

// PublicKey returns the credential's public key as a COSE key (CBOR).
func (a *Authenticator) PublicKey() []byte {
	b, err := webauthncbor.Marshal(webauthncose.EC2PublicKeyData{
		PublicKeyData: webauthncose.PublicKeyData{KeyType: int64(webauthncose.EllipticKey), Algorithm: int64(webauthncose.AlgES256)},
		Curve:         int64(webauthncose.P256),
		XCoord:        a.key.X.FillBytes(make([]byte, 32)),
		YCoord:        a.key.Y.FillBytes(make([]byte, 32)),
	})
	if err != nil {
		panic(err)
	}
	return b
}

// Credential returns the credential as the page keeps it once registered
// by approver at at.
func (a *Authenticator) Credential(approver string, at time.Time) passkey.Credential {
	return passkey.Credential{Approver: approver, ID: a.ID, PublicKey: a.PublicKey(), RP: a.RP, Registered: at}
}

// authData returns the authenticator data: RP ID hash, flags (user
// present; verified unless NoUV; attested when attested holds credential
// data) and the signature counter, then attested.
func (a *Authenticator) authData(attested []byte) []byte {
	h := sha256.Sum256([]byte(a.RP.ID))
	flags := byte(0x01)
	if !a.NoUV {
		flags |= 0x04
	}
	if attested != nil {
		flags |= 0x40
	}
	a.count++
	out := append(h[:], flags)
	out = binary.BigEndian.AppendUint32(out, a.count)
	return append(out, attested...)
}

func (a *Authenticator) clientData(typ string, challenge []byte) []byte {
	b, err := json.Marshal(map[string]any{"type": typ, "challenge": base64.RawURLEncoding.EncodeToString(challenge), "origin": a.RP.Origin, "crossOrigin": false})
	if err != nil {
		panic(err)
	}
	return b
}

// Assert answers challenge: the assertion a browser would return.
func (a *Authenticator) Assert(challenge []byte) intent.Assertion {
	ad := a.authData(nil)
	cd := a.clientData("webauthn.get", challenge)
	h := sha256.Sum256(cd)
	d := sha256.Sum256(append(append([]byte{}, ad...), h[:]...))
	sig, err := ecdsa.SignASN1(rand.Reader, a.key, d[:])
	if err != nil {
		panic(err)
	}
	return intent.Assertion{CredentialID: a.ID, AuthenticatorData: ad, ClientDataJSON: cd, Signature: sig}
}

// AssertionJSON returns as as a browser's page script posts it (the JSON
// of the PublicKeyCredential, bytes in base64url).
func AssertionJSON(as intent.Assertion) []byte {
	b64 := base64.RawURLEncoding.EncodeToString
	b, err := json.Marshal(map[string]any{
		"id": b64(as.CredentialID), "rawId": b64(as.CredentialID), "type": "public-key",
		"response":               map[string]string{"authenticatorData": b64(as.AuthenticatorData), "clientDataJSON": b64(as.ClientDataJSON), "signature": b64(as.Signature)},
		"clientExtensionResults": map[string]any{},
	})
	if err != nil {
		panic(err)
	}
	return b
}

// Register answers a registration's challenge: the JSON a page script
// posts of navigator.credentials.create's answer, with attestation
// "none".
func (a *Authenticator) Register(challenge []byte) []byte {
	attested := make([]byte, 16) // AAGUID: none
	attested = binary.BigEndian.AppendUint16(attested, uint16(len(a.ID)))
	attested = append(append(attested, a.ID...), a.PublicKey()...)
	obj, err := webauthncbor.Marshal(map[string]any{"fmt": "none", "attStmt": map[string]any{}, "authData": a.authData(attested)})
	if err != nil {
		panic(err)
	}
	b64 := base64.RawURLEncoding.EncodeToString
	b, err := json.Marshal(map[string]any{
		"id": b64(a.ID), "rawId": b64(a.ID), "type": "public-key",
		"response":               map[string]string{"attestationObject": b64(obj), "clientDataJSON": b64(a.clientData("webauthn.create", challenge))},
		"clientExtensionResults": map[string]any{},
	})
	if err != nil {
		panic(err)
	}
	return b
}
