package gateway

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/intent"
)

func TestWithFacts(t *testing.T) {
	t.Parallel()
	facts := map[string]intent.Value{
		"dup":  intent.Str(`BILL/2026/11/0001 (vendor reference "INV-2290")`),
		"n":    intent.Int(3),
		"long": intent.Str(strings.Repeat("é", maxFactText)),
	}
	rs := []string{"plain", "may duplicate {facts.dup}; {facts.n} others; {facts.missing}", "{facts.long}", "open {facts.dup"}
	got := withFacts(rs, facts)
	want := []string{"plain", `may duplicate BILL/2026/11/0001 (vendor reference "INV-2290"); 3 others; (unknown)`,
		strings.Repeat("é", maxFactText/2) + "…", "open {facts.dup"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("withFacts (-want, +got):\n%s", diff)
	}
	if rs[1] != "may duplicate {facts.dup}; {facts.n} others; {facts.missing}" {
		t.Error("withFacts changed its argument")
	}
}
