package config_test

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
)

// base is a valid configuration: a downstream server with one tool, a
// registry, a mandate issued at start and an approval page.
const base = `name = "test"

[mandate]
owner = "emma"
budget = "EUR 100.00"

[policy]
dir = "policy"

[registries.payees]
file = "payees.json"
normalizer = "iban"

[servers.bank]
command = "./bank"

[tools.send_money]
server = "bank"
action = "bank.send_money"

[tools.send_money.params.iban]
critical = true
sources = ["registry:payees"]
normalizer = "iban"

[tools.get_balance]
server = "bank"
action = "bank.get_balance"
read_only = true

[approvals]
wait = 0

[[approvals.approvers]]
name = "alice"
passcode_hash = "$scrypt$..."
key = "alice.key"
`

// load writes text to a file and loads it.
func load(t *testing.T, text string) (*config.Config, string, error) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "intentplane.toml")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := config.Load(path)
	return c, path, err
}

// lineOf returns the number of the first line of text holding s.
func lineOf(text, s string) int {
	return 1 + strings.Count(text[:strings.Index(text, s)], "\n")
}

func TestLoad(t *testing.T) {
	t.Parallel()
	c, path, err := load(t, base)
	if err != nil {
		t.Fatal(err)
	}
	// Defaults are filled.
	if c.Audience != config.DefaultAudience || c.Approvals.Approver != config.DefaultApprover ||
		c.Approvals.Listen != config.DefaultListen || c.Approvals.MaxRequests != config.DefaultMaxRequests {
		t.Errorf("defaults not filled: audience %q, approver %q, listen %q, max_requests %d",
			c.Audience, c.Approvals.Approver, c.Approvals.Listen, c.Approvals.MaxRequests)
	}
	if !c.Tools["send_money"].Params["iban"].Critical || c.Mandate.Owner != "emma" {
		t.Errorf("decoded %+v", c)
	}
	// Keys in file order; lines; paths relative to the file.
	if got := config.Ordered(c, []string{"tools"}, c.Tools); strings.Join(got, ",") != "send_money,get_balance" {
		t.Errorf("Ordered = %v, want the file's order", got)
	}
	if got, want := c.Line("tools", "send_money", "params", "iban", "sources"), lineOf(base, "sources ="); got != want {
		t.Errorf("Line(sources) = %d, want %d", got, want)
	}
	if got, want := c.Line("tools", "get_balance", "nothing", "here"), lineOf(base, "[tools.get_balance]"); got != want {
		t.Errorf("Line of a missing key = %d, want its table's %d", got, want)
	}
	if got, want := c.Line("approvals", "approvers", "0", "key"), lineOf(base, `key = "alice.key"`); got != want {
		t.Errorf("Line in an array of tables = %d, want %d", got, want)
	}
	if got, want := c.File("payees.json"), filepath.Join(filepath.Dir(path), "payees.json"); got != want {
		t.Errorf("File = %q, want %q", got, want)
	}
	if got := c.File("/etc/payees.json"); got != "/etc/payees.json" {
		t.Errorf("File of an absolute path = %q", got)
	}
	err = c.ErrAt([]string{"mandate", "budget"}, "budget %s", "bad")
	var ce *config.Error
	if !errors.As(err, &ce) || ce.Line != lineOf(base, "budget =") || err.Error() != path+":"+strconv.Itoa(ce.Line)+": budget bad" {
		t.Errorf("ErrAt = %v", err)
	}
}

func TestLoadDefaultsWithoutPage(t *testing.T) {
	t.Parallel()
	text := strings.Replace(base, "[approvals]\nwait = 0\n\n[[approvals.approvers]]\nname = \"alice\"\npasscode_hash = \"$scrypt$...\"\nkey = \"alice.key\"\n", "", 1)
	c, _, err := load(t, text)
	if err != nil {
		t.Fatal(err)
	}
	if c.Approvals.Listen != "" || c.Approvals.MaxRequests != 0 {
		t.Errorf("page defaults without a page: listen %q, max_requests %d", c.Approvals.Listen, c.Approvals.MaxRequests)
	}
}

