// Package config is intentplane-mcp's TOML configuration: the schema (each
// field with its unit and what its zero value means), strict loading
// (unknown keys refused, with file and line), the line of every key, and
// the checks that need nothing but the file. What needs the environment,
// other files or the network (keys, registries, Odoo, the store) is checked
// when the binary wires it, with ErrAt pointing at the key.
//
// Only cmd/intentplane-mcp imports it.
package config

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	toml "github.com/pelletier/go-toml/v2"
	"github.com/pelletier/go-toml/v2/unstable"
)

// Config is the TOML configuration file. Unknown keys are refused.
type Config struct {
	// Name is the server name the client sees; empty means "intentplane".
	Name string `toml:"name"`
	// Audience is the gateway's name, which the mandate must be issued
	// for; empty means "intentplane-mcp".
	Audience string `toml:"audience"`
	// Instructions are sent to the client at initialization.
	Instructions string `toml:"instructions"`
	// ForwardMeta lists the keys of the client's _meta passed on to the
	// downstream server with a call ("com.example/trace"); empty means
	// none: only the resolved operation reaches the server.
	ForwardMeta []string            `toml:"forward_meta"`
	Mandate     Mandate             `toml:"mandate"`
	Policy      Policy              `toml:"policy"`
	Store       Store               `toml:"store"`
	Approvals   Approvals           `toml:"approvals"`
	Registries  map[string]Registry `toml:"registries"`
	Servers     map[string]Server   `toml:"servers"`
	Tools       map[string]Tool     `toml:"tools"`
	// Admin serves /healthz and Prometheus /metrics; nil means none.
	Admin *Admin `toml:"admin"`
	// Pins pins the proxied tools' descriptions and input schemas in a
	// lock file; nil means they are not pinned.
	Pins *Pins `toml:"pins"`

	path string // the file, for messages
	dir  string // its directory: relative paths are relative to it
	pos  positions
}

// Mandate is either a signed mandate file with its issuer's public
// key, or what to issue at start for one user with a generated key.
type Mandate struct {
	// File holds a signed mandate token (ipm1.…).
	File string `toml:"file"`
	// Issuer is the issuer's key id, IssuerKey a file holding its public
	// key ("ed25519-pub:…").
	Issuer    string `toml:"issuer"`
	IssuerKey string `toml:"issuer_key"`

	// Owner, for a mandate issued at start: whose records are used.
	Owner string `toml:"owner"`
	// Scope lists the allowed actions; empty means every configured one.
	Scope []string `toml:"scope"`
	// Budget is "EUR 12000.00"; empty means nothing may be spent.
	Budget string `toml:"budget"`
	// Budgets are further budgets, one per other currency
	// (["USD 5000.00"]), for tools whose contract reserves an amount in
	// its record's currency (the AP pack's pay_bill: the bill's); empty
	// means Budget is the only one. See docs/mandates.md.
	Budgets []string `toml:"budgets"`
	// Mode is "known_counterparties" (default) or "strict".
	Mode string `toml:"mode"`
	// ValidFor is the mandate's lifetime from start; empty means 8h.
	ValidFor Duration `toml:"valid_for"`
	// Claims are the values the user names (payees = ["…"]).
	Claims map[string][]string `toml:"claims"`
}

// Admin is [admin]: the admin listener (health and metrics).
type Admin struct {
	// Listen is its address; empty means "127.0.0.1:9464". It must be a
	// loopback address unless AllowRemote is set.
	Listen string `toml:"listen"`
	// AllowRemote lets Listen be a non-loopback address: metrics then
	// reach whoever reaches the address (put a firewall or TLS proxy in
	// front).
	AllowRemote bool `toml:"allow_remote"`
	// Hosts are further names the listener answers to in the Host header
	// ("metrics.internal"), besides its own address (and, on loopback,
	// "localhost"); any other Host is answered 421, so that a web page
	// reaching the listener through DNS rebinding is refused. Empty means
	// none.
	Hosts []string `toml:"hosts"`
}

