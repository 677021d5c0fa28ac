// Package gateway is intentplane's decision pipeline: it takes an agent's
// proposal under a user's mandate and decides, in the design's order and
// failing closed at every step: decode, mandate, contract, resolve, context
// (with the running totals a contract declares, contract.Total, reserved
// in the store before they are read), policy, budget, approval, execute,
// receipt. What executes is built from the mandate and the trusted
// sources, never from the agent's spelling.
//
// Read it in this order: Decide (gateway.go) runs run (steps.go), which
// calls one method per step, each returning a refusal or nil, in a file
// per step: steps.go (decode, mandate, contract, resolve), context.go
// (the facts and the record hold), totals.go (the running totals),
// policy.go, budget.go (the budget and the approvals' use) and execute.go
// (execution, once, and cleanup). Every message an agent can read is in
// the catalogue of refusals.go, keyed by reason code
// (docs/reason-codes.md).
//
// The gateway defines the interfaces it consumes (Executor,
// ContextProvider; its state, Store, is core/state's) and the Pack it is
// given. It imports only core/ and must never import a pack, a connector,
// a store driver, a front door (echo, mcp-go) or the testing package.
package gateway
