package approval

import (
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Approval is one person's approval of one operation.
type Approval struct {
	// ID is random (128 bits, hex); an approval is consumed by its ID.
	ID string
	// Operation is the hash of the exact resolved operation approved.
	Operation intent.OperationHash
	// MandateID is the mandate the operation runs under.
	MandateID string
	// Approver is who approved, as named in the approver keys.
	Approver string
	// IssuedAt and ExpiresAt bound its validity, UTC.
	IssuedAt  time.Time
	ExpiresAt time.Time
	// Sig is the approver's Ed25519 signature over SignedBytes.
	Sig []byte
	// Lines, for the approval of a run (a payment run), are the operation
	// hashes of its lines, sorted (SortedLines); Operation is then
	// RunHash(MandateID, Lines), so the signature covers exactly these
	// operations, each executing at most once (the gateway consumes the
	// approval once per line). Nil for the approval of one operation. Not
	// signed itself: the run's hash is.
	Lines []intent.OperationHash `json:",omitempty"`
	// Channel names how the person confirmed (receipt.ChannelPage,
	// ChannelWebhook, ChannelElicitation or ChannelPasskey); empty when the
	// front door did not say (approvals signed before channels existed).
	// It is signed, so that a front door holding no approver's key cannot
	// relabel a confirmation given in the MCP client as one given on the
	// page.
	Channel string `json:",omitempty"`
	// Passkey is the WebAuthn assertion the page verified before signing
	// (Channel is ChannelPasskey); zero otherwise. Its SHA-256 is signed.
	Passkey intent.Assertion `json:",omitzero"`
}

const signContext = "intentplane-approval-v1\x00"

// SignedBytes returns what the approver signs: a context string and the
// canonical encoding of every field but Sig and Lines (a run's hash,
// Operation, covers its lines). The channel and the SHA-256 of the
// passkey assertion are encoded only when set, so that an approval
// without them is signed over the bytes it always was.
func (a Approval) SignedBytes() ([]byte, error) {
	m := map[string]any{
		"id":        a.ID,
		"operation": a.Operation.String(),
		"mandate":   a.MandateID,
		"approver":  a.Approver,
		"issued":    a.IssuedAt,
		"expires":   a.ExpiresAt,
	}
	if a.Channel != "" {
		m["channel"] = a.Channel
	}
	if !a.Passkey.IsZero() {
		m["passkey"] = assertionHash(a.Passkey)
	}
	b, err := intent.Canonical(m)
	if err != nil {
		return nil, err
	}
	return append([]byte(signContext), b...), nil
}

// assertionHash returns, in hex, the SHA-256 of a's four byte strings,
// each preceded by its length (8 bytes, big endian), so that bytes cannot
// move from one field to the next.
func assertionHash(a intent.Assertion) string {
	h := sha256.New()
	for _, b := range [][]byte{a.CredentialID, a.AuthenticatorData, a.ClientDataJSON, a.Signature} {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(b)))
		h.Write(n[:])
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// NewID returns a random approval id from r (nil means crypto/rand).
func NewID(r io.Reader) (string, error) {
	if r == nil {
		r = rand.Reader
	}
	var b [16]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return "", err
	}
	return hex.EncodeToString(b[:]), nil
}

// Sign fills a.Sig with priv's signature. a.ID, Operation, MandateID,
// Approver and an ExpiresAt after IssuedAt must be set.
func Sign(a Approval, priv ed25519.PrivateKey) (Approval, error) {
	if a.ID == "" || a.Operation.IsZero() || a.MandateID == "" || a.Approver == "" || !a.ExpiresAt.After(a.IssuedAt) {
		return a, errors.New("approval: id, operation, mandate, approver and a validity period are required")
	}
	if len(priv) != ed25519.PrivateKeySize {
		return a, errors.New("approval: invalid private key")
	}
	a.IssuedAt, a.ExpiresAt = a.IssuedAt.UTC(), a.ExpiresAt.UTC()
	msg, err := a.SignedBytes()
	if err != nil {
		return a, err
	}
	a.Sig = ed25519.Sign(priv, msg)
	return a, nil
}

// Keys gives an approver's public key.
type Keys interface {
	ApproverKey(approver string) (ed25519.PublicKey, bool)
}

// StaticKeys is a fixed map of approver name to public key.
type StaticKeys map[string]ed25519.PublicKey

// ApproverKey returns the approver's key.
func (k StaticKeys) ApproverKey(approver string) (ed25519.PublicKey, bool) {
	pk, ok := k[approver]
	return pk, ok && len(pk) == ed25519.PublicKeySize
}

// Errors of Evaluate, wrapped with the offending approval's id.
var (
	ErrUnknownApprover = errors.New("approval: unknown approver")
	ErrBadSignature    = errors.New("approval: signature does not verify")
	ErrOtherOperation  = errors.New("approval: approves another operation")
	ErrOtherMandate    = errors.New("approval: bound to another mandate")
	ErrExpired         = errors.New("approval: expired or not yet valid")
	ErrDuplicate       = errors.New("approval: same approval or approver presented twice")
)

// Grant is what a set of valid approvals allows.
type Grant struct {
	Confirm  bool // at least one valid approval
	FourEyes bool // valid approvals from at least two distinct approvers
	// Approvals are the valid approvals, sorted by approver.
	Approvals []Approval
}

// Level returns the highest level granted.
func (g Grant) Level() intent.Level {
	switch {
	case g.FourEyes:
		return intent.LevelFourEyes
	case g.Confirm:
		return intent.LevelConfirm
	}
	return intent.LevelAuto
}

// Evaluate checks every approval against the operation hash (a run's
// approval, against the run's lines: op must be one of them), mandate and
// time now, and returns what they grant together. Any approval that is
// forged, for another operation or mandate, expired, or repeated (same id
// or same approver twice) makes Evaluate return an error: presenting a bad
// approval refuses the whole request. Evaluate does not consume approvals;
// the caller consumes each ID exactly once before executing.
func Evaluate(keys Keys, op intent.OperationHash, mandateID string, now time.Time, as []Approval) (Grant, error) {
	var g Grant
	ids := map[string]bool{}
	approvers := map[string]bool{}
	for _, a := range as {
		if ids[a.ID] || approvers[a.Approver] {
			return Grant{}, fmt.Errorf("%w (%s)", ErrDuplicate, a.ID)
		}
		ids[a.ID], approvers[a.Approver] = true, true
		pk, ok := keys.ApproverKey(a.Approver)
		if !ok {
			return Grant{}, fmt.Errorf("%w %q", ErrUnknownApprover, a.Approver)
		}
		msg, err := a.SignedBytes()
		if err != nil || !ed25519.Verify(pk, msg, a.Sig) {
			return Grant{}, fmt.Errorf("%w (%s)", ErrBadSignature, a.ID)
		}
		if !a.covers(op) {
			return Grant{}, fmt.Errorf("%w (%s)", ErrOtherOperation, a.ID)
		}
		if a.MandateID != mandateID {
			return Grant{}, fmt.Errorf("%w (%s)", ErrOtherMandate, a.ID)
		}
		if now.Before(a.IssuedAt) || !now.Before(a.ExpiresAt) {
			return Grant{}, fmt.Errorf("%w (%s)", ErrExpired, a.ID)
		}
		g.Approvals = append(g.Approvals, a)
	}
	sort.Slice(g.Approvals, func(i, j int) bool { return g.Approvals[i].Approver < g.Approvals[j].Approver })
	g.Confirm = len(g.Approvals) >= 1
	g.FourEyes = len(approvers) >= 2
	return g, nil
}