// Pins is [pins]: the lock file holding, for each tool of [tools], the
// title, description and input schema its server listed when an operator
// ran `intentplane-mcp --pin` and reviewed the result. A tool whose server
// lists it otherwise, or that has no pin, is hidden from the client and
// its calls refused (mcpproxy.Mirror).
type Pins struct {
	// File is the lock file (JSON, mcpproxy.ParseLock), relative to the
	// configuration's directory. Required.
	File string `toml:"file"`
}

// Policy is [policy]: the Cedar policy of the proxied tools.
type Policy struct {
	// Dir holds policy.cedar (any *.cedar) and schema.cedarschema for the
	// proxied tools' actions.
	Dir string `toml:"dir"`
}

// Store is [store]: where budgets, nonces and receipts are kept.
type Store struct {
	// Kind is "mem" (the default; state is lost at exit), "embedded" (a
	// durable file, Path) or "postgres" (DSNEnv).
	Kind string `toml:"kind"`
	// Path is the embedded store's file.
	Path string `toml:"path"`
	// DSNEnv names the environment variable holding the PostgreSQL
	// connection string; the file never holds a password.
	DSNEnv string `toml:"dsn_env"`
	// CheckpointKey is a file with an Ed25519 private key
	// ("ed25519-priv:…") that signs checkpoints of the receipt chains'
	// heads (store/checkpoint), saved in the store; empty means none.
	CheckpointKey string `toml:"checkpoint_key"`
	// CheckpointKeyID is the key id recorded in checkpoints; empty means
	// "intentplane-mcp".
	CheckpointKeyID string `toml:"checkpoint_key_id"`
	// CheckpointEvery is how many receipts of one owner pass between two
	// checkpoints of its chain; zero means 1000.
	CheckpointEvery int `toml:"checkpoint_every"`
	// CheckpointInterval is how often every head not yet covered is
	// checkpointed (and once more at exit); empty means 1m.
	CheckpointInterval Duration `toml:"checkpoint_interval"`
}

// Approvals is [approvals]: confirmations in the client, and the approval
// page with its approvers and webhook.
type Approvals struct {
	// Elicitation asks the user in the client when it can; default true.
	Elicitation *bool `toml:"elicitation"`
	// Approver names the user at the MCP client as an approver; empty
	// means "mcp-user".
	Approver string `toml:"approver"`
	// ApproverKey is a file with the approver's private key
	// ("ed25519-priv:…"); empty means a key generated at start.
	ApproverKey string `toml:"approver_key"`
	// ConfirmTimeout bounds the user's answer; empty means 5m.
	ConfirmTimeout Duration `toml:"confirm_timeout"`
	// MaxPending caps the calls blocked on a person at once: open
	// confirmations in the client and calls waiting for the page; zero
	// means 16.
	MaxPending int `toml:"max_pending"`
	// ApprovalTTL is an elicited approval's validity; empty means 2m.
	ApprovalTTL Duration `toml:"approval_ttl"`

	// The approval page is served when Approvers is not empty.

	// Listen is the page's address; empty means "127.0.0.1:8477". It
	// must be a loopback address unless AllowRemote is set.
	Listen string `toml:"listen"`
	// AllowRemote lets Listen be a non-loopback address; it requires an
	// https BaseURL (TLS terminated in front of the page).
	AllowRemote bool `toml:"allow_remote"`
	// MaxRequests caps the requests pending on the page at once (the
	// agent cannot open more); zero means 32.
	MaxRequests int `toml:"max_requests"`
	// Passkeys says when an approval on the page needs a passkey: ""
	// (default: once the approver registered one), "four_eyes" (also every
	// four-eyes approval: bank-detail changes, large payments) or "all".
	// Passkeys need a base_url with a host name (not an IP address).
	Passkeys string `toml:"passkeys"`
	// BaseURL is the page's URL as approvers reach it; empty means
	// "http://" + Listen.
	BaseURL string `toml:"base_url"`
	// Wait is how many seconds a call waits for the page's decision; 0
	// gives the agent the link at once.
	Wait int `toml:"wait"`
	// RequestTTL is a request's lifetime on the page; empty means 15m.
	RequestTTL Duration `toml:"request_ttl"`
	// Approvers are the people who approve on the page.
	Approvers []PageApprover `toml:"approvers"`
	// Webhook also posts each request to a URL; nil means none.
	Webhook *Webhook `toml:"webhook"`
}

