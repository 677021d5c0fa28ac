package mcpproxy_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/intentplane/intentplane/mcpproxy"
)

const echoSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","anyOf":[{"required":["n"]}],"properties":{"n":{"type":"integer"}}}`

// TestDownstreamHTTP dials a streamable-HTTP server: the raw schema is
// kept, arguments go byte for byte (an integer beyond float64), vendor
// _meta keys pass and protocol keys do not; the observer is told of each
// call's outcome.
func TestDownstreamHTTP(t *testing.T) {
	t.Parallel()
	s := server.NewMCPServer("echo", "1")
	s.AddTool(mcp.NewToolWithRawSchema("echo", "Echo the call.", json.RawMessage(echoSchema)), func(_ context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		meta := map[string]any{}
		if req.Params.Meta != nil {
			meta = req.Params.Meta.AdditionalFields
		}
		m, _ := json.Marshal(meta)
		return mcp.NewToolResultText(string(req.Params.RawArguments) + " " + string(m)), nil
	})
	s.AddTool(mcp.NewTool("slow"), func(ctx context.Context, _ mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Second):
			return mcp.NewToolResultText("late"), nil
		}
	})
	s.AddTool(mcp.NewTool("fail"), func(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("no"), nil
	})
	hs := httptest.NewServer(server.NewStreamableHTTPServer(s))
	defer hs.Close()

	ctx := context.Background()
	var obs calls
	d, err := mcpproxy.Dial(ctx, mcpproxy.ServerSpec{Name: "echo", URL: hs.URL + "/mcp", CallTimeout: 300 * time.Millisecond, Observer: &obs})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	tools := d.Tools()
	if len(tools) != 3 {
		t.Fatalf("tools: %+v", tools)
	}
	for _, tl := range tools {
		if tl.Name == "echo" && string(tl.InputSchema) != echoSchema {
			t.Errorf("schema:\n got %s\nwant %s", tl.InputSchema, echoSchema)
		}
	}
	res, err := d.Call(ctx, "echo", json.RawMessage(`{"n":9007199254740993}`), mcpproxy.CallOptions{
		Meta: map[string]any{"com.example/trace": "t-1", "io.modelcontextprotocol/clientInfo": "x", "progressToken": "p"},
	})
	if err != nil {
		t.Fatal(err)
	}
	got := res.Content[0].(mcp.TextContent).Text
	if want := `{"n":9007199254740993} {"com.example/trace":"t-1"}`; got != want {
		t.Errorf("got %s, want %s", got, want)
	}
	if _, err := d.Call(ctx, "slow", json.RawMessage(`{}`), mcpproxy.CallOptions{}); !errors.Is(err, mcpproxy.ErrNoAnswer) {
		t.Errorf("a call past its timeout: %v", err)
	}
	var rpc *mcpproxy.RPCError
	if _, err := d.Call(ctx, "nope", json.RawMessage(`{}`), mcpproxy.CallOptions{}); !errors.As(err, &rpc) {
		t.Errorf("an unknown tool: %v", err)
	}
	if res, err := d.Call(ctx, "fail", json.RawMessage(`{}`), mcpproxy.CallOptions{}); err != nil || !res.IsError {
		t.Errorf("a tool error: %v %+v", err, res)
	}
	_ = d.Close()
	if _, err := d.Call(ctx, "echo", json.RawMessage(`{}`), mcpproxy.CallOptions{}); !errors.Is(err, mcpproxy.ErrUnavailable) {
		t.Errorf("after Close: %v", err)
	}
	want := []string{"echo/echo/ok", "echo/slow/no_answer", "echo/nope/rpc_error", "echo/fail/tool_error", "echo/echo/unavailable"}
	if got := obs.list(); !slices.Equal(got, want) {
		t.Errorf("observed %v, want %v", got, want)
	}
	if obs.slowest < 300*time.Millisecond {
		t.Errorf("the call past its timeout took %v", obs.slowest)
	}
}

// calls records what a CallObserver is told.
type calls struct {
	mu      sync.Mutex
	got     []string
	slowest time.Duration
}

func (c *calls) Called(server, tool string, outcome mcpproxy.CallOutcome, latency time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, server+"/"+tool+"/"+string(outcome))
	c.slowest = max(c.slowest, latency)
}

func (c *calls) list() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.got)
}

func TestDialRefusesBadSpecs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	if _, err := mcpproxy.Dial(ctx, mcpproxy.ServerSpec{Name: "x"}); err == nil {
		t.Error("a spec without command or URL was accepted")
	}
	if _, err := mcpproxy.Dial(ctx, mcpproxy.ServerSpec{Name: "x", Command: "/nonexistent/server", StartTimeout: time.Second}); !errors.Is(err, mcpproxy.ErrUnavailable) {
		t.Errorf("a missing command: %v", err)
	}
}
