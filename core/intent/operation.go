package intent

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
)

// Operation is what executes: an action with its resolved, trusted
// arguments, under one mandate, for one owner. It is built by the gateway
// from the mandate and the trusted sources, never from the agent's spelling.
type Operation struct {
	Action    Action
	Args      Args
	MandateID string
	Owner     Owner
}

// OperationHash is the SHA-256 of an operation's canonical encoding. An
// approval is signed over it; changing one cent makes another operation.
type OperationHash [32]byte

// operationDomain separates operation hashes from every other hash
// intentplane computes (receipts use 0x00, checkpoints 0x01).
const operationDomain = 0x02

// Hash returns the operation hash: SHA-256 over the byte 0x02 followed by
// the canonical encoding of {"action","args","mandate"}. The owner is not
// hashed separately: a mandate names exactly one owner. It returns an error
// only if an argument has no canonical encoding (an invalid Value or a
// string that is not UTF-8).
func (op Operation) Hash() (OperationHash, error) {
	buf := operations.Get().(*[]byte)
	defer putOperation(buf)
	var e Encoder
	e.Reset(append((*buf)[:0], operationDomain))
	e.BeginObject()
	e.Name(nameAction)
	e.String(string(op.Action))
	e.Name(nameArgs)
	e.Any(op.Args)
	e.Name(nameMandate)
	e.String(op.MandateID)
	e.EndObject()
	b, err := e.Bytes()
	if err != nil {
		return OperationHash{}, err
	}
	*buf = b // keep what the buffer grew to
	return sha256.Sum256(b), nil
}

// The keys of an operation's encoding.
var nameAction, nameArgs, nameMandate = NewName("action"), NewName("args"), NewName("mandate")

// operations holds the buffers Hash encodes into, so that hashing an
// operation allocates nothing.
var operations = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

// putOperation returns buf to operations, unless it grew too large to
// keep.
func putOperation(buf *[]byte) {
	if cap(*buf) <= 64<<10 {
		operations.Put(buf)
	}
}

// String returns the hash in lowercase hex.
func (h OperationHash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero hash (no operation).
func (h OperationHash) IsZero() bool { return h == OperationHash{} }

// MarshalText encodes the hash as lowercase hex.
func (h OperationHash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes a 64-digit hex hash.
func (h *OperationHash) UnmarshalText(b []byte) error {
	p, err := ParseOperationHash(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// ErrBadHash is returned when a hash is not 64 hex digits.
var ErrBadHash = errors.New("intent: hash must be 64 lowercase hex digits")

// ParseOperationHash parses 64 lowercase hex digits.
func ParseOperationHash(s string) (OperationHash, error) {
	var h OperationHash
	if len(s) != 64 {
		return h, ErrBadHash
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return h, ErrBadHash
		}
	}
	if _, err := hex.Decode(h[:], []byte(s)); err != nil {
		return h, fmt.Errorf("%w: %v", ErrBadHash, err)
	}
	return h, nil
}
