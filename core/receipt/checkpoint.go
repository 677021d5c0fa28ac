package receipt

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"maps"
	"math"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Checkpoint is a signed statement that the head of Owner's receipt chain
// was the receipt Seq with hash Head at Time. A verifier holding the
// signer's public key detects with it a truncated tail (a checkpoint beyond
// the chain's end) and a chain rewritten after an edit (a head that does not
// match).
type Checkpoint struct {
	// Owner is the owner whose chain the checkpoint covers.
	Owner intent.Owner
	// Seq is the Seq of the head receipt; at least 1.
	Seq uint64
	// Head is the Hash of the head receipt.
	Head Hash
	// Time is when the checkpoint was signed, in UTC.
	Time time.Time
	// KeyID names the signer's key.
	KeyID string
	// Sig is the signature of the checkpoint's SigHash by the key KeyID.
	Sig []byte
}

// Canonical returns the canonical encoding (intent.Canonical) of every
// field of c except Sig, under the keys owner, seq, head, time and key, with
// the same rule as Receipt.Canonical: zero fields are left out. It returns
// an error wrapping ErrInvalid if a string is not valid UTF-8 or Seq exceeds
// 2^63-1.
func (c *Checkpoint) Canonical() ([]byte, error) {
	return c.appendCanonical(nil)
}

// The keys of a checkpoint's encoding that a receipt's has not.
var nHead, nKey = intent.NewName("head"), intent.NewName("key")

// appendCanonical appends c.Canonical() to dst, with the string members
// extra (sorted by key) added to the object.
func (c *Checkpoint) appendCanonical(dst []byte, extra ...member) ([]byte, error) {
	if c.Seq > math.MaxInt64 {
		return nil, fmt.Errorf("%w: seq %d exceeds 2^63-1", ErrInvalid, c.Seq)
	}
	e := intent.NewEncoder(dst)
	o := object{e: e, extra: extra}
	// The members in ascending key order, as the encoder requires.
	e.BeginObject()
	o.hash(nHead, c.Head)
	o.string(nKey, c.KeyID)
	o.string(nOwner, string(c.Owner))
	o.seq(nSeq, c.Seq)
	o.time(nTime, c.Time)
	o.end()
	b, err := e.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return b, nil
}

// SigHash returns SHA-256(0x01 || c.Canonical()): the hash that is signed,
// which leaves out the signature.
func (c *Checkpoint) SigHash() (Hash, error) {
	b, err := c.appendCanonical([]byte{checkpointDomain})
	if err != nil {
		return Hash{}, err
	}
	return sha256.Sum256(b), nil
}

// Verify checks c.Sig with v. It returns v's error, or an error wrapping
// ErrInvalid if c cannot be encoded.
func (c *Checkpoint) Verify(v Verifier) error {
	h, err := c.SigHash()
	if err != nil {
		return err
	}
	return v.Verify(c.KeyID, h[:], c.Sig)
}

// SignCheckpoint returns a checkpoint of head's owner at head, made at now
// and signed by s. It returns an error wrapping ErrInvalid if head.Seq is 0
// or head.Hash does not match head's content, and s's error if signing
// fails.
func SignCheckpoint(s Signer, head Receipt, now time.Time) (Checkpoint, error) {
	if head.Seq == 0 {
		return Checkpoint{}, fmt.Errorf("%w: head receipt has no seq", ErrInvalid)
	}
	h, err := head.ComputeHash()
	if err != nil {
		return Checkpoint{}, err
	}
	if h != head.Hash {
		return Checkpoint{}, fmt.Errorf("%w: head receipt's hash does not match its content", ErrInvalid)
	}
	c := Checkpoint{Owner: head.Owner, Seq: head.Seq, Head: h, Time: now.UTC(), KeyID: s.KeyID()}
	sh, err := c.SigHash()
	if err != nil {
		return Checkpoint{}, err
	}
	if c.Sig, err = s.Sign(sh[:]); err != nil {
		return Checkpoint{}, fmt.Errorf("receipt: signing checkpoint: %w", err)
	}
	return c, nil
}

// Signer signs checkpoints. Implementations may keep the private key in a
// KMS; they must be safe for concurrent use.
type Signer interface {
	// KeyID names the key; it is recorded in the checkpoint.
	KeyID() string
	// Sign returns the signature of msg.
	Sign(msg []byte) ([]byte, error)
}

// Verifier checks checkpoint signatures with public keys alone. It must be
// safe for concurrent use.
type Verifier interface {
	// Verify returns nil if sig is a valid signature of msg by the key
	// keyID, an error wrapping ErrUnknownKey if it does not know the key,
	// and an error wrapping ErrBadSignature otherwise.
	Verify(keyID string, msg, sig []byte) error
}

// Errors returned by Verifier implementations.
var (
	ErrUnknownKey   = errors.New("receipt: unknown key")
	ErrBadSignature = errors.New("receipt: bad signature")
)

// Ed25519Signer is a Signer with an Ed25519 private key in memory.
type Ed25519Signer struct {
	keyID string
	priv  ed25519.PrivateKey
}

var _ Signer = (*Ed25519Signer)(nil)

// NewEd25519Signer returns a Signer that signs with priv under the name
// keyID. It panics if priv is not ed25519.PrivateKeySize bytes long.
func NewEd25519Signer(keyID string, priv ed25519.PrivateKey) *Ed25519Signer {
	if len(priv) != ed25519.PrivateKeySize {
		panic("receipt: bad Ed25519 private key length")
	}
	return &Ed25519Signer{keyID: keyID, priv: priv}
}

// KeyID returns the key's name.
func (s *Ed25519Signer) KeyID() string { return s.keyID }

// Sign returns the Ed25519 signature of msg; it never fails.
func (s *Ed25519Signer) Sign(msg []byte) ([]byte, error) {
	return ed25519.Sign(s.priv, msg), nil
}

// Ed25519Verifier is a Verifier over a fixed set of Ed25519 public keys.
type Ed25519Verifier struct {
	keys map[string]ed25519.PublicKey
}

var _ Verifier = (*Ed25519Verifier)(nil)

// NewEd25519Verifier returns a Verifier that knows keys, by key id. It
// copies the map.
func NewEd25519Verifier(keys map[string]ed25519.PublicKey) *Ed25519Verifier {
	return &Ed25519Verifier{keys: maps.Clone(keys)}
}

// Verify checks an Ed25519 signature; see Verifier.
func (v *Ed25519Verifier) Verify(keyID string, msg, sig []byte) error {
	pub, ok := v.keys[keyID]
	if !ok {
		return fmt.Errorf("%w %q", ErrUnknownKey, keyID)
	}
	if len(pub) != ed25519.PublicKeySize || !ed25519.Verify(pub, msg, sig) {
		return fmt.Errorf("%w by key %q", ErrBadSignature, keyID)
	}
	return nil
}