// TestLoadErrors: each mistake is refused with the file and the line of
// the key at fault.
func TestLoadErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, from, to string
		anchor         string // the error is at the first line holding it
		want           string
	}{
		{"unknown key", "wait = 0", "waits = 0", "waits", `unknown key "approvals.waits"`},
		{"unknown nested key", "read_only = true", "read_only = true\nreadonly = true", "readonly", `unknown key "tools.get_balance.readonly"`},
		{"syntax", `budget = "EUR 100.00"`, `budget = "EUR 100.00`, "budget", "basic string"},
		{"wrong type", "wait = 0", `wait = "soon"`, "wait =", "cannot decode"},
		{"unknown passkeys rule", "wait = 0", "wait = 0\npasskeys = \"sometimes\"", "passkeys", `passkeys is "four_eyes" or "all"`},
		{"negative duration", "wait = 0", "wait = 0\nrequest_ttl = \"-5m\"", "request_ttl", "must not be negative"},
		{"unknown normalizer", `normalizer = "iban"`, `normalizer = "upper"`, `"upper"`, `unknown normalizer "upper"`},
		{"registry without file", `file = "payees.json"`, "", "[registries.payees]", `registry "payees" needs a file`},
		{"server of two kinds", `command = "./bank"`, "command = \"./bank\"\nurl = \"http://127.0.0.1:9/\"", "[servers.bank]", "needs exactly one of command, url and pack"},
		{"unknown pack", `command = "./bank"`, `pack = "hr"`, `"hr"`, `unknown pack "hr" (ap)`},
		{"tool of an unknown server", `server = "bank"`, `server = "bnak"`, `"bnak"`, `unknown server "bnak"`},
		{"tool declared twice", "[tools.get_balance]\nserver = \"bank\"", "[tools.balance]\ntool = \"send_money\"\nserver = \"bank\"", "[tools.balance]", `tool "send_money" of server "bank" is already declared as [tools.send_money]`},
		{"two action prefixes", `action = "bank.get_balance"`, `action = "ledger.get_balance"`, "ledger.get_balance", `every proxied tool's action must start with "bank."`},
		{"no policy dir", `dir = "policy"`, "", "[policy]", "[policy] dir is required"},
		{"mandate neither file nor owner", `owner = "emma"`, "", "[mandate]", "[mandate] needs either file or owner"},
		{"mandate both", `owner = "emma"`, "owner = \"emma\"\nfile = \"m.token\"", "[mandate]", "a mandate is either a file"},
		{"store kind", "name = \"test\"\n", "name = \"test\"\n[store]\nkind = \"redis\"\n", "redis", `unknown store "redis"`},
		{"path of the mem store", "name = \"test\"\n", "name = \"test\"\n[store]\npath = \"x.db\"\n", "path =", "path does not apply to the mem store"},
		{"literal dsn", "name = \"test\"\n", "name = \"test\"\n[store]\nkind = \"postgres\"\ndsn_env = \"postgres://u:p@db/x\"\n", "dsn_env", "keep passwords out of the file"},
		{"checkpoint settings without key", "name = \"test\"\n", "name = \"test\"\n[store]\ncheckpoint_every = 10\n", "[store]", "need checkpoint_key"},
		{"page key without approvers", "wait = 0\n\n[[approvals.approvers]]\nname = \"alice\"\npasscode_hash = \"$scrypt$...\"\nkey = \"alice.key\"\n", "wait = 5\n", "wait = 5", "wait applies to the approval page"},
		{"wait too long", "wait = 0", "wait = 7200", "wait =", "wait is a number of seconds"},
		{"remote listen", "wait = 0", "wait = 0\nlisten = \"0.0.0.0:8477\"", "listen", "is not a loopback address"},
		{"remote without https", "wait = 0", "wait = 0\nlisten = \"0.0.0.0:8477\"\nallow_remote = true", "allow_remote", "allow_remote needs an https base_url"},
		{"base_url with a path", "wait = 0", "wait = 0\nbase_url = \"https://x.example/approve\"", "base_url", "without a path"},
		{"client approver name", `name = "alice"`, `name = "mcp-user"`, `"mcp-user"`, `approver "mcp-user" is the name the MCP client's user approves under`},
		{"approver without key", `key = "alice.key"`, "", "[[approvals.approvers]]", `approver "alice" needs a key`},
		{"webhook without key", "wait = 0", "wait = 0\nwebhook = { url = \"https://hooks.example/x\" }", "webhook", "a webhook needs url and key"},
		{"webhook approvers without callback key", "wait = 0", "wait = 0\nwebhook = { url = \"https://hooks.example/x\", key = \"hook.key\", approvers = [\"alice\"] }", "webhook", "need callback_key"},
		{"pins without file", "name = \"test\"\n", "name = \"test\"\n[pins]\n", "[pins]", "[pins] needs file"},
		{"pins without tools", "name = \"test\"\n", "name = \"test\"\n[pins]\nfile = \"tools.lock.json\"\n", "[pins]", "there are none"},
		{"odoo table without erp", `command = "./bank"`, "pack = \"ap\"\n[servers.bank.odoo]\nurl = \"http://127.0.0.1:8069\"", "[servers.bank.odoo]", `needs pack = "ap" and erp = "odoo"`},
		{"odoo password in the file", `command = "./bank"`, "pack = \"ap\"\nerp = \"odoo\"\n[servers.bank.odoo]\nurl = \"http://127.0.0.1:8069\"\ndb = \"ap\"\nreader = { login = \"r\", password = \"hunter2\" }", "reader", "a password is never written in the configuration"},
		{"odoo url with credentials", `command = "./bank"`, "pack = \"ap\"\nerp = \"odoo\"\n[servers.bank.odoo]\nurl = \"http://admin:pw@127.0.0.1:8069\"", "url = \"http://admin", "url must not carry credentials"},
		{"odoo transport", `command = "./bank"`, "pack = \"ap\"\nerp = \"odoo\"\n[servers.bank.odoo]\nurl = \"http://127.0.0.1:8069\"\ndb = \"ap\"\ntransport = \"jsonrpc\"", "transport", `unknown transport "jsonrpc"`},
		{"odoo company id", `command = "./bank"`, "pack = \"ap\"\nerp = \"odoo\"\n[servers.bank.odoo]\nurl = \"http://127.0.0.1:8069\"\ndb = \"ap\"\nreader = { login = \"r\", password_env = \"R\" }\npayer = { login = \"p\", password_env = \"P\" }\ncompanies = { northwind = 0 }", "companies", `company "northwind": a res.company id is a positive integer`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(base, tc.from) {
				t.Fatalf("base has no %q", tc.from)
			}
			text := strings.Replace(base, tc.from, tc.to, 1)
			if tc.name == "unknown pack" || tc.name == "pins without tools" || strings.HasPrefix(tc.name, "odoo") {
				// A pack's server has no [tools].
				text = text[:strings.Index(text, "[tools.send_money]")] + text[strings.Index(text, "[approvals]"):]
			}
			_, path, err := load(t, text)
			if err == nil {
				t.Fatal("accepted")
			}
			want := path + ":" + strconv.Itoa(lineOf(text, tc.anchor)) + ": "
			if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want it to hold %q and %q", err, want, tc.want)
			}
		})
	}
}

