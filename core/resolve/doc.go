// Package resolve turns each critical argument of a proposal into a trusted
// value: it normalizes the agent's spelling, looks it up in the parameter's
// sources (the mandate's claims and registries, always scoped to the
// mandate's owner) and substitutes the trusted record's canonical value,
// with its provenance. No match is a refusal, never a fallback to what the
// agent sent.
//
// It imports only the standard library, core/intent and core/contract; it
// must never import anything outside core/.
package resolve
