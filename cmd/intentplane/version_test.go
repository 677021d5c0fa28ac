package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestVersionFlag(t *testing.T) {
	t.Parallel()
	var out, errb bytes.Buffer
	if err := run(context.Background(), []string{"--version"}, &out, &errb); err != nil {
		t.Fatalf("--version: %v (stderr %q)", err, errb.String())
	}
	if got := out.String(); !strings.HasPrefix(got, "intentplane ") || !strings.Contains(got, "go1.") {
		t.Errorf("--version printed %q, want \"intentplane <version> ... go1.x\"", got)
	}
}
