package mcpproxy_test

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/mcpproxy"
)

// allowAll allows every proposal without executing anything.
type allowAll struct{}

func (allowAll) Decide(context.Context, gateway.Request) (gateway.Decision, error) {
	return gateway.Decision{Verdict: intent.Allow, Output: "allowed"}, nil
}

const (
	paySchema    = `{"type":"object","properties":{"iban":{"type":"string"},"amount":{"type":"number"}},"required":["iban","amount"]}`
	payNoIBAN    = `{"type":"object","properties":{"amount":{"type":"number"}},"required":["amount"]}`
	payNewSchema = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","properties":{"iban":{"type":"string","description":"IBAN"},"amount":{"type":"number"}},"required":["iban","amount"],"anyOf":[{"required":["iban"]}]}`
	payRequires  = `{"type":"object","properties":{"iban":{"type":"string"},"amount":{"type":"number"},"otp":{"type":"string"}},"required":["iban","amount","otp"]}`
)

func noop(context.Context, mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText("done"), nil
}

// TestToolsListChanged follows a downstream that adds, removes and
// changes tools at runtime, on both protocol eras.
func TestToolsListChanged(t *testing.T) {
	t.Parallel()
	for _, version := range []string{mcp.ProtocolVersion20251125, mcp.ProtocolVersion20260728} {
		t.Run(version, func(t *testing.T) {
			t.Parallel()
			down := server.NewMCPServer("bank", "1", server.WithToolCapabilities(true))
			down.AddTool(mcp.NewToolWithRawSchema("pay", "Pay.", json.RawMessage(paySchema)), noop)
			down.AddTool(mcp.NewTool("balance", mcp.WithDescription("Balance.")), noop)
			down.AddTool(mcp.NewTool("delete_account"), noop)
			ctx := context.Background()
			d, raw := dialHTTP(t, down, version)
			p, err := mcpproxy.New(mcpproxy.Config{Mandate: "m"}, allowAll{},
				mcpproxy.Tool{Name: "pay", Action: "bank.pay", Description: raw["pay"].Description, InputSchema: raw["pay"].InputSchema,
					Mirror: &mcpproxy.Mirror{Server: d, Tool: "pay", Params: []string{"iban", "amount"}, Critical: []string{"iban"}}},
				mcpproxy.Tool{Name: "balance", Action: "bank.balance", Description: raw["balance"].Description, InputSchema: raw["balance"].InputSchema, ReadOnly: true,
					Mirror: &mcpproxy.Mirror{Server: d, Tool: "balance"}},
			)
			if err != nil {
				t.Fatal(err)
			}
			var changes atomic.Int64
			c := connect(t, p, func(n mcp.JSONRPCNotification) {
				if n.Method == string(mcp.MethodNotificationToolsListChanged) {
					changes.Add(1)
				}
			})
			list := func() map[string]string {
				t.Helper()
				resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: "2.0", ID: mcp.NewRequestId("l"), Method: "tools/list"})
				if err != nil || resp.Error != nil {
					t.Fatalf("tools/list: %v %v", err, resp.Error)
				}
				var l struct {
					Tools []struct {
						Name        string          `json:"name"`
						InputSchema json.RawMessage `json:"inputSchema"`
					} `json:"tools"`
				}
				if err := json.Unmarshal(resp.Result, &l); err != nil {
					t.Fatal(err)
				}
				out := map[string]string{}
				for _, tl := range l.Tools {
					out[tl.Name] = string(tl.InputSchema)
				}
				return out
			}
			names := func(m map[string]string) []string {
				var out []string
				for k := range m {
					out = append(out, k)
				}
				slices.Sort(out)
				return out
			}
			call := func(name string) *mcp.CallToolResult {
				t.Helper()
				req := mcp.CallToolRequest{}
				req.Params.Name = name
				req.Params.Arguments = map[string]any{}
				res, err := c.CallTool(ctx, req)
				if err != nil {
					t.Fatalf("call %s: %v", name, err)
				}
				return res
			}
			// waitFor waits until the client has been told of n changes
			// and the list has the names want.
			waitFor := func(n int64, want ...string) map[string]string {
				t.Helper()
				deadline := time.Now().Add(5 * time.Second)
				for {
					l := list()
					if changes.Load() == n && slices.Equal(names(l), want) {
						return l
					}
					if time.Now().After(deadline) {
						t.Fatalf("after %d changes, want %v: got %d changes, %v", n, want, changes.Load(), names(l))
					}
					time.Sleep(20 * time.Millisecond)
				}
			}
			// downstreamHas waits until the proxy's Downstream listed name
			// (or no longer does), then a moment for the re-mirroring.
			downstreamHas := func(name string, has bool) {
				t.Helper()
				deadline := time.Now().Add(5 * time.Second)
				for {
					found := slices.ContainsFunc(d.Tools(), func(r mcpproxy.RawTool) bool { return r.Name == name })
					if found == has {
						time.Sleep(100 * time.Millisecond)
						return
					}
					if time.Now().After(deadline) {
						t.Fatalf("the downstream's tools never had %s = %v", name, has)
					}
					time.Sleep(20 * time.Millisecond)
				}
			}

			waitFor(0, "balance", "pay")

			// A new tool that is not configured: never shown, nothing sent.
			down.AddTool(mcp.NewTool("transfer_all"), noop)
			downstreamHas("transfer_all", true)
			waitFor(0, "balance", "pay")

			// A configured tool disappears: hidden, and a call from an old
			// list is refused with the reason.
			down.DeleteTools("balance")
			waitFor(1, "pay")
			if r := call("balance"); !r.IsError || !strings.Contains(text(r), "no longer offers it") {
				t.Errorf("a call to the removed tool: %+v", r)
			} else if m, _ := r.Meta.AdditionalFields[mcpproxy.MetaKey].(map[string]any); m["code"] != string(mcpproxy.CodeToolUnavailable) || m["verdict"] != "deny" {
				t.Errorf("the refusal's _meta: %v", r.Meta)
			}

			// pay loses its critical parameter: hidden and refused.
			down.AddTool(mcp.NewToolWithRawSchema("pay", "Pay.", json.RawMessage(payNoIBAN)), noop)
			waitFor(2)
			if r := call("pay"); !r.IsError || !strings.Contains(text(r), `no longer takes the argument "iban"`) {
				t.Errorf("a call to pay without iban in its schema: %+v", r)
			}

			// pay requires an undeclared argument: still refused, and the
			// client sees no change.
			down.AddTool(mcp.NewToolWithRawSchema("pay", "Pay.", json.RawMessage(payRequires)), noop)
			downstreamHas("pay", true)
			time.Sleep(200 * time.Millisecond)
			waitFor(2)
			if r := call("pay"); !r.IsError || !strings.Contains(text(r), `now requires the argument "otp"`) {
				t.Errorf("a call to pay requiring otp: %+v", r)
			}

			// pay comes back with a new schema: shown with it, byte for byte.
			down.AddTool(mcp.NewToolWithRawSchema("pay", "Pay.", json.RawMessage(payNewSchema)), noop)
			l := waitFor(3, "pay")
			if l["pay"] != payNewSchema {
				t.Errorf("pay's schema:\n got %s\nwant %s", l["pay"], payNewSchema)
			}
			if r := call("pay"); r.IsError {
				t.Errorf("pay after it came back: %s", text(r))
			}

			// balance comes back.
			down.AddTool(mcp.NewTool("balance", mcp.WithDescription("Balance.")), noop)
			waitFor(4, "balance", "pay")
			if r := call("balance"); r.IsError {
				t.Errorf("balance after it came back: %s", text(r))
			}
		})
	}
}

func text(r *mcp.CallToolResult) string {
	var parts []string
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}
