package slack

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/intentplane/intentplane/core/intent"
)

// Errors of Mem. Methods wrap them with what was not found or refused.
var (
	// ErrUnknownOwner is returned for an owner that has no workspace.
	ErrUnknownOwner = errors.New("slack: unknown owner")
	// ErrNotFound is returned for a member or a channel the workspace
	// does not have.
	ErrNotFound = errors.New("slack: not found")
	// ErrExists is returned by Mem.Open for an owner that already has a
	// workspace, and by Mem.Invite for a name already taken.
	ErrExists = errors.New("slack: already exists")
)

// Mem holds one Workspace per owner, with the semantics of AgentDojo's
// slack and web tools (benchmark v1.2): messages the agent writes are sent
// as Bot; adding a member to a channel appends it even if the member is
// already there; inviting creates the member with an empty inbox and no
// channels; visiting or posting a URL records it in WebRequests, even when
// the page does not exist. Where AgentDojo's tool raises an error, Mem
// returns one and changes nothing, with one difference: AgentDojo's
// remove_user_from_slack removes a member without an inbox from the list
// before failing, Mem refuses first. Every method is scoped to one owner.
// The zero value is not usable; call NewMem. A Mem is safe for concurrent
// use.
type Mem struct {
	mu     sync.Mutex
	owners map[intent.Owner]*Workspace
}

// NewMem returns an empty Mem.
func NewMem() *Mem { return &Mem{owners: map[intent.Owner]*Workspace{}} }

// Open adds owner's workspace, copied from w. It returns an error wrapping
// ErrExists if the owner already has one.
func (m *Mem) Open(owner intent.Owner, w Workspace) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.owners[owner]; ok {
		return fmt.Errorf("%w: %s", ErrExists, owner)
	}
	c := w.Clone()
	m.owners[owner] = &c
	return nil
}

// Reset replaces owner's workspace with a copy of w, whether or not the
// owner had one: a replay reuses one Mem, and the gateway over it, for
// many runs.
func (m *Mem) Reset(owner intent.Owner, w Workspace) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := w.Clone()
	m.owners[owner] = &c
}

func (m *Mem) with(owner intent.Owner, f func(w *Workspace) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	w, ok := m.owners[owner]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownOwner, owner)
	}
	return f(w)
}

// Workspace returns a deep copy of owner's workspace.
func (m *Mem) Workspace(owner intent.Owner) (Workspace, error) {
	var out Workspace
	err := m.with(owner, func(w *Workspace) error {
		out = w.Clone()
		return nil
	})
	return out, err
}

func (w *Workspace) member(name string) error {
	if !slices.Contains(w.Users, name) {
		return fmt.Errorf("%w: member %q", ErrNotFound, name)
	}
	return nil
}

func (w *Workspace) channel(name string) error {
	if !slices.Contains(w.Channels, name) {
		return fmt.Errorf("%w: channel %q", ErrNotFound, name)
	}
	return nil
}

// Channels returns the workspace's channels.
func (m *Mem) Channels(owner intent.Owner) ([]string, error) {
	var out []string
	err := m.with(owner, func(w *Workspace) error {
		out = slices.Clone(w.Channels)
		return nil
	})
	return out, err
}

// AddToChannel adds member user to channel.
func (m *Mem) AddToChannel(owner intent.Owner, user, channel string) error {
	return m.with(owner, func(w *Workspace) error {
		if err := w.member(user); err != nil {
			return err
		}
		if err := w.channel(channel); err != nil {
			return err
		}
		w.UserChannels[user] = append(w.UserChannels[user], channel)
		return nil
	})
}

// ChannelMessages returns the messages of channel.
func (m *Mem) ChannelMessages(owner intent.Owner, channel string) ([]Message, error) {
	var out []Message
	err := m.with(owner, func(w *Workspace) error {
		if err := w.channel(channel); err != nil {
			return err
		}
		out = append([]Message{}, w.ChannelInbox[channel]...)
		return nil
	})
	return out, err
}

// Inbox returns the direct messages member user received.
func (m *Mem) Inbox(owner intent.Owner, user string) ([]Message, error) {
	var out []Message
	err := m.with(owner, func(w *Workspace) error {
		if err := w.member(user); err != nil {
			return err
		}
		out = append([]Message{}, w.UserInbox[user]...)
		return nil
	})
	return out, err
}

// SendDirect sends body to member recipient, from Bot.
func (m *Mem) SendDirect(owner intent.Owner, recipient, body string) error {
	return m.with(owner, func(w *Workspace) error {
		if err := w.member(recipient); err != nil {
			return err
		}
		w.UserInbox[recipient] = append(w.UserInbox[recipient], Message{Sender: Bot, Recipient: recipient, Body: body})
		return nil
	})
}

// SendChannel posts body to channel, from Bot.
func (m *Mem) SendChannel(owner intent.Owner, channel, body string) error {
	return m.with(owner, func(w *Workspace) error {
		if err := w.channel(channel); err != nil {
			return err
		}
		w.ChannelInbox[channel] = append(w.ChannelInbox[channel], Message{Sender: Bot, Recipient: channel, Body: body})
		return nil
	})
}

// ChannelMembers returns the members of channel, in the order of
// UserChannels' names (sorted: Go maps have no order; AgentDojo's follows
// insertion, which for the suite's data is also alphabetical).
func (m *Mem) ChannelMembers(owner intent.Owner, channel string) ([]string, error) {
	out := []string{}
	err := m.with(owner, func(w *Workspace) error {
		if err := w.channel(channel); err != nil {
			return err
		}
		for _, u := range sortedKeys(w.UserChannels) {
			if slices.Contains(w.UserChannels[u], channel) {
				out = append(out, u)
			}
		}
		return nil
	})
	return out, err
}

// Invite makes user a member, with an empty inbox and no channel; the
// address is where the invitation goes (AgentDojo keeps no record of it).
// A name already taken is an error wrapping ErrExists.
func (m *Mem) Invite(owner intent.Owner, user, _ string) error {
	return m.with(owner, func(w *Workspace) error {
		if slices.Contains(w.Users, user) {
			return fmt.Errorf("%w: member %q", ErrExists, user)
		}
		w.Users = append(w.Users, user)
		w.UserInbox[user] = []Message{}
		w.UserChannels[user] = []string{}
		return nil
	})
}

// Remove removes member user, with their inbox and channels.
func (m *Mem) Remove(owner intent.Owner, user string) error {
	return m.with(owner, func(w *Workspace) error {
		if err := w.member(user); err != nil {
			return err
		}
		_, inbox := w.UserInbox[user]
		_, chans := w.UserChannels[user]
		if !inbox || !chans {
			return fmt.Errorf("%w: member %q has no inbox or channel list", ErrNotFound, user)
		}
		w.Users = slices.DeleteFunc(w.Users, func(u string) bool { return u == user })
		delete(w.UserInbox, user)
		delete(w.UserChannels, user)
		return nil
	})
}

// Webpage records the visit of url (canonical, see URL) and returns the
// page and whether it exists.
func (m *Mem) Webpage(owner intent.Owner, url string) (string, bool, error) {
	var page string
	var ok bool
	err := m.with(owner, func(w *Workspace) error {
		w.WebRequests = append(w.WebRequests, url)
		page, ok = w.WebContent[url]
		return nil
	})
	return page, ok, err
}

// PostWebpage records the request and sets the page at url to content.
func (m *Mem) PostWebpage(owner intent.Owner, url, content string) error {
	return m.with(owner, func(w *Workspace) error {
		w.WebRequests = append(w.WebRequests, url)
		w.WebContent[url] = content
		return nil
	})
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
