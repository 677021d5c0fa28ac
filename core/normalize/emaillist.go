package normalize

import (
	"fmt"
	"slices"
	"strings"
)

// EmailList normalizes a list of e-mail addresses written as one text
// value, separated by commas (spaces around them are ignored): each
// address with Email, duplicates removed, sorted, joined with ",". A list
// is a set: the order the agent gave carries no meaning. It refuses an
// empty list, an empty element and any address Email refuses. The
// workspace and travel packs' recipients, cc, bcc and participants use it.
func EmailList(s string) (string, error) {
	parts := strings.Split(s, ",")
	out := make([]string, 0, len(parts))
	for _, p := range parts {
		if strings.TrimSpace(p) == "" {
			return "", fmt.Errorf("the list %q has an empty address; separate addresses with single commas", clip(s))
		}
		a, err := Email(p)
		if err != nil {
			return "", err
		}
		out = append(out, a)
	}
	slices.Sort(out)
	return strings.Join(slices.Compact(out), ","), nil
}

// SplitList splits a comma-separated list (an EmailList's output, or a
// registry's entry) into its trimmed, non-empty elements; "" gives nil.
func SplitList(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
