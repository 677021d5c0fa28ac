package mcpproxy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/mcpproxy"
)

// refuseAll denies every proposal as the gateway would a policy denial.
type refuseAll struct{}

func (refuseAll) Decide(context.Context, gateway.Request) (gateway.Decision, error) {
	return gateway.Decision{
		Verdict: intent.Deny, Refusal: &intent.Refusal{Code: intent.CodePolicyDenied, Message: "no"},
		OperationHash: intent.OperationHash{1, 2, 3},
		Receipt:       receipt.Receipt{Owner: "northwind", Action: "vault.login"},
	}, nil
}

// lockedBuffer is a bytes.Buffer safe for the handler's writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestDecisionLog: one JSON line per decision at info, with the owner,
// action, verdict, reason code, operation hash and latency, and never an
// argument (a password claim here).
func TestDecisionLog(t *testing.T) {
	t.Parallel()
	var buf lockedBuffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelInfo}))
	p, err := mcpproxy.New(mcpproxy.Config{Mandate: "m", Logger: log}, refuseAll{},
		mcpproxy.Tool{Name: "login", Action: "vault.login", InputSchema: json.RawMessage(`{"type":"object","properties":{"password":{"type":"string"}}}`)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	c := connect(t, p, nil)
	const secret = "correct-horse-battery-staple-7"
	req := mcp.CallToolRequest{}
	req.Params.Name = "login"
	req.Params.Arguments = map[string]any{"password": secret}
	res, err := c.CallTool(ctx, req)
	if err != nil || !res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	out := buf.String()
	if strings.Contains(out, secret) {
		t.Fatalf("the log holds the password: %s", out)
	}
	var lines []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("not a JSON line: %q", l)
		}
		if m["msg"] == "decision" {
			lines = append(lines, m)
		}
	}
	if len(lines) != 1 {
		t.Fatalf("%d decision lines in %s", len(lines), out)
	}
	l := lines[0]
	want := map[string]any{"level": "INFO", "owner": "northwind", "action": "vault.login", "verdict": "deny", "code": "policy.denied",
		"operation": intent.OperationHash{1, 2, 3}.String(), "executed": false}
	for k, v := range want {
		if l[k] != v {
			t.Errorf("%s = %v, want %v", k, l[k], v)
		}
	}
	if ms, ok := l["latency_ms"].(float64); !ok || ms < 0 {
		t.Errorf("latency_ms = %v", l["latency_ms"])
	}
}
