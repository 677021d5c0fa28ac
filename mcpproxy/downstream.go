package mcpproxy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

// ServerSpec says how to reach one downstream MCP server: a command run
// as a child process speaking stdio, or a streamable-HTTP URL. Exactly
// one of Command and URL is set.
type ServerSpec struct {
	// Name names the server in messages and logs ("bank").
	Name string
	// Command is the program to run; Args its arguments.
	Command string
	Args    []string
	// Env is the child's complete environment, as "KEY=value" entries:
	// nothing of the proxy's own environment is passed on unless listed
	// here, so the proxy's secrets never reach a downstream server.
	Env []string
	// Dir is the child's working directory; empty means the proxy's.
	Dir string
	// URL is a streamable-HTTP endpoint ("http://127.0.0.1:8080/mcp").
	URL string
	// Headers are sent with every HTTP request (an Authorization header).
	Headers map[string]string
	// Stderr receives the child's standard error; nil means discard.
	Stderr io.Writer
	// CallTimeout bounds one tools/call; zero means 60s.
	CallTimeout time.Duration
	// StartTimeout bounds starting and initializing the server and
	// listing its tools; zero means 20s.
	StartTimeout time.Duration
	// Logger receives restarts and failures; nil means discard.
	Logger *slog.Logger
	// Observer is told of every tools/call (for metrics); nil means none.
	Observer CallObserver
	// ProtocolVersion is the MCP version asked for at initialization;
	// empty means 2025-11-25, where the server announces changes to its
	// tools unsolicited. On 2026-07-28 ("2026-07-28" or later) the
	// Downstream subscribes to them with subscriptions/listen.
	ProtocolVersion string
}

func (s ServerSpec) protocolVersion() string {
	if s.ProtocolVersion == "" {
		return mcp.ProtocolVersion20251125
	}
	return s.ProtocolVersion
}

func (s ServerSpec) callTimeout() time.Duration {
	if s.CallTimeout <= 0 {
		return 60 * time.Second
	}
	return s.CallTimeout
}

func (s ServerSpec) startTimeout() time.Duration {
	if s.StartTimeout <= 0 {
		return 20 * time.Second
	}
	return s.StartTimeout
}

// RawTool is a downstream tool as its server lists it, with its input
// schema byte for byte (mcp-go's own Tool type drops keywords such as
// anyOf, $schema and description).
type RawTool struct {
	Name        string
	Title       string
	Description string
	InputSchema json.RawMessage
	// Annotations are the tool's annotations as listed; nil if none.
	Annotations json.RawMessage
}

// Errors of a downstream call, wrapped in the errors Call returns.
var (
	// ErrUnavailable means the server could not be started or reached,
	// so the call was not sent.
	ErrUnavailable = errors.New("mcpproxy: downstream server unavailable")
	// ErrNoAnswer means the call was sent but no answer came (the server
	// stopped, hung past the timeout, or the call was cancelled): it may or
	// may not have taken effect.
	ErrNoAnswer = errors.New("mcpproxy: downstream server gave no answer")
)

// Backoff bounds between restarts of a crashed downstream server.
const (
	minBackoff = 250 * time.Millisecond
	maxBackoff = 30 * time.Second
	// idleProbe: a downstream silent for longer is pinged before a call,
	// so a child that died while idle is restarted before the call is
	// sent instead of failing it as unanswered.
	idleProbe = time.Second
)

// Downstream is a managed connection to one downstream MCP server. It is
// safe for concurrent use: calls run concurrently over one connection.
// A child process that exits is restarted on the next call, no sooner
// than a backoff that doubles from 250ms to 30s while restarts fail.
type Downstream struct {
	spec   ServerSpec
	log    *slog.Logger
	nextID atomic.Int64
	routes progressRoutes

	relist chan struct{} // a tools/list is due (buffered: changes coalesce)
	done   chan struct{} // closed by Close

	mu       sync.Mutex
	conn     *client.Client // nil when not connected
	stop     func()         // ends conn's subscriptions/listen; nil if none
	tools    []RawTool
	onTools  func([]RawTool)
	failures int       // consecutive failed starts
	retryAt  time.Time // no restart before
	closed   bool
	lastOK   atomic.Int64 // unix nanos of the last answer
	restarts int
}

