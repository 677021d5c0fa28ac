package main_test

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/internal/pgtest"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/postgres"
)

// BenchmarkSoak is issue 26's soak: intentplane-mcp, built and run as a
// client runs it, serves b.N tool calls (run it with -benchtime=100000x)
// on each store, mixed as an assistant's day is. Of every ten calls six
// read the balance (allowed, read-only); two pay an IBAN that is not on
// file (refused); one pays 5,000.00 EUR to a payee on file (asked: above
// the confirmation threshold, and this client offers no elicitation, so
// the gateway answers that a person must approve); one pays 0.01 EUR to a
// payee on file with a reference of its own (allowed, executed).
//
// It reports the proxy's anonymous resident memory (RssAnon: heap and
// stacks, not the store's file pages that bbolt maps) after the first
// tenth of the calls and at the end, the growth per decision between the
// two in bytes (the in-memory store keeps every receipt in the process,
// the others on disk), VmRSS at the end, and the budget reservations left
// open once the proxy stopped (read from the store; the in-memory store's
// end with the process).
//
//	go test -run '^$' -bench Soak -benchtime=100000x ./cmd/intentplane-mcp (PG_URL for postgres)
func BenchmarkSoak(b *testing.B) {
	for _, kind := range []string{"mem", "embedded", "postgres"} {
		b.Run("store="+kind, func(b *testing.B) {
			e := newEnv(b)
			open := soakStore(b, e, kind)
			soak(b, e)
			if open != nil {
				n, err := open()
				if err != nil {
					b.Fatal(err)
				}
				b.ReportMetric(float64(n), "open-reservations")
			}
		})
	}
}

// soakStore configures e's store as kind and returns what counts the open
// reservations once the proxy stopped (nil for the in-memory store).
func soakStore(b *testing.B, e *env, kind string) func() (int, error) {
	cfg := readFile(b, e.config)
	switch kind {
	case "mem":
		writeFile(b, e.config, strings.Replace(cfg, exampleStore, `kind = "mem"`, 1))
		return nil
	case "embedded":
		path := filepath.Join(e.dir, "intentplane.db")
		return func() (int, error) {
			s, err := embedded.Open(path, embedded.Options{LockTimeout: 10 * time.Second})
			if err != nil {
				return 0, err
			}
			defer s.Close()
			rs, err := s.OpenReservations(context.Background(), time.Now().Add(time.Hour))
			return len(rs), err
		}
	}
	if os.Getenv(pgtest.EnvURL) == "" {
		b.Skipf("%s is not set", pgtest.EnvURL)
	}
	dsn, _ := pgtest.Schema(b)
	writeFile(b, e.config, strings.Replace(cfg, exampleStore, "kind = \"postgres\"\ndsn_env = \"INTENTPLANE_PG_URL\"", 1))
	e.vars = append(e.vars, "INTENTPLANE_PG_URL="+dsn)
	return func() (int, error) {
		s, err := postgres.Open(context.Background(), dsn, postgres.Config{NoMigrate: true})
		if err != nil {
			return 0, err
		}
		defer s.Close()
		rs, err := s.OpenReservations(context.Background(), time.Now().Add(time.Hour))
		return len(rs), err
	}
}

// soak starts the proxy of e, makes b.N calls and reports its memory.
func soak(b *testing.B, e *env) {
	cmd := exec.Command(bins.proxy, "--config", e.config)
	cmd.Dir = e.dir
	cmd.Env = append(os.Environ(), e.vars...)
	in, err := cmd.StdinPipe()
	if err != nil {
		b.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		b.Fatal(err)
	}
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	c := client.NewClient(transport.NewIO(out, in, io.NopCloser(strings.NewReader(""))))
	ctx := context.Background()
	if err := c.Start(ctx); err != nil {
		b.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.ProtocolVersion20251125
	init.Params.ClientInfo = mcp.Implementation{Name: "soak", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		b.Fatal(err)
	}
	pid := cmd.Process.Pid
	var early int64
	b.ResetTimer()
	for i := range b.N {
		if i == b.N/10 {
			early = procStatus(b, pid, "RssAnon")
		}
		req, want := soakCall(i)
		r, err := c.CallTool(ctx, req)
		if err != nil {
			b.Fatalf("call %d: %v", i, err)
		}
		if got := outcome(r); got != want {
			b.Fatalf("call %d (%s): %s, want %s: %v", i, req.Params.Name, got, want, r.Content)
		}
	}
	b.StopTimer()
	end, rss := procStatus(b, pid, "RssAnon"), procStatus(b, pid, "VmRSS")
	b.ReportMetric(float64(end)/(1<<20), "rss-anon-end-MiB")
	b.ReportMetric(float64(rss)/(1<<20), "vm-rss-end-MiB")
	if n := b.N - b.N/10; n > 0 && early > 0 {
		b.ReportMetric(float64(end-early)/float64(n), "rss-anon-B/decision")
	}
	_ = c.Close()
	_ = in.Close()
	_ = cmd.Wait()
}

// outcome says what the gateway did with a call: "allowed", "asked" (a
// person must approve it) or "refused".
func outcome(r *mcp.CallToolResult) string {
	if !r.IsError {
		return "allowed"
	}
	for _, c := range r.Content {
		if strings.Contains(mcp.GetTextFromContent(c), "A person must approve this exact operation") {
			return "asked"
		}
	}
	return "refused"
}

// soakCall is the i-th call of the soak's mix and its outcome.
func soakCall(i int) (mcp.CallToolRequest, string) {
	req := mcp.CallToolRequest{}
	want := "allowed"
	switch i % 10 {
	case 6, 7:
		want = "refused"
		req.Params.Name = "send_money"
		req.Params.Arguments = map[string]any{"recipient_iban": "LT12 1000 0111 0100 1000", "amount": 12.5, "reference": "INV-" + strconv.Itoa(i)}
	case 8:
		want = "asked"
		req.Params.Name = "send_money"
		req.Params.Arguments = map[string]any{"recipient_iban": "GB29 NWBK 6016 1331 9268 19", "amount": 5000, "reference": "INV-" + strconv.Itoa(i)}
	case 9:
		req.Params.Name = "send_money"
		req.Params.Arguments = map[string]any{"recipient_iban": "DE89 3704 0044 0532 0130 00", "amount": 0.01, "reference": "INV-" + strconv.Itoa(i)}
	default:
		req.Params.Name = "get_balance"
		req.Params.Arguments = map[string]any{}
	}
	return req, want
}

// procStatus returns field (a size in kB) of /proc/pid/status, in bytes.
func procStatus(b *testing.B, pid int, field string) int64 {
	s, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		b.Skipf("no /proc: %v", err)
	}
	for l := range strings.SplitSeq(string(s), "\n") {
		if v, ok := strings.CutPrefix(l, field+":"); ok {
			kb, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				b.Fatalf("%s: %q", field, l)
			}
			return kb << 10
		}
	}
	b.Fatalf("no %s in /proc/%d/status", field, pid)
	return 0
}
