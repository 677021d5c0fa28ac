package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/admin"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/core/resolve/filereg"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/internal/version"
	"github.com/intentplane/intentplane/mcpproxy"
)

// The approval page's tracker is the proxy's approval channel.
var _ mcpproxy.Approvals = (*approvals.Tracker)(nil)

// app is a wired proxy and what it owns.
type app struct {
	proxy       *mcpproxy.Proxy
	gateway     *gateway.Gateway
	store       *store
	page        *page // nil without page approvers
	downstreams []*mcpproxy.Downstream
	tools       []mcpproxy.Tool
	mandate     *mandate.Mandate // the session's mandate, verified
	issued      bool             // the mandate was issued at start
	metrics     *admin.Metrics   // nil without [admin]
	lock        *mcpproxy.Lock   // the pins of [pins]; nil without
}

// servers returns the downstream servers by name.
func (a *app) servers() map[string]*mcpproxy.Downstream {
	m := make(map[string]*mcpproxy.Downstream, len(a.downstreams))
	for _, d := range a.downstreams {
		m[d.Name()] = d
	}
	return m
}

// describeMandate says which mandate the session runs under, in one line.
func (a *app) describeMandate() string {
	m := a.mandate
	how := "from the mandate file"
	if a.issued {
		how = "issued at start"
	}
	return fmt.Sprintf("mandate %s (%s) for %s: budget %s %s, valid until %s", m.ID, how, m.Owner,
		m.Budget.Currency, m.Budget.Decimal(), m.Expiry.UTC().Format(time.RFC3339))
}

// Close stops the downstream servers, then closes the store.
func (a *app) Close() error {
	var errs []error
	for _, d := range a.downstreams {
		errs = append(errs, d.Close())
	}
	if a.store != nil {
		errs = append(errs, a.store.Close())
	}
	return errors.Join(errs...)
}

// build wires the gateway and the proxy from c. Errors name the file and
// line of the offending key.
func build(ctx context.Context, c *config.Config, stderr io.Writer, log *slog.Logger) (_ *app, err error) {
	a := &app{}
	defer func() {
		if err != nil {
			_ = a.Close()
		}
	}()
	now := time.Now
	w := &wiring{servers: map[string]*mcpproxy.Downstream{}, cbs: &callbackBook{}}
	if c.Admin != nil {
		a.metrics = admin.NewMetrics()
		w.calls = a.metrics
	}
	// The operator's pins, read before any server starts.
	if w.lock, err = loadLock(c); err != nil {
		return nil, err
	}
	err = w.startServers(ctx, c, stderr, now, log)
	a.downstreams = w.downstreams
	if err != nil {
		return nil, err
	}
	if err := w.proxyTools(c); err != nil {
		return nil, err
	}
	a.lock = w.lock
	a.tools = w.clientTools()
	if a.store, err = openStore(ctx, c, log, a.deferredLost()); err != nil {
		return nil, err
	}
	w.cbs.kept.Store = a.store.entries // call-backs outlive a restart
	// A mandate issued at start is kept in the store, so that a restart
	// continues it (its budget, its executed operations).
	token, issuers, m, err := buildMandate(ctx, c, w.actions(), a.store.records, now)
	if err != nil {
		return nil, err
	}
	a.mandate, a.issued = m, c.Mandate.File == ""
	for _, om := range w.mounts {
		if err := om.checkOwner(c, string(m.Owner)); err != nil {
			return nil, err
		}
	}
	signer, err := buildApprover(c)
	if err != nil {
		return nil, err
	}
	// The approval page logs its requests and decisions into the
	// gateway's store.
	st := a.gatewayStore()
	if a.page, err = buildPage(c, st, a.store.entries, w.cbs.sink(), argRoles(w.packs, m.Budget.Currency), log); err != nil {
		return nil, err
	}
	a.watchPage()
	if a.page != nil {
		// The page's audit view reads the same store's receipt chains.
		ac := a.store.auditConfig()
		ac.PayeeParams = payeeParams(w.packs)
		if err = a.page.srv.EnableAudit(ac); err != nil {
			return nil, err
		}
	}
	// After the page, whose approvers it counts (and checks first).
	if err := checkDecidable(c, w.packs, w.proxied, m.Owner, stderr); err != nil {
		return nil, err
	}
	if err := checkScales(c, w.packs, w.proxied, m.Budget); err != nil {
		return nil, err
	}
	warnRegistries(c, w.regs, m.Owner, stderr)
	if a.gateway, err = buildGateway(gatewayParts{c: c, store: st, packs: w.packs, issuers: issuers, signer: signer, owner: m.Owner, page: a.page, log: log}); err != nil {
		return nil, err
	}
	var obs mcpproxy.Observer
	if a.metrics != nil {
		obs = a.metrics
	}
	if a.proxy, err = buildProxy(proxyParts{c: c, gateway: a.gateway, token: token, signer: signer, mandate: m, page: a.page,
		store: a.store, tools: a.tools, observer: obs, now: now, log: log}); err != nil {
		return nil, err
	}
	if a.metrics != nil {
		a.metrics.WatchPending("client", a.proxy.PendingConfirmations)
	}
	return a, nil
}