// Dial starts the server (or connects to its URL), initializes the MCP
// session (on ServerSpec.ProtocolVersion) and lists its tools. The
// returned Downstream owns the child process until Close. It follows the
// server's notifications/tools/list_changed (and lists the tools again
// after a restart): see OnToolsChanged.
func Dial(ctx context.Context, spec ServerSpec) (*Downstream, error) {
	if (spec.Command == "") == (spec.URL == "") {
		return nil, fmt.Errorf("mcpproxy: server %q needs exactly one of a command and a URL", spec.Name)
	}
	d := &Downstream{spec: spec, log: spec.Logger, relist: make(chan struct{}, 1), done: make(chan struct{})}
	if d.log == nil {
		d.log = slog.New(slog.DiscardHandler)
	}
	d.routes.m = map[string]progressRoute{}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.connectLocked(ctx); err != nil {
		return nil, err
	}
	go d.watch()
	return d, nil
}

// OnToolsChanged sets f to receive the server's tools each time they are
// listed again: after the server announced a change with
// notifications/tools/list_changed, or after a restart. f is called from
// one goroutine at a time, with the complete list (which may equal the
// previous one); nil stops the calls. A later call replaces f.
func (d *Downstream) OnToolsChanged(f func([]RawTool)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.onTools = f
}

// kick asks the watcher for a new tools/list; never blocks.
func (d *Downstream) kick() {
	select {
	case d.relist <- struct{}{}:
	default:
	}
}

// watch lists the tools again when kicked, until Close. Listing runs here
// rather than in the notification handler, which runs on the
// transport's reading goroutine and would wait for ever on its own
// answer.
func (d *Downstream) watch() {
	for {
		select {
		case <-d.done:
			return
		case <-d.relist:
		}
		d.mu.Lock()
		c := d.conn
		d.mu.Unlock()
		if c == nil {
			continue // listed again when it restarts
		}
		ctx, cancel := context.WithTimeout(context.Background(), d.spec.startTimeout())
		tools, err := listRaw(ctx, c, &d.nextID)
		cancel()
		if err != nil {
			d.log.Warn("downstream tools not listed again", "server", d.spec.Name, "err", err)
			continue
		}
		d.mu.Lock()
		if d.conn != c || d.closed {
			d.mu.Unlock()
			continue
		}
		d.tools = tools
		f := d.onTools
		d.mu.Unlock()
		d.log.Info("downstream tools listed again", "server", d.spec.Name, "tools", len(tools))
		if f != nil {
			f(append([]RawTool(nil), tools...))
		}
	}
}

// Name returns the server's name.
func (d *Downstream) Name() string { return d.spec.Name }

// Tools returns the tools the server listed last: at start, after a
// restart, or after it announced a change.
func (d *Downstream) Tools() []RawTool {
	d.mu.Lock()
	defer d.mu.Unlock()
	return append([]RawTool(nil), d.tools...)
}

// Restarts returns how many times the server was restarted after a crash.
func (d *Downstream) Restarts() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.restarts
}

// Close stops the child process (closing its stdin, then SIGTERM, then
// SIGKILL) or closes the HTTP session. Calls after Close fail with
// ErrUnavailable.
func (d *Downstream) Close() error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if !d.closed {
		close(d.done)
	}
	d.closed = true
	if d.conn == nil {
		return nil
	}
	d.stopListening()
	err := d.conn.Close()
	d.conn = nil
	return err
}

// stopListening ends the current connection's subscriptions/listen
// stream, if any; d.mu is held.
func (d *Downstream) stopListening() {
	if d.stop != nil {
		go d.stop() // it waits for the stream's goroutine
		d.stop = nil
	}
}