func TestLoadMissingFile(t *testing.T) {
	t.Parallel()
	if _, err := config.Load(filepath.Join(t.TempDir(), "none.toml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v", err)
	}
}

// TestAdmin: the admin listener defaults to loopback and refuses another
// address without allow_remote.
func TestAdmin(t *testing.T) {
	t.Parallel()
	c, _, err := load(t, base+"\n[admin]\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Admin == nil || c.Admin.Listen != config.DefaultAdminListen {
		t.Errorf("admin = %+v, want listen %q", c.Admin, config.DefaultAdminListen)
	}
	if c, _, err := load(t, base); err != nil || c.Admin != nil {
		t.Errorf("without [admin]: %+v, %v", c.Admin, err)
	}
	text := base + "\n[admin]\nlisten = \"0.0.0.0:9464\"\n"
	_, path, err := load(t, text)
	want := path + ":" + strconv.Itoa(lineOf(text, `listen = "0.0.0.0:9464"`)) + ": listen \"0.0.0.0:9464\" is not a loopback address"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("remote admin: %v, want %q", err, want)
	}
	if _, _, err := load(t, text+"allow_remote = true\n"); err != nil {
		t.Errorf("allow_remote: %v", err)
	}
	if _, _, err := load(t, base+"\n[admin]\nlisten = \"9464\"\n"); err == nil || !strings.Contains(err.Error(), "host:port") {
		t.Errorf("listen without host: %v", err)
	}
}

// TestPins: [pins] file is kept as written, resolved against the
// configuration's directory.
func TestPins(t *testing.T) {
	t.Parallel()
	c, path, err := load(t, base+"\n[pins]\nfile = \"tools.lock.json\"\n")
	if err != nil {
		t.Fatal(err)
	}
	if c.Pins == nil || c.File(c.Pins.File) != filepath.Join(filepath.Dir(path), "tools.lock.json") {
		t.Errorf("pins = %+v", c.Pins)
	}
}
