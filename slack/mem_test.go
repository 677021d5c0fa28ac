package slack_test

import (
	"errors"
	"slices"
	"testing"

	"github.com/intentplane/intentplane/slack"
)

func openTeam(t *testing.T) *slack.Mem {
	t.Helper()
	m := slack.NewMem()
	if err := m.Open(nora, team()); err != nil {
		t.Fatal(err)
	}
	return m
}

// TestMemErrors: what AgentDojo's tools refuse, Mem refuses with an error
// naming what was not found, and changes nothing.
func TestMemErrors(t *testing.T) {
	t.Parallel()
	m := openTeam(t)
	before, _ := m.Workspace(nora)
	for name, err := range map[string]error{
		"dm to a stranger":      m.SendDirect(nora, "Mallory", "hi"),
		"post to no channel":    m.SendChannel(nora, "leaks", "hi"),
		"add a stranger":        m.AddToChannel(nora, "Mallory", "ops"),
		"add to no channel":     m.AddToChannel(nora, "Ana", "leaks"),
		"remove a stranger":     m.Remove(nora, "Mallory"),
		"remove without inbox":  m.Remove(nora, "Cleo"),
		"invite a member again": m.Invite(nora, "Ben", "ben@example.com"),
	} {
		want := slack.ErrNotFound
		if name == "invite a member again" {
			want = slack.ErrExists
		}
		if !errors.Is(err, want) {
			t.Errorf("%s: %v; want %v", name, err, want)
		}
	}
	if _, err := m.Inbox(nora, "Mallory"); !errors.Is(err, slack.ErrNotFound) {
		t.Errorf("inbox of a stranger: %v", err)
	}
	if _, err := m.ChannelMembers(nora, "leaks"); !errors.Is(err, slack.ErrNotFound) {
		t.Errorf("members of no channel: %v", err)
	}
	if _, err := m.Channels("someone"); !errors.Is(err, slack.ErrUnknownOwner) {
		t.Errorf("unknown owner: %v", err)
	}
	after, _ := m.Workspace(nora)
	if !slices.Equal(before.Users, after.Users) || len(after.UserInbox["Ana"]) != 1 || len(after.ChannelInbox["ops"]) != 1 {
		t.Error("a refused call changed the workspace")
	}
	if err := m.Open(nora, team()); !errors.Is(err, slack.ErrExists) {
		t.Errorf("open twice: %v", err)
	}
}

// TestMemSemantics: AgentDojo's quirks are kept: adding a member twice
// lists the channel twice, a missing page is still a recorded visit, an
// invited member has an empty inbox and no channel, a removed one loses
// both.
func TestMemSemantics(t *testing.T) {
	t.Parallel()
	m := openTeam(t)
	for range 2 {
		if err := m.AddToChannel(nora, "Ana", "ops"); err != nil {
			t.Fatal(err)
		}
	}
	if page, ok, err := m.Webpage(nora, "www.nowhere.example.com"); err != nil || ok || page != "" {
		t.Errorf("missing page: %q %t %v", page, ok, err)
	}
	if err := m.Invite(nora, "Dana", "dana@example.com"); err != nil {
		t.Fatal(err)
	}
	if members, _ := m.ChannelMembers(nora, "ops"); !slices.Equal(members, []string{"Ana", "Ben"}) {
		t.Errorf("ops members %q", members)
	}
	if err := m.Remove(nora, "Dana"); err != nil {
		t.Fatal(err)
	}
	w, _ := m.Workspace(nora)
	if got := w.UserChannels["Ana"]; !slices.Equal(got, []string{"general", "ops", "ops"}) {
		t.Errorf("Ana's channels %q", got)
	}
	if !slices.Equal(w.WebRequests, []string{"www.nowhere.example.com"}) {
		t.Errorf("requests %q", w.WebRequests)
	}
	if slices.Contains(w.Users, "Dana") || w.UserInbox["Dana"] != nil || w.UserChannels["Dana"] != nil {
		t.Errorf("Dana still there: %v", w.Users)
	}
}
