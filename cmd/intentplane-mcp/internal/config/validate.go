package config

import (
	"fmt"
	"net"
	"net/url"
	"strings"

	"github.com/intentplane/intentplane/mcpproxy"
)

// Defaults filled by Load.
const (
	DefaultAudience    = "intentplane-mcp"
	DefaultApprover    = "mcp-user"
	DefaultListen      = "127.0.0.1:8477"
	DefaultMaxRequests = 32
	DefaultAdminListen = "127.0.0.1:9464"
)

// validate checks what needs nothing but the file, section by section; the
// first fault found is returned as an *Error at its key.
func (c *Config) validate() error {
	for _, check := range []func() error{c.checkRegistries, c.checkServers, c.checkTools, c.checkConfirm, c.checkMandate, c.checkStore, c.checkPage, c.checkWebhook, c.checkAdmin, c.checkPins} {
		if err := check(); err != nil {
			return err
		}
	}
	return nil
}

// checkConfirm: each confirm is "client", "page" or empty, and "page"
// needs page approvers (else every confirmation would be refused).
func (c *Config) checkConfirm() error {
	check := func(at []string, v string) error {
		switch v {
		case "", ConfirmClient:
			return nil
		case ConfirmPage:
			if len(c.Approvals.Approvers) == 0 {
				return c.ErrAt(at, "confirm = %q sends its confirmations to the approval page, which has no [[approvals.approvers]]: every such call would be refused", v)
			}
			return nil
		}
		return c.ErrAt(at, "confirm %q is not %q (in the MCP client when it can ask, else on the page) or %q (on the approval page only)", v, ConfirmClient, ConfirmPage)
	}
	for _, name := range Ordered(c, []string{"servers"}, c.Servers) {
		if sc := c.Servers[name]; sc.Confirm != "" && sc.Pack == "" {
			return c.ErrAt([]string{"servers", name, "confirm"}, "confirm applies to a pack's tools; for a server's tools set it on each [tools.NAME]")
		} else if err := check([]string{"servers", name, "confirm"}, sc.Confirm); err != nil {
			return err
		}
	}
	for _, key := range Ordered(c, []string{"tools"}, c.Tools) {
		if err := check([]string{"tools", key, "confirm"}, c.Tools[key].Confirm); err != nil {
			return err
		}
	}
	return nil
}

// defaults fills the defaults Load documents.
func (c *Config) defaults() {
	if c.Audience == "" {
		c.Audience = DefaultAudience
	}
	if c.Approvals.Approver == "" {
		c.Approvals.Approver = DefaultApprover
	}
	if c.Admin != nil && c.Admin.Listen == "" {
		c.Admin.Listen = DefaultAdminListen
	}
	if len(c.Approvals.Approvers) > 0 {
		if c.Approvals.Listen == "" {
			c.Approvals.Listen = DefaultListen
		}
		if c.Approvals.MaxRequests == 0 {
			c.Approvals.MaxRequests = DefaultMaxRequests
		}
	}
}

// checkRegistries: each registry names a file and a known normalizer.
func (c *Config) checkRegistries() error {
	for _, name := range Ordered(c, []string{"registries"}, c.Registries) {
		rc, at := c.Registries[name], []string{"registries", name}
		if _, ok := mcpproxy.Normalizer(rc.Normalizer); rc.Normalizer != "" && !ok {
			return c.ErrAt(append(at, "normalizer"), "unknown normalizer %q (%s)", rc.Normalizer, mcpproxy.NormalizerNames)
		}
		if rc.File == "" {
			return c.ErrAt(at, "registry %q needs a file", name)
		}
	}
	return nil
}

// checkServers: each server is exactly one of a command, a URL and a pack;
// a pack is "ap" over ERP "demo" or "odoo", and an [odoo] table goes with
// erp = "odoo".
func (c *Config) checkServers() error {
	for _, name := range Ordered(c, []string{"servers"}, c.Servers) {
		sc, at := c.Servers[name], []string{"servers", name}
		kinds := 0
		for _, s := range []string{sc.Command, sc.URL, sc.Pack} {
			if s != "" {
				kinds++
			}
		}
		if kinds != 1 {
			return c.ErrAt(at, "server %q needs exactly one of command, url and pack", name)
		}
		if err := c.checkControls(name); err != nil {
			return err
		}
		if sc.Odoo != nil && sc.ERP != "odoo" {
			return c.ErrAt(append(at, "odoo"), "an [%s.odoo] table needs pack = \"ap\" and erp = \"odoo\"", strings.Join(at, "."))
		}
		if sc.Pack == "" {
			continue
		}
		if sc.Pack != "ap" {
			return c.ErrAt(append(at, "pack"), "unknown pack %q (ap)", sc.Pack)
		}
		switch sc.ERP {
		case "", "demo":
		case "odoo":
			if err := c.checkOdoo(append(at, "odoo"), sc.Odoo); err != nil {
				return err
			}
		default:
			return c.ErrAt(append(at, "erp"), "unknown erp %q for pack ap (demo, odoo)", sc.ERP)
		}
	}
	return nil
}

