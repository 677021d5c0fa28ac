// Package approval implements approvals: a person's Ed25519 signature over
// one operation hash, bound to the mandate, expiring, single use. It decides
// which approval level a set of approvals grants: confirm needs one valid
// approval, four_eyes two from distinct approvers. A run of operations (a
// payment run) is approved by one signature over its hash (RunHash), the
// approval listing the lines it covers (Approval.Lines).
//
// It imports only the standard library and core/intent; it must never import
// anything outside core/.
package approval