// PageApprover is one person who approves on the page.
type PageApprover struct {
	// Name is what they sign in with.
	Name string `toml:"name"`
	// PasscodeHash is their passcode's scrypt hash (intentplane
	// hash-passcode).
	PasscodeHash string `toml:"passcode_hash"`
	// Key is a file with their Ed25519 private key ("ed25519-priv:…").
	Key string `toml:"key"`
	// Owners limits whose operations they may approve; empty means every
	// owner.
	Owners []string `toml:"owners"`
}

// Webhook posts each approval request, signed, to a URL.
type Webhook struct {
	// URL receives the signed requests.
	URL string `toml:"url"`
	// Key is a file with the Ed25519 private key signing the payloads.
	Key string `toml:"key"`
	// CallbackKey is a file with the public key ("ed25519-pub:…") that
	// signs decisions posted back to <base_url>/webhook; empty means
	// decisions come only through the page.
	CallbackKey string `toml:"callback_key"`
	// Approvers are the page approvers a callback may decide for.
	Approvers []string `toml:"approvers"`
}

// Registry is one [registries.NAME]: a JSON file of trusted values
// (core/resolve/filereg).
type Registry struct {
	// File is a JSON object: owner → array of values or records
	// {"id","value","version","at","attrs"}.
	File string `toml:"file"`
	// Normalizer canonicalizes the values on file and must be the
	// normalizer of every parameter using the registry.
	Normalizer string `toml:"normalizer"`
}

// Server is one [servers.NAME]: a downstream MCP server (a command or a
// URL) or a mounted pack.
type Server struct {
	// Command, Args, Env, PassEnv and Dir run a stdio server. The child's
	// environment is Env plus the variables named in PassEnv taken from
	// the proxy's; nothing else.
	Command string            `toml:"command"`
	Args    []string          `toml:"args"`
	Env     map[string]string `toml:"env"`
	PassEnv []string          `toml:"pass_env"`
	Dir     string            `toml:"dir"`
	// URL and Headers reach a streamable-HTTP server.
	URL     string            `toml:"url"`
	Headers map[string]string `toml:"headers"`
	// Pack mounts a pack instead ("ap"), over ERP ("demo": in-memory
	// demo data; "odoo": the Odoo 17, 18 or 19 database described by
	// Odoo).
	Pack string `toml:"pack"`
	ERP  string `toml:"erp"`
	Odoo *Odoo  `toml:"odoo"`
	// Controls sets the mounted pack's controls (its limits, time zone
	// and periods); nil means the pack's defaults.
	Controls *Controls `toml:"controls"`
	// Prefix is put before the pack's tool names; empty means none.
	Prefix string `toml:"prefix"`
	// Confirm says where a confirmation of the pack's tools may be given
	// (ConfirmClient or ConfirmPage); empty means ConfirmClient. Four
	// eyes and a bank-detail change are on the page whatever it says.
	Confirm string `toml:"confirm"`
	// CallTimeout bounds one call; empty means 60s.
	CallTimeout Duration `toml:"call_timeout"`
}

// Where a confirmation may be given ([tools.NAME] and pack [servers.NAME]
// confirm).
const (
	// ConfirmClient: in the MCP client, by elicitation, when the client
	// supports it, else on the approval page. The client is trusted to
	// ask its user: one that answers by itself confirms for them.
	ConfirmClient = "client"
	// ConfirmPage: on the approval page only, by an approver signed in
	// there, never in the client.
	ConfirmPage = "page"
)

