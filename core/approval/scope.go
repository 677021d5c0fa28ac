package approval

import (
	"slices"

	"github.com/intentplane/intentplane/core/intent"
)

// Scope says who may approve for whom. The front door's own user (the
// user at the MCP client, named Client) approves only for the session's
// owner; every other approver only for the owners Owners lists for them.
// Its Allows method is what gateway.Config.ApproverScope takes.
type Scope struct {
	// Client is the approver name of the front door's own user; empty
	// means there is none.
	Client string
	// Session is the owner the client's user acts for (the mandate's).
	Session intent.Owner
	// Owners maps every other approver (the approval page's) to the owners
	// they may approve for; an empty list means every owner. An approver
	// not in the map approves for no one.
	Owners map[string][]intent.Owner
}

// Allows reports whether approver may approve operations of owner.
func (s Scope) Allows(approver string, owner intent.Owner) bool {
	if approver == "" {
		return false
	}
	if approver == s.Client {
		return owner == s.Session
	}
	owners, ok := s.Owners[approver]
	return ok && (len(owners) == 0 || slices.Contains(owners, owner))
}
