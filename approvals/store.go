package approvals

import "github.com/intentplane/intentplane/core/state"

// Store keeps what the approval page must not lose in a restart: requests
// (open, approved, rejected), page sessions, recorded call-backs and the
// Tracker's memory (the open request of each operation, the rejected
// operations), each in its space (the Space constants). It is the
// gateway store's state.Entries (store/storetest.RunEntries is the
// conformance suite).
//
// What is kept where, and what a restart keeps, is in docs/approvals.md
// ("What a restart keeps").
type Store = state.Entries

// The spaces the approval page and the Tracker keep their entries in.
const (
	// SpaceRequests holds each request by its id, until Config.Retain
	// after it expires.
	SpaceRequests = "approvals/requests"
	// SpaceSessions holds each sign-in under a SHA-256 of its session
	// token (never the token), until it expires.
	SpaceSessions = "approvals/sessions"
	// SpaceCallbacks holds each call-back recorded on the page, with its
	// receipt, for Config.CallbackRetain.
	SpaceCallbacks = "approvals/callbacks"
	// SpaceOperations holds the Tracker's open request of each operation
	// hash, until the request expires.
	SpaceOperations = "approvals/operations"
	// SpaceRejections holds the operations a person rejected, until
	// TrackerConfig.Until.
	SpaceRejections = "approvals/rejections"
)