// Odoo reaches the Odoo (17, 18 or 19) database a pack mounted with
// erp = "odoo" reads and pays through. Passwords are never written in the
// file: each identity names the environment variable holding its
// password (or API key).
type Odoo struct {
	// URL is Odoo's base URL ("http://127.0.0.1:8069"), without
	// credentials.
	URL string `toml:"url"`
	// DB is the database.
	DB string `toml:"db"`
	// Reader reads vendors, bank accounts, bills and payments; Payer
	// registers payments; both are required. BankAdmin changes bank
	// accounts; omitted, every bank-detail change fails in Odoo.
	Reader    OdooIdentity  `toml:"reader"`
	Payer     OdooIdentity  `toml:"payer"`
	BankAdmin *OdooIdentity `toml:"bank_admin"`
	// Companies maps a mandate's owner ("northwind") to its res.company
	// id; at least one.
	Companies map[string]int64 `toml:"companies"`
	// Transport is how the connector calls Odoo (odoo.Config.Transport):
	// empty is JSON-2 on Odoo 19 and later, where the identities'
	// variables must then hold API keys (intentplane odoo setup makes
	// them), and XML-RPC on 17 and 18; "xmlrpc" keeps XML-RPC on every
	// version (passwords or API keys); "json2" refuses to start on 17 and
	// 18.
	Transport string `toml:"transport"`
	// Timeout limits each call to Odoo; empty means 30s.
	Timeout Duration `toml:"timeout"`
}

// OdooIdentity is one Odoo user of the connector.
type OdooIdentity struct {
	// Login is the user's login.
	Login string `toml:"login"`
	// PasswordEnv names the environment variable holding its password
	// or API key.
	PasswordEnv string `toml:"password_env"`
	// Password is refused: a password is never written in the file.
	Password string `toml:"password"`
}

// Tool is one [tools.NAME]: a downstream tool shown to the client, with
// the gateway action its calls propose (mcpproxy.ToolSpec).
type Tool struct {
	// Server is the downstream server; Tool the tool's name there (empty
	// means the table's key).
	Server string `toml:"server"`
	Tool   string `toml:"tool"`
	// Name is the name the client sees; empty means the tool's name
	// (prefixed with the server's name when two servers collide).
	Name string `toml:"name"`
	// Action is the gateway action ("bank.send_money").
	Action string `toml:"action"`
	// Budget names the amount parameter reserved against the budget.
	Budget string `toml:"budget"`
	// ReadOnly tools change nothing (pass-through reads).
	ReadOnly bool `toml:"read_only"`
	// Description replaces the downstream's description; empty keeps it.
	Description string           `toml:"description"`
	Params      map[string]Param `toml:"params"`
	// Totals are the running totals of the tool's budget amount
	// ([[tools.NAME.totals]]), kept in the store across the replicas that
	// share it, with the thresholds that apply to the amount plus the
	// total; empty means none. A payment tool (an amount and a critical
	// parameter, the payee) needs at least one, or NoTotals.
	Totals []Total `toml:"totals"`
	// NoTotals is why a payment tool has no totals ("the bank caps each
	// payee at 500.00 a day itself"), stated by the operator: without
	// totals, two payments just under a threshold to one payee both pass
	// where one of their sum would not. Empty means the tool needs totals.
	NoTotals string `toml:"no_totals"`
	// Confirm says where a confirmation of the tool may be given
	// (ConfirmClient or ConfirmPage); empty means ConfirmClient.
	Confirm string `toml:"confirm"`
}

// Total is one [[tools.NAME.totals]]: a running total of a tool's budget
// amount per payee (the By parameters) and window (contract.Total), and
// the thresholds applied to this payment plus what the total held before
// it, so that splitting a payment never lowers the approval it needs.
//
// Thresholds are plain decimal strings in the mandate budget's currency,
// with at most the budget parameter's scale of decimals ("1000.00"); each
// is optional, at least one is required, and each set one must not be
// above the next (confirm_above <= four_eyes_above <= refuse_above).
type Total struct {
	// Name is the total's name and the fact the policy sees
	// (context.facts.NAME, a Long in minor units; declare it in the
	// schema's facts of the tool's action): lowercase letters, digits and
	// _, like "paid_payee_day".
	Name string `toml:"name"`
	// By names the critical, required parameters whose trusted values
	// identify what is added up (the payee). At least one.
	By []string `toml:"by"`
	// Window is "day", "week" (ISO, Monday to Sunday), "mandate" (the
	// mandate's life) or "ever". Required.
	Window string `toml:"window"`
	// TimeZone is the calendar of "day" and "week", an IANA name; empty
	// means UTC.
	TimeZone string `toml:"time_zone"`
	// ConfirmAbove: above it (this payment plus the total) the user
	// confirms; empty means no such threshold.
	ConfirmAbove string `toml:"confirm_above"`
	// FourEyesAbove: above it two page approvers approve; empty means no
	// such threshold.
	FourEyesAbove string `toml:"four_eyes_above"`
	// RefuseAbove: above it the payment is refused (never through the
	// agent); empty means no such threshold.
	RefuseAbove string `toml:"refuse_above"`
}

