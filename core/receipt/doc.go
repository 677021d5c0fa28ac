// Package receipt records every decision of the gateway as a hash-chained
// receipt, one chain per owner, and verifies such chains offline.
//
// A Receipt holds what the agent sent, what was resolved and from where, the
// facts, the decision and the policies that determined it, the approval
// evidence and the execution result. Link places a receipt after its
// predecessor: it numbers it (Seq), points it at the predecessor's hash
// (Prev) and computes its own Hash over the canonical encoding of its
// content (Receipt.Canonical), so editing, removing, inserting or
// reordering receipts breaks the chain. That encoding is versioned
// (Receipt.Version): version 2, a compact binary encoding, for new
// receipts; version 1, the canonical JSON object of intent.Canonical, for
// receipts written before version 2 existed, which still verify. The JSON
// Lines form states the version, and the hash covers it. A Checkpoint is a signed statement of an
// owner's head (seq and hash) at some time; it makes a truncated tail, or a
// chain recomputed after an edit, detectable.
//
// Hashes are domain-separated: a receipt hash is SHA-256(0x00 || encoding),
// a checkpoint's signed hash is SHA-256(0x01 || encoding); operation hashes
// (package intent) use 0x02.
//
// Chains are exported as JSON Lines (WriteJSONL, WriteCheckpoints) and
// checked by Verify, which needs nothing but the file and the checkpoint
// signers' public keys, and names the first line where a chain breaks (see
// ChainError for the classification).
//
// Stores implement Log; the gateway consumes it.
//
// This package imports only the standard library and core/intent; it must
// never import any other intentplane package.
package receipt
