package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/core/resolve/filereg"
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
}

// describeMandate says which mandate the session runs under, in one line.
func (a *app) describeMandate() string {
	m := a.mandate
	how := "from the mandate file"
	if a.issued {
		how = "issued at start"
	}
	return fmt.Sprintf("mandate %s (%s) for %s: budget %s %s, valid until %s", m.ID, how, m.Owner,
		m.Budget.Currency, intent.FormatAmount(m.Budget.Amount, 2), m.Expiry.UTC().Format(time.RFC3339))
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

// inFileOrder returns the keys of a table under prefix in the order they
// appear in the file.
func inFileOrder[V any](c *config, prefix []string, m map[string]V) []string {
	keys := sortedKeys(m)
	sort.SliceStable(keys, func(i, j int) bool {
		return c.pos.line(append(append([]string{}, prefix...), keys[i])) < c.pos.line(append(append([]string{}, prefix...), keys[j]))
	})
	return keys
}

// build wires the gateway and the proxy from c. Errors name the file and
// line of the offending key.
func build(ctx context.Context, c *config, stderr io.Writer, log *slog.Logger) (_ *app, err error) {
	a := &app{}
	defer func() {
		if err != nil {
			_ = a.Close()
		}
	}()
	now := time.Now

	// Registries.
	regs := map[string]resolve.Registry{}
	regNorm := map[string]string{}
	for _, name := range inFileOrder(c, []string{"registries"}, c.Registries) {
		rc := c.Registries[name]
		at := []string{"registries", name}
		var norm contract.Normalizer
		if rc.Normalizer != "" {
			var ok bool
			if norm, ok = mcpproxy.Normalizer(rc.Normalizer); !ok {
				return nil, c.errAt(append(at, "normalizer"), "unknown normalizer %q (%s)", rc.Normalizer, mcpproxy.NormalizerNames)
			}
		}
		if rc.File == "" {
			return nil, c.errAt(at, "registry %q needs a file", name)
		}
		r, err := filereg.Load(c.file(rc.File), norm)
		if err != nil {
			return nil, c.errAt(append(at, "file"), "%v", err)
		}
		regs[name], regNorm[name] = r, rc.Normalizer
	}

	// Servers: downstream processes and URLs, and pack mounts.
	servers := map[string]*mcpproxy.Downstream{}
	var packs []gateway.Pack
	type named struct {
		server string
		tool   mcpproxy.Tool
	}
	var all []named
	var mounts []odooMount
	cbs := &callbackBook{} // call-backs recorded on the page, read by the ap pack
	for _, name := range inFileOrder(c, []string{"servers"}, c.Servers) {
		sc := c.Servers[name]
		at := []string{"servers", name}
		kinds := 0
		for _, s := range []string{sc.Command, sc.URL, sc.Pack} {
			if s != "" {
				kinds++
			}
		}
		if kinds != 1 {
			return nil, c.errAt(at, "server %q needs exactly one of command, url and pack", name)
		}
		if sc.Odoo != nil && sc.ERP != "odoo" {
			return nil, c.errAt(append(at, "odoo"), "an [%s.odoo] table needs pack = \"ap\" and erp = \"odoo\"", strings.Join(at, "."))
		}
		if sc.Pack != "" {
			p, err := mountPack(ctx, c, at, sc, cbs, now, log)
			if err != nil {
				return nil, err
			}
			if sc.ERP == "odoo" {
				mounts = append(mounts, odooMount{at: append(append([]string{}, at...), "odoo"), companies: sc.Odoo.Companies})
			}
			packs = append(packs, p)
			for _, t := range mcpproxy.PackTools(p, sc.Prefix) {
				all = append(all, named{name, t})
			}
			continue
		}
		env := []string{}
		for _, k := range sc.PassEnv {
			if v, ok := os.LookupEnv(k); ok {
				env = append(env, k+"="+v)
			}
		}
		for _, k := range sortedKeys(sc.Env) {
			env = append(env, k+"="+sc.Env[k])
		}
		cmd := sc.Command
		if strings.Contains(cmd, string(os.PathSeparator)) {
			cmd = c.file(cmd)
		}
		d, err := mcpproxy.Dial(ctx, mcpproxy.ServerSpec{
			Name: name, Command: cmd, Args: sc.Args, Env: env, Dir: c.file(sc.Dir),
			URL: sc.URL, Headers: sc.Headers, Stderr: prefixWriter{w: stderr, prefix: "[" + name + "] "},
			CallTimeout: sc.CallTimeout.Duration, Logger: log,
		})
		if err != nil {
			return nil, c.errAt(at, "%v", err)
		}
		a.downstreams = append(a.downstreams, d)
		servers[name] = d
	}

	// Tools of downstream servers: contracts, routes and mirrored tools.
	fwd := &mcpproxy.Forwarder{Routes: map[intent.Action]mcpproxy.Route{}}
	var contracts []*contract.Contract
	packName := ""
	declared := map[string]string{} // server/tool → table key
	for _, key := range inFileOrder(c, []string{"tools"}, c.Tools) {
		tc := c.Tools[key]
		at := []string{"tools", key}
		d := servers[tc.Server]
		if d == nil {
			if _, ok := c.Servers[tc.Server]; ok {
				return nil, c.errAt(append(at, "server"), "server %q mounts a pack; its tools are exposed without a [tools] entry", tc.Server)
			}
			return nil, c.errAt(append(at, "server"), "unknown server %q", tc.Server)
		}
		toolName := tc.Tool
		if toolName == "" {
			toolName = key
		}
		if prev, dup := declared[tc.Server+"/"+toolName]; dup {
			return nil, c.errAt(at, "tool %q of server %q is already declared as [tools.%s]", toolName, tc.Server, prev)
		}
		declared[tc.Server+"/"+toolName] = key
		var raw *mcpproxy.RawTool
		var names []string
		for _, t := range d.Tools() {
			names = append(names, t.Name)
			if t.Name == toolName {
				raw = &t
			}
		}
		if raw == nil {
			return nil, c.errAt(at, "server %q has no tool %q (it has: %s)", tc.Server, toolName, strings.Join(names, ", "))
		}
		ct, amounts, err := toolContract(c, at, tc, raw, regNorm)
		if err != nil {
			return nil, err
		}
		pn, _, _ := strings.Cut(tc.Action, ".")
		if packName == "" {
			packName = pn
		} else if pn != packName {
			return nil, c.errAt(append(at, "action"), "action %q: every proxied tool's action must start with %q, since they share one policy", tc.Action, packName+".")
		}
		contracts = append(contracts, ct)
		fwd.Routes[ct.Action] = mcpproxy.Route{Server: d, Tool: toolName, Amounts: amounts}
		desc := raw.Description
		if tc.Description != "" {
			desc = tc.Description
		}
		name := toolName
		if tc.Name != "" {
			name = tc.Name
		}
		mirror := &mcpproxy.Mirror{Server: d, Tool: toolName, Description: tc.Description}
		for _, p := range ct.Params {
			mirror.Params = append(mirror.Params, p.Name)
			if p.Critical {
				mirror.Critical = append(mirror.Critical, p.Name)
			}
		}
		all = append(all, named{tc.Server, mcpproxy.Tool{Name: name, Title: raw.Title, Action: ct.Action, Description: desc, InputSchema: raw.InputSchema, ReadOnly: tc.ReadOnly, Mirror: mirror}})
	}
	if len(contracts) > 0 {
		for _, p := range packs {
			if p.Name == packName {
				return nil, c.errAt([]string{"tools"}, "the proxied tools' actions use the prefix %q, which a mounted pack already uses", packName)
			}
		}
		if c.Policy.Dir == "" {
			return nil, c.errAt([]string{"policy"}, "[policy] dir is required: the Cedar policy and schema of the proxied tools")
		}
		dir := c.file(c.Policy.Dir)
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return nil, c.errAt([]string{"policy", "dir"}, "policy directory %s does not exist", dir)
		}
		packs = append(packs, gateway.Pack{
			Name: packName, Contracts: contracts, Policies: os.DirFS(dir), Registries: regs, Executor: fwd,
		})
	}

	// Names the client sees: prefixed with the server on collision.
	count := map[string]int{}
	for _, n := range all {
		count[n.tool.Name]++
	}
	for _, n := range all {
		if count[n.tool.Name] > 1 {
			n.tool.Name = n.server + "_" + n.tool.Name
		}
		a.tools = append(a.tools, n.tool)
	}

	// Mandate, approver, store, gateway.
	var actions []intent.Action
	for _, p := range packs {
		for _, ct := range p.Contracts {
			actions = append(actions, ct.Action)
		}
	}
	token, issuers, m, err := buildMandate(ctx, c, actions, now)
	if err != nil {
		return nil, err
	}
	a.mandate, a.issued = m, c.Mandate.File == ""
	for _, om := range mounts {
		if err := om.checkOwner(c, string(m.Owner)); err != nil {
			return nil, err
		}
	}
	signer, err := buildApprover(c)
	if err != nil {
		return nil, err
	}
	st, err := openStore(ctx, c, log)
	if err != nil {
		return nil, err
	}
	a.store = st

	// The approval page logs its requests and decisions into the
	// gateway's store, and the gateway trusts its approvers' keys next to
	// the client's user's. The client's user approves only for the
	// session's owner; page approvers for the owners configured.
	pg, err := buildPage(c, st, signer.Name, cbs.sink(), log)
	if err != nil {
		return nil, err
	}
	a.page = pg
	approvers := approval.StaticKeys{signer.Name: signer.Key.Public().(ed25519.PublicKey)}
	if pg != nil {
		for name, k := range pg.srv.Keys() {
			approvers[name] = k
		}
	}
	audience := c.Audience
	if audience == "" {
		audience = "intentplane-mcp"
	}
	scope := approval.Scope{Client: signer.Name, Session: m.Owner}
	if pg != nil {
		scope.Owners = pg.owners
	}
	gw, err := gateway.New(gateway.Config{
		Audience: audience, Issuers: issuers, Approvers: approvers,
		ApproverScope: scope.Allows, Logger: log,
	}, st, packs...)
	if err != nil {
		return nil, c.errAt([]string{"policy"}, "%v", err)
	}
	a.gateway = gw
	pcfg := mcpproxy.Config{
		Name: c.Name, Instructions: c.Instructions, Mandate: token, ForwardMeta: c.ForwardMeta,
		ConfirmTimeout:          c.Approvals.ConfirmTimeout.Duration,
		MaxPendingConfirmations: c.Approvals.MaxPending,
		ApprovalTTL:             c.Approvals.ApprovalTTL.Duration,
		Logger:                  log,
	}
	if c.Approvals.Elicitation == nil || *c.Approvals.Elicitation {
		pcfg.ClientApprover = signer
	}
	if pg != nil {
		pcfg.Approvals = approvals.NewTracker(pg.ch, approvals.TrackerConfig{Currency: m.Budget.Currency, Until: m.Expiry, Now: now, Logger: log})
		pcfg.ApprovalWait = time.Duration(c.Approvals.Wait) * time.Second
	}
	p, err := mcpproxy.New(pcfg, gw, a.tools...)
	if err != nil {
		return nil, c.errAt([]string{"tools"}, "%v", err)
	}
	a.proxy = p
	return a, nil
}

