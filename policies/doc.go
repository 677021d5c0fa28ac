// Package policies holds the Cedar text of every pack, one directory per
// pack (policies/<pack>/policy.cedar, schema.cedarschema and the decision
// corpus tests/*.json), and embeds it in the binary.
//
// It is data, not logic: it imports only embed and io/fs and must never
// import anything else, in particular no intentplane package and not
// cedar-go. Packs and cmd/ read a pack with [Pack] and hand it to
// core/policy (policy.Load) and its test tooling core/policy/policytest
// (policytest.LoadCases, policytest.Run, policytest.Mutate); core never
// imports this package.
//
// The demo pack is a minimal, complete example of the layout and of the
// context convention described in core/policy.
package policies
