package gateway

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// maxFactText is the most bytes of one fact's text that a reason quotes.
const maxFactText = 400

// withFacts returns the reasons rs with each "{facts.NAME}" replaced by
// the text of the fact NAME (a String as it is, a Long in decimal, a Bool
// as true or false), so that a policy's @reason can name the record it is
// about ("may duplicate {facts.duplicate_of}"). A fact's text is cut to
// maxFactText bytes; a fact that is missing or of another kind is
// "(unknown)". A pack writes such facts for people (the agent reads the
// refusal, a person the step-up): it must put in them only the owner's
// records. rs is not changed.
func withFacts(rs []string, facts map[string]intent.Value) []string {
	var out []string
	for i, r := range rs {
		if !strings.Contains(r, "{facts.") {
			continue
		}
		if out == nil {
			out = slices.Clone(rs)
		}
		out[i] = expandFacts(r, facts)
	}
	if out == nil {
		return rs
	}
	return out
}

// expandFacts replaces every "{facts.NAME}" of r (see withFacts).
func expandFacts(r string, facts map[string]intent.Value) string {
	var b strings.Builder
	for {
		i := strings.Index(r, "{facts.")
		if i < 0 {
			break
		}
		j := strings.IndexByte(r[i:], '}')
		if j < 0 {
			break
		}
		b.WriteString(r[:i])
		b.WriteString(factText(facts, r[i+len("{facts."):i+j]))
		r = r[i+j+1:]
	}
	b.WriteString(r)
	return b.String()
}

func factText(facts map[string]intent.Value, name string) string {
	v, ok := facts[name]
	if !ok {
		return "(unknown)"
	}
	if v.Kind != intent.KindString && v.Kind != intent.KindInt && v.Kind != intent.KindBool {
		return "(unknown)"
	}
	s := v.String()
	if len(s) > maxFactText {
		n := maxFactText
		for n > 0 && !utf8.RuneStart(s[n]) {
			n--
		}
		s = s[:n] + "…"
	}
	return s
}
