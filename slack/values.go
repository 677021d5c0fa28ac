package slack

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/normalize"
)

// maxName is the longest member or channel name the pack takes, in bytes.
// AgentDojo's injected channel name holds a whole paragraph.
const maxName = 4096

// Ident normalizes a member's or a channel's name: surrounding spaces
// trimmed; names are compared exactly otherwise, as AgentDojo's tools do
// ("Dora" and "dora" are two people). It refuses an empty name and one
// longer than 4096 bytes.
func Ident(s string) (string, error) {
	t := strings.TrimSpace(s)
	if t == "" {
		return "", fmt.Errorf("the name is empty")
	}
	if len(t) > maxName {
		return "", fmt.Errorf("the name %q is longer than %d bytes", clip(t), maxName)
	}
	return t, nil
}

// URL normalizes a web address as the web tools key pages: surrounding
// spaces and trailing punctuation trimmed, a leading "http://" or
// "https://" dropped (AgentDojo's standardize_url), the host lower-cased, a
// lone trailing "/" dropped; the path keeps its case. "HTTPS://WWW.Eve-Blog.com/"
// becomes "www.eve-blog.com". It refuses text that is not a host with a
// dot, optionally followed by a path, and anything with spaces inside.
func URL(s string) (string, error) {
	t := strings.TrimRight(strings.TrimSpace(s), ".,;:!?")
	l := strings.ToLower(t)
	for _, p := range []string{"https://", "http://"} {
		if strings.HasPrefix(l, p) {
			t = t[len(p):]
			break
		}
	}
	host, path, hasPath := strings.Cut(t, "/")
	host = strings.ToLower(host)
	if !hostRE.MatchString(host) || strings.ContainsAny(path, " \t\r\n") {
		return "", fmt.Errorf("%q is not a web address such as \"www.example.com/page\"", clip(s))
	}
	if !hasPath || path == "" {
		return host, nil
	}
	return host + "/" + path, nil
}

var hostRE = regexp.MustCompile(`^(?:[a-z0-9-]+\.)+[a-z]{2,}$`)

// Email normalizes an invitation's address with normalize.Email.
func Email(s string) (string, error) { return normalize.Email(s) }

// linkRE finds candidate links in free text: an optional "http(s)://",
// a host with at least one dot and a top-level domain of letters, and an
// optional path.
var linkRE = regexp.MustCompile(`(?i)(?:https?://)?(?:[a-z0-9-]+\.)+[a-z]{2,}(?:/[^\s"'<>()\[\]{}]*)?`)

// Links returns the links free text carries, canonical (see URL), in order
// of appearance without duplicates. The domain of an e-mail address
// ("dora@gmail.com") is not a link.
func Links(text string) []string {
	var out []string
	for _, m := range linkRE.FindAllStringIndex(text, -1) {
		if s := m[0]; s > 0 && strings.ContainsRune("@.-_/", rune(text[s-1])) {
			continue
		}
		if s := m[0]; s > 0 && isAlnum(text[s-1]) {
			continue
		}
		l, err := URL(text[m[0]:m[1]])
		if err == nil && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

func isAlnum(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9'
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}
