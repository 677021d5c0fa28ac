package workspace

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// ID normalizes an e-mail, event or file id: decimal digits, surrounding
// spaces trimmed, at most 18 digits.
func ID(s string) (string, error) {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > 18 || strings.Trim(t, "0123456789") != "" {
		return "", fmt.Errorf("id %q is not a number such as \"13\"", clip(s))
	}
	return t, nil
}

// Permission normalizes a sharing permission: "r" (read) or "rw" (read
// and write), case-insensitive.
func Permission(s string) (string, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if t != "r" && t != "rw" {
		return "", fmt.Errorf("permission %q is not \"r\" or \"rw\"", clip(s))
	}
	return t, nil
}

func clip(s string) string {
	if len(s) > 64 {
		return s[:64] + "…"
	}
	return s
}

// linkRE finds links in free text: a URL with a scheme ("https://…",
// "ftp://…"), a host starting with "www.", or a bare host with a path
// ("bit.ly/x"). An address (name@host) and a file name without a path
// ("notes.docx") are not links.
var linkRE = regexp.MustCompile(`(?i)[a-z][a-z0-9+.-]*://[^\s<>"'()\[\]{}]+|\bwww\.[^\s<>"'()\[\]{}]+|(?:^|[\s<>"'(\[{])([a-z0-9-]+(?:\.[a-z0-9-]+)+/[^\s<>"'()\[\]{}]*)`)

// Links returns the links free text carries, in canonical form (see
// CanonicalLink), in order of appearance without duplicates.
func Links(text string) []string {
	var out []string
	for _, m := range linkRE.FindAllStringSubmatchIndex(text, -1) {
		s, e := m[0], m[1]
		if m[2] >= 0 {
			s, e = m[2], m[3]
		}
		if s > 0 && text[s-1] == '@' {
			continue
		}
		l := CanonicalLink(text[s:e])
		if l != "" && !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return out
}

// CanonicalLink is the form in which links are compared: trailing
// punctuation removed, the scheme "http://" or "https://" and a leading
// "www." dropped, the host lower-cased, a trailing "/" dropped; the path
// keeps its case ("bit.ly/sUf7tOJ" and "bit.ly/suf7toj" are different
// links). Other schemes are kept, lower-cased.
func CanonicalLink(s string) string {
	s = strings.TrimRight(s, ".,;:!?")
	scheme := ""
	if i := strings.Index(s, "://"); i >= 0 {
		scheme = strings.ToLower(s[:i])
		s = s[i+3:]
	}
	host, path, _ := strings.Cut(s, "/")
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	out := host
	if path != "" {
		out += "/" + strings.TrimRight(path, "/")
	}
	out = strings.TrimRight(out, "/")
	if scheme != "" && scheme != "http" && scheme != "https" {
		out = scheme + "://" + out
	}
	return out
}