// connectLocked starts a new connection; d.mu is held.
func (d *Downstream) connectLocked(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.spec.startTimeout())
	defer cancel()
	var c *client.Client
	if d.spec.Command != "" {
		tr := transport.NewStdioWithOptions(d.spec.Command, d.spec.Env, d.spec.Args,
			transport.WithCommandFunc(d.command),
			transport.WithCommandLogger(d.log))
		c = client.NewClient(tr, client.WithProtocolVersion(d.spec.protocolVersion()))
	} else {
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPLogger(d.log)}
		if !mcp.IsModernProtocol(d.spec.protocolVersion()) {
			// The GET stream carries notifications on legacy sessions
			// (and would rule the modern protocol out).
			//lint:ignore SA1019 legacy sessions get list_changed on the GET stream; modern ones use ListenAsync below.
			opts = append(opts, transport.WithContinuousListening())
		}
		if len(d.spec.Headers) > 0 {
			opts = append(opts, transport.WithHTTPHeaders(d.spec.Headers))
		}
		tr, err := transport.NewStreamableHTTP(d.spec.URL, opts...)
		if err != nil {
			return fmt.Errorf("%w: %s: %v", ErrUnavailable, d.spec.Name, err)
		}
		c = client.NewClient(tr, client.WithProtocolVersion(d.spec.protocolVersion()))
	}
	// The transport keeps the context it starts with for the child's
	// lifetime; Close ends the child, not a context.
	if err := c.Start(context.Background()); err != nil {
		return fmt.Errorf("%w: %s: start: %v", ErrUnavailable, d.spec.Name, err)
	}
	fail := func(what string, err error) error {
		_ = c.Close()
		return fmt.Errorf("%w: %s: %s: %v%s", ErrUnavailable, d.spec.Name, what, err, d.stderrTail(c))
	}
	_, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: d.spec.protocolVersion(),
		ClientInfo:      mcp.Implementation{Name: "intentplane-mcp", Version: "1"},
	}})
	if err != nil {
		return fail("initialize", err)
	}
	tools, err := listRaw(ctx, c, &d.nextID)
	if err != nil {
		return fail("tools/list", err)
	}
	c.OnNotification(d.onNotification)
	var stop func()
	if mcp.IsModernProtocol(c.ProtocolVersion()) {
		// On 2026-07-28 a server sends list_changed only to a listener.
		stop, err = c.ListenAsync(context.Background(), mcp.SubscriptionFilter{ToolsListChanged: true}, func(err error) {
			d.log.Warn("downstream subscriptions/listen ended", "server", d.spec.Name, "err", err)
		})
		if err != nil {
			return fail("subscriptions/listen", err)
		}
	}
	d.conn, d.tools, d.stop = c, tools, stop
	d.lastOK.Store(time.Now().UnixNano())
	return nil
}

// command builds the child process with exactly the configured
// environment (mcp-go's default would append it to the proxy's own).
func (d *Downstream) command(_ context.Context, command string, env []string, args []string) (*exec.Cmd, error) {
	cmd := exec.Command(command, args...)
	cmd.Env = append([]string{}, env...)
	cmd.Dir = d.spec.Dir
	// A grandchild holding the child's stderr open must not keep Close
	// waiting for ever.
	cmd.WaitDelay = 2 * time.Second
	if d.spec.Stderr != nil {
		cmd.Stderr = d.spec.Stderr
	}
	return cmd, nil
}

// stderrTail returns the end of the child's stderr, for start errors.
func (d *Downstream) stderrTail(c *client.Client) string {
	r, ok := client.GetStderr(c)
	if !ok || r == nil {
		return ""
	}
	b, _ := io.ReadAll(io.LimitReader(r, 4096))
	s := strings.TrimSpace(string(b))
	if s == "" {
		return ""
	}
	return " (stderr: " + s + ")"
}

