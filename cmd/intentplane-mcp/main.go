// Command intentplane-mcp is intentplane's MCP front door: an MCP server
// on stdio that an MCP client (Claude Desktop, Claude Code, Cursor) runs in
// place of its MCP servers. It starts the downstream servers named in its
// TOML configuration, shows the client only the configured tools (with
// the downstream's own schema and description) and the tools of mounted
// packs, and has the gateway decide every call.
//
//	intentplane-mcp --config intentplane.toml
//
// It is a composition root: it reads the configuration, builds the store,
// registries, packs, mandate, gateway and approval page, and serves
// mcpproxy on stdio and the approval page on its own address. Errors in
// the configuration are reported with the file and line.
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/alecthomas/kong"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/admin"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr)
	stop()
	cli.Exit("intentplane-mcp", err)
}

type commandLine struct {
	Version   kong.VersionFlag `help:"Print the version (module, commit, Go) and exit."`
	Config    string           `required:"" type:"path" help:"TOML configuration file." placeholder:"FILE"`
	Check     bool             `help:"Check the configuration (start the downstream servers, load policies and registries, compare the tools with their pins), print the tools and exit."`
	Pin       bool             `help:"Start the downstream servers, write the title, description and input schema of each tool of [tools] to the lock file [pins] names, print what changed since the last pin, and exit. Review the changes before checking the file in."`
	LogLevel  string           `default:"warn" enum:"debug,info,warn,error" help:"Log level on stderr (${enum}); info logs one line per decision (owner, action, verdict, reason code, operation hash, latency; never an argument)."`
	LogFormat string           `default:"text" enum:"text,json" help:"Log format on stderr: text, or json (one JSON object a line, for a log collector)."`
}

// run parses args, wires the proxy and serves it on stdin and stdout
// until stdin ends or ctx is done. Logs go to stderr.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c commandLine
	kctx, err := cli.Parse(&c, "intentplane-mcp", "intentplane's MCP proxy: the agent proposes, a deterministic gateway decides.", args, stdout, stderr)
	if kctx == nil {
		return err
	}
	var level slog.Level
	_ = level.UnmarshalText([]byte(c.LogLevel))
	log := newLogger(stderr, c.LogFormat, level)
	if c.LogFormat == "json" {
		stderr = &logLines{h: log.Handler(), now: time.Now}
	}

	cfg, err := config.Load(c.Config)
	if err != nil {
		return err
	}
	if c.Pin {
		if c.Check {
			return &cli.ExitError{Code: 2, Msg: "--pin and --check do not go together: pin first, then check"}
		}
		return runPin(ctx, cfg, stdout, stderr, log)
	}
	a, err := build(ctx, cfg, stderr, log)
	if err != nil {
		return err
	}
	defer a.Close()
	if c.Check {
		if err := checkPins(cfg, a.lock, a.servers()); err != nil {
			return err
		}
		for _, t := range a.tools {
			fmt.Fprintf(stdout, "%s\t%s\n", t.Name, t.Action)
		}
		what := "the mandate file is valid"
		if a.issued {
			what = "a mandate is issued for " + string(a.mandate.Owner) + " each time the proxy starts"
		}
		fmt.Fprintf(stdout, "configuration OK: %d tools; %s\n", len(a.tools), what)
		return nil
	}
	return serve(ctx, a, cfg, stdin, stdout, stderr, log)
}

// newLogger logs to w at level, as JSON lines when format is "json", else
// as slog's text.
func newLogger(w io.Writer, format string, level slog.Level) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// serve runs a until stdin ends or ctx is done: the checkpoint loop, the
// approval page on its own address, and the proxy on stdio.
func serve(ctx context.Context, a *app, cfg *config.Config, stdin io.Reader, stdout, stderr io.Writer, log *slog.Logger) error {
	fmt.Fprintf(stderr, "intentplane-mcp: %s\n", a.describeMandate())
	reconcileAtStart(ctx, a.gateway, cfg.Store.Kind, log)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	a.store.start(ctx)
	if a.page != nil {
		errc, err := a.page.serve(ctx)
		if err != nil {
			return cfg.ErrAt([]string{"approvals", "listen"}, "%v", err)
		}
		fmt.Fprintf(stderr, "intentplane-mcp: approval page at %s\n", a.page.srv.URL())
		go func() {
			if err := <-errc; err != nil {
				log.Error("approval page stopped", "err", err)
			}
		}()
	}
	if a.metrics != nil {
		if err := serveAdmin(ctx, a, cfg, stderr, log); err != nil {
			return err
		}
	}
	return a.proxy.ServeStdio(ctx, stdin, stdout)
}

// serveAdmin serves /healthz (the store answers a read) and /metrics on
// [admin] listen until ctx is done.
func serveAdmin(ctx context.Context, a *app, cfg *config.Config, stderr io.Writer, log *slog.Logger) error {
	ln, err := net.Listen("tcp", cfg.Admin.Listen)
	if err != nil {
		return cfg.ErrAt([]string{"admin", "listen"}, "%v", err)
	}
	fmt.Fprintf(stderr, "intentplane-mcp: admin (/healthz, /metrics) at http://%s\n", ln.Addr())
	health := func(ctx context.Context) error {
		_, err := a.store.Usage(ctx, "intentplane-mcp/healthz")
		return err
	}
	go func() {
		h := admin.HostCheck(a.metrics.Handler(health), admin.Hosts(ln.Addr(), cfg.Admin.Hosts...))
		if err := admin.Serve(ctx, ln, h); err != nil {
			log.Error("admin listener stopped", "err", err)
		}
	}()
	return nil
}
