package emma_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/internal/demo/emma"
)

// TestRun plays the scenario: Run fails if any decision differs from the
// one the scenario expects, and the exported receipts verify offline.
func TestRun(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	file := filepath.Join(t.TempDir(), "receipts.jsonl")
	if err := emma.Run(context.Background(), &out, emma.Options{Receipts: file}); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if strings.Contains(out.String(), "UNEXPECTED") {
		t.Fatalf("demo output reports an unexpected decision:\n%s", out.String())
	}
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := receipt.Verify(f, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Receipts < 15 || rep.Owners != 2 {
		t.Fatalf("exported %d receipts in %d chains, want at least 15 in 2", rep.Receipts, rep.Owners)
	}
}
