package mcpproxy_test

import (
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestProxyCodesDocumented: every reason code the proxy declares itself
// (an intent.Code constant in this package) has a row in the section
// "Codes of intentplane-mcp" of docs/reason-codes.md, and every row of that
// section is a code the proxy declares.
func TestProxyCodesDocumented(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile("../docs/reason-codes.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := bytes.Cut(doc, []byte("\n## Codes of intentplane-mcp"))
	if !ok {
		t.Fatal(`docs/reason-codes.md has no section "Codes of intentplane-mcp"`)
	}
	if next := bytes.Index(section, []byte("\n## ")); next >= 0 {
		section = section[:next]
	}
	row := regexp.MustCompile("(?m)^\\| `([a-z_.]+)` \\|")
	documented := map[string]bool{}
	for _, m := range row.FindAllSubmatch(section, -1) {
		documented[string(m[1])] = true
	}

	declared := map[string]bool{}
	decl := regexp.MustCompile(`intent\.Code\s*=\s*"([a-z_.]+)"`)
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range decl.FindAllSubmatch(src, -1) {
			declared[string(m[1])] = true
		}
	}
	if len(declared) < 5 {
		t.Fatalf("found %d code constants in mcpproxy; the declarations were not read", len(declared))
	}
	for c := range declared {
		if !documented[c] {
			t.Errorf("the proxy's code %s is not documented in docs/reason-codes.md (Codes of intentplane-mcp)", c)
		}
	}
	for c := range documented {
		if !declared[c] {
			t.Errorf("docs/reason-codes.md documents %s under intentplane-mcp, which the proxy never declares", c)
		}
	}
}
