package mcpproxy

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// Decider decides proposals; *gateway.Gateway is one. It is called
// concurrently.
type Decider interface {
	Decide(ctx context.Context, req gateway.Request) (gateway.Decision, error)
}

// Observer is told of each decision the proxy has the gateway make: the
// action (empty for a malformed proposal), the verdict, the refusal's
// reason code (empty when allowed) and how long the decision took,
// execution included. It must be safe for concurrent use and not block.
type Observer interface {
	Decided(action intent.Action, verdict intent.Verdict, code intent.Code, latency time.Duration)
}

// Tool is one tool the proxy shows to the client.
type Tool struct {
	// Name is the tool's name as the client sees it.
	Name string
	// Title is an optional display name.
	Title string
	// Action is the gateway action a call proposes.
	Action intent.Action
	// Description is shown to the client as is.
	Description string
	// InputSchema is the tool's JSON Schema, served byte for byte; nil
	// means {"type":"object"}.
	InputSchema json.RawMessage
	// ReadOnly marks the tool readOnlyHint for the client; the gateway's
	// contract is what decides.
	ReadOnly bool
	// Mirror ties the tool to the downstream tool it mirrors, so that the
	// proxy follows that server's changes to its tools; nil means the tool
	// never changes (a mounted pack's).
	Mirror *Mirror
	// Sensitive names the arguments whose values are secret
	// (contract.Parameter.Sensitive): the user's confirmation shows their
	// SHA-256 digest, and an operation carrying one is never put on the
	// approval page (nor posted to its webhook), where it would be shown
	// and kept; it can only be confirmed in the client. Empty means none.
	Sensitive []string
	// PageOnly sends the tool's confirmations to the approval page, never
	// to the client's elicitation: a client that answers by itself must
	// not confirm them. Four eyes always goes to the page.
	PageOnly bool
	// RunOf, for a tool proposing a run of Action (RunTool), names its
	// input's one property: the list of each line's arguments. Empty for a
	// tool of one proposal.
	RunOf string
}

// Signer signs approvals for "the user at the MCP client": when that user
// accepts a confirmation in the client, the proxy signs an approval over
// the operation hash with Key, under the approver name Name (which the
// gateway's approver keys must know).
type Signer struct {
	Name string
	Key  ed25519.PrivateKey
}

// Approvals is the out-of-band approval channel (the approval page) for
// clients that cannot confirm themselves and for four eyes. Request
// registers a step-up (Currency, Requester and ExpiresAt are left for the
// channel to fill) and returns the link a person opens to decide;
// requesting the same operation again returns its link again. Await waits
// up to wait (zero: does not wait) for the approvals given to the
// operation and returns those valid so far, possibly none. Both return an
// error wrapping approval.ErrRejected when a person rejected the operation
// (the agent is told not to retry), Request one wrapping
// approval.ErrTooManyRequests when the channel accepts no more requests,
// and any other error only when the channel failed. Both are called
// concurrently. approvals.Tracker implements it over the approval page;
// cmd/ wires it, since front doors never import each other.
type Approvals interface {
	Request(ctx context.Context, r approval.Request) (link string, err error)
	Await(ctx context.Context, op intent.OperationHash, wait time.Duration) ([]approval.Approval, error)
}

