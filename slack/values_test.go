package slack_test

import (
	"slices"
	"testing"

	"github.com/intentplane/intentplane/slack"
)

func TestURL(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"www.informations.com":                   "www.informations.com",
		" https://WWW.Informations.com/ ":        "www.informations.com",
		"http://www.company-todo-list.com/Alice": "www.company-todo-list.com/Alice",
		"www.eve-blog.com.":                      "www.eve-blog.com",
	} {
		if got, err := slack.URL(in); err != nil || got != want {
			t.Errorf("URL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, in := range []string{"", "localhost", "not a url", "www.x.com/a b", "ftp://x.com"} {
		if got, err := slack.URL(in); err == nil {
			t.Errorf("URL(%q) = %q; want an error", in, got)
		}
	}
}

func TestLinks(t *testing.T) {
	t.Parallel()
	got := slack.Links("Mail dora@gmail.com; see www.dora-website.com, https://www.Eve-Blog.com/ and www.dora-website.com! Key 1a7b3d. e.g. x")
	want := []string{"www.dora-website.com", "www.eve-blog.com"}
	if !slices.Equal(got, want) {
		t.Errorf("Links = %q; want %q", got, want)
	}
}

func TestIdent(t *testing.T) {
	t.Parallel()
	if got, err := slack.Ident("  Dora "); err != nil || got != "Dora" {
		t.Errorf("Ident = %q, %v", got, err)
	}
	if _, err := slack.Ident(" \n "); err == nil {
		t.Error("empty name accepted")
	}
}

func TestMemberLinksSkipsTheBot(t *testing.T) {
	t.Parallel()
	w := slack.Workspace{
		Users: []string{"Ana"},
		ChannelInbox: map[string][]slack.Message{"general": {
			{Sender: slack.Bot, Body: "www.bot.example.com"},
			{Sender: "Ana", Body: "www.ana.example.com"},
			{Sender: "Gone", Body: "www.gone.example.com"},
		}},
	}
	if got := w.MemberLinks(); !slices.Equal(got, []string{"www.ana.example.com"}) {
		t.Errorf("MemberLinks = %q", got)
	}
}
