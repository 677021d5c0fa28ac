// Package passkey checks the WebAuthn assertions (passkeys) an approver
// gives on the approval page: the challenge is derived from the exact
// operation hash (or run hash) and the approval's ID, so that a verified
// assertion is evidence that a registered authenticator, its user
// verified, approved that operation. The approval page uses it before
// signing an approval, and `intentplane receipts verify` to re-check every
// assertion a receipt chain holds. Parsing and signature checks are the
// go-webauthn library's; the core only carries the assertion's bytes.
package passkey

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/go-webauthn/webauthn/protocol"

	"github.com/intentplane/intentplane/core/intent"
)

// challengeDomain separates the challenges of approvals from any other
// use of the operation hash.
const challengeDomain = "intentplane-passkey-approval-v1\x00"

// Challenge returns the WebAuthn challenge of the approval approvalID of
// the operation (or run) whose hash is op: SHA-256(domain || op ||
// approvalID), 32 bytes, where domain is
// "intentplane-passkey-approval-v1" followed by a zero byte.
func Challenge(op intent.OperationHash, approvalID string) []byte {
	h := sha256.New()
	h.Write([]byte(challengeDomain))
	h.Write(op[:])
	h.Write([]byte(approvalID))
	return h.Sum(nil)
}

// RP is the relying party an assertion is for: the approval page.
type RP struct {
	// ID is the RP ID: the host of the page's public URL, without port.
	ID string `json:"rp_id"`
	// Origin is the page's origin, "https://approve.example.com" (with a
	// port when not the scheme's default).
	Origin string `json:"origin"`
}

// RPOf returns the relying party of the page served at baseURL (the
// approval page's public URL). It returns an error for a URL that is not
// http or https or has no host.
func RPOf(baseURL string) (RP, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "" {
		return RP{}, fmt.Errorf("passkey: %q is not an http(s) URL with a host", baseURL)
	}
	return RP{ID: u.Hostname(), Origin: u.Scheme + "://" + u.Host}, nil
}

// Credential is an approver's registered passkey.
type Credential struct {
	// Approver is the approver who registered it.
	Approver string `json:"approver"`
	// ID is the credential's raw ID.
	ID []byte `json:"id"`
	// PublicKey is the credential's public key as the authenticator gave
	// it at registration (a COSE key).
	PublicKey []byte `json:"public_key"`
	// RP is the relying party it was registered with.
	RP RP `json:"rp"`
	// Registered is when it was registered, UTC.
	Registered time.Time `json:"registered"`
	// Name is the approver's label for it ("work laptop"), at most
	// MaxNameLen bytes; may be empty.
	Name string `json:"name,omitempty"`
	// LastUsed is when the page last accepted an approval made with it,
	// UTC; zero if never. The page keeps it, best effort; the receipts
	// hold every approval made with it.
	LastUsed time.Time `json:"last_used,omitzero"`
}

// MaxNameLen is the longest Credential.Name, in bytes.
const MaxNameLen = 60

// Errors of Verify, wrapped with detail.
var (
	// ErrMalformed: the assertion's bytes do not parse.
	ErrMalformed = errors.New("passkey: malformed assertion")
	// ErrOtherCredential: the assertion is by another credential than the
	// one given.
	ErrOtherCredential = errors.New("passkey: assertion by another credential")
	// ErrChallenge: the assertion is over another challenge: another
	// operation, run or approval.
	ErrChallenge = errors.New("passkey: assertion for another operation or approval")
	// ErrNotVerified: the authenticator did not verify its user (the UV
	// flag is not set).
	ErrNotVerified = errors.New("passkey: user not verified by the authenticator")
	// ErrInvalid: the assertion fails the WebAuthn checks (origin, RP ID,
	// type, signature).
	ErrInvalid = errors.New("passkey: assertion does not verify")
)

// Verify checks that a is cred's assertion, with its user verified, of
// the approval approvalID of the operation (or run) op, for cred's
// relying party. It returns nil, or an error wrapping ErrMalformed,
// ErrOtherCredential, ErrChallenge, ErrNotVerified or ErrInvalid.
func Verify(cred Credential, op intent.OperationHash, approvalID string, a intent.Assertion) error {
	return verify(cred, Challenge(op, approvalID), a)
}