// wiring is what build gathers from the servers and tools of the
// configuration.
type wiring struct {
	servers     map[string]*mcpproxy.Downstream // by name; not packs
	downstreams []*mcpproxy.Downstream          // started, in order
	packs       []gateway.Pack
	tools       []namedTool // in file order
	mounts      []odooMount
	cbs         *callbackBook // call-backs recorded on the page, read by the ap pack
	regs        map[string]*filereg.Registry
	proxied     string                // the proxied tools' pack, "" without [tools]
	lock        *mcpproxy.Lock        // [pins], nil without
	calls       mcpproxy.CallObserver // the downstream calls' metrics; nil without
}

// namedTool is a tool with the server it comes from, for names that
// collide.
type namedTool struct {
	server string
	tool   mcpproxy.Tool
}

// startServers starts the downstream servers and mounts the packs.
func (w *wiring) startServers(ctx context.Context, c *config.Config, stderr io.Writer, now func() time.Time, log *slog.Logger) error {
	for _, name := range config.Ordered(c, []string{"servers"}, c.Servers) {
		sc, at := c.Servers[name], []string{"servers", name}
		if sc.Pack != "" {
			p, err := mountPack(ctx, c, at, sc, w.cbs, now, log)
			if err != nil {
				return err
			}
			if sc.ERP == "odoo" {
				w.mounts = append(w.mounts, odooMount{at: append(append([]string{}, at...), "odoo"), companies: sc.Odoo.Companies})
			}
			w.packs = append(w.packs, p)
			for _, t := range mcpproxy.PackTools(p, sc.Prefix) {
				t.PageOnly = sc.Confirm == config.ConfirmPage
				w.tools = append(w.tools, namedTool{name, t})
			}
			if run, ok := runTool(p, sc.Prefix); ok {
				w.tools = append(w.tools, namedTool{name, run})
			}
			continue
		}
		d, err := dialServer(ctx, c, name, w.calls, stderr, log)
		if err != nil {
			return err
		}
		w.downstreams = append(w.downstreams, d)
		w.servers[name] = d
	}
	return nil
}

// runTool is the payment-run tool of the ap pack p (ap.RunTool over
// ap.pay_bill, named with prefix); ok is false for another pack.
func runTool(p gateway.Pack, prefix string) (mcpproxy.Tool, bool) {
	if p.Name != ap.Name {
		return mcpproxy.Tool{}, false
	}
	for _, c := range p.Contracts {
		if c.Action == ap.ActionPayBill {
			return mcpproxy.RunTool(prefix+ap.RunTool, c, ap.RunItems, ap.RunDoc), true
		}
	}
	return mcpproxy.Tool{}, false
}