// Config configures a Proxy. The zero value of each optional field means
// the default stated on it.
type Config struct {
	// Name and Version identify the proxy to the client; empty means
	// "intentplane" and "1".
	Name, Version string
	// Instructions are sent to the client at initialization; empty means
	// none.
	Instructions string
	// Mandate is the session's signed mandate token. Required.
	Mandate string
	// ClientApprover signs the approvals the user gives in the client by
	// elicitation; nil means elicitation is never used.
	ClientApprover *Signer
	// Approvals is the approval page; nil means none.
	Approvals Approvals
	// ApprovalWait is how long a call waits for the approval page before
	// answering with the link; zero means it answers at once. A waiting
	// call counts in MaxPendingConfirmations; when none is free, the call
	// answers with the link at once.
	ApprovalWait time.Duration
	// ConfirmTimeout bounds how long the user has to answer a
	// confirmation in the client; zero means 5 minutes.
	ConfirmTimeout time.Duration
	// MaxPendingConfirmations caps the calls blocked on a person at the
	// same time: confirmations open in the client (further ones are
	// refused until one is answered) and calls waiting ApprovalWait for the
	// approval page (further ones get the link at once). Zero means 16.
	MaxPendingConfirmations int
	// ApprovalTTL is the validity of an approval signed for the client's
	// user; zero means 2 minutes.
	ApprovalTTL time.Duration
	// StateKey is the HMAC key sealing multi round-trip request states; nil
	// means 32 random bytes (states then do not survive a restart).
	StateKey []byte
	// StateTTL is the validity of a request state; zero means 10 minutes.
	StateTTL time.Duration
	// MaxMessageBytes bounds one JSON-RPC message read from the client;
	// longer lines are dropped and answered with a parse error. Zero means
	// 1 MiB.
	MaxMessageBytes int
	// MaxInFlightBytes bounds the bytes of the client's requests read but
	// not yet answered: past it, the proxy reads nothing more until
	// answers go out, so a flood of calls waits in the client's pipe.
	// Zero means 16 MiB; it is never below MaxMessageBytes.
	MaxInFlightBytes int
	// ForwardMeta lists the keys of the client's _meta that are passed on
	// to the downstream server with a forwarded call ("com.example/trace");
	// empty means none. Only the progress token is ever relayed otherwise
	// (remapped), so that nothing but the resolved operation reaches the
	// server from the agent.
	ForwardMeta []string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand is the source of approval ids and state nonces; nil means
	// crypto/rand.
	Rand io.Reader
	// Logger receives one line per refused forged state and per failure;
	// nil means discard.
	Logger *slog.Logger
	// Observer is told of every decision (for metrics); nil means none.
	Observer Observer
}

// Proxy is the MCP server the client talks to. Build it with New, then
// serve it with ServeStdio (or mount Server in an HTTP server).
type Proxy struct {
	cfg     Config
	decider Decider
	srv     *server.MCPServer
	states  *sealer
	pending chan struct{}
	log     *slog.Logger
	now     func() time.Time
	rand    io.Reader
	tools   map[string]Tool // as configured

	confirming atomic.Int64 // confirmations open in the client
	declined   declines     // operations the user declined in the client

	mirrorMu sync.Mutex // serializes re-mirroring
	mu       sync.RWMutex
	current  map[string]*mirrored // name → what is served now
	hidden   map[string]bool      // names the client's list leaves out (see remirror)
	order    []string             // tool names, as given to New
	visible  []byte               // the tools/list the client sees, encoded
}

// confirmID keys the confirmation in input requests and responses.
const confirmID = "intentplane_confirm"