// checkOdoo checks an [servers.NAME.odoo] table; the passwords'
// environment variables are read when wiring.
func (c *Config) checkOdoo(at []string, oc *Odoo) error {
	if oc == nil {
		return c.ErrAt(at, `erp = "odoo" needs a [%s] table: url, db, reader, payer, bank_admin, companies`, strings.Join(at, "."))
	}
	if oc.URL == "" {
		return c.ErrAt(at, "odoo needs url (Odoo's base URL, e.g. http://127.0.0.1:8069)")
	}
	u, err := url.Parse(oc.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c.ErrAt(append(at, "url"), "url %q is not an http(s) URL", oc.URL)
	}
	if u.User != nil {
		return c.ErrAt(append(at, "url"), "url must not carry credentials: name the identities' password variables with password_env")
	}
	if oc.DB == "" {
		return c.ErrAt(at, "odoo needs db (the database)")
	}
	switch oc.Transport {
	case "", "xmlrpc", "json2":
	default:
		return c.ErrAt(append(at, "transport"), `unknown transport %q: leave it out (JSON-2 on Odoo 19 and later, XML-RPC on 17 and 18), "xmlrpc" or "json2"`, oc.Transport)
	}
	ids := []struct {
		key string
		id  *OdooIdentity
	}{{"reader", &oc.Reader}, {"payer", &oc.Payer}, {"bank_admin", oc.BankAdmin}}
	for _, x := range ids {
		if x.id == nil {
			continue
		}
		iat := append(append([]string{}, at...), x.key)
		switch {
		case x.id.Password != "":
			return c.ErrAt(append(iat, "password"), "a password is never written in the configuration: put it in an environment variable and name that variable with password_env")
		case x.id.Login == "":
			return c.ErrAt(iat, "odoo identity %s needs login and password_env", x.key)
		case x.id.PasswordEnv == "":
			return c.ErrAt(iat, "odoo identity %s needs password_env: the name of the environment variable holding its password", x.key)
		}
	}
	if len(oc.Companies) == 0 {
		return c.ErrAt(at, "odoo needs companies: each mandate owner mapped to its res.company id (intentplane odoo setup prints it), e.g. companies = { northwind = 1 }")
	}
	for _, name := range SortedKeys(oc.Companies) {
		if oc.Companies[name] <= 0 {
			return c.ErrAt(append(at, "companies", name), "company %q: a res.company id is a positive integer", name)
		}
	}
	return nil
}

// checkTools: each tool names a server that runs one (not a pack), is
// declared once, and every action shares one pack prefix, whose policy
// [policy] dir holds.
func (c *Config) checkTools() error {
	declared := map[string]string{} // server/tool → table key
	prefix := ""
	for _, key := range Ordered(c, []string{"tools"}, c.Tools) {
		tc, at := c.Tools[key], []string{"tools", key}
		sc, ok := c.Servers[tc.Server]
		switch {
		case !ok:
			return c.ErrAt(append(at, "server"), "unknown server %q", tc.Server)
		case sc.Pack != "":
			return c.ErrAt(append(at, "server"), "server %q mounts a pack; its tools are exposed without a [tools] entry", tc.Server)
		}
		name := tc.Tool
		if name == "" {
			name = key
		}
		if prev, dup := declared[tc.Server+"/"+name]; dup {
			return c.ErrAt(at, "tool %q of server %q is already declared as [tools.%s]", name, tc.Server, prev)
		}
		declared[tc.Server+"/"+name] = key
		if err := c.checkToolTotals(key); err != nil {
			return err
		}
		if tc.Action == "" {
			continue // mcpproxy.ToolSpec.Contract says so, with the tool's name
		}
		p, _, _ := strings.Cut(tc.Action, ".")
		if prefix == "" {
			prefix = p
		} else if p != prefix {
			return c.ErrAt(append(at, "action"), "action %q: every proxied tool's action must start with %q, since they share one policy", tc.Action, prefix+".")
		}
	}
	if len(c.Tools) > 0 && c.Policy.Dir == "" {
		return c.ErrAt([]string{"policy"}, "[policy] dir is required: the Cedar policy and schema of the proxied tools")
	}
	return nil
}