// dialServer starts the downstream server [servers.name] (a command or a
// URL, not a pack), with exactly the environment it lists; obs, when not
// nil, is told of its calls.
func dialServer(ctx context.Context, c *config.Config, name string, obs mcpproxy.CallObserver, stderr io.Writer, log *slog.Logger) (*mcpproxy.Downstream, error) {
	sc := c.Servers[name]
	env := []string{}
	for _, k := range sc.PassEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range config.SortedKeys(sc.Env) {
		env = append(env, k+"="+sc.Env[k])
	}
	cmd := sc.Command
	if strings.Contains(cmd, string(os.PathSeparator)) {
		cmd = c.File(cmd)
	}
	d, err := mcpproxy.Dial(ctx, mcpproxy.ServerSpec{
		Name: name, Command: cmd, Args: sc.Args, Env: env, Dir: c.File(sc.Dir),
		URL: sc.URL, Headers: sc.Headers, Stderr: prefixWriter{w: stderr, prefix: "[" + name + "] "},
		CallTimeout: sc.CallTimeout.Duration, Logger: log, Observer: obs,
	})
	if err != nil {
		return nil, c.ErrAt([]string{"servers", name}, "%v", err)
	}
	return d, nil
}

// proxyTools turns the [tools] of downstream servers into one pack: their
// contracts, the routes that forward them and the tools the client sees.
func (w *wiring) proxyTools(c *config.Config) error {
	regs, regNorm, err := w.loadRegistries(c)
	if err != nil || len(c.Tools) == 0 {
		return err
	}
	fwd := &mcpproxy.Forwarder{Routes: map[intent.Action]mcpproxy.Route{}}
	var contracts []*contract.Contract
	var thresholds strings.Builder // the totals' thresholds, as Cedar
	for _, key := range config.Ordered(c, []string{"tools"}, c.Tools) {
		ct, t, err := w.proxyTool(c, key, regNorm, fwd, &thresholds)
		if err != nil {
			return err
		}
		contracts = append(contracts, ct)
		w.tools = append(w.tools, namedTool{c.Tools[key].Server, t})
	}
	name, _, _ := strings.Cut(string(contracts[0].Action), ".")
	for _, p := range w.packs {
		if p.Name == name {
			return c.ErrAt([]string{"tools"}, "the proxied tools' actions use the prefix %q, which a mounted pack already uses", name)
		}
	}
	dir := c.File(c.Policy.Dir)
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return c.ErrAt([]string{"policy", "dir"}, "policy directory %s does not exist", dir)
	}
	policies, err := mcpproxy.PolicyFS(os.DirFS(dir), thresholds.String())
	if err != nil {
		return c.ErrAt([]string{"policy", "dir"}, "%v", err)
	}
	if err := checkTotalsPolicy(c, policies); err != nil {
		return err
	}
	w.proxied = name
	w.packs = append(w.packs, gateway.Pack{Name: name, Contracts: contracts, Policies: policies, Registries: regs, Executor: fwd})
	return nil
}

// checkTotalsPolicy loads the proxied tools' policy with the thresholds of
// their totals (mcpproxy.TotalsPolicyFile), and points a fault in the
// thresholds at the totals that wrote them: most often the schema does
// not declare a total as a fact of its tool's action.
func checkTotalsPolicy(c *config.Config, policies fs.FS) error {
	_, err := policy.Load(policies)
	var le *policy.LoadError
	if !errors.As(err, &le) || le.File != mcpproxy.TotalsPolicyFile {
		return nil // any other fault is the operator's policy's, reported with its file and line when the gateway loads it
	}
	for _, key := range config.Ordered(c, []string{"tools"}, c.Tools) {
		for i, t := range c.Tools[key].Totals {
			if strings.Contains(le.Error(), t.Name) {
				return c.ErrAt([]string{"tools", key, "totals", fmt.Sprint(i)}, "the thresholds of total %q do not validate against the policy's schema: declare the total as a fact of %s in %s, facts: { %s: Long, … } (%v)",
					t.Name, c.Tools[key].Action, c.Policy.Dir, t.Name, le)
			}
		}
	}
	return c.ErrAt([]string{"tools"}, "the thresholds of the tools' totals do not validate against the policy's schema: %v", le)
}

