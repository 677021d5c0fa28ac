package mandate

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"io"
	"strings"
)

// The prefixes of the text forms of keys.
const (
	privateKeyPrefix = "ed25519-priv:"
	publicKeyPrefix  = "ed25519-pub:"
)

// GenerateKey returns a new Ed25519 key pair for an issuer, with entropy
// from rand. A nil rand means a secure random source (crypto/rand). It
// returns an error only if rand fails.
func GenerateKey(rand io.Reader) (ed25519.PublicKey, ed25519.PrivateKey, error) {
	pub, priv, err := ed25519.GenerateKey(rand)
	if err != nil {
		return nil, nil, fmt.Errorf("mandate: generate key: %w", err)
	}
	return pub, priv, nil
}

// EncodePrivateKey returns priv in text form for a key file:
// "ed25519-priv:" followed by the standard base64 of its 32-byte seed. It
// panics if priv is not ed25519.PrivateKeySize bytes long.
func EncodePrivateKey(priv ed25519.PrivateKey) string {
	if len(priv) != ed25519.PrivateKeySize {
		panic(fmt.Sprintf("mandate: private key is %d bytes, want %d", len(priv), ed25519.PrivateKeySize))
	}
	return privateKeyPrefix + base64.StdEncoding.EncodeToString(priv.Seed())
}

// ParsePrivateKey parses the text form written by EncodePrivateKey,
// ignoring surrounding white space (a file's trailing newline). It returns
// an error wrapping ErrBadKey for anything else.
func ParsePrivateKey(s string) (ed25519.PrivateKey, error) {
	seed, err := parseKey(s, privateKeyPrefix, ed25519.SeedSize)
	if err != nil {
		return nil, err
	}
	return ed25519.NewKeyFromSeed(seed), nil
}

// EncodePublicKey returns pub in text form for a key file:
// "ed25519-pub:" followed by the standard base64 of its 32 bytes.
func EncodePublicKey(pub ed25519.PublicKey) string {
	return publicKeyPrefix + base64.StdEncoding.EncodeToString(pub)
}

// ParsePublicKey parses the text form written by EncodePublicKey,
// ignoring surrounding white space. It returns an error wrapping ErrBadKey
// for anything else.
func ParsePublicKey(s string) (ed25519.PublicKey, error) {
	if strings.HasPrefix(strings.TrimSpace(s), privateKeyPrefix) {
		// Never echo it; say what to give instead.
		return nil, fmt.Errorf("%w: this is a private key (%s…); give the public key (%s…, the .pub file), and keep the private key where only the signer reads it", ErrBadKey, privateKeyPrefix, publicKeyPrefix)
	}
	b, err := parseKey(s, publicKeyPrefix, ed25519.PublicKeySize)
	if err != nil {
		return nil, err
	}
	return ed25519.PublicKey(b), nil
}

func parseKey(s, prefix string, size int) ([]byte, error) {
	rest, ok := strings.CutPrefix(strings.TrimSpace(s), prefix)
	if !ok {
		return nil, fmt.Errorf("%w: does not start with %q", ErrBadKey, prefix)
	}
	b, err := base64.StdEncoding.Strict().DecodeString(rest)
	if err != nil || base64.StdEncoding.EncodeToString(b) != rest {
		return nil, fmt.Errorf("%w: not standard base64", ErrBadKey)
	}
	if len(b) != size {
		return nil, fmt.Errorf("%w: %d bytes, want %d", ErrBadKey, len(b), size)
	}
	return b, nil
}