// toolContract builds the contract of a proxied tool and checks its
// parameters against the downstream's input schema (mcpproxy.ToolSpec).
// Errors name the file and line of the declaration at fault.
func toolContract(c *config, at []string, tc toolConfig, raw *mcpproxy.RawTool, regNorm map[string]string) (*contract.Contract, map[string]mcpproxy.AmountFormat, error) {
	spec := mcpproxy.ToolSpec{Action: intent.Action(tc.Action), Budget: tc.Budget, ReadOnly: tc.ReadOnly}
	for _, name := range inFileOrder(c, append(at, "params"), tc.Params) {
		pc := tc.Params[name]
		spec.Params = append(spec.Params, mcpproxy.ParamSpec{
			Name: name, Type: pc.Type, Scale: pc.Scale, MaxLength: pc.MaxLength, Required: pc.Required,
			Critical: pc.Critical, Sources: pc.Sources, Normalizer: pc.Normalizer, Format: pc.Format, OnNoMatch: pc.OnNoMatch,
		})
	}
	ct, amounts, err := spec.Contract(*raw, regNorm)
	var se *mcpproxy.SpecError
	if errors.As(err, &se) {
		where := append([]string{}, at...)
		if se.Param != "" {
			where = append(where, "params", se.Param)
		}
		if se.Field != "" {
			where = append(where, se.Field)
		}
		return nil, nil, c.errAt(where, "%v", se)
	}
	return ct, amounts, err
}