// listRaw fetches tools/list through c's transport, following pages, and
// keeps each input schema as raw bytes. Request ids are strings, so they
// never collide with the client's integer ids. On 2026-07-28 the request
// carries the _meta the client would add itself.
func listRaw(ctx context.Context, c *client.Client, seq *atomic.Int64) ([]RawTool, error) {
	tr := c.GetTransport()
	var meta map[string]any
	var header http.Header
	if v := c.ProtocolVersion(); mcp.IsModernProtocol(v) {
		header = http.Header{mcp.HeaderMethod: {string(mcp.MethodToolsList)}}
		meta = map[string]any{
			mcp.MetaKeyProtocolVersion:    v,
			mcp.MetaKeyClientCapabilities: mcp.ClientCapabilities{},
			mcp.MetaKeyClientInfo:         mcp.Implementation{Name: "intentplane-mcp", Version: "1"},
		}
	}
	var out []RawTool
	cursor := ""
	seen := map[string]bool{}
	for {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		if meta != nil {
			params["_meta"] = meta
		}
		resp, err := tr.SendRequest(ctx, transport.JSONRPCRequest{
			JSONRPC: mcp.JSONRPC_VERSION,
			ID:      mcp.NewRequestId("intentplane-list-" + strconv.FormatInt(seq.Add(1), 10)),
			Method:  string(mcp.MethodToolsList),
			Params:  params,
			Header:  header,
		})
		if err != nil {
			return nil, err
		}
		if resp.Error != nil {
			return nil, resp.Error.AsError()
		}
		var page struct {
			Tools []struct {
				Name        string          `json:"name"`
				Title       string          `json:"title"`
				Description string          `json:"description"`
				InputSchema json.RawMessage `json:"inputSchema"`
				Annotations json.RawMessage `json:"annotations"`
			} `json:"tools"`
			NextCursor string `json:"nextCursor"`
		}
		if err := json.Unmarshal(resp.Result, &page); err != nil {
			return nil, fmt.Errorf("invalid tools/list result: %v", err)
		}
		for _, t := range page.Tools {
			if len(t.InputSchema) == 0 || string(t.InputSchema) == "null" {
				t.InputSchema = json.RawMessage(`{"type":"object"}`)
			}
			out = append(out, RawTool{Name: t.Name, Title: t.Title, Description: t.Description, InputSchema: t.InputSchema, Annotations: t.Annotations})
		}
		if page.NextCursor == "" {
			return out, nil
		}
		if seen[page.NextCursor] || len(seen) > 1000 {
			return nil, errors.New("tools/list: cursor loop")
		}
		seen[page.NextCursor] = true
		cursor = page.NextCursor
	}
}

// live returns a connection, restarting the server if it stopped.
func (d *Downstream) live(ctx context.Context) (*client.Client, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		return nil, fmt.Errorf("%w: %s: closed", ErrUnavailable, d.spec.Name)
	}
	if d.conn != nil {
		return d.conn, nil
	}
	if wait := time.Until(d.retryAt); wait > 0 {
		return nil, fmt.Errorf("%w: %s stopped and is being restarted; try again in %s", ErrUnavailable, d.spec.Name, wait.Round(10*time.Millisecond))
	}
	if err := d.connectLocked(ctx); err != nil {
		d.failures++
		backoff := minBackoff << min(d.failures-1, 10)
		d.retryAt = time.Now().Add(min(backoff, maxBackoff))
		d.log.Error("downstream restart failed", "server", d.spec.Name, "err", err, "retry_in", min(backoff, maxBackoff))
		return nil, err
	}
	d.failures = 0
	d.restarts++
	d.log.Warn("downstream restarted", "server", d.spec.Name, "restarts", d.restarts)
	d.kick() // its tools may differ now
	return d.conn, nil
}