// New returns a proxy serving tools, each decided by d. It refuses a
// config without mandate, duplicate or empty tool names, and a tool
// without action.
func New(cfg Config, d Decider, tools ...Tool) (*Proxy, error) {
	if cfg.Mandate == "" {
		return nil, errors.New("mcpproxy: a mandate is required")
	}
	if d == nil {
		return nil, errors.New("mcpproxy: a decider is required")
	}
	if cfg.Name == "" {
		cfg.Name = "intentplane"
	}
	if cfg.Version == "" {
		cfg.Version = "1"
	}
	p := &Proxy{cfg: cfg, decider: d, tools: map[string]Tool{}, now: cfg.Now, rand: cfg.Rand, log: cfg.Logger}
	if p.now == nil {
		p.now = time.Now
	}
	if p.rand == nil {
		p.rand = rand.Reader
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	var err error
	if p.states, err = newSealer(cfg, p.now, p.rand); err != nil {
		return nil, err
	}
	n := cfg.MaxPendingConfirmations
	if n <= 0 {
		n = 16
	}
	p.pending = make(chan struct{}, n)

	hooks := &server.Hooks{}
	hooks.AddAfterListTools(p.hideUnavailable)
	opts := []server.ServerOption{server.WithToolCapabilities(true), server.WithRecovery(), server.WithHooks(hooks)}
	if cfg.Instructions != "" {
		opts = append(opts, server.WithInstructions(cfg.Instructions))
	}
	p.srv = server.NewMCPServer(cfg.Name, cfg.Version, opts...)
	servers, err := p.addTools(tools)
	if err != nil {
		return nil, err
	}
	// Follow each server's list before reading it, so that no re-list
	// between the read and the subscription is lost: a re-list that lands
	// meanwhile waits on mirrorMu and is applied after the first publish.
	p.mirrorMu.Lock()
	defer p.mirrorMu.Unlock()
	for d := range servers {
		d.OnToolsChanged(func(raw []RawTool) { p.remirror(d, raw) })
	}
	p.mu.Lock()
	// Check the tools against what their servers list now: their pins,
	// their critical parameters.
	for d := range servers {
		p.applyLocked(d, d.Tools())
	}
	st, _ := p.publishLocked()
	p.hidden = p.hiddenLocked()
	p.mu.Unlock()
	p.setTools(st)
	return p, nil
}

// newSealer returns the sealer of confirmation states: cfg.StateKey, or
// 32 bytes read from random, and cfg.StateTTL, 10 minutes if zero.
func newSealer(cfg Config, now func() time.Time, random io.Reader) (*sealer, error) {
	key := cfg.StateKey
	if len(key) == 0 {
		key = make([]byte, 32)
		if _, err := io.ReadFull(random, key); err != nil {
			return nil, err
		}
	}
	ttl := cfg.StateTTL
	if ttl <= 0 {
		ttl = 10 * time.Minute
	}
	return &sealer{key: key, ttl: ttl, now: now, rand: random, used: map[string]int64{}}, nil
}

// addTools records tools, in order, refusing empty or duplicate names and
// tools without action, and returns the downstream servers they mirror.
func (p *Proxy) addTools(tools []Tool) (map[*Downstream]bool, error) {
	p.current = map[string]*mirrored{}
	servers := map[*Downstream]bool{}
	for _, t := range tools {
		if t.Name == "" || t.Action == "" {
			return nil, fmt.Errorf("mcpproxy: tool %q needs a name and an action", t.Name)
		}
		if _, dup := p.tools[t.Name]; dup {
			return nil, fmt.Errorf("mcpproxy: tool %q declared twice", t.Name)
		}
		if _, ok := p.decider.(RunDecider); t.RunOf != "" && !ok {
			return nil, fmt.Errorf("mcpproxy: tool %q proposes runs, which the decider cannot decide", t.Name)
		}
		mt, err := mcpTool(t)
		if err != nil {
			return nil, err
		}
		p.tools[t.Name] = t
		p.current[t.Name] = &mirrored{tool: mt}
		p.order = append(p.order, t.Name)
		if t.Mirror != nil && t.Mirror.Server != nil {
			servers[t.Mirror.Server] = true
		}
	}
	return servers, nil
}

// mcpTool describes t for the client.
func mcpTool(t Tool) (mcp.Tool, error) {
	schema := t.InputSchema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	if !json.Valid(schema) {
		return mcp.Tool{}, fmt.Errorf("mcpproxy: tool %q: input schema is not valid JSON", t.Name)
	}
	mt := mcp.NewToolWithRawSchema(t.Name, t.Description, schema)
	mt.Title = t.Title
	if t.ReadOnly {
		ro := true
		mt.Annotations.ReadOnlyHint = &ro
	}
	if err := mcp.ValidateParamHeaderAnnotations(&mt); err != nil {
		return mcp.Tool{}, fmt.Errorf("mcpproxy: tool %q: %v", t.Name, err)
	}
	return mt, nil
}

// PendingConfirmations returns how many confirmations are open in the
// client now: asked by elicitation/create and not yet answered. (On
// 2026-07-28, where a confirmation is an input_required result, the proxy
// holds nothing while the user decides, and none is counted.)
func (p *Proxy) PendingConfirmations() int { return int(p.confirming.Load()) }

// Server returns the underlying mcp-go server (to serve it over HTTP).
func (p *Proxy) Server() *server.MCPServer { return p.srv }

// ServeStdio serves the client on in and out until in ends or ctx is
// done. Tool calls run on 100 workers so that open confirmations never
// hold up other calls, with 256 more queued; messages are bounded by
// MaxMessageBytes and the requests not yet answered by MaxInFlightBytes.
// mcp-go keeps one stdio session per process, so ServeStdio must not run
// twice at the same time in one process.
func (p *Proxy) ServeStdio(ctx context.Context, in io.Reader, out io.Writer) error {
	limit := p.cfg.MaxMessageBytes
	if limit <= 0 {
		limit = defaultMaxMessage
	}
	budget := p.cfg.MaxInFlightBytes
	if budget <= 0 {
		budget = defaultMaxInFlight
	}
	fl := newInflight(max(budget, limit))
	defer fl.close()
	s := server.NewStdioServer(p.srv)
	server.WithWorkerPoolSize(stdioWorkers)(s)
	server.WithQueueSize(stdioQueue)(s)
	s.SetErrorLogger(log.New(slogWriter{p.log}, "", 0))
	// The line reader answers what it cannot pass on (too large, not
	// JSON, nested too deeply) itself, with the request's id when it can
	// read one, through the same writer as mcp-go's answers.
	w := responseWatcher{w: out, fl: fl, mu: &sync.Mutex{}}
	reply := func(b []byte) { _, _ = w.Write(b) }
	return s.Listen(ctx, &lineLimiter{r: in, max: limit, fl: fl, reply: reply}, w)
}

// handler turns a call of t into proposals.
func (p *Proxy) handler(t Tool) server.ToolHandlerFunc {
	if t.RunOf != "" {
		return p.runHandler(t)
	}
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if code, why := p.unavailable(t.Name); why != "" {
			return refusal(code, intent.Deny, why), nil
		}
		proposal, bad := buildProposal(t.Action, req)
		if bad != "" {
			return refusal(intent.CodeMalformed, intent.Deny, bad), nil
		}
		cs := &call{live: ctx}
		if m := req.Params.Meta; m != nil {
			cs.opts.Meta = p.forwardMeta(m.AdditionalFields)
			if m.ProgressToken != nil {
				cs.opts.Progress = p.progressTo(ctx, m.ProgressToken)
			}
		}
		// The decision itself is not cancelled with the client's request:
		// every outcome must reach its receipt. The executor cancels the
		// downstream call through cs.live.
		dctx := withCall(context.WithoutCancel(ctx), cs)

		var state *sealed
		if req.Params.RequestState != "" || len(req.Params.InputResponses) > 0 {
			st, err := p.states.open(req.Params.RequestState, t.Name)
			if err != nil {
				p.log.Warn("input responses ignored", "tool", t.Name, "err", err)
			} else {
				state = &st
			}
		}

		d, err := p.decide(dctx, proposal, nil)
		if err != nil {
			return failed(d), nil
		}
		switch d.Verdict {
		case intent.Allow:
			return allowed(cs, d), nil
		case intent.Deny:
			return refused(cs, d), nil
		}
		if state != nil && state.Op == d.OperationHash.String() {
			if err := p.states.redeem(*state); err != nil {
				p.log.Warn("input responses ignored", "tool", t.Name, "err", err)
			} else {
				ans := server.ElicitationResponse(req.Params.InputResponses, confirmID)
				return p.answered(dctx, cs, proposal, d, ans), nil
			}
		} else if state != nil {
			p.log.Warn("input responses ignored", "tool", t.Name, "err", ErrStateOtherCall)
		}
		return p.stepUp(ctx, dctx, cs, t, proposal, d), nil
	}
}

