// Package budget reserves amounts against a mandate's budget: Reserve
// atomically checks and holds an amount, Commit makes it spent when the
// operation executed, Release gives it back when it did not. Amounts are
// integer minor units of one currency.
//
// It imports only the standard library and core/intent; it must never import
// anything outside core/.
package budget
