// Package slack is intentplane's slack pack: the 11 tools of the AgentDojo
// slack suite (messages, channels, members, and the two web tools the
// suite gives the agent) as gateway actions ("slack.send_direct_message",
// "slack.get_webpage", ...), their contracts, registries and a facts
// provider that read the live workspace, an executor, and an in-memory
// workspace, Mem, with AgentDojo's semantics.
//
// Every value that sends data or reveals it is a critical parameter:
//
//   - the recipient of a direct message: the mandate (claim "recipients")
//     or a member of the workspace (registry "users", read live);
//   - the channel posted to, read, or a member is added to: the mandate
//     (claim "channels") or a channel of the workspace (registry
//     "channels");
//   - the member added to a channel: the mandate (claim "members") or a
//     member of the workspace;
//   - the person removed from the workspace: the mandate only (claim
//     "remove");
//   - whose direct messages are read: the mandate only (claim "inboxes");
//   - the URL visited: the mandate (claim "urls") or a link that a member
//     of the workspace wrote in a message (registry "links": messages the
//     agent itself sent, sender "bot", never count; neither do web pages);
//   - the URL posted to: the mandate only.
//
// An invitation goes to a person who is by definition not on file yet:
// the name and the address the user gave (claims "invitees" and
// "invite_emails") pass; any other name or address is shown to the user,
// who must confirm (facts invitee_named, email_named). A value that an
// attacker put in a web page or a message (an address, a URL, a name)
// therefore never executes without the user.
//
// Free text (the body of a message, the content of a page posted) is not
// read for intent. It is bounded by values: the facts provider lists the
// links the text carries and counts those that neither the user named nor
// a member wrote (unrequested_links); the policy in policies/slack steps
// such a text up to the user. A message that names no value is outside
// what the pack can judge; docs/slack.md draws that boundary.
//
// The package may import core/* and policies; it must never import another
// pack, a connector, a store, a front door or cmd.
package slack