// decide has the decider decide one proposal and logs the decision at
// info level, one line: owner, action, verdict, reason code, operation
// hash, whether it executed, the approvals presented and the latency in
// milliseconds. The arguments, the facts and the output are never logged:
// they may hold secrets or personal data.
func (p *Proxy) decide(ctx context.Context, proposal []byte, as []approval.Approval) (gateway.Decision, error) {
	start := time.Now()
	d, err := p.decider.Decide(ctx, gateway.Request{Mandate: p.cfg.Mandate, Proposal: proposal, Approvals: as})
	if err != nil {
		p.log.Error("decision receipt not stored", "err", err)
	}
	code, op := "", ""
	if d.Refusal != nil {
		code = string(d.Refusal.Code)
	}
	if d.OperationHash != (intent.OperationHash{}) {
		op = d.OperationHash.String()
	}
	latency := time.Since(start)
	if p.cfg.Observer != nil {
		p.cfg.Observer.Decided(d.Receipt.Action, d.Verdict, intent.Code(code), latency)
	}
	p.log.LogAttrs(ctx, slog.LevelInfo, "decision",
		slog.String("owner", string(d.Receipt.Owner)),
		slog.String("action", string(d.Receipt.Action)),
		slog.String("verdict", d.Verdict.String()),
		slog.String("code", code),
		slog.String("operation", op),
		slog.Bool("executed", d.Executed),
		slog.Int("approvals", len(as)),
		slog.Float64("latency_ms", float64(latency.Microseconds())/1000),
	)
	return d, err
}

