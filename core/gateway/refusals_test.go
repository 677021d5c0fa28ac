package gateway

import (
	"bytes"
	"errors"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// TestRefusalCatalogueDocumented: every reason code of the catalogue has a
// row in docs/reason-codes.md, and every row a code the gateway gives
// (from the catalogue, or from a mandate's error with the mandate's
// message); each message says whether anything was done.
func TestRefusalCatalogueDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../../docs/reason-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	// The gateway's codes come before the section of intentplane-mcp's own
	// (mcpproxy checks that one).
	doc, _, _ = bytes.Cut(doc, []byte("\n## Codes of intentplane-mcp"))
	documented := map[intent.Code]bool{}
	for _, m := range regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|").FindAllSubmatch(doc, -1) {
		documented[intent.Code(m[1])] = true
	}
	inCatalogue := map[intent.Code]bool{
		// Given by core/mandate's errors, with refusals.MandateInvalid.
		intent.CodeMandateExpired: true, intent.CodeMandateAudience: true, intent.CodeMandateRevoked: true,
	}
	v := reflect.ValueOf(refusals)
	for i := range v.NumField() {
		m := catalogued(v.Field(i))
		name := v.Type().Field(i).Name
		if m == nil || m.Code == "" || m.Message == "" {
			t.Errorf("refusals.%s gives no refusal, no code or no text", name)
			continue
		}
		if strings.Contains(m.Message, "%!") {
			t.Errorf("refusals.%s formats its text wrongly: %q", name, m.Message)
		}
		inCatalogue[m.Code] = true
		if !documented[m.Code] {
			t.Errorf("refusals.%s: code %s is not documented in docs/reason-codes.md", name, m.Code)
		}
		if !strings.Contains(m.Message, "othing was done") && !strings.Contains(m.Message, "not execute again") && !strings.Contains(m.Message, "may or may not have taken effect") {
			t.Errorf("refusals.%s does not say whether anything was done: %q", name, m.Message)
		}
	}
	for c := range documented {
		if !inCatalogue[c] {
			t.Errorf("docs/reason-codes.md documents %s, which the gateway never gives", c)
		}
	}
	if len(documented) < 19 {
		t.Errorf("found %d codes in docs/reason-codes.md; the table was not read", len(documented))
	}
}

// catalogued calls one constructor of the catalogue with the zero value
// of each of its parameters (an error and a time given as real values, so
// that the text is formatted as a step would have it).
func catalogued(f reflect.Value) *intent.Refusal {
	in := make([]reflect.Value, f.Type().NumIn())
	for i := range in {
		switch pt := f.Type().In(i); {
		case pt == reflect.TypeFor[error]():
			in[i] = reflect.ValueOf(errors.New("why")).Convert(pt)
		case pt == reflect.TypeFor[time.Time]():
			in[i] = reflect.ValueOf(time.Date(2026, 12, 7, 9, 0, 0, 0, time.UTC))
		default:
			in[i] = reflect.Zero(pt)
		}
	}
	out := f.Call(in)
	r, _ := out[0].Interface().(*intent.Refusal)
	return r
}