// mountPack builds a pack mounted as a server. On Odoo, it logs in and
// checks the identities' rights first. The ap pack reads its call-backs
// from cbs. Errors name the file and line.
func mountPack(ctx context.Context, c *config, at []string, sc serverConfig, cbs *callbackBook, now func() time.Time, log *slog.Logger) (gateway.Pack, error) {
	switch sc.Pack {
	case ap.Name:
		switch sc.ERP {
		case "", "demo":
			books := ap.DemoERP(now)
			p, err := ap.NewPack(books, ap.Config{Callbacks: cbs.forPack(books)})
			if err != nil {
				return gateway.Pack{}, c.errAt(append(at, "pack"), "%v", err)
			}
			return p, nil
		case "odoo":
			books, err := openOdoo(ctx, c, at, sc.Odoo, log)
			if err != nil {
				return gateway.Pack{}, err
			}
			p, err := ap.NewPack(books, ap.Config{Callbacks: cbs.forPack(books)})
			if err != nil {
				return gateway.Pack{}, c.errAt(append(at, "pack"), "%v", err)
			}
			return p, nil
		}
		return gateway.Pack{}, c.errAt(append(at, "erp"), "unknown erp %q for pack ap (demo, odoo)", sc.ERP)
	}
	return gateway.Pack{}, c.errAt(append(at, "pack"), "unknown pack %q (ap)", sc.Pack)
}

