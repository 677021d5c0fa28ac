package main_test

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/internal/pgtest"
	"github.com/intentplane/intentplane/store/postgres"
)

// startReplica runs one more proxy on e's configuration and returns its
// client and its stderr.
func (e *env) startReplica() (*client.Client, *lockedBuffer) {
	e.t.Helper()
	stderr := &lockedBuffer{t: e.t}
	tr := transport.NewStdioWithOptions(bins.proxy, e.vars, []string{"--config", e.config},
		transport.WithCommandStderrWriter(stderr))
	c := client.NewClient(tr)
	if err := c.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion20251125, ClientInfo: mcp.Implementation{Name: "e2e", Version: "1"},
	}}); err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	return c, stderr
}

// newPostgresEnv is newEnv on a PostgreSQL store in a schema of its own
// (the connection string in INTENTPLANE_PG_URL, which dsn_env names); it
// returns the connection string and the schema's name.
func newPostgresEnv(t *testing.T) (e *env, dsn, schema string) {
	t.Helper()
	dsn, schema = pgtest.Schema(t)
	e = newEnv(t)
	usePostgres(t, e, dsn)
	return e, dsn, schema
}

var mandateLine = regexp.MustCompile(`mandate (\S+) \(issued at start\)`)

// TestTwoReplicasOnePayment is issue 11's two intentplane-mcp processes
// sharing one PostgreSQL database, the AP pack mounted on demo data: 50
// concurrent identical ap_pay_bill calls spread over both execute exactly
// once, both run under the one mandate kept in the database, and its
// budget holds exactly the one payment, nothing left reserved.
func TestTwoReplicasOnePayment(t *testing.T) {
	t.Parallel()
	e, dsn, _ := newPostgresEnv(t)

	var clients [2]*client.Client
	var ids [2]string
	for i := range clients {
		var stderr *lockedBuffer
		clients[i], stderr = e.startReplica()
		// The child's stderr reaches the buffer through a pipe: wait for
		// the line rather than read it once.
		m := mandateLine.FindStringSubmatch(stderr.String())
		for deadline := time.Now().Add(20 * time.Second); m == nil && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
			m = mandateLine.FindStringSubmatch(stderr.String())
		}
		if m == nil {
			t.Fatalf("replica %d did not name its mandate: %q", i, stderr.String())
		}
		ids[i] = m[1]
	}
	if ids[0] != ids[1] {
		t.Fatalf("the replicas run under two mandates, %s and %s: each would have its own budget", ids[0], ids[1])
	}

	args := fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanOnFile)
	const n = 50
	results, errs := make([]*mcp.CallToolResult, n), make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			req := mcp.CallToolRequest{}
			req.Params.Name, req.Params.Arguments = "ap_pay_bill", json.RawMessage(args)
			results[i], errs[i] = clients[i%2].CallTool(ctx, req)
		})
	}
	wg.Wait()
	ok := 0
	for i, r := range results {
		if errs[i] != nil {
			t.Fatalf("call %d: %v", i, errs[i])
		}
		if !r.IsError {
			ok++
		}
	}
	if ok != 1 {
		var texts []string
		for _, r := range results {
			texts = append(texts, text(r))
		}
		t.Fatalf("%d of %d identical payments executed, want exactly 1:\n%s", ok, n, strings.Join(texts, "\n"))
	}

	st, err := postgres.Open(context.Background(), dsn, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	u, err := st.Usage(context.Background(), ids[0])
	if err != nil {
		t.Fatal(err)
	}
	if u.Committed != 85000 || u.Reserved != 0 {
		t.Fatalf("the mandate's budget holds committed %d, reserved %d (minor units); want 85000 and 0", u.Committed, u.Reserved)
	}
}