// proxyTool builds the contract, the route and the mirrored tool of
// [tools.key].
func (w *wiring) proxyTool(c *config.Config, key string, regNorm map[string]string, fwd *mcpproxy.Forwarder, thresholds *strings.Builder) (*contract.Contract, mcpproxy.Tool, error) {
	tc, at := c.Tools[key], []string{"tools", key}
	d := w.servers[tc.Server]
	raw, err := downstreamTool(c, key, d)
	if err != nil {
		return nil, mcpproxy.Tool{}, err
	}
	spec, err := toolSpec(c, key, tc)
	if err != nil {
		return nil, mcpproxy.Tool{}, err
	}
	ct, amounts, err := spec.Contract(raw, regNorm)
	if err != nil {
		if len(spec.Totals) > 0 && strings.Contains(err.Error(), "total ") {
			return nil, mcpproxy.Tool{}, c.ErrAt(append(at, "totals"), "%v", err)
		}
		return nil, mcpproxy.Tool{}, specError(c, at, err)
	}
	thresholds.WriteString(spec.TotalsPolicy())
	fwd.Routes[ct.Action] = mcpproxy.Route{Server: d, Tool: raw.Name, Amounts: amounts}
	for _, p := range ct.Params {
		if p.Sensitive {
			r := fwd.Routes[ct.Action]
			r.Sensitive = append(r.Sensitive, p.Name)
			fwd.Routes[ct.Action] = r
		}
	}
	t := spec.Tool(d, raw, ct)
	t.Mirror.Lock = w.lock
	t.PageOnly = tc.Confirm == config.ConfirmPage
	return ct, t, nil
}

// downstreamTool returns the tool [tools.key] names, as its server d
// lists it now.
func downstreamTool(c *config.Config, key string, d *mcpproxy.Downstream) (mcpproxy.RawTool, error) {
	tc := c.Tools[key]
	toolName := tc.Tool
	if toolName == "" {
		toolName = key
	}
	var names []string
	for _, t := range d.Tools() {
		names = append(names, t.Name)
		if t.Name == toolName {
			return t, nil
		}
	}
	return mcpproxy.RawTool{}, c.ErrAt([]string{"tools", key}, "server %q has no tool %q (it has: %s)", tc.Server, toolName, strings.Join(names, ", "))
}

// toolSpec is the declaration of the proxied tool at [tools.key], its
// parameters in file order, with its totals.
func toolSpec(c *config.Config, key string, tc config.Tool) (mcpproxy.ToolSpec, error) {
	at := []string{"tools", key}
	totals, err := c.ToolTotals(key)
	if err != nil {
		return mcpproxy.ToolSpec{}, err
	}
	spec := mcpproxy.ToolSpec{Action: intent.Action(tc.Action), Name: tc.Name, Description: tc.Description, Budget: tc.Budget, ReadOnly: tc.ReadOnly, Totals: totals}
	for _, name := range config.Ordered(c, append(at, "params"), tc.Params) {
		pc := tc.Params[name]
		spec.Params = append(spec.Params, mcpproxy.ParamSpec{
			Name: name, Type: pc.Type, Scale: pc.Scale, MaxLength: pc.MaxLength, Required: pc.Required,
			Critical: pc.Critical, Sources: pc.Sources, Normalizer: pc.Normalizer, Format: pc.Format, OnNoMatch: pc.OnNoMatch,
			Sensitive: pc.Sensitive,
		})
	}
	return spec, nil
}

// specError points a *mcpproxy.SpecError at the line of the declaration at
// fault, under the tool's table at.
func specError(c *config.Config, at []string, err error) error {
	var se *mcpproxy.SpecError
	if !errors.As(err, &se) {
		return err
	}
	where := append([]string{}, at...)
	if se.Param != "" {
		where = append(where, "params", se.Param)
	}
	if se.Field != "" {
		where = append(where, se.Field)
	}
	return c.ErrAt(where, "%v", se)
}

