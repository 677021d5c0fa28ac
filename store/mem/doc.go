// Package mem is an in-memory state.Store for unit tests and demos: budget
// reservations, single-use keys and one receipt chain per owner, guarded by
// one mutex. Nothing survives the process. Receipts are kept in their
// stored form (receipt.LinkAppend) in large byte slices that the garbage
// collector need not scan, and decoded when read.
//
// It imports only the standard library and core/; it must never import a
// pack, a connector or a front door.
package mem
