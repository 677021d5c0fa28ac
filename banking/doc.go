// Package banking is intentplane's banking pack: the eleven tools of the
// AgentDojo banking suite as gateway actions ("banking.send_money",
// "banking.update_scheduled_transaction", ...), their contracts, the
// owner's beneficiaries as a trusted registry, context providers that read
// facts about the recipient and the standing order from the bank, an
// executor, and an in-memory bank, Mem, with AgentDojo's semantics.
//
// Money goes without a person to a recipient the user named in the
// mandate (claim "payees") or to one of the owner's existing
// counterparties (the "beneficiaries" registry: accounts in the owner's
// transaction history and standing orders, never the owner's own account),
// within the policy's amounts. Any other recipient was supplied by the
// agent (an IBAN read from a bill, or a payee's name that one of the
// owner's own payments names: registry "agent_payee"): it is a step-up
// that shows the person the exact account and where it came from ("read
// by the agent, not on file"), never silently allowed; one that differs by
// one or two characters from an account the user knows is refused even
// with an approval, and a strict mandate refuses all of them. A new
// password and a new name come from the mandate only (claims
// "new_password", "first_name", "last_name"); a street or city the user
// did not give (claims "street", "city") is likewise shown to the person
// (registry "agent_address"). Subjects are free text: the design's
// guarantee covers values, not free text.
//
// The Cedar policy lives in policies/banking; NewPack loads it through the
// policies package.
//
// The package may import core/* and policies; it must never import another
// pack, a connector, a store, a front door or cmd.
package banking