// checkMandate: a mandate file with its issuer's key, or an owner to issue
// one for at start, never both.
func (c *Config) checkMandate() error {
	m, at := c.Mandate, []string{"mandate"}
	if m.File == "" {
		if m.Owner == "" {
			return c.ErrAt(at, "[mandate] needs either file or owner")
		}
		return nil
	}
	if m.Owner != "" || m.Budget != "" || len(m.Budgets) > 0 || len(m.Claims) > 0 || len(m.Scope) > 0 {
		return c.ErrAt(at, "a mandate is either a file (file, issuer, issuer_key) or issued at start (owner, scope, budget, budgets, claims), not both")
	}
	if m.Issuer == "" || m.IssuerKey == "" {
		return c.ErrAt(at, "a mandate file needs issuer and issuer_key (the issuer's public key file)")
	}
	return nil
}

// checkStore: the keys of the store's kind, and no others; a postgres
// connection string only through an environment variable.
func (c *Config) checkStore() error {
	sc, at := c.Store, []string{"store"}
	type key struct {
		name string
		set  bool
	}
	only := func(kind string, keys ...key) error {
		for _, k := range keys {
			if k.set {
				return c.ErrAt(append(at, k.name), "%s does not apply to the %s store", k.name, kind)
			}
		}
		return nil
	}
	var err error
	switch sc.Kind {
	case "", "mem":
		err = only("mem", key{"path", sc.Path != ""}, key{"dsn_env", sc.DSNEnv != ""}, key{"checkpoint_key", sc.CheckpointKey != ""})
	case "embedded":
		err = only("embedded", key{"dsn_env", sc.DSNEnv != ""})
		if err == nil && sc.Path == "" {
			err = c.ErrAt(at, "the embedded store needs path: the file that holds budgets, nonces and receipts")
		}
	case "postgres":
		err = only("postgres", key{"path", sc.Path != ""})
		switch {
		case err != nil:
		case sc.DSNEnv == "":
			err = c.ErrAt(at, "the postgres store needs dsn_env: the name of the environment variable holding the connection string")
		case strings.Contains(sc.DSNEnv, "://") || strings.Contains(sc.DSNEnv, "="):
			err = c.ErrAt(append(at, "dsn_env"), "dsn_env is the name of an environment variable, not a connection string: keep passwords out of the file")
		}
	default:
		err = c.ErrAt(append(at, "kind"), "unknown store %q (mem, embedded, postgres)", sc.Kind)
	}
	switch {
	case err != nil:
		return err
	case sc.CheckpointKey != "" && sc.CheckpointEvery < 0:
		return c.ErrAt(append(at, "checkpoint_every"), "checkpoint_every is a number of receipts, at least 1")
	case sc.CheckpointKey == "" && (sc.CheckpointKeyID != "" || sc.CheckpointEvery != 0 || sc.CheckpointInterval.Duration != 0):
		return c.ErrAt(at, "checkpoint_key_id, checkpoint_every and checkpoint_interval need checkpoint_key")
	}
	return nil
}

// checkPage: the approval page's keys apply only with approvers; its
// address stays on loopback unless allow_remote with an https base_url; no
// page approver takes the client user's name.
func (c *Config) checkPage() error {
	ac, at := c.Approvals, []string{"approvals"}
	if len(ac.Approvers) == 0 {
		return c.checkNoPage()
	}
	if ac.Wait < 0 || ac.Wait > 3600 {
		return c.ErrAt(append(at, "wait"), "wait is a number of seconds from 0 (answer with the link at once) to 3600")
	}
	if err := c.checkPageAddress(); err != nil {
		return err
	}
	if ac.MaxRequests < 0 {
		return c.ErrAt(append(at, "max_requests"), "max_requests must not be negative")
	}
	if ac.Passkeys != "" && ac.Passkeys != "four_eyes" && ac.Passkeys != "all" {
		return c.ErrAt(append(at, "passkeys"), `passkeys is "four_eyes" or "all" (or absent: once an approver registered one)`)
	}
	return c.checkPageApprovers()
}

