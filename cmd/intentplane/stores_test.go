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
	"github.com/intentplane/intentplane/core/mandate"
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
// the checkpoint key, and checks that an edit of the file is caught. Then
// more appends, to the store, receipts that no checkpoint covers (noah's
// tail and a new owner, mallory): verifying the store with the key must
// refuse them, naming both chains, unless --allow-unanchored is given.
func exportAndVerify(t *testing.T, store string, more func(t *testing.T)) {
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

	// Exported again with another key (as an auditor's export of a store
	// holding intentplane-mcp's own checkpoints): verified with that key
	// alone, the other key's checkpoints ignored and named.
	key2 := filepath.Join(dir, "cp2.key")
	if out, err := runCLI(t, "mandate", "keygen", "--out", key2); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	file2 := filepath.Join(dir, "receipts2.jsonl")
	if out, err := runCLI(t, "receipts", "export", "--store", store, "--out", file2, "--sign-key", key2, "--key-id", "audit"); err != nil {
		t.Fatalf("second export: %v\n%s", err, out)
	}
	out, err = runCLI(t, "receipts", "verify", file2, "--pub", "audit="+key2+".pub")
	if err != nil || !strings.Contains(out, "OK: 10 receipts in 2 chains, 4 checkpoints") || !strings.Contains(out, `2 checkpoints signed with key "cp", not given with --pub, were ignored`) {
		t.Fatalf("verify with the second key alone: %v\n%s", err, out)
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

	more(t)
	out, err = runCLI(t, "receipts", "verify", "--store", store, "--pub", "cp="+key+".pub")
	if err == nil || !strings.Contains(err.Error(), "2 of 3 receipt chains are not anchored") ||
		!strings.Contains(err.Error(), `owner "mallory": receipts 1 to 2, no checkpoint`) ||
		!strings.Contains(err.Error(), `owner "noah": receipt 6 after the last checkpoint (seq 5)`) {
		t.Fatalf("verify store with unanchored chains: %v\n%s", err, out)
	}
	out, err = runCLI(t, "receipts", "verify", "--store", store, "--pub", "cp="+key+".pub", "--allow-unanchored")
	if err != nil || !strings.Contains(out, "OK: 13 receipts in 3 chains") || !strings.Contains(out, "accepted with --allow-unanchored (2)") {
		t.Fatalf("verify store --allow-unanchored: %v\n%s", err, out)
	}
}

// appendUnanchored appends one receipt to noah's chain and two for a new
// owner, mallory.
func appendUnanchored(t *testing.T, l receipt.Log) {
	t.Helper()
	for _, o := range []intent.Owner{"noah", "mallory", "mallory"} {
		if _, err := l.Append(context.Background(), receipt.Receipt{Owner: o, Time: time.Unix(100, 0), Action: "pay.send", Verdict: intent.Allow}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReceiptsVerifyAnchored is issue 11's attack on an exported file: with
// a trusted key, a chain rewritten from its start and a wholly invented
// owner's chain are refused although another chain has a checkpoint; each
// is named; --allow-unanchored accepts them with a warning.
func TestReceiptsVerifyAnchored(t *testing.T) {
	dir := t.TempDir()
	key := filepath.Join(dir, "cp.key")
	if out, err := runCLI(t, "mandate", "keygen", "--out", key); err != nil {
		t.Fatalf("keygen: %v\n%s", err, out)
	}
	raw, err := os.ReadFile(key)
	if err != nil {
		t.Fatal(err)
	}
	priv, err := mandate.ParsePrivateKey(strings.TrimSpace(string(raw)))
	if err != nil {
		t.Fatal(err)
	}
	signer := receipt.NewEd25519Signer("cp", priv)
	chain := func(o intent.Owner, n int, output string) []receipt.Receipt {
		var rs []receipt.Receipt
		var prev *receipt.Receipt
		for i := range n {
			r, err := receipt.Link(receipt.Receipt{Owner: o, Time: time.Unix(int64(i+1), 0), Action: "pay.send", Verdict: intent.Allow, Output: output}, prev)
			if err != nil {
				t.Fatal(err)
			}
			rs = append(rs, r)
			prev = &rs[len(rs)-1]
		}
		return rs
	}
	write := func(name string, chains ...[]receipt.Receipt) string {
		var b bytes.Buffer
		for _, rs := range chains {
			if err := receipt.WriteJSONL(&b, rs); err != nil {
				t.Fatal(err)
			}
		}
		// Only emma's chain is checkpointed.
		cp, err := receipt.SignCheckpoint(signer, chains[0][len(chains[0])-1], time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if err := receipt.WriteCheckpoints(&b, []receipt.Checkpoint{cp}); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, b.Bytes(), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	emma := chain("emma", 3, "paid")
	for _, tt := range []struct {
		name, file, want string
	}{
		{"rewritten from its start", write("rewritten.jsonl", emma, chain("noah", 4, "rewritten")), `owner "noah": receipts 1 to 4, no checkpoint`},
		{"invented owner", write("invented.jsonl", emma, chain("mallory", 2, "invented")), `owner "mallory": receipts 1 to 2, no checkpoint`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			out, err := runCLI(t, "receipts", "verify", tt.file, "--pub", "cp="+key+".pub")
			if err == nil || !strings.Contains(err.Error(), "1 of 2 receipt chains are not anchored") || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), `"emma"`) {
				t.Fatalf("verify: %v\n%s\nwant a refusal naming %s only", err, out, tt.want)
			}
			out, err = runCLI(t, "receipts", "verify", tt.file, "--pub", "cp="+key+".pub", "--allow-unanchored")
			if err != nil || !strings.Contains(out, "NOT anchored by a trusted checkpoint, accepted with --allow-unanchored (1)") || !strings.Contains(out, tt.want) {
				t.Fatalf("verify --allow-unanchored: %v\n%s", err, out)
			}
		})
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
	exportAndVerify(t, "embedded:"+path, func(t *testing.T) {
		s, err := embedded.Open(path, embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		appendUnanchored(t, s)
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	})
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
	exportAndVerify(t, u.String(), func(t *testing.T) { appendUnanchored(t, s) })
	s.Close()
}
