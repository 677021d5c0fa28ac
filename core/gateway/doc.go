// Package gateway is intentplane's decision pipeline: it takes an agent's
// proposal under a user's mandate and decides, in the design's order and
// failing closed at every step: decode, mandate, contract, resolve, context,
// policy, budget, approval, execute, receipt. What executes is built from
// the mandate and the trusted sources, never from the agent's spelling.
//
// The gateway defines the interfaces it consumes (Store, Executor,
// ContextProvider) and the Pack it is given. It imports only core/ and
// must never import a pack, a connector, a store driver, a front door
// (echo, mcp-go) or the testing package.
package gateway
