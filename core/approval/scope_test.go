package approval_test

import (
	"testing"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

func TestScopeAllows(t *testing.T) {
	t.Parallel()
	s := approval.Scope{Client: "mcp-user", Session: "northwind", Owners: map[string][]intent.Owner{
		"alice": nil, "carol": {"globex"}, "dave": {"globex", "initech"},
	}}
	for _, tc := range []struct {
		name     string
		approver string
		owner    intent.Owner
		want     bool
	}{
		{"client for the session's owner", "mcp-user", "northwind", true},
		{"client for another owner", "mcp-user", "globex", false},
		{"page approver of every owner", "alice", "northwind", true},
		{"page approver of every owner, another", "alice", "globex", true},
		{"page approver for a listed owner", "carol", "globex", true},
		{"page approver for an owner not listed", "carol", "northwind", false},
		{"second listed owner", "dave", "initech", true},
		{"unknown approver", "mallory", "northwind", false},
		{"empty approver name", "", "northwind", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if got := s.Allows(tc.approver, tc.owner); got != tc.want {
				t.Errorf("Allows(%q, %q) = %v, want %v", tc.approver, tc.owner, got, tc.want)
			}
		})
	}
	// Without a client user, no name is the client's: an empty Client
	// never grants the session's owner to an approver named "".
	if (approval.Scope{Session: "northwind"}).Allows("", "northwind") {
		t.Error("an empty approver name approves for the session's owner")
	}
	// A page approver who shares the client's name is the client.
	s.Owners["mcp-user"] = nil
	if s.Allows("mcp-user", "globex") {
		t.Error("the client's user approves for another owner through a page entry of the same name")
	}
}