// dead drops c if it is still the current connection.
func (d *Downstream) dead(c *client.Client, why error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.conn != c {
		return
	}
	d.log.Warn("downstream stopped", "server", d.spec.Name, "err", why)
	d.stopListening()
	d.conn = nil
	go func() { _ = c.Close() }() // reap the child off the caller's path
}

// isClosed reports whether err says the connection to the server is gone:
// its transport closed, its stdout ended, or a write to its stdin found the
// pipe broken (EPIPE) or already closed. mcp-go wraps these with %w.
func isClosed(err error) bool {
	return errors.Is(err, transport.ErrTransportClosed) || errors.Is(err, io.EOF) ||
		errors.Is(err, io.ErrClosedPipe) || errors.Is(err, syscall.EPIPE) || errors.Is(err, os.ErrClosed)
}

// CallOptions carry what an upstream call passes on downstream.
type CallOptions struct {
	// Meta are vendor _meta keys to pass on ("com.example/trace"); keys
	// under io.modelcontextprotocol/ and progressToken are never passed.
	Meta map[string]any
	// Progress, when set, receives the params of each progress
	// notification the server sends for this call (with the downstream's
	// token removed), until a short grace period after the call returns.
	Progress func(params map[string]any)
}

// progressGrace keeps a progress route after its call returned, because
// notifications and the result travel separately.
const progressGrace = 250 * time.Millisecond

// CallObserver is told of each tools/call a Downstream is asked to make:
// the server's name, the tool's name on that server, the outcome and how
// long the call took, from Call's start to its return (a restart
// included). It is called concurrently and must not block.
type CallObserver interface {
	Called(server, tool string, outcome CallOutcome, latency time.Duration)
}

// CallOutcome is how a downstream call ended.
type CallOutcome string

// The outcomes of a downstream call.
const (
	CallOK          CallOutcome = "ok"          // a result that is not a tool error
	CallToolError   CallOutcome = "tool_error"  // a result with isError
	CallRPCError    CallOutcome = "rpc_error"   // a JSON-RPC error answer (*RPCError)
	CallUnavailable CallOutcome = "unavailable" // not sent (ErrUnavailable)
	CallNoAnswer    CallOutcome = "no_answer"   // sent, no answer (ErrNoAnswer)
)

// outcomeOf classifies what Call returned.
func outcomeOf(res *mcp.CallToolResult, err error) CallOutcome {
	var rpc *RPCError
	switch {
	case err == nil && res != nil && res.IsError:
		return CallToolError
	case err == nil:
		return CallOK
	case errors.As(err, &rpc):
		return CallRPCError
	case errors.Is(err, ErrUnavailable):
		return CallUnavailable
	}
	return CallNoAnswer
}

// Call calls tool with args (a JSON object, sent byte for byte) and
// returns the server's result, which may be a tool error (IsError). The
// error wraps ErrUnavailable when the call could not be sent (nothing
// happened) and ErrNoAnswer when it was sent but no answer came (it may or
// may not have taken effect). Cancelling ctx cancels the call downstream.
func (d *Downstream) Call(ctx context.Context, tool string, args json.RawMessage, opts CallOptions) (*mcp.CallToolResult, error) {
	start := time.Now()
	res, err := d.call(ctx, tool, args, opts)
	if o := d.spec.Observer; o != nil {
		o.Called(d.spec.Name, tool, outcomeOf(res, err), time.Since(start))
	}
	return res, err
}

