// Package approvals is the approval channel outside the agent's client: when
// the gateway steps up, a front door submits the exact resolved operation
// (an approval.Request) to a Channel, a person approves or rejects it, and the channel
// hands back approvals signed with that person's Ed25519 key over the
// operation hash, which the front door presents to gateway.Decide.
//
// Two channels are provided. Server is the local approval page (echo):
// passcode login per approver, the resolved operation with the provenance of
// every critical value and the agent's own spelling where it differs,
// approve or reject, four eyes with two distinct approvers, and the recent
// decisions with their receipts. Webhook posts each request, signed with
// Ed25519, to a URL (a chat tool's bot, for example) and takes decisions back
// through a signed callback or through the page.
//
// With Config.Callbacks set, the page also has a "Record a call-back" form:
// an approver records that they called a vendor back at the phone number on
// file before a bank-detail change. The page looks nothing up itself: it
// passes the entry to the CallbackSink, receipts it through Log, and lists
// the recent call-backs.
//
// Requests are created only in-process, by the front door calling
// Channel.Request; no HTTP endpoint creates one, so an agent can neither
// create nor approve a request. A request whose shown content does not hash
// to its operation hash is refused. Requests and decisions are recorded as
// receipts through Log.
//
// This package may import core/approval, core/intent, core/receipt and echo;
// it must never import packs, connectors, core/gateway or store/*: it
// consumes the Log interface it defines, and the composition root in cmd/
// wires it to the gateway's receipt log.
package approvals
