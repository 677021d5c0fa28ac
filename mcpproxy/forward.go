package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// AmountFormat says how a downstream tool takes an amount argument. The
// gateway holds amounts as integer minor units; the forwarder writes them
// back exactly, never through a float.
type AmountFormat uint8

// The amount formats.
const (
	// AmountNumber writes a JSON number with the parameter's scale:
	// 1250.00 (the default).
	AmountNumber AmountFormat = iota
	// AmountString writes a JSON string: "1250.00".
	AmountString
	// AmountMinorUnits writes a JSON integer in minor units: 125000.
	AmountMinorUnits
)

// ParseAmountFormat parses "number", "string" or "minor_units"; empty
// means AmountNumber.
func ParseAmountFormat(s string) (AmountFormat, error) {
	switch s {
	case "", "number":
		return AmountNumber, nil
	case "string":
		return AmountString, nil
	case "minor_units":
		return AmountMinorUnits, nil
	}
	return 0, fmt.Errorf("amount format %q is not number, string or minor_units", s)
}

// EncodeArgs writes the resolved arguments of an operation as the JSON
// object a downstream tool receives, keys sorted: strings as JSON strings,
// integers and booleans as such, amounts as formats says (AmountNumber
// when a parameter is not listed). Renames maps a parameter name to the
// downstream's argument name when they differ.
func EncodeArgs(args intent.Args, formats map[string]AmountFormat, renames map[string]string) (json.RawMessage, error) {
	type kv struct {
		key string
		val []byte
	}
	out := make([]kv, 0, len(args))
	for name, v := range args {
		var b []byte
		switch v.Kind {
		case intent.KindString:
			var buf bytes.Buffer
			enc := json.NewEncoder(&buf)
			enc.SetEscapeHTML(false)
			if err := enc.Encode(v.Str); err != nil {
				return nil, err
			}
			b = bytes.TrimRight(buf.Bytes(), "\n")
		case intent.KindInt:
			b = strconv.AppendInt(nil, v.Int, 10)
		case intent.KindBool:
			b = strconv.AppendBool(nil, v.Bool)
		case intent.KindAmount:
			switch formats[name] {
			case AmountString:
				b = strconv.AppendQuote(nil, intent.FormatAmount(intent.Amount(v.Int), v.Scale))
			case AmountMinorUnits:
				b = strconv.AppendInt(nil, v.Int, 10)
			default:
				b = []byte(intent.FormatAmount(intent.Amount(v.Int), v.Scale))
			}
		default:
			return nil, fmt.Errorf("mcpproxy: argument %q has no JSON form", name)
		}
		key := name
		if r, ok := renames[name]; ok && r != "" {
			key = r
		}
		out = append(out, kv{key, b})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, e := range out {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := json.Marshal(e.key)
		buf.Write(k)
		buf.WriteByte(':')
		buf.Write(e.val)
	}
	buf.WriteByte('}')
	return buf.Bytes(), nil
}

// Route says which downstream tool carries out an action.
type Route struct {
	// Server is the downstream server.
	Server *Downstream
	// Tool is the tool's name on that server.
	Tool string
	// Amounts gives the format of each amount argument; missing means
	// AmountNumber.
	Amounts map[string]AmountFormat
	// Sensitive names the secret arguments (ParamSpec.Sensitive): a
	// downstream error that quotes one has it replaced by "[secret]"
	// before it reaches a receipt, a log or the agent's message.
	Sensitive []string
}

// Forwarder is a gateway.Executor that carries out an operation by
// calling a downstream tool with the operation's resolved arguments. Its
// Routes must not change after the gateway is built. A call made through
// a Proxy relays cancellation, progress and the client _meta keys that
// Config.ForwardMeta allows (none by default), and hands the downstream's
// full result back to the Proxy.
type Forwarder struct {
	Routes map[intent.Action]Route
}

var _ gateway.Executor = (*Forwarder)(nil)

// errToolError marks a downstream tool error (isError) as an execution
// failure that may have had effects.
var errToolError = errors.New("mcpproxy: downstream tool reported an error")

// Execute implements gateway.Executor. An operation whose call could not
// be sent fails wrapping gateway.ErrNotExecuted; a call that got no answer
// or a tool error is reported as failed with unknown effect, so the
// gateway keeps the budget spent and never runs it again.
func (f *Forwarder) Execute(ctx context.Context, op intent.Operation, _ intent.OperationHash) (gateway.Result, error) {
	rt, ok := f.Routes[op.Action]
	if !ok || rt.Server == nil {
		return gateway.Result{}, fmt.Errorf("%w: no downstream tool for %s", gateway.ErrNotExecuted, op.Action)
	}
	args, err := EncodeArgs(op.Args, rt.Amounts, nil)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	cs := callFrom(ctx)
	live := ctx
	var opts CallOptions
	if cs != nil {
		live = cs.live
		opts = cs.opts
	}
	res, err := rt.Server.Call(live, rt.Tool, args, opts)
	if err != nil {
		err = rt.scrubErr(op, err)
		var rpc *RPCError
		switch {
		case errors.Is(err, ErrUnavailable):
			return gateway.Result{}, gateway.Visible(err.Error(), fmt.Errorf("%w: %w", gateway.ErrNotExecuted, err))
		case errors.As(err, &rpc):
			// The server refused the call outright (invalid params): no
			// tool ran.
			return gateway.Result{}, gateway.Visible(rpc.Error(), fmt.Errorf("%w: %w", gateway.ErrNotExecuted, err))
		}
		if cs != nil {
			cs.failure = err.Error()
		}
		return gateway.Result{}, err
	}
	text := resultText(res)
	if res.IsError {
		if cs != nil {
			cs.failure = "the server said: " + rt.scrub(op, text)
		}
		return gateway.Result{}, fmt.Errorf("%w: %s", errToolError, rt.scrub(op, text))
	}
	if cs != nil {
		cs.result = res
	}
	return gateway.Result{Output: text}, nil
}

// resultText joins a result's text contents (or, if it has none, its
// JSON), for the receipt's digest and for messages.
func resultText(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		b, _ := json.Marshal(res)
		return string(b)
	}
	return strings.Join(parts, "\n")
}

// call is what a Proxy handler hands its executor through the context:
// the live (cancellable) context of the client's request, the options to
// pass downstream, and a place for the downstream's result.
type call struct {
	live    context.Context
	opts    CallOptions
	result  *mcp.CallToolResult
	failure string
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// scrub replaces in text each value of op's sensitive arguments by
// "[secret]", so that a downstream that quotes a secret in an error does
// not carry it into receipts, logs or messages.
func (rt Route) scrub(op intent.Operation, text string) string {
	for _, name := range rt.Sensitive {
		if v, ok := op.Args[name]; ok {
			if s := v.String(); s != "" {
				text = strings.ReplaceAll(text, s, "[secret]")
			}
		}
	}
	return text
}

// scrubErr is err, or when its text quotes a secret of op (scrub), an
// error of the scrubbed text wrapping the sentinels a caller branches on.
func (rt Route) scrubErr(op intent.Operation, err error) error {
	text := rt.scrub(op, err.Error())
	if text == err.Error() {
		return err
	}
	var rpc *RPCError
	switch {
	case errors.Is(err, ErrUnavailable):
		return fmt.Errorf("%w: %s", ErrUnavailable, text)
	case errors.As(err, &rpc) && rpc.Err != nil:
		return &RPCError{Server: rpc.Server, Err: errors.New(rt.scrub(op, rpc.Err.Error()))}
	}
	return errors.New(text)
}