func (d *Downstream) call(ctx context.Context, tool string, args json.RawMessage, opts CallOptions) (*mcp.CallToolResult, error) {
	c, err := d.live(ctx)
	if err != nil {
		return nil, err
	}
	// A server silent for a while may have died: find out before sending,
	// while a failure still means "not sent".
	if time.Since(time.Unix(0, d.lastOK.Load())) > idleProbe && !mcp.IsModernProtocol(c.ProtocolVersion()) {
		pctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		//lint:ignore SA1019 downstreams are pinned to 2025-11-25, where ping is the liveness check.
		perr := c.Ping(pctx)
		cancel()
		if perr != nil && ctx.Err() == nil {
			d.dead(c, perr)
			if c, err = d.live(ctx); err != nil {
				return nil, err
			}
		}
	}
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.RawArguments = args
	req.Params.Arguments = args
	meta := &mcp.Meta{}
	for k, v := range opts.Meta {
		if k == "progressToken" || strings.HasPrefix(k, "io.modelcontextprotocol/") {
			continue
		}
		if meta.AdditionalFields == nil {
			meta.AdditionalFields = map[string]any{}
		}
		meta.AdditionalFields[k] = v
	}
	if opts.Progress != nil {
		tok := "ip-" + strconv.FormatInt(d.nextID.Add(1), 10)
		meta.ProgressToken = tok
		d.routes.add(tok, opts.Progress)
		defer time.AfterFunc(progressGrace, func() { d.routes.remove(tok) })
	}
	if meta.ProgressToken != nil || meta.AdditionalFields != nil {
		req.Params.Meta = meta
	}
	cctx, cancel := context.WithTimeout(ctx, d.spec.callTimeout())
	defer cancel()
	res, err := c.CallTool(cctx, req)
	if err == nil {
		d.lastOK.Store(time.Now().UnixNano())
		return res, nil
	}
	switch {
	case ctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s: the call was cancelled (%v); it may or may not have taken effect", ErrNoAnswer, d.spec.Name, ctx.Err())
	case cctx.Err() != nil:
		return nil, fmt.Errorf("%w: %s did not answer within %s; the call was cancelled and may or may not have taken effect", ErrNoAnswer, d.spec.Name, d.spec.callTimeout())
	case isClosed(err):
		d.dead(c, err)
		return nil, fmt.Errorf("%w: %s stopped while handling the call (%v); it may or may not have taken effect, and the server will be restarted", ErrNoAnswer, d.spec.Name, err)
	}
	// A JSON-RPC error: the server answered that it refused the call.
	d.lastOK.Store(time.Now().UnixNano())
	return nil, &RPCError{Server: d.spec.Name, Err: err}
}

// RPCError is a JSON-RPC error answer from a downstream server: the
// server refused the call (unknown tool, invalid params) rather than
// failing to answer.
type RPCError struct {
	Server string
	Err    error
}

func (e *RPCError) Error() string {
	return fmt.Sprintf("%s answered with an error: %v", e.Server, e.Err)
}

// Unwrap returns the client's error.
func (e *RPCError) Unwrap() error { return e.Err }

// onNotification routes progress notifications to their upstream call,
// and has the tools listed again when the server says they changed.
func (d *Downstream) onNotification(n mcp.JSONRPCNotification) {
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged),
		// The subscription is in place: list again what may have changed
		// between the first tools/list and it.
		mcp.MethodNotificationSubscriptionsAcknowledged:
		d.kick()
		return
	}
	if n.Method != string(mcp.MethodNotificationProgress) {
		return
	}
	params := n.Params.AdditionalFields
	tok, _ := params["progressToken"].(string)
	if tok == "" {
		return
	}
	f := d.routes.get(tok)
	if f == nil {
		return
	}
	out := make(map[string]any, len(params))
	for k, v := range params {
		if k != "progressToken" {
			out[k] = v
		}
	}
	f(out)
}

type progressRoute func(params map[string]any)

// progressRoutes maps downstream progress tokens to upstream calls.
type progressRoutes struct {
	mu sync.Mutex
	m  map[string]progressRoute
}

func (r *progressRoutes) add(tok string, f progressRoute) {
	r.mu.Lock()
	r.m[tok] = f
	r.mu.Unlock()
}

func (r *progressRoutes) remove(tok string) {
	r.mu.Lock()
	delete(r.m, tok)
	r.mu.Unlock()
}

func (r *progressRoutes) get(tok string) progressRoute {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.m[tok]
}
