// Package banking is intentplane's banking pack: the eleven tools of the
// AgentDojo banking suite as gateway actions ("banking.send_money",
// "banking.update_scheduled_transaction", ...), their contracts, the
// owner's beneficiaries as a trusted registry, context providers that read
// facts about the recipient and the standing order from the bank, an
// executor, and an in-memory bank, Mem, with AgentDojo's semantics.
//
// Money can only go to a recipient the user named in the mandate
// (claim "payees") or to one of the owner's existing counterparties (the
// "beneficiaries" registry: accounts in the owner's transaction history and
// standing orders, never the owner's own account). A new password and new
// address fields come from the mandate only (claims "new_password",
// "first_name", "last_name", "street", "city"). Subjects are free text: the
// design's guarantee covers values, not free text.
//
// The Cedar policy lives in policies/banking; NewPack loads it through the
// policies package.
//
// The package may import core/* and policies; it must never import another
// pack, a connector, a store, a front door or cmd.
package banking