// buildMandate reads the signed mandate, or issues one at start, and
// returns it verified.
func buildMandate(ctx context.Context, c *config, actions []intent.Action, now func() time.Time) (string, mandate.Keys, *mandate.Mandate, error) {
	tok, keys, err := mandateToken(c, actions, now)
	if err != nil {
		return "", nil, nil, err
	}
	audience := c.Audience
	if audience == "" {
		audience = "intentplane-mcp"
	}
	m, err := mandate.Verifier{Keys: keys, Audience: audience, Now: now}.Verify(ctx, tok)
	if err != nil {
		at := []string{"mandate"}
		if c.Mandate.File != "" {
			at = append(at, "file")
		}
		return "", nil, nil, c.errAt(at, "the mandate is not valid for this gateway: %v", err)
	}
	return tok, keys, m, nil
}

// mandateToken reads the signed mandate, or issues one at start.
func mandateToken(c *config, actions []intent.Action, now func() time.Time) (string, mandate.Keys, error) {
	m := c.Mandate
	at := []string{"mandate"}
	if m.File != "" {
		if m.Owner != "" || m.Budget != "" || len(m.Claims) > 0 || len(m.Scope) > 0 {
			return "", nil, c.errAt(at, "a mandate is either a file (file, issuer, issuer_key) or issued at start (owner, scope, budget, claims), not both")
		}
		if m.Issuer == "" || m.IssuerKey == "" {
			return "", nil, c.errAt(at, "a mandate file needs issuer and issuer_key (the issuer's public key file)")
		}
		tok, err := os.ReadFile(c.file(m.File))
		if err != nil {
			return "", nil, c.errAt(append(at, "file"), "%v", err)
		}
		kb, err := os.ReadFile(c.file(m.IssuerKey))
		if err != nil {
			return "", nil, c.errAt(append(at, "issuer_key"), "%v", err)
		}
		pub, err := mandate.ParsePublicKey(string(kb))
		if err != nil {
			return "", nil, c.errAt(append(at, "issuer_key"), "%v", err)
		}
		return strings.TrimSpace(string(tok)), mandate.StaticKeys{m.Issuer: pub}, nil
	}
	if m.Owner == "" {
		return "", nil, c.errAt(at, "[mandate] needs either file or owner")
	}
	budget := intent.Money{Currency: "EUR"}
	if m.Budget != "" {
		var err error
		if budget, err = intent.ParseMoney(strings.TrimSpace(m.Budget)); err != nil {
			return "", nil, c.errAt(append(at, "budget"), "budget must read like \"EUR 12000.00\": %v", err)
		}
	}
	scope := actions
	if len(m.Scope) > 0 {
		scope = nil
		for _, s := range m.Scope {
			scope = append(scope, intent.Action(s))
		}
	}
	mode := mandate.ModeKnownCounterparties
	if m.Mode != "" {
		mode = mandate.Mode(m.Mode)
	}
	valid := m.ValidFor.Duration
	if valid == 0 {
		valid = 8 * time.Hour
	}
	pub, priv, err := mandate.GenerateKey(nil)
	if err != nil {
		return "", nil, err
	}
	id, err := mandate.NewID(nil)
	if err != nil {
		return "", nil, err
	}
	audience := c.Audience
	if audience == "" {
		audience = "intentplane-mcp"
	}
	t := now().UTC().Truncate(time.Second)
	tok, err := mandate.Issue(mandate.Mandate{
		ID: id, Issuer: "intentplane-mcp-start", Audience: audience, Owner: intent.Owner(m.Owner),
		Scope: scope, Budget: budget, Claims: m.Claims, Mode: mode,
		NotBefore: t.Add(-time.Minute), Expiry: t.Add(valid),
	}, "intentplane-mcp-start", priv)
	if err != nil {
		return "", nil, c.errAt(at, "%v", err)
	}
	return tok, mandate.StaticKeys{"intentplane-mcp-start": pub}, nil
}

// buildApprover loads or generates the key of the user at the client.
func buildApprover(c *config) (*mcpproxy.Signer, error) {
	name := c.Approvals.Approver
	if name == "" {
		name = "mcp-user"
	}
	var priv ed25519.PrivateKey
	if c.Approvals.ApproverKey != "" {
		b, err := os.ReadFile(c.file(c.Approvals.ApproverKey))
		if err != nil {
			return nil, c.errAt([]string{"approvals", "approver_key"}, "%v", err)
		}
		if priv, err = mandate.ParsePrivateKey(string(b)); err != nil {
			return nil, c.errAt([]string{"approvals", "approver_key"}, "%v", err)
		}
	} else {
		_, k, err := ed25519.GenerateKey(nil)
		if err != nil {
			return nil, err
		}
		priv = k
	}
	return &mcpproxy.Signer{Name: name, Key: priv}, nil
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
