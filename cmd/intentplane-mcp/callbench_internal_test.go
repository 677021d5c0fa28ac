package main

import (
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// BenchmarkCallInProcess is a read-only tool call (get_balance) through
// the proxy run in the benchmark's own process, on the example's
// configuration and its embedded store, so that a CPU profile
// (-cpuprofile) shows where the proxy's time goes; BenchmarkCall measures
// the same call end to end against the bank server called directly.
func BenchmarkCallInProcess(b *testing.B) {
	dir := b.TempDir()
	bank := filepath.Join(dir, "bankserver")
	if out, err := exec.Command("go", "build", "-o", bank, "../../examples/mcp/bankserver").CombinedOutput(); err != nil {
		b.Fatalf("build the bank server: %v\n%s", err, out)
	}
	src := "../../examples/mcp"
	for _, f := range []string{"payees.json", "policy/policy.cedar", "policy/schema.cedarschema"} {
		data, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			b.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), data, 0o600); err != nil {
			b.Fatal(err)
		}
	}
	cfg, err := os.ReadFile(filepath.Join(src, "intentplane.toml"))
	if err != nil {
		b.Fatal(err)
	}
	text := strings.Replace(string(cfg), `command = "bin/bankserver"`, `command = "`+bank+`"`, 1)
	text = strings.Replace(text, `env = { BANK_REGION = "eu", BANK_LEDGER = "bank-ledger.json" }`, `env = { BANK_REGION = "eu" }`, 1)
	config := filepath.Join(dir, "intentplane.toml")
	if err := os.WriteFile(config, []byte(text), 0o600); err != nil {
		b.Fatal(err)
	}

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- run(ctx, []string{"--config", config}, inR, outW, io.Discard) }()
	b.Cleanup(func() { cancel(); _ = inW.Close(); <-done })
	c := client.NewClient(transport.NewIO(outR, inW, io.NopCloser(strings.NewReader(""))))
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "bench", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = "get_balance"
	req.Params.Arguments = map[string]any{}
	for range 50 {
		if _, err := c.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for range b.N {
		r, err := c.CallTool(ctx, req)
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
	}
}
