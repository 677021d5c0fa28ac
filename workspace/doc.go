// Package workspace is intentplane's workspace pack: the 24 tools of the
// AgentDojo workspace suite (e-mail, calendar, cloud drive) as gateway
// actions ("workspace.send_email", "workspace.delete_file", ...), their
// contracts, registries and a facts provider that read the live workspace,
// an executor, and an in-memory workspace, Mem, with AgentDojo's semantics.
//
// Every value that can send data or destroy it is a critical parameter:
// the recipients, cc and bcc of an e-mail, the participants of an event
// (creating one mails them an invitation), the address and permission a
// file is shared with, and the target of every deletion and cancellation.
// Addresses come from the mandate (claims "recipients", "participants",
// "share_with") or from the owner's live counterparties (the
// "counterparties" registry: every address the inbox, calendar and drive
// hold, read at decision time); deletion and cancellation targets come
// from the mandate only (claims "delete_files", "delete_emails",
// "cancel_events"). Contacts are not a trust list: the inbox adds every
// correspondent, attackers included, so an address known only from mail
// received is a fact the policy sees (recipients_inbound_only).
//
// Free text (subjects, bodies, descriptions) is not read for intent. It is
// bounded by values: the facts provider lists the links the outgoing text
// carries and counts those the user's request did not contain (claim
// "links"); the policy in policies/workspace steps such a message up to
// the user, showing its recipients and links. A message that names no
// value (no link, only recipients that resolve) is outside what the pack
// can judge; docs/workspace.md draws that boundary.
//
// Lists (recipients, participants, attachments) travel in a proposal as
// one text value, comma-separated; a list resolves as a whole: either one
// value of a mandate claim (the list the user named) or every address in
// the owner's live counterparties.
//
// The package may import core/* and policies; it must never import another
// pack, a connector, a store, a front door or cmd.
package workspace
