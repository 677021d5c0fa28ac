package approvals

import (
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

// displayValue returns a trusted value as the page shows it: an IBAN in
// groups of four ("DE89 3704 0044 0532 0130 00"), anything else as it is.
// Only a value already in electronic format is grouped, so that the
// display never hides a character the value holds.
func displayValue(v string) string {
	if e, err := normalize.IBAN(v); err == nil && e == v {
		return normalize.FormatIBAN(v)
	}
	return v
}

// sameSpelling reports whether the agent's spelling sent names the trusted
// value: equal, or the same IBAN once both are normalized (spacing and
// letter case only; a look-alike or invisible character still differs, as
// normalize.IBAN refuses it).
func sameSpelling(sent, value string) bool {
	if sent == value {
		return true
	}
	a, err := normalize.IBAN(sent)
	if err != nil {
		return false
	}
	b, err := normalize.IBAN(value)
	return err == nil && a == b
}

// nameFacts are the facts that name a critical argument's record, by
// parameter, in the order looked for: the page shows the first present
// next to the internal id that executes.
var nameFacts = map[string][]string{
	"vendor":      {"vendor_name"},
	"bill":        {"bill_ref", "bill_name"},
	"beneficiary": {"beneficiary_name"},
}

// nameOf returns the name on file of param's record from the request's
// facts ("<param>_name", or the names nameFacts lists), or "".
func (r *request) nameOf(param string) string {
	keys := nameFacts[param]
	if keys == nil {
		keys = []string{param + "_name"}
	}
	for _, k := range keys {
		if v, ok := r.facts[k]; ok && v.Kind == intent.KindString && v.Str != "" {
			return v.Str
		}
	}
	return ""
}
