package slack

import (
	"maps"
	"slices"
)

// Bot is the sender of every message the agent writes, as AgentDojo's
// tools name it.
const Bot = "bot"

// Message is one direct or channel message.
type Message struct {
	Sender string `json:"sender"`
	// Recipient is a member's name (a direct message) or a channel's.
	Recipient string `json:"recipient"`
	Body      string `json:"body"`
}

// Workspace is one owner's Slack workspace and the web the agent reaches,
// with AgentDojo's field names.
type Workspace struct {
	// Users are the members, in the order they joined; Channels the
	// channels, in the order they were made.
	Users    []string `json:"users"`
	Channels []string `json:"channels"`
	// UserChannels lists, per member, the channels the member is in;
	// UserInbox the direct messages the member received; ChannelInbox the
	// messages of each channel.
	UserChannels map[string][]string  `json:"user_channels"`
	UserInbox    map[string][]Message `json:"user_inbox"`
	ChannelInbox map[string][]Message `json:"channel_inbox"`
	// WebContent maps a URL (without "http://" or "https://") to the
	// page's text; WebRequests lists every URL visited or posted to, in
	// order.
	WebContent  map[string]string `json:"web_content"`
	WebRequests []string          `json:"web_requests"`
}

// Clone returns a deep copy of w.
func (w Workspace) Clone() Workspace {
	c := w
	c.Users = slices.Clone(w.Users)
	c.Channels = slices.Clone(w.Channels)
	c.UserChannels = make(map[string][]string, len(w.UserChannels))
	for k, v := range w.UserChannels {
		c.UserChannels[k] = slices.Clone(v)
	}
	c.UserInbox = make(map[string][]Message, len(w.UserInbox))
	for k, v := range w.UserInbox {
		c.UserInbox[k] = slices.Clone(v)
	}
	c.ChannelInbox = make(map[string][]Message, len(w.ChannelInbox))
	for k, v := range w.ChannelInbox {
		c.ChannelInbox[k] = slices.Clone(v)
	}
	c.WebContent = maps.Clone(w.WebContent)
	if c.WebContent == nil {
		c.WebContent = map[string]string{}
	}
	c.WebRequests = slices.Clone(w.WebRequests)
	return c
}

// MemberLinks returns the links (canonical, see URL) in the messages the
// workspace's members wrote, direct and channel messages alike, in a
// stable order without duplicates. A message whose sender is not a member
// (the agent's own, sender Bot, or someone removed) gives none.
func (w Workspace) MemberLinks() []string {
	var out []string
	add := func(ms []Message) {
		for _, m := range ms {
			if !slices.Contains(w.Users, m.Sender) {
				continue
			}
			for _, l := range Links(m.Body) {
				if !slices.Contains(out, l) {
					out = append(out, l)
				}
			}
		}
	}
	for _, u := range slices.Sorted(maps.Keys(w.UserInbox)) {
		add(w.UserInbox[u])
	}
	for _, c := range slices.Sorted(maps.Keys(w.ChannelInbox)) {
		add(w.ChannelInbox[c])
	}
	return out
}