// loadRegistries reads the [registries] files; regNorm maps each to the
// name of its normalizer; w.regs keeps them for warnRegistries.
func (w *wiring) loadRegistries(c *config.Config) (regs map[string]resolve.Registry, regNorm map[string]string, err error) {
	regs, regNorm, w.regs = map[string]resolve.Registry{}, map[string]string{}, map[string]*filereg.Registry{}
	for _, name := range config.Ordered(c, []string{"registries"}, c.Registries) {
		rc := c.Registries[name]
		norm, _ := mcpproxy.Normalizer(rc.Normalizer) // known: config checked it
		r, err := filereg.Load(c.File(rc.File), norm)
		if err != nil {
			return nil, nil, c.ErrAt([]string{"registries", name, "file"}, "%v", err)
		}
		regs[name], regNorm[name], w.regs[name] = r, rc.Normalizer, r
	}
	return regs, regNorm, nil
}

// clientTools returns the tools as the client sees them: a name that two
// servers share is prefixed with each server's name.
func (w *wiring) clientTools() []mcpproxy.Tool {
	count := map[string]int{}
	for _, n := range w.tools {
		count[n.tool.Name]++
	}
	out := make([]mcpproxy.Tool, 0, len(w.tools))
	for _, n := range w.tools {
		if count[n.tool.Name] > 1 {
			n.tool.Name = n.server + "_" + n.tool.Name
		}
		out = append(out, n.tool)
	}
	return out
}

// actions lists every action of every pack, for a mandate issued at start.
func (w *wiring) actions() []intent.Action {
	var out []intent.Action
	for _, p := range w.packs {
		for _, ct := range p.Contracts {
			out = append(out, ct.Action)
		}
	}
	return out
}

// mountPack builds a pack mounted as a server at ["servers", name] (config
// checked that it is ap over demo or Odoo), with the settings of its
// controls table. On Odoo, it logs in and checks the identities' rights
// first. The ap pack reads its call-backs from cbs.
func mountPack(ctx context.Context, c *config.Config, at []string, sc config.Server, cbs *callbackBook, now func() time.Time, log *slog.Logger) (gateway.Pack, error) {
	cfg, err := c.APConfig(at[len(at)-1])
	if err != nil {
		return gateway.Pack{}, err
	}
	var books erp.Source = ap.DemoERP(now)
	if sc.ERP == "odoo" {
		client, err := openOdoo(ctx, c, at, sc.Odoo, cfg.Zone, log)
		if err != nil {
			return gateway.Pack{}, err
		}
		books = client
	}
	cfg.Callbacks = cbs.forPack(books)
	p, err := ap.NewPack(books, cfg)
	if err != nil {
		return gateway.Pack{}, c.ErrAt(append(at, "pack"), "%v", err)
	}
	return p, nil
}

// gatewayParts are what buildGateway joins.
type gatewayParts struct {
	c       *config.Config
	store   gateway.Store
	packs   []gateway.Pack
	issuers mandate.Keys     // who may issue the mandate
	signer  *mcpproxy.Signer // the client's user's approvals
	owner   intent.Owner     // the session's, for whom signer approves
	page    *page            // nil without the approval page
	log     *slog.Logger
}

// buildGateway builds the gateway over p.store: it trusts the mandate's
// issuers and the approvers' keys (the client's user's and the page's),
// each approving only for whom approval.Scope says.
func buildGateway(p gatewayParts) (*gateway.Gateway, error) {
	approvers := approval.StaticKeys{p.signer.Name: p.signer.Key.Public().(ed25519.PublicKey)}
	scope := approval.Scope{Client: p.signer.Name, Session: p.owner}
	if p.page != nil {
		for name, k := range p.page.srv.Keys() {
			approvers[name] = k
		}
		scope.Owners = p.page.owners
	}
	gw, err := gateway.New(gateway.Config{
		Audience: p.c.Audience, Issuers: p.issuers, Approvers: approvers, ApproverScope: scope.Allows, Logger: p.log,
	}, p.store, p.packs...)
	if err != nil {
		return nil, p.c.ErrAt([]string{"policy"}, "%v", err)
	}
	return gw, nil
}