// The domains of the challenges by which an approver confirms a change
// of their passkeys: separate from approvals' and from each other.
const (
	removalDomain  = "intentplane-passkey-removal-v1\x00"
	additionDomain = "intentplane-passkey-addition-v1\x00"
)

// RemovalChallenge returns the WebAuthn challenge by which an approver
// confirms the removal of their passkey removed (its raw ID) on the page:
// SHA-256(domain || len(removed) as 2 bytes big-endian || removed ||
// nonce), 32 bytes, where domain is "intentplane-passkey-removal-v1"
// followed by a zero byte and nonce is the page's random draw. It can
// never equal an approval's challenge.
func RemovalChallenge(removed []byte, nonce string) []byte {
	return confirmChallenge(removalDomain, removed, nonce)
}

// AdditionChallenge returns the WebAuthn challenge by which an approver
// who has a passkey confirms, with it, the registration of another:
// as RemovalChallenge with domain "intentplane-passkey-addition-v1" and
// the approver's name in place of the passkey's ID.
func AdditionChallenge(approver, nonce string) []byte {
	return confirmChallenge(additionDomain, []byte(approver), nonce)
}

func confirmChallenge(domain string, subject []byte, nonce string) []byte {
	h := sha256.New()
	h.Write([]byte(domain))
	h.Write([]byte{byte(len(subject) >> 8), byte(len(subject))})
	h.Write(subject)
	h.Write([]byte(nonce))
	return h.Sum(nil)
}

// VerifyChallenge checks that a is cred's assertion, with its user
// verified, of challenge (RemovalChallenge, AdditionChallenge), for
// cred's relying party. Its errors are Verify's.
func VerifyChallenge(cred Credential, challenge []byte, a intent.Assertion) error {
	return verify(cred, challenge, a)
}

func verify(cred Credential, challenge []byte, a intent.Assertion) error {
	if !bytes.Equal(a.CredentialID, cred.ID) {
		return ErrOtherCredential
	}
	parsed, err := parse(a)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrMalformed, err)
	}
	want := base64.RawURLEncoding.EncodeToString(challenge)
	if parsed.Response.CollectedClientData.Challenge != want {
		return ErrChallenge
	}
	if !parsed.Response.AuthenticatorData.Flags.HasUserVerified() {
		return ErrNotVerified
	}
	if err := parsed.Verify(want, cred.RP.ID, "", []string{cred.RP.Origin}, nil, nil, protocol.TopOriginExplicitVerificationMode,
		false, true, true, cred.PublicKey, protocol.SignaturePolicy{}); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalid, detail(err))
	}
	return nil
}

// detail returns the library's error with its details, which its Error
// leaves out.
func detail(err error) error {
	var pe *protocol.Error
	if errors.As(err, &pe) && pe.Details != "" {
		return fmt.Errorf("%s: %s", pe.Type, pe.Details)
	}
	return err
}

// parse reads a as the library reads a browser's response.
func parse(a intent.Assertion) (*protocol.ParsedCredentialAssertionData, error) {
	id := base64.RawURLEncoding.EncodeToString(a.CredentialID)
	body, err := json.Marshal(map[string]any{
		"id": id, "rawId": id, "type": "public-key",
		"response": map[string]string{
			"authenticatorData": base64.RawURLEncoding.EncodeToString(a.AuthenticatorData),
			"clientDataJSON":    base64.RawURLEncoding.EncodeToString(a.ClientDataJSON),
			"signature":         base64.RawURLEncoding.EncodeToString(a.Signature),
		},
	})
	if err != nil {
		return nil, err
	}
	p, err := protocol.ParseCredentialRequestResponseBytes(body)
	if err != nil {
		return nil, detail(err)
	}
	return p, nil
}

// Of returns the assertion a browser's response (the JSON of a
// PublicKeyCredential from navigator.credentials.get, as the library
// parses it) holds, as the receipt keeps it.
func Of(response []byte) (intent.Assertion, error) {
	p, err := protocol.ParseCredentialRequestResponseBytes(response)
	if err != nil {
		return intent.Assertion{}, fmt.Errorf("%w: %w", ErrMalformed, detail(err))
	}
	return intent.Assertion{
		CredentialID: p.RawID, AuthenticatorData: p.Raw.AssertionResponse.AuthenticatorData,
		ClientDataJSON: p.Raw.AssertionResponse.ClientDataJSON, Signature: p.Raw.AssertionResponse.Signature,
	}, nil
}
