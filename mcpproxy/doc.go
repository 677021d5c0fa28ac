// Package mcpproxy is intentplane's MCP front door: an MCP server (on
// github.com/mark3labs/mcp-go) that shows an MCP client a chosen set of
// tools and turns every call into a proposal decided by the gateway.
//
// A [Proxy] serves [Tool] values. Each call becomes the proposal
// {"action": Tool.Action, "args": <the call's arguments>} and goes to a
// [Decider] (a *gateway.Gateway). What executes is the gateway's resolved
// operation, never the agent's spelling: tools mirrored from a downstream
// MCP server are carried out by a [Forwarder], the pack's executor, which
// rebuilds the downstream arguments from the operation (see [EncodeArgs]);
// tools of a mounted pack are carried out by the pack's own executor.
// Refusals come back as tool errors (isError) carrying the gateway's
// message for the agent; every call leaves a receipt in the gateway.
//
// A step-up is asked of the user in the client itself when the client
// declares the elicitation capability: with elicitation/create on
// protocol versions up to 2025-11-25, and with an input_required result
// whose request state is HMAC-sealed, expiring, single use and bound to
// the tool and the operation hash on 2026-07-28. The user's answer becomes
// an approval signed with the client approver's key ([Signer]) over the
// operation hash. Elicitation only ever grants "confirm": four eyes needs
// the approval page, reached through the [Approvals] interface. Without
// either, a step-up is refused.
//
// Nothing of the client's call but the resolved operation reaches a
// downstream server: the client's _meta is dropped (only the progress
// token is relayed, remapped), unless [Config].ForwardMeta lists a key.
// Over stdio, messages are bounded in size and the requests not yet
// answered in bytes, so a flood of calls waits in the client's pipe.
//
// [Downstream] is a managed connection to a downstream MCP server (a
// child process over stdio, with a controlled environment, or a
// streamable-HTTP URL): it lists tools with their raw input schemas,
// restarts a crashed child with backoff, bounds every call with a
// timeout, relays cancellation and progress, and lists the tools again
// when the server announces a change (notifications/tools/list_changed;
// on 2026-07-28 after subscribing with subscriptions/listen). A [Tool]
// with a [Mirror] follows those changes: see [Mirror]. With a [Lock] (the
// operator's lock file of [Pin] values), a mirrored tool is served only
// while its server lists its title, description and input schema exactly
// as pinned; otherwise it is hidden, its calls refused, and the difference
// logged.
//
// mcpproxy imports core/gateway, core/contract, core/intent, core/approval
// and mcp-go. It must never import a pack, a connector, store/* or cmd/*:
// cmd/intentplane-mcp wires those in.
package mcpproxy
