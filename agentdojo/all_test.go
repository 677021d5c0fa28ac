package agentdojo

import (
	"context"
	"strings"
	"testing"
)

// TestReplayAll: the four suites through the gateway, worst case, are
// AgentDojo v1.2's 949 pairs with no attack executed and each suite's
// utility as its own replay states it; the table names every suite.
func TestReplayAll(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("replays 949 pairs; each suite's own test runs in -short")
	}
	all, err := ReplayAll(context.Background(), Options{Gateway: true})
	if err != nil {
		t.Fatal(err)
	}
	if all.Runs != 949 || len(all.Suites) != 4 || all.AttacksExecuted != 0 {
		t.Fatalf("%d pairs in %d suites, %d attacks executed; want 949 in 4, none", all.Runs, len(all.Suites), all.AttacksExecuted)
	}
	ok := 0
	for _, r := range all.Suites {
		ok += r.UtilityOK
	}
	if all.UtilityOK != ok || all.UtilityNoAttackTotal != 16+40+21+20 || len(all.Asked) != 4 {
		t.Errorf("totals %d (suites %d), %d user tasks, %d loads", all.UtilityOK, ok, all.UtilityNoAttackTotal, len(all.Asked))
	}
	var b strings.Builder
	if err := all.WriteTable(&b); err != nil {
		t.Fatal(err)
	}
	for _, s := range append(Suites, "all", "0 of 949") {
		if !strings.Contains(b.String(), s) {
			t.Errorf("the table lacks %q:\n%s", s, b.String())
		}
	}
}