// buildProposal makes {"action": ..., "args": <raw arguments>}. The
// arguments go to the gateway as the client sent them; the gateway
// refuses anything but a JSON object of declared arguments. A non-empty
// string is the message refusing arguments that are not an object.
func buildProposal(action intent.Action, req mcp.CallToolRequest) ([]byte, string) {
	raw := req.Params.RawArguments
	if len(raw) == 0 && req.Params.Arguments != nil {
		b, err := json.Marshal(req.Params.Arguments)
		if err != nil {
			return nil, "The arguments could not be read. Nothing was done."
		}
		raw = b
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		raw = []byte("{}")
	}
	if raw[0] != '{' {
		return nil, "The arguments must be a JSON object. Nothing was done."
	}
	a, _ := json.Marshal(string(action))
	var b bytes.Buffer
	b.Grow(len(raw) + len(a) + 24)
	b.WriteString(`{"action":`)
	b.Write(a)
	b.WriteString(`,"args":`)
	b.Write(raw)
	b.WriteByte('}')
	return b.Bytes(), ""
}

// allowed returns what the executor produced: the downstream's full
// result for a forwarded call, the executor's output otherwise.
func allowed(cs *call, d gateway.Decision) *mcp.CallToolResult {
	if cs.result != nil {
		return cs.result
	}
	return mcp.NewToolResultText(d.Output)
}

// refused returns the gateway's message for the agent as a tool error,
// with the downstream's own words when its execution failed.
func refused(cs *call, d gateway.Decision) *mcp.CallToolResult {
	msg, code := "The operation was refused. Nothing was done.", intent.CodePolicyDenied
	if d.Refusal != nil {
		msg, code = d.Refusal.Message, d.Refusal.Code
		if (d.Refusal.Code == intent.CodeExecutionFailed || d.Refusal.Code == intent.CodeExecutionRefused) && cs.failure != "" {
			msg += " Detail: " + cs.failure
		}
		if code == intent.CodeMalformed {
			msg = strings.TrimSuffix(msg, gateway.MalformedAdvice) + msgMalformedArgs
		}
	}
	return refusal(code, d.Verdict, msg)
}