// Param is one [tools.NAME.params.ARG]: how an argument is typed and
// trusted (mcpproxy.ParamSpec).
type Param struct {
	// Type is string, amount, integer, bool or date.
	Type string `toml:"type"`
	// Scale is an amount's number of decimals (2 for cents).
	Scale int `toml:"scale"`
	// MaxLength bounds a string in bytes; zero means 1024.
	MaxLength int `toml:"max_length"`
	// Required defaults to the downstream schema's "required".
	Required *bool `toml:"required"`
	// Critical parameters take values only from Sources.
	Critical bool     `toml:"critical"`
	Sources  []string `toml:"sources"`
	// Normalizer is iban, account_number, email or identifier.
	Normalizer string `toml:"normalizer"`
	// Format is how the downstream takes an amount: number, string or
	// minor_units.
	Format string `toml:"format"`
	// OnNoMatch tells the agent what the user can do when a critical
	// value matches nothing.
	OnNoMatch string `toml:"on_no_match"`
	// Sensitive marks a secret (a password, a token): receipts, and so
	// exports, the audit view and its CSV, keep its SHA-256 digest, never
	// the value; logs never hold it; the user's confirmation shows the
	// digest, and a call carrying it is never put on the approval page.
	// The policy and the downstream server still get the value.
	Sensitive bool `toml:"sensitive"`
}

// Duration is a time.Duration written as "90s", "5m"; negative durations
// are refused.
type Duration struct{ time.Duration }

// UnmarshalText parses a Go Duration.
func (d *Duration) UnmarshalText(b []byte) error {
	v, err := time.ParseDuration(string(b))
	if err != nil {
		return err
	}
	if v < 0 {
		return errors.New("Duration must not be negative")
	}
	d.Duration = v
	return nil
}

// Error is a configuration error at a place in the file.
type Error struct {
	// File is the configuration file's path, as given to Load.
	File string
	// Line is the line of the key at fault, from 1; zero means the file
	// as a whole.
	Line int
	// Msg says what is wrong.
	Msg string
}

func (e *Error) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

// ErrAt returns an *Error at the line of the key path (or its nearest
// parent that has one), such as {"tools", "send_money", "params", "iban"}.
func (c *Config) ErrAt(path []string, format string, a ...any) error {
	return &Error{File: c.path, Line: c.pos.line(path), Msg: fmt.Sprintf(format, a...)}
}

// Path is the configuration file's path, as given to Load.
func (c *Config) Path() string { return c.path }

// File resolves a path relative to the configuration's directory; empty
// and absolute paths are returned as they are.
func (c *Config) File(p string) string {
	if p == "" || filepath.IsAbs(p) {
		return p
	}
	return filepath.Join(c.dir, p)
}

// Load reads and decodes path strictly, checks what needs nothing but the
// file (unknown keys, and the rules validate lists), then fills the
// defaults stated on the fields that wiring reads: Audience,
// Approvals.Approver, and, with page approvers, Approvals.Listen and
// MaxRequests. Errors are *Error values naming the file and line (several,
// joined, for unknown keys); a file that cannot be read gives the os error.
func Load(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	c := &Config{path: path, dir: filepath.Dir(path)}
	pos, perr := index(b)
	if perr != nil {
		var pe *unstable.ParserError
		if errors.As(perr, &pe) {
			line := 1 + bytes.Count(b[:max(0, len(b)-len(tailFrom(b, pe.Highlight)))], []byte("\n"))
			return nil, &Error{File: path, Line: line, Msg: pe.Message}
		}
		return nil, &Error{File: path, Msg: perr.Error()}
	}
	c.pos = pos
	dec := toml.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(c); err != nil {
		var sm *toml.StrictMissingError
		if errors.As(err, &sm) && len(sm.Errors) > 0 {
			var msgs []string
			for _, e := range sm.Errors {
				row, _ := e.Position()
				msgs = append(msgs, (&Error{File: path, Line: row, Msg: fmt.Sprintf("unknown key %q", strings.Join(e.Key(), "."))}).Error())
			}
			return nil, errors.New(strings.Join(msgs, "\n"))
		}
		var de *toml.DecodeError
		if errors.As(err, &de) {
			row, _ := de.Position()
			return nil, &Error{File: path, Line: row, Msg: de.Error()}
		}
		return nil, &Error{File: path, Msg: err.Error()}
	}
	if err := c.validate(); err != nil {
		return nil, err
	}
	c.defaults()
	return c, nil
}

