// Package mandate issues and verifies mandates: what the user asked for,
// signed by an issuer outside the agent, bounding what the gateway may
// execute on the user's behalf.
//
// A mandate names its owner (whose records every lookup is scoped to), its
// scope (the actions allowed), a budget in minor units (and optionally
// further budgets, one per other currency), claims (values the
// user gave, such as payees), a mode, and a validity window. It travels as a
// token:
//
//	ipm1.<base64url(payload)>.<base64url(signature)>
//
// where payload is the canonical encoding (intent.Canonical) of the
// mandate's fields and signature is Ed25519 over "intentplane-mandate-v1\x00"
// followed by the payload. There is one algorithm and no header to
// negotiate; a payload that is not byte for byte the canonical encoding of
// the mandate it decodes to is refused, even with a valid signature. See
// docs/mandates.md for why this is not a JWT.
//
// Verifier.Verify checks, in order: the token's shape, the issuer's key,
// the signature, the canonical form, the fields, the audience, the validity
// window and revocation. Every failure is an *Error whose Reason is one of
// the exported sentinels.
//
// Package mandate imports only the standard library and core/intent; it must
// never import anything outside core/.
package mandate
