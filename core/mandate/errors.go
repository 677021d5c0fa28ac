package mandate

import (
	"errors"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
)

// Sentinels for why a mandate was refused. Verify returns them wrapped in an
// *Error; check them with errors.Is.
var (
	// ErrMalformed is returned for a token that is not a mandate: wrong
	// prefix, bad base64, oversized, truncated, a payload that does not
	// decode, or signed fields that Issue would not accept.
	ErrMalformed = errors.New("mandate: malformed token")
	// ErrNotCanonical is returned for a correctly signed payload that is
	// not byte for byte the canonical encoding of the mandate it decodes
	// to: reordered keys, added space, escapes, duplicate or unknown keys,
	// unsorted scope, sub-second times.
	ErrNotCanonical = errors.New("mandate: payload is not canonical")
	// ErrUnknownIssuer is returned when the mandate's issuer has no key.
	// Keys implementations return it too.
	ErrUnknownIssuer = errors.New("mandate: unknown issuer")
	// ErrBadSignature is returned when the signature does not verify with
	// the issuer's key.
	ErrBadSignature = errors.New("mandate: bad signature")
	// ErrWrongAudience is returned for a mandate issued for another gateway.
	ErrWrongAudience = errors.New("mandate: wrong audience")
	// ErrNotYetValid is returned before the mandate's NotBefore (less the
	// allowed skew).
	ErrNotYetValid = errors.New("mandate: not yet valid")
	// ErrExpired is returned at or after the mandate's Expiry (plus the
	// allowed skew).
	ErrExpired = errors.New("mandate: expired")
	// ErrRevoked is returned for a mandate its issuer revoked.
	ErrRevoked = errors.New("mandate: revoked")
	// ErrRevocationUnavailable is returned when the Revoker fails: the
	// mandate is refused (fail closed).
	ErrRevocationUnavailable = errors.New("mandate: revocation status unavailable")
	// ErrInvalid is returned by Issue for fields it cannot sign.
	ErrInvalid = errors.New("mandate: invalid")
	// ErrBadKey is returned by ParsePrivateKey and ParsePublicKey, and by
	// Issue for a private key of the wrong size.
	ErrBadKey = errors.New("mandate: malformed key")
)

// Error is why Verify refused a mandate.
type Error struct {
	// Reason is one of the sentinels above (ErrMalformed, ErrExpired, ...).
	Reason error
	// MandateID is the id of the refused mandate; empty when the token was
	// refused before its signature was verified, so that it never names an
	// id nobody signed.
	MandateID string
	// Detail says what exactly was wrong and, where there is one, what the
	// user can do; it never holds secrets. Empty means Reason says it all.
	Detail string
	// Err is the underlying failure, for logs: the Revoker's error for
	// ErrRevocationUnavailable, or the Keys error when a key could not be
	// loaded; nil otherwise. Error leaves it out, so that internal detail
	// never reaches the agent.
	Err error
}

// Error returns "mandate <id>: <detail>", for example
// "mandate m-1f3a: expired at 2026-11-30T10:00:00Z (now
// 2026-11-30T10:05:12Z); ask the user to issue a new mandate".
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString("mandate")
	if e.MandateID != "" {
		b.WriteString(" ")
		b.WriteString(e.MandateID)
	}
	b.WriteString(": ")
	if e.Detail != "" {
		b.WriteString(e.Detail)
	} else if e.Reason != nil {
		b.WriteString(strings.TrimPrefix(e.Reason.Error(), "mandate: "))
	} else {
		b.WriteString("refused")
	}
	return b.String()
}

// Unwrap returns Reason and, if set, Err, so that errors.Is matches both.
func (e *Error) Unwrap() []error {
	if e.Err == nil {
		return []error{e.Reason}
	}
	return []error{e.Reason, e.Err}
}

// Code returns the reason code an agent or front door sees for e:
// intent.CodeMandateExpired for ErrExpired and ErrNotYetValid,
// intent.CodeMandateAudience, intent.CodeMandateRevoked,
// intent.CodeUnavailable for ErrRevocationUnavailable, and
// intent.CodeMandateInvalid for everything else.
func (e *Error) Code() intent.Code {
	switch {
	case errors.Is(e.Reason, ErrExpired), errors.Is(e.Reason, ErrNotYetValid):
		return intent.CodeMandateExpired
	case errors.Is(e.Reason, ErrWrongAudience):
		return intent.CodeMandateAudience
	case errors.Is(e.Reason, ErrRevoked):
		return intent.CodeMandateRevoked
	case errors.Is(e.Reason, ErrRevocationUnavailable):
		return intent.CodeUnavailable
	}
	return intent.CodeMandateInvalid
}
