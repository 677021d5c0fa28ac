// Package policytest is the test tooling of Cedar packs: a pack's decision
// corpus (tests/*.json: requests with the decision each must get),
// LoadCases and Run to check a policy against it, and Mutate, a mutation
// check of how well the corpus pins the policy down. The intentplane CLI
// (policy test, policy mutate) and the policies package's tests use it; no
// decision path does.
//
// It builds on core/policy's API only (Load, Evaluate, Mutants, Apply,
// EquivalentBySyntax, Literals) and imports neither cedar-go nor its x/exp
// packages: core/policy reads the syntax trees.
package policytest
