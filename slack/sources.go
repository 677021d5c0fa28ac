package slack

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/resolve"
)

var (
	_ resolve.Registry        = Registry{}
	_ gateway.ContextProvider = Facts{}
)

// Registry is one of the pack's registries over the live workspace, read
// at every lookup: RegistryUsers (the members), RegistryChannels (the
// channels) or RegistryLinks (the links members wrote in messages, see
// Workspace.MemberLinks). Lookup takes a normalized value and matches the
// entry that normalizes to it (see Ident, URL); the record's ID is
// "<registry>:<value>" and its Value the entry as the workspace spells it
// (a channel name keeps the spaces around it that Ident trims).
type Registry struct {
	WS   *Mem
	Name string
}

// Lookup implements resolve.Registry. It returns an error wrapping
// resolve.ErrNoMatch for a value the registry does not hold, for an owner
// without a workspace and for an unknown registry name.
func (r Registry) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	if err := ctx.Err(); err != nil {
		return resolve.Record{}, err
	}
	var entries []string
	norm := Ident
	err := r.WS.with(owner, func(w *Workspace) error {
		switch r.Name {
		case RegistryUsers:
			entries = slices.Clone(w.Users)
		case RegistryChannels:
			entries = slices.Clone(w.Channels)
		case RegistryLinks:
			entries, norm = w.MemberLinks(), URL
		}
		return nil
	})
	if errors.Is(err, ErrUnknownOwner) {
		return resolve.Record{}, fmt.Errorf("%w: no workspace", resolve.ErrNoMatch)
	}
	if err != nil {
		return resolve.Record{}, err
	}
	for _, e := range entries {
		if n, err := norm(e); err == nil && n == value {
			return resolve.Record{ID: r.Name + ":" + value, Value: e}, nil
		}
	}
	return resolve.Record{}, fmt.Errorf("%w: %q is not in %s", resolve.ErrNoMatch, clip(value), r.Name)
}

// Facts is the pack's context provider. It reads the live workspace and
// the mandate's claims.
//
// For slack.send_direct_message, slack.send_channel_message and
// slack.post_webpage it gives, about the outgoing text (body; content):
//
//   - links: the links it carries, canonical (see URL), space-separated;
//   - unrequested_links: how many of them are neither in the mandate
//     (claim "urls") nor written by a member in a message.
//
// For slack.invite_user_to_slack it gives invitee_named (the name is in
// the claim "invitees") and email_named (the address, normalized, is in
// the claim "invite_emails"). Other actions get no facts.
type Facts struct {
	WS *Mem
}

// Facts implements gateway.ContextProvider. It returns an error when the
// owner has no workspace.
func (f Facts) Facts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	facts := map[string]intent.Value{}
	var txt string
	switch q.Action {
	case ActionSendDirectMessage, ActionSendChannelMessage:
		txt = q.Args["body"].Str
	case ActionPostWebpage:
		txt = q.Args["content"].Str
	case ActionInviteUser:
		facts["invitee_named"] = intent.Bool(named(q.Claims[ClaimInvitees], q.Args["user"].Str, Ident))
		facts["email_named"] = intent.Bool(named(q.Claims[ClaimInviteEmails], q.Args["user_email"].Str, Email))
		return facts, nil
	default:
		return facts, nil
	}
	var member []string
	if err := f.WS.with(q.Owner, func(w *Workspace) error {
		member = w.MemberLinks()
		return nil
	}); err != nil {
		return nil, err
	}
	links := Links(txt)
	n := 0
	for _, l := range links {
		if !named(q.Claims[ClaimURLs], l, URL) && !slices.Contains(member, l) {
			n++
		}
	}
	facts["links"] = intent.Str(strings.Join(links, " "))
	facts["unrequested_links"] = intent.Int(int64(n))
	return facts, nil
}

// named reports whether v, normalized by norm, is one of the claim's
// values normalized the same way; a value norm refuses is not named.
func named(claim []string, v string, norm func(string) (string, error)) bool {
	n, err := norm(v)
	if err != nil {
		return false
	}
	for _, c := range claim {
		if cn, err := norm(c); err == nil && cn == n {
			return true
		}
	}
	return false
}
