package mandate

import (
	"bytes"
	"context"
	"crypto/ed25519"
	crand "crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Prefix starts every mandate token; it names the format and its version.
const Prefix = "ipm1."

// MaxTokenSize is the largest token, in bytes, that Verify reads and Issue
// produces: 16 KiB.
const MaxTokenSize = 16 << 10

// signingDomain precedes the payload in the signed message, so that a
// mandate signature is never valid for anything else the same key signs.
const signingDomain = "intentplane-mandate-v1\x00"

// DefaultSkew is the clock skew Verifier allows when Skew is zero.
const DefaultSkew = 30 * time.Second

// Keys looks up issuers' public keys. It may be called concurrently.
type Keys interface {
	// IssuerKey returns the Ed25519 public key of the issuer with key id
	// keyID, or an error wrapping ErrUnknownIssuer if there is none. Any
	// other error also refuses the mandate.
	IssuerKey(keyID string) (ed25519.PublicKey, error)
}

// StaticKeys is a fixed set of issuer public keys by key id. A nil
// StaticKeys knows no issuer.
type StaticKeys map[string]ed25519.PublicKey

var _ Keys = StaticKeys(nil)

// IssuerKey returns the key for keyID, or ErrUnknownIssuer.
func (k StaticKeys) IssuerKey(keyID string) (ed25519.PublicKey, error) {
	pub, ok := k[keyID]
	if !ok {
		return nil, ErrUnknownIssuer
	}
	return pub, nil
}

// Revoker tells whether a mandate was revoked. It may be called
// concurrently; it does I/O, so it takes a context.
type Revoker interface {
	// Revoked reports whether the mandate with the given id was revoked.
	// An error means the status is unknown, and Verify refuses the
	// mandate with ErrRevocationUnavailable.
	Revoked(ctx context.Context, id string) (bool, error)
}

// RevokerFunc adapts a function to a Revoker.
type RevokerFunc func(ctx context.Context, id string) (bool, error)

var _ Revoker = RevokerFunc(nil)

// Revoked returns f(ctx, id).
func (f RevokerFunc) Revoked(ctx context.Context, id string) (bool, error) { return f(ctx, id) }

// NewID returns a new mandate id: "m-" followed by 128 random bits in
// lowercase hex. A nil rand means crypto/rand.Reader. It returns an error
// only if rand fails.
func NewID(rand io.Reader) (string, error) {
	if rand == nil {
		rand = crand.Reader
	}
	var b [16]byte
	if _, err := io.ReadFull(rand, b[:]); err != nil {
		return "", fmt.Errorf("mandate: new id: %w", err)
	}
	return "m-" + hex.EncodeToString(b[:]), nil
}

// Issue validates m and returns it as a token signed with priv under
// keyID. m.Issuer must be keyID, or empty to be set to it.
//
// Issue signs a normalized copy of m: Scope sorted with duplicates removed,
// NotBefore and Expiry in UTC truncated to whole seconds. It returns an
// error wrapping ErrInvalid if a field cannot be signed (an empty ID,
// Issuer, Audience, Owner or Scope, an unknown Mode, Expiry not after
// NotBefore, a Currency that is not three upper-case letters, a negative
// Budget, two budgets in one currency, an empty claim name or value list, a string longer than 1024
// bytes or not UTF-8, or a token larger than MaxTokenSize), and one
// wrapping ErrBadKey if priv is not an Ed25519 private key.
func Issue(m Mandate, keyID string, priv ed25519.PrivateKey) (string, error) {
	if len(priv) != ed25519.PrivateKeySize {
		return "", fmt.Errorf("%w: private key is %d bytes, want %d", ErrBadKey, len(priv), ed25519.PrivateKeySize)
	}
	if keyID == "" {
		return "", fmt.Errorf("%w: key id is empty", ErrInvalid)
	}
	if m.Issuer == "" {
		m.Issuer = keyID
	} else if m.Issuer != keyID {
		return "", fmt.Errorf("%w: issuer %s is not the signing key id %s", ErrInvalid, quote(m.Issuer), quote(keyID))
	}
	n := normalize(&m)
	if p := n.validate(); p != "" {
		return "", fmt.Errorf("%w: %s", ErrInvalid, p)
	}
	payload, err := encode(n)
	if err != nil {
		return "", fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	sig := ed25519.Sign(priv, signedMessage(payload))
	enc := base64.RawURLEncoding
	size := len(Prefix) + enc.EncodedLen(len(payload)) + 1 + enc.EncodedLen(len(sig))
	if size > MaxTokenSize {
		return "", fmt.Errorf("%w: token would be %d bytes, more than %d", ErrInvalid, size, MaxTokenSize)
	}
	b := make([]byte, 0, size)
	b = append(b, Prefix...)
	b = enc.AppendEncode(b, payload)
	b = append(b, '.')
	b = enc.AppendEncode(b, sig)
	return string(b), nil
}

// Verifier verifies mandate tokens for one gateway. Its zero value refuses
// every token (it knows no issuer). A Verifier may be used concurrently if
// its Keys and Revoker may.
type Verifier struct {
	// Keys holds the issuers' public keys. Nil knows no issuer.
	Keys Keys
	// Audience is this gateway's name; a mandate must name it exactly.
	Audience string
	// Revoker is asked whether a mandate was revoked. Nil means mandates
	// are never revoked.
	Revoker Revoker
	// Now returns the current time. Nil means time.Now.
	Now func() time.Time
	// Skew is how far the clocks of the issuer and the gateway may
	// disagree: a mandate is accepted from NotBefore-Skew until
	// Expiry+Skew. Zero means DefaultSkew (30s); a negative Skew means no
	// tolerance.
	Skew time.Duration
}

// Verify parses token, checks its signature against the issuer's key, and
// checks that it is canonical, for v.Audience, valid now and not revoked.
// It returns the mandate, or an *Error whose Reason is ErrMalformed,
// ErrUnknownIssuer, ErrBadSignature, ErrNotCanonical, ErrWrongAudience,
// ErrNotYetValid, ErrExpired, ErrRevoked or ErrRevocationUnavailable.
func (v Verifier) Verify(ctx context.Context, token string) (*Mandate, error) {
	payload, sig, err := split(token)
	if err != nil {
		return nil, err
	}
	m, err := decode(payload)
	if err != nil {
		return nil, err
	}
	if err := v.checkSignature(m.Issuer, payload, sig); err != nil {
		return nil, err
	}
	// From here on the issuer vouches for the payload, so errors may name
	// the mandate.
	if canon, err := encode(normalize(m)); err != nil || !bytes.Equal(canon, payload) {
		return nil, &Error{Reason: ErrNotCanonical, MandateID: m.ID, Detail: notCanonical(canon, payload)}
	}
	if p := m.validate(); p != "" {
		return nil, &Error{Reason: ErrMalformed, MandateID: m.ID, Detail: "malformed mandate: " + p}
	}
	if m.Audience != v.Audience {
		return nil, &Error{Reason: ErrWrongAudience, MandateID: m.ID,
			Detail: fmt.Sprintf("issued for audience %s, not %s", quote(m.Audience), quote(v.Audience))}
	}
	if err := v.Check(ctx, m); err != nil {
		return nil, err
	}
	return m, nil
}

// Check re-checks a mandate that Verify already accepted: that it is valid
// now and not revoked. The gateway caches verified mandates and calls Check
// on every decision, so that expiry and revocation take effect at once
// without verifying the signature again. Errors are as for Verify
// (ErrNotYetValid, ErrExpired, ErrRevoked, ErrRevocationUnavailable).
func (v Verifier) Check(ctx context.Context, m *Mandate) error {
	now := time.Now
	if v.Now != nil {
		now = v.Now
	}
	t := now()
	skew := v.Skew
	if skew == 0 {
		skew = DefaultSkew
	} else if skew < 0 {
		skew = 0
	}
	if t.Add(skew).Before(m.NotBefore) {
		return &Error{Reason: ErrNotYetValid, MandateID: m.ID,
			Detail: fmt.Sprintf("not valid before %s (now %s)", formatTime(m.NotBefore), formatTime(t))}
	}
	if !t.Add(-skew).Before(m.Expiry) {
		return &Error{Reason: ErrExpired, MandateID: m.ID,
			Detail: fmt.Sprintf("expired at %s (now %s); ask the user to issue a new mandate", formatTime(m.Expiry), formatTime(t))}
	}
	if v.Revoker != nil {
		revoked, err := v.Revoker.Revoked(ctx, m.ID)
		if err != nil {
			return &Error{Reason: ErrRevocationUnavailable, MandateID: m.ID, Err: err,
				Detail: "revocation status unavailable; the mandate is refused until it can be checked"}
		}
		if revoked {
			return &Error{Reason: ErrRevoked, MandateID: m.ID,
				Detail: "revoked by its issuer; ask the user to issue a new mandate"}
		}
	}
	return nil
}

func (v Verifier) checkSignature(issuer string, payload, sig []byte) error {
	if v.Keys == nil {
		return &Error{Reason: ErrUnknownIssuer, Detail: fmt.Sprintf("unknown issuer %s: no issuer keys configured", quote(issuer))}
	}
	pub, err := v.Keys.IssuerKey(issuer)
	if err != nil {
		if errors.Is(err, ErrUnknownIssuer) {
			return &Error{Reason: ErrUnknownIssuer, Detail: fmt.Sprintf("unknown issuer %s", quote(issuer))}
		}
		return &Error{Reason: ErrUnknownIssuer, Err: err, Detail: fmt.Sprintf("key of issuer %s could not be loaded", quote(issuer))}
	}
	if len(pub) != ed25519.PublicKeySize {
		return &Error{Reason: ErrUnknownIssuer, Detail: fmt.Sprintf("key of issuer %s is not an Ed25519 public key", quote(issuer))}
	}
	if !ed25519.Verify(pub, signedMessage(payload), sig) {
		return &Error{Reason: ErrBadSignature, Detail: fmt.Sprintf("bad signature: it does not verify with the key of issuer %s", quote(issuer))}
	}
	return nil
}

// split checks the token's shape and returns its decoded payload and
// signature.
func split(token string) (payload, sig []byte, err error) {
	malformed := func(format string, args ...any) error {
		return &Error{Reason: ErrMalformed, Detail: "malformed token: " + fmt.Sprintf(format, args...)}
	}
	if len(token) > MaxTokenSize {
		return nil, nil, malformed("%d bytes, more than %d", len(token), MaxTokenSize)
	}
	rest, ok := strings.CutPrefix(token, Prefix)
	if !ok {
		return nil, nil, malformed("does not start with %q", Prefix)
	}
	p64, s64, ok := strings.Cut(rest, ".")
	if !ok {
		return nil, nil, malformed("want %s<payload>.<signature>", Prefix)
	}
	if payload, err = decode64(p64); err != nil {
		return nil, nil, malformed("payload is not unpadded base64url")
	}
	if sig, err = decode64(s64); err != nil {
		return nil, nil, malformed("signature is not unpadded base64url")
	}
	if len(sig) != ed25519.SignatureSize {
		return nil, nil, malformed("signature is %d bytes, want %d", len(sig), ed25519.SignatureSize)
	}
	return payload, sig, nil
}

// decode64 decodes unpadded base64url, refusing every other spelling of the
// same bytes (padding, line breaks, non-zero trailing bits).
func decode64(s string) ([]byte, error) {
	enc := base64.RawURLEncoding
	b, err := enc.DecodeString(s)
	if err != nil {
		return nil, err
	}
	if enc.EncodeToString(b) != s {
		return nil, errors.New("not the canonical base64url spelling")
	}
	return b, nil
}

// wire is a mandate as its payload spells it. Decoding it is lenient (case
// folding, duplicate and unknown keys); Verify then requires the payload to
// be exactly encode's output.
type wire struct {
	Audience string `json:"audience"`
	Budget   struct {
		Amount   intent.Amount `json:"amount"`
		Currency string        `json:"currency"`
	} `json:"budget"`
	Budgets []struct {
		Amount   intent.Amount `json:"amount"`
		Currency string        `json:"currency"`
	} `json:"budgets"`
	Claims    map[string][]string `json:"claims"`
	Expiry    string              `json:"expiry"`
	ID        string              `json:"id"`
	Issuer    string              `json:"issuer"`
	Mode      Mode                `json:"mode"`
	NotBefore string              `json:"not_before"`
	Owner     intent.Owner        `json:"owner"`
	Scope     []intent.Action     `json:"scope"`
}

func decode(payload []byte) (*Mandate, error) {
	malformed := func(detail string) error {
		return &Error{Reason: ErrMalformed, Detail: "malformed token: " + detail}
	}
	var w wire
	if err := json.Unmarshal(payload, &w); err != nil {
		return nil, malformed("payload does not decode")
	}
	nbf, err := time.Parse(intent.TimeFormat, w.NotBefore)
	if err != nil {
		return nil, malformed("not_before is not a canonical time")
	}
	exp, err := time.Parse(intent.TimeFormat, w.Expiry)
	if err != nil {
		return nil, malformed("expiry is not a canonical time")
	}
	if w.Issuer == "" {
		return nil, malformed("no issuer")
	}
	var budgets []intent.Money
	for _, b := range w.Budgets {
		budgets = append(budgets, intent.Money{Currency: b.Currency, Amount: b.Amount})
	}
	return &Mandate{
		Budgets:   budgets,
		ID:        w.ID,
		Issuer:    w.Issuer,
		Audience:  w.Audience,
		Owner:     w.Owner,
		Scope:     w.Scope,
		Budget:    intent.Money{Currency: w.Budget.Currency, Amount: w.Budget.Amount},
		Claims:    w.Claims,
		Mode:      w.Mode,
		NotBefore: nbf,
		Expiry:    exp,
	}, nil
}

// normalize returns a copy of m as Issue signs it: scope sorted and unique,
// budgets sorted by currency (nil when empty), times in UTC truncated to
// seconds, claims copied.
func normalize(m *Mandate) *Mandate {
	n := *m
	n.Scope = slices.Compact(slices.Sorted(slices.Values(m.Scope)))
	n.Budgets = nil
	if len(m.Budgets) > 0 {
		n.Budgets = slices.SortedStableFunc(slices.Values(m.Budgets), func(a, b intent.Money) int { return strings.Compare(a.Currency, b.Currency) })
	}
	n.Claims = nil
	if len(m.Claims) > 0 {
		n.Claims = make(map[string][]string, len(m.Claims))
		for k, v := range m.Claims {
			n.Claims[k] = slices.Clone(v)
		}
	}
	n.NotBefore = m.NotBefore.UTC().Truncate(time.Second)
	n.Expiry = m.Expiry.UTC().Truncate(time.Second)
	return &n
}

// encode returns the payload of m: its canonical encoding. The member
// names are frozen; new fields may only be added, absent when zero.
func encode(m *Mandate) ([]byte, error) {
	scope := make([]string, len(m.Scope))
	for i, a := range m.Scope {
		scope[i] = string(a)
	}
	fields := map[string]any{
		"audience":   m.Audience,
		"budget":     map[string]any{"amount": m.Budget.Amount, "currency": m.Budget.Currency},
		"expiry":     m.Expiry,
		"id":         m.ID,
		"issuer":     m.Issuer,
		"mode":       string(m.Mode),
		"not_before": m.NotBefore,
		"owner":      string(m.Owner),
		"scope":      scope,
	}
	if len(m.Budgets) > 0 {
		budgets := make([]any, len(m.Budgets))
		for i, b := range m.Budgets {
			budgets[i] = map[string]any{"amount": b.Amount, "currency": b.Currency}
		}
		fields["budgets"] = budgets
	}
	if len(m.Claims) > 0 {
		claims := make(map[string]any, len(m.Claims))
		for k, v := range m.Claims {
			claims[k] = v
		}
		fields["claims"] = claims
	}
	return intent.Canonical(fields)
}

func signedMessage(payload []byte) []byte {
	msg := make([]byte, 0, len(signingDomain)+len(payload))
	msg = append(msg, signingDomain...)
	return append(msg, payload...)
}

// notCanonical describes where payload departs from its canonical form.
func notCanonical(canon, payload []byte) string {
	if canon == nil {
		return "payload has no canonical encoding; it was not produced by Issue"
	}
	i := 0
	for i < len(canon) && i < len(payload) && canon[i] == payload[i] {
		i++
	}
	return fmt.Sprintf("payload is not canonical (first difference at byte %d); it was not produced by Issue", i)
}