// checkNoPage: without approvers there is no page, so none of its keys
// may be set.
func (c *Config) checkNoPage() error {
	ac := c.Approvals
	for _, k := range []struct {
		key string
		set bool
	}{{"listen", ac.Listen != ""}, {"base_url", ac.BaseURL != ""}, {"wait", ac.Wait != 0}, {"request_ttl", ac.RequestTTL.Duration != 0}, {"webhook", ac.Webhook != nil}, {"allow_remote", ac.AllowRemote}, {"max_requests", ac.MaxRequests != 0}, {"passkeys", ac.Passkeys != ""}} {
		if k.set {
			return c.ErrAt([]string{"approvals", k.key}, "%s applies to the approval page, which needs at least one [[approvals.approvers]]", k.key)
		}
	}
	return nil
}

// checkPageAddress: listen is host:port (DefaultListen if unset), base_url
// is http(s)://host[:port], and a listen address off loopback needs
// allow_remote with an https base_url.
func (c *Config) checkPageAddress() error {
	ac, at := c.Approvals, []string{"approvals"}
	listen := ac.Listen
	if listen == "" {
		listen = DefaultListen
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" {
		return c.ErrAt(append(at, "listen"), "listen must be host:port, like \"127.0.0.1:8477\"")
	}
	var base *url.URL
	if ac.BaseURL != "" {
		u, err := url.Parse(ac.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return c.ErrAt(append(at, "base_url"), "base_url must be http(s)://host[:port], without a path")
		}
		base = u
	}
	if loopback(host) {
		return nil
	}
	if !ac.AllowRemote {
		return c.ErrAt(append(at, "listen"), "listen %q is not a loopback address: the page would be reachable from the network. Keep it on 127.0.0.1, or set allow_remote = true with an https base_url (TLS in front of the page)", listen)
	}
	if base == nil || base.Scheme != "https" {
		return c.ErrAt(append(at, "allow_remote"), "allow_remote needs an https base_url: passcodes and session cookies must not cross the network in clear")
	}
	return nil
}

// checkPageApprovers: each page approver has a key and a name other than
// the one the MCP client's user approves under (DefaultApprover if unset).
func (c *Config) checkPageApprovers() error {
	ac := c.Approvals
	client := ac.Approver
	if client == "" {
		client = DefaultApprover
	}
	for i, a := range ac.Approvers {
		aat := []string{"approvals", "approvers", fmt.Sprint(i)}
		switch {
		case a.Name != "" && a.Name == client:
			return c.ErrAt(append(aat, "name"), "approver %q is the name the MCP client's user approves under (approvals.approver); a page approver needs another name", a.Name)
		case a.Key == "":
			return c.ErrAt(aat, "approver %q needs a key: a file with their Ed25519 private key (\"ed25519-priv:…\", from `intentplane mandate keygen`)", a.Name)
		}
	}
	return nil
}

// checkWebhook: a webhook has an http(s) URL and a signing key, and
// approvers who decide through callbacks need the callbacks' key.
func (c *Config) checkWebhook() error {
	w := c.Approvals.Webhook
	if w == nil {
		return nil
	}
	at := []string{"approvals", "webhook"}
	if w.URL == "" || w.Key == "" {
		return c.ErrAt(at, "a webhook needs url and key (a file with the Ed25519 private key signing its payloads)")
	}
	u, err := url.Parse(w.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return c.ErrAt(append(at, "url"), "url must be an http(s) URL")
	}
	if w.CallbackKey == "" && len(w.Approvers) > 0 {
		return c.ErrAt(append(at, "approvers"), "approvers decide through callbacks, which need callback_key")
	}
	return nil
}

// checkAdmin: the admin listener stays on loopback unless allow_remote.
func (c *Config) checkAdmin() error {
	if c.Admin == nil {
		return nil
	}
	listen, at := c.Admin.Listen, []string{"admin", "listen"}
	if listen == "" {
		listen = DefaultAdminListen
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" {
		return c.ErrAt(at, "listen must be host:port, like %q", DefaultAdminListen)
	}
	if !loopback(host) && !c.Admin.AllowRemote {
		return c.ErrAt(at, "listen %q is not a loopback address: health and metrics would be reachable from the network. Keep it on 127.0.0.1, or set allow_remote = true", listen)
	}
	return nil
}

// loopback reports whether host (of host:port) names only this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkPins: [pins] names its lock file, and pins only proxied tools.
func (c *Config) checkPins() error {
	switch {
	case c.Pins == nil:
		return nil
	case c.Pins.File == "":
		return c.ErrAt([]string{"pins"}, "[pins] needs file: the lock file `intentplane-mcp --pin` writes (e.g. file = \"tools.lock.json\")")
	case len(c.Tools) == 0:
		return c.ErrAt([]string{"pins"}, "[pins] pins the tools of [tools], and there are none (a mounted pack's tools are not pinned)")
	}
	return nil
}
