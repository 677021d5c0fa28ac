// Package intent holds intentplane's shared vocabulary: the proposal an agent
// sends, actions, owners, typed argument values, amounts in integer minor
// units, provenance of resolved values, operations and their hash, reason
// codes for refusals, and the canonical encoding of what is signed or hashed
// (mandates, approvals, operation hashes, receipts of version 1; receipts
// of version 2 hash a binary encoding of package receipt's own).
//
// It imports only the standard library and must never import any other
// intentplane package; every other package may import it.
package intent
