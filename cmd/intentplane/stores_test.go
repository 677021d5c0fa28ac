package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/postgres"
)

// appendChains appends a few receipts for two owners.
func appendChains(t *testing.T, l receipt.Log) {
	t.Helper()
	for i := range 5 {
		for _, o := range []intent.Owner{"emma", "noah"} {
			if _, err := l.Append(context.Background(), receipt.Receipt{Owner: o, Time: time.Unix(int64(i+1), 0), Action: "pay.send", Verdict: intent.Allow}); err != nil {
				t.Fatal(err)
			}
		}
	}
}

func runCLI(t *testing.T, args ...string) (string, error) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String() + errb.String(), err
}

// exportAndVerify exports the store, verifies the file and the store with
// the checkpoint key, and checks that an edit of the file is caught.
func exportAndVerify(t *testing.T, store string) {
	dir := t.TempDir()
	key := filepath.Join(dir, "cp.key")
	if out, err := runCLI(t, "mandate", "keygen", "--out", key); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	file := filepath.Join(dir, "receipts.jsonl")
	out, err := runCLI(t, "receipts", "export", "--store", store, "--out", file, "--sign-key", key, "--key-id", "cp")
	if err != nil {
		t.Fatalf("export: %v\n%s", err, out)
	}
	if !strings.Contains(out, "12 lines exported") {
		t.Errorf("export said %q, want 10 receipts and 2 checkpoints", out)
	}
	out, err = runCLI(t, "receipts", "verify", file, "--pub", "cp="+key+".pub")
	if err != nil || !strings.Contains(out, "OK: 10 receipts in 2 chains, 2 checkpoints") || strings.Contains(out, "warning") {
		t.Fatalf("verify file: %v\n%s", err, out)
	}
	out, err = runCLI(t, "receipts", "verify", "--store", store, "--pub", "cp="+key+".pub")
	if err != nil || !strings.Contains(out, "OK: 10 receipts in 2 chains, 2 checkpoints") {
		t.Fatalf("verify store: %v\n%s", err, out)
	}

	// The last receipt of a chain cut off: the checkpoint shows it.
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(data), "\n")
	cut := strings.Join(append(lines[:4:4], lines[5:]...), "")
	if err := os.WriteFile(file, []byte(cut), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "receipts", "verify", file, "--pub", "cp="+key+".pub"); err == nil || !strings.Contains(err.Error(), "removed") {
		t.Fatalf("verify of a truncated chain: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "receipts", "verify"); err == nil {
		t.Fatal("verify without FILE or --store succeeded")
	}
}

func TestReceiptsEmbedded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	appendChains(t, s)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	exportAndVerify(t, "embedded:"+path)
}

// TestReceiptsPostgres runs against PG_URL in a schema of its own; it is
// skipped without PG_URL, except under CI=true, where it fails.
func TestReceiptsPostgres(t *testing.T) {
	base := os.Getenv("PG_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and PG_URL is not set")
		}
		t.Skip("PG_URL is not set")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("PG_URL: %v", err)
	}
	defer conn.Close(ctx)
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema := "t_cli_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+schema); err != nil {
		t.Fatal(err)
	}
	defer conn.Exec(ctx, "DROP SCHEMA "+schema+" CASCADE") //nolint:errcheck
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	s, err := postgres.Open(ctx, u.String(), postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	appendChains(t, s)
	s.Close()
	exportAndVerify(t, u.String())
}
