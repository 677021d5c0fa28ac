package gateway

import (
	"bytes"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"

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
		m := v.Field(i).Interface().(message)
		name := v.Type().Field(i).Name
		if m.code == "" || m.text == "" {
			t.Errorf("refusals.%s has no code or no text", name)
			continue
		}
		inCatalogue[m.code] = true
		if !documented[m.code] {
			t.Errorf("refusals.%s: code %s is not documented in docs/reason-codes.md", name, m.code)
		}
		if !strings.Contains(m.text, "othing was done") && !strings.Contains(m.text, "not execute again") && !strings.Contains(m.text, "may or may not have taken effect") {
			t.Errorf("refusals.%s does not say whether anything was done: %q", name, m.text)
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
