// Package state holds the interfaces of the gateway's state and their
// errors: the budget ledger (reserve, commit, release, usage), single-use
// keys (operation nonces, approval ids), record locks and the receipt log.
// core/gateway consumes a Store; store/mem, store/embedded and
// store/postgres implement it and store/storetest is its conformance suite.
//
// Keys are opaque bytes. Every key a Store is given (an account, a
// reservation id, a single-use key, a record lock) may hold any byte,
// including NUL and bytes that are not UTF-8, and is at most MaxKeyLen
// bytes long; a store keeps it exactly and never interprets it.
//
// It imports only the standard library, core/intent and core/receipt: a
// store that implements it links neither the pipeline nor Cedar.
package state