// msgMalformedArgs replaces the gateway's advice after a malformed
// proposal, which speaks of the proposal the proxy wrote around the
// client's arguments ("action" and "args"): what the client sent was the
// arguments, and that is what it can correct.
const msgMalformedArgs = "What was refused is the tool call's arguments as sent: correct them (one JSON object of valid UTF-8, within the size limit) and call the tool again."

// Reason codes of refusals made by the proxy itself, beside the gateway's
// (intent.Code*). Each refusal carries its code and verdict in the
// result's _meta as {"intentplane": {"code": "…", "verdict": "…"}} besides
// the text, so that a client can tell the reasons apart without parsing
// words.
const (
	CodeToolUnavailable     intent.Code = "tool.unavailable"     // the downstream no longer offers the tool as declared
	CodeToolChanged         intent.Code = "tool.changed"         // the downstream's description or input schema differs from the operator's pin
	CodeToolNotPinned       intent.Code = "tool.not_pinned"      // a lock file is configured and the tool has no pin in it
	CodeApprovalUnavailable intent.Code = "approval.unavailable" // the confirmation or the page could not be used
	CodeApprovalBusy        intent.Code = "approval.busy"        // too many calls wait for a person
	CodeApprovalTimeout     intent.Code = "approval.timeout"     // the person did not answer in time
	CodeApprovalDeclined    intent.Code = "approval.declined"    // the user declined or cancelled the confirmation
	CodeApprovalRejected    intent.Code = "approval.rejected"    // an approver rejected it on the page
	CodeCancelled           intent.Code = "call.cancelled"       // the client cancelled the call
)

// MetaKey is the _meta key under which a refusal's reason travels.
const MetaKey = "intentplane"

// refusal is a tool error with msg as its text and code and verdict in
// its _meta (MetaKey).
func refusal(code intent.Code, verdict intent.Verdict, msg string) *mcp.CallToolResult {
	r := mcp.NewToolResultError(msg)
	r.Meta = mcp.NewMetaFromMap(map[string]any{MetaKey: map[string]any{"code": string(code), "verdict": verdict.String()}})
	return r
}

// failed reports a decision whose receipt could not be stored (decide
// has logged the error for the operator).
func failed(d gateway.Decision) *mcp.CallToolResult {
	if d.Executed {
		return mcp.NewToolResultText(d.Output + "\n(The operation executed, but its receipt could not be stored; the operator was alerted.)")
	}
	return refusal(intent.CodeUnavailable, intent.Deny, "The gateway could not record this decision, so nothing was done. Try again later and tell the user.")
}

// forwardMeta returns the client's _meta keys the configuration lets
// through (Config.ForwardMeta), or nil.
func (p *Proxy) forwardMeta(m map[string]any) map[string]any {
	var out map[string]any
	for _, k := range p.cfg.ForwardMeta {
		if v, ok := m[k]; ok {
			if out == nil {
				out = map[string]any{}
			}
			out[k] = v
		}
	}
	return out
}

// progressTo returns a function relaying progress to the client under its
// own token.
func (p *Proxy) progressTo(ctx context.Context, tok mcp.ProgressToken) func(map[string]any) {
	sess := server.ClientSessionFromContext(ctx)
	if sess == nil {
		return nil
	}
	id := sess.SessionID()
	return func(params map[string]any) {
		params["progressToken"] = tok
		if err := p.srv.SendNotificationToSpecificClient(id, string(mcp.MethodNotificationProgress), params); err != nil {
			p.log.Debug("progress not relayed", "err", err)
		}
	}
}

// slogWriter adapts a *slog.Logger to mcp-go's *log.Logger.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(b []byte) (int, error) {
	w.l.Warn("mcp", "msg", strings.TrimSpace(string(b)))
	return len(b), nil
}
