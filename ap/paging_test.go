package ap_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
)

// TestListPagingBounds: a page size or offset out of range is a bad
// argument, refused before anything is read (it used to reach the executor
// and come back as "the system of record refused it", a message for a
// write; found by a new user's trial); the bounds are inclusive.
func TestListPagingBounds(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandate("m-page", ap.DemoCompany, "EUR")
	for _, tt := range []struct {
		name string
		args map[string]any
		ok   bool
	}{
		{"limit 0", map[string]any{"limit": 0}, false},
		{"limit above the maximum", map[string]any{"limit": ap.MaxListLimit + 1}, false},
		{"negative offset", map[string]any{"offset": -1}, false},
		{"limit 1", map[string]any{"limit": 1}, true},
		{"limit at the maximum", map[string]any{"limit": ap.MaxListLimit}, true},
		{"offset 0", map[string]any{"offset": 0}, true},
	} {
		d := e.decide(tok, ap.ActionListOpenBills, tt.args)
		switch {
		case tt.ok && !d.Executed:
			t.Errorf("%s: %s %s; want the page", tt.name, code(d), message(d))
		case !tt.ok && (d.Executed || code(d) != intent.CodeBadArgument || !strings.Contains(message(d), "must be from")):
			t.Errorf("%s: executed %v, %s %s; want %s naming the bounds", tt.name, d.Executed, code(d), message(d), intent.CodeBadArgument)
		}
	}
}
