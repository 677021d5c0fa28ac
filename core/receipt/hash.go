package receipt

import (
	"encoding/hex"

	"github.com/intentplane/intentplane/core/intent"
)

// Hash is a SHA-256 hash: of a receipt (domain byte 0x00) or of a
// checkpoint's signed content (domain byte 0x01).
type Hash [32]byte

// String returns the hash in lowercase hex.
func (h Hash) String() string { return hex.EncodeToString(h[:]) }

// IsZero reports whether h is the zero hash, the Prev of a chain's first
// receipt.
func (h Hash) IsZero() bool { return h == Hash{} }

// MarshalText encodes the hash as 64 lowercase hex digits.
func (h Hash) MarshalText() ([]byte, error) { return []byte(h.String()), nil }

// UnmarshalText decodes 64 lowercase hex digits; see ParseHash.
func (h *Hash) UnmarshalText(b []byte) error {
	p, err := ParseHash(string(b))
	if err != nil {
		return err
	}
	*h = p
	return nil
}

// ParseHash parses 64 lowercase hex digits. Any other input returns an
// error wrapping intent.ErrBadHash.
func ParseHash(s string) (Hash, error) {
	h, err := intent.ParseOperationHash(s)
	return Hash(h), err
}
