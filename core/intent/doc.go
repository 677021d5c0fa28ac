// Package intent holds intentplane's shared vocabulary: the proposal an agent
// sends, actions, owners, typed argument values, amounts in integer minor
// units, provenance of resolved values, operations and their hash, reason
// codes for refusals, and the one canonical encoding used for everything that
// is hashed or signed.
//
// It imports only the standard library and must never import any other
// intentplane package; every other package may import it.
package intent
