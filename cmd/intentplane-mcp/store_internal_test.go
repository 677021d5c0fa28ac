package main

import (
	"bytes"
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
)

// TestMemStoreWarns: kind = "mem" says at start that nothing survives a
// restart; the embedded store keeps the mandate's records and says nothing.
func TestMemStoreWarns(t *testing.T) {
	for _, tc := range []struct {
		kind, path string
		warn       bool
	}{{"mem", "", true}, {"", "", true}, {"embedded", filepath.Join(t.TempDir(), "s.db"), false}} {
		var buf bytes.Buffer
		log := slog.New(slog.NewTextHandler(&buf, nil))
		s, err := openStore(context.Background(), &config.Config{Store: config.Store{Kind: tc.kind, Path: tc.path}}, log, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := strings.Contains(buf.String(), "lost when this process exits"); got != tc.warn {
			t.Errorf("kind %q: warned %v, want %v (log %q)", tc.kind, got, tc.warn, buf.String())
		}
		if (s.records != nil) == tc.warn {
			t.Errorf("kind %q: records %v", tc.kind, s.records)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