// tailFrom returns the part of data starting at sub, when sub is a slice
// of data; else data.
func tailFrom(data, sub []byte) []byte {
	if len(sub) == 0 {
		return nil
	}
	off := cap(data) - cap(sub)
	if off < 0 || off > len(data) {
		return nil
	}
	return data[off:]
}

// positions maps dotted key paths to their line.
type positions map[string]int

func (p positions) line(path []string) int {
	for i := len(path); i > 0; i-- {
		if l, ok := p[strings.Join(path[:i], ".")]; ok {
			return l
		}
	}
	return 0
}

// index records the line of every table header and key in a TOML
// document, with array-of-tables elements numbered from 0.
func index(data []byte) (positions, error) {
	pos := positions{}
	var p unstable.Parser
	p.Reset(data)
	var current []string
	arrays := map[string]int{}
	lineOf := func(n *unstable.Node) int {
		if n.Raw.Length > 0 {
			return p.Shape(n.Raw).Start.Line
		}
		if len(n.Data) > 0 {
			if r := tailFrom(data, n.Data); r != nil {
				return 1 + bytes.Count(data[:len(data)-len(r)], []byte("\n"))
			}
		}
		return 0
	}
	keyOf := func(n *unstable.Node) ([]string, int) {
		var parts []string
		line := 0
		it := n.Key()
		for it.Next() {
			k := it.Node()
			parts = append(parts, string(k.Data))
			if line == 0 {
				line = lineOf(k)
			}
		}
		return parts, line
	}
	var inline func(prefix []string, v *unstable.Node, line int)
	inline = func(prefix []string, v *unstable.Node, line int) {
		if v == nil || v.Kind != unstable.InlineTable {
			return
		}
		it := v.Children()
		for it.Next() {
			kv := it.Node()
			if kv.Kind != unstable.KeyValue {
				continue
			}
			k, l := keyOf(kv)
			if l == 0 {
				l = line
			}
			full := append(append([]string{}, prefix...), k...)
			pos[strings.Join(full, ".")] = l
			inline(full, kv.Value(), l)
		}
	}
	for p.NextExpression() {
		n := p.Expression()
		switch n.Kind {
		case unstable.Table:
			k, l := keyOf(n)
			current = k
			pos[strings.Join(k, ".")] = l
		case unstable.ArrayTable:
			k, l := keyOf(n)
			name := strings.Join(k, ".")
			i := arrays[name]
			arrays[name] = i + 1
			current = append(k, strconv.Itoa(i))
			pos[strings.Join(current, ".")] = l
		case unstable.KeyValue:
			k, l := keyOf(n)
			full := append(append([]string{}, current...), k...)
			pos[strings.Join(full, ".")] = l
			// Dotted keys define their parents too.
			for i := len(current) + 1; i < len(full); i++ {
				if _, ok := pos[strings.Join(full[:i], ".")]; !ok {
					pos[strings.Join(full[:i], ".")] = l
				}
			}
			inline(full, n.Value(), l)
		}
	}
	return pos, p.Error()
}

// Line returns the line of the key path (or of its nearest parent that has
// one); zero when none has.
func (c *Config) Line(path ...string) int { return c.pos.line(path) }

// Ordered returns the keys of the table m at prefix in the order they
// appear in c's file (then by name).
func Ordered[V any](c *Config, prefix []string, m map[string]V) []string {
	keys := SortedKeys(m)
	at := func(k string) int { return c.pos.line(append(append([]string{}, prefix...), k)) }
	sort.SliceStable(keys, func(i, j int) bool { return at(keys[i]) < at(keys[j]) })
	return keys
}

// SortedKeys returns a map's keys in order, for deterministic errors.
func SortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