// proxyParts are what buildProxy joins.
type proxyParts struct {
	c        *config.Config
	gateway  *gateway.Gateway
	token    string           // the session's signed mandate
	signer   *mcpproxy.Signer // the client's user's approvals
	mandate  *mandate.Mandate // token's, decoded
	page     *page            // nil without the approval page
	store    *store           // the page's requests and the approvals used
	tools    []mcpproxy.Tool
	observer mcpproxy.Observer // nil without metrics
	now      func() time.Time
	log      *slog.Logger
}

// buildProxy builds the MCP proxy serving p.tools through p.gateway under
// the session's mandate, asking the client's user by elicitation and,
// with a page, through an approvals.Tracker that keeps its memory in the
// store's entries and asks the store whether an approval was used.
func buildProxy(p proxyParts) (*mcpproxy.Proxy, error) {
	c, st, m := p.c, p.store, p.mandate
	pcfg := mcpproxy.Config{
		Name: c.Name, Version: version.Read().Short(), Instructions: c.Instructions, Mandate: p.token, ForwardMeta: c.ForwardMeta,
		ConfirmTimeout:          c.Approvals.ConfirmTimeout.Duration,
		MaxPendingConfirmations: c.Approvals.MaxPending,
		ApprovalTTL:             c.Approvals.ApprovalTTL.Duration,
		Logger:                  p.log,
		Observer:                p.observer,
	}
	if c.Approvals.Elicitation == nil || *c.Approvals.Elicitation {
		pcfg.ClientApprover = p.signer
	}
	if p.page != nil {
		used := func(ctx context.Context, a approval.Approval) (bool, error) { return approvalUsed(ctx, st, a) }
		pcfg.Approvals = approvals.NewTracker(p.page.ch, st.entries, approvals.TrackerConfig{Currency: m.Budget.Currency, Until: m.Expiry, Now: p.now, Logger: p.log, Used: used})
		pcfg.ApprovalWait = time.Duration(c.Approvals.Wait) * time.Second
	}
	px, err := mcpproxy.New(pcfg, p.gateway, p.tools...)
	if err != nil {
		return nil, c.ErrAt([]string{"tools"}, "%v", err)
	}
	return px, nil
}

// buildApprover loads or generates the key of the user at the client.
func buildApprover(c *config.Config) (*mcpproxy.Signer, error) {
	if c.Approvals.ApproverKey == "" {
		_, k, err := ed25519.GenerateKey(nil)
		if err != nil {
			return nil, err
		}
		return &mcpproxy.Signer{Name: c.Approvals.Approver, Key: k}, nil
	}
	priv, err := readPrivateKey(c.File(c.Approvals.ApproverKey))
	if err != nil {
		return nil, c.ErrAt([]string{"approvals", "approver_key"}, "%v", err)
	}
	return &mcpproxy.Signer{Name: c.Approvals.Approver, Key: priv}, nil
}

// readPrivateKey reads an "ed25519-priv:…" key file.
func readPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return mandate.ParsePrivateKey(strings.TrimSpace(string(b)))
}

// prefixWriter prefixes each write (a child's stderr) with its server.
type prefixWriter struct {
	w      io.Writer
	prefix string
}

func (p prefixWriter) Write(b []byte) (int, error) {
	if p.w == nil {
		return len(b), nil
	}
	_, err := p.w.Write(append([]byte(p.prefix), b...))
	return len(b), err
}

// approvalUsed reports whether the gateway consumed approval a: its
// single-use key, or for the approval of a run the key of any of its
// lines (each line consumes its own).
func approvalUsed(ctx context.Context, st *store, a approval.Approval) (bool, error) {
	if len(a.Lines) == 0 {
		return st.Consumed(ctx, state.ApprovalKey(a.ID))
	}
	for _, h := range a.Lines {
		used, err := st.Consumed(ctx, state.LineApprovalKey(a.ID, h))
		if used || err != nil {
			return used, err
		}
	}
	return false, nil
}
