package main

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

type mandateCmd struct {
	Keygen mandateKeygenCmd `cmd:"" help:"Create an Ed25519 issuer key pair."`
	Issue  mandateIssueCmd  `cmd:"" help:"Issue a signed mandate and print its token."`
	Show   mandateShowCmd   `cmd:"" help:"Verify a mandate token and print what it allows."`
}

type mandateKeygenCmd struct {
	Out   string `required:"" help:"File to write the private key to (mode 0600); the public key is printed and written to FILE.pub."`
	Force bool   `help:"Overwrite FILE and FILE.pub when they exist (the old private key is lost)."`
}

func (c *mandateKeygenCmd) Run(e *env) error {
	pub, priv, err := mandate.GenerateKey(nil)
	if err != nil {
		return err
	}
	if !c.Force {
		for _, f := range []string{c.Out, c.Out + ".pub"} {
			if _, err := os.Lstat(f); err == nil {
				return fmt.Errorf("%s exists: a key file is never overwritten without --force (its old key would be lost)", f)
			}
		}
	}
	if err := writeKey(c.Out, mandate.EncodePrivateKey(priv), 0o600, c.Force); err != nil {
		return err
	}
	if err := writeKey(c.Out+".pub", mandate.EncodePublicKey(pub), 0o644, c.Force); err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "private key: %s\npublic key:  %s (%s.pub)\n", c.Out, mandate.EncodePublicKey(pub), c.Out)
	return nil
}

// writeKey writes key and a newline to path with perm; without force it
// creates the file exclusively, so a file appearing meanwhile is kept.
func writeKey(path, key string, perm os.FileMode, force bool) error {
	flag := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if force {
		flag = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	f, err := os.OpenFile(path, flag, perm)
	if err != nil {
		return err
	}
	if _, err := f.WriteString(key + "\n"); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

type mandateIssueCmd struct {
	Key      string        `required:"" help:"Issuer private key file (from mandate keygen)."`
	Issuer   string        `required:"" help:"Issuer key id, as the gateway knows it."`
	Audience string        `default:"intentplane" help:"Gateway the mandate is for."`
	Owner    string        `required:"" help:"Owner every lookup is scoped to (a customer, a company, a clinician)."`
	Scope    []string      `required:"" help:"Allowed actions, comma separated (banking.send_money,...): actions of the built-in packs or of the --policy schema."`
	Policy   string        `type:"path" help:"An operator's policy directory (its schema.cedarschema): its actions may be named in --scope too." placeholder:"DIR"`
	Budget   []string      `required:"" help:"Budget as 'CUR amount', e.g. 'EUR 1250.00' ('EUR 0.00' for a mandate that spends nothing). Repeatable, one per currency: the first is the main budget, each other one lets the mandate pay in its currency up to its amount ('--budget \"EUR 50000.00\" --budget \"USD 20000.00\"'); amounts are never converted." sep:"none"`
	Claim    []string      `help:"A claim value as name=value (repeatable; repeat a name for several values), e.g. --claim payees=GB29NWBK60161331926819." sep:"none"`
	Mode     string        `default:"known_counterparties" enum:"strict,known_counterparties" help:"strict: critical values only from the mandate; known_counterparties: also from registries."`
	TTL      time.Duration `default:"8h" help:"Validity from now."`
}

func (c *mandateIssueCmd) Run(e *env) error {
	raw, err := os.ReadFile(c.Key)
	if err != nil {
		return err
	}
	priv, err := mandate.ParsePrivateKey(strings.TrimSpace(string(raw)))
	if err != nil {
		return fmt.Errorf("%s: %w", c.Key, err)
	}
	budgets, err := parseBudgets(c.Budget)
	if err != nil {
		return err
	}
	claims, err := parseClaims(c.Claim)
	if err != nil {
		return err
	}
	known, err := builtinActions(c.Policy)
	if err != nil {
		return err
	}
	m, err := buildMandate(c.Issuer, c.Audience, intent.Owner(c.Owner), c.Scope, budgets[0], claims, mandate.Mode(c.Mode), time.Now(), c.TTL)
	if err != nil {
		return err
	}
	m.Budgets = budgets[1:]
	if m.Claims, err = known.check(m.Scope, m.Claims); err != nil {
		return err
	}
	tok, err := mandate.Issue(m, c.Issuer, priv)
	if err != nil {
		return err
	}
	fmt.Fprintln(e.stdout, tok)
	return nil
}

// parseBudgets parses the --budget flags, each 'CUR amount': at least one,
// at most one per currency.
func parseBudgets(flags []string) ([]intent.Money, error) {
	if len(flags) == 0 {
		return nil, fmt.Errorf("--budget: at least one budget is required")
	}
	budgets := make([]intent.Money, 0, len(flags))
	for _, f := range flags {
		b, err := intent.ParseMoney(strings.TrimSpace(f))
		if err != nil {
			return nil, fmt.Errorf("--budget %q: %w", f, err)
		}
		for _, o := range budgets {
			if o.Currency == b.Currency {
				return nil, fmt.Errorf("--budget: two budgets in %s (%s and %s); give one budget per currency", b.Currency,
					o.Decimal(), b.Decimal())
			}
		}
		budgets = append(budgets, b)
	}
	return budgets, nil
}

// budgetsText is how mandate show prints a mandate's budgets: "EUR
// 1000.00", then ", USD 500.00" for each further one.
func budgetsText(m *mandate.Mandate) string {
	parts := make([]string, 0, 1+len(m.Budgets))
	for _, b := range m.AllBudgets() {
		parts = append(parts, b.Currency+" "+b.Decimal())
	}
	return strings.Join(parts, ", ")
}

type mandateShowCmd struct {
	Token    string            `arg:"" help:"Mandate token (ipm1....) or @FILE."`
	Pub      map[string]string `required:"" help:"Issuer public keys as issuer=FILE (repeatable)."`
	Audience string            `default:"intentplane"`
}

func (c *mandateShowCmd) Run(e *env) error {
	keys := mandate.StaticKeys{}
	for issuer, file := range c.Pub {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		pk, err := mandate.ParsePublicKey(strings.TrimSpace(string(raw)))
		if err != nil {
			return fmt.Errorf("%s: %w", file, err)
		}
		keys[issuer] = pk
	}
	tok, err := readArg(c.Token)
	if err != nil {
		return err
	}
	m, err := mandate.Verifier{Keys: keys, Audience: c.Audience}.Verify(e.ctx, tok)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "mandate %s issued by %s for %s\nowner:  %s\nmode:   %s\nvalid:  %s to %s\nbudget: %s\nscope:  %s\n",
		m.ID, m.Issuer, m.Audience, m.Owner, m.Mode, m.NotBefore.Format(time.RFC3339), m.Expiry.Format(time.RFC3339),
		budgetsText(m), joinActions(m.Scope))
	names := make([]string, 0, len(m.Claims))
	for k := range m.Claims {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		vs := make([]string, len(m.Claims[k]))
		for i, v := range m.Claims[k] {
			vs[i] = showClaim(v)
		}
		fmt.Fprintf(e.stdout, "claim:  %s = %s\n", k, strings.Join(vs, ", "))
	}
	return nil
}

func readArg(s string) (string, error) {
	if f, ok := strings.CutPrefix(s, "@"); ok {
		b, err := os.ReadFile(f)
		return strings.TrimSpace(string(b)), err
	}
	return s, nil
}

func joinActions(as []intent.Action) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

func parseClaims(in []string) (map[string][]string, error) {
	out := map[string][]string{}
	for _, c := range in {
		k, v, ok := strings.Cut(c, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("claim %q: write it as name=value", c)
		}
		out[k] = append(out[k], v)
	}
	return out, nil
}

var actionRE = regexp.MustCompile(`^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$`)

// buildMandate assembles a mandate with a random id, valid from now for ttl.
func buildMandate(issuer, audience string, owner intent.Owner, scope []string, budget intent.Money, claims map[string][]string, mode mandate.Mode, now time.Time, ttl time.Duration) (mandate.Mandate, error) {
	var id [16]byte
	if _, err := rand.Read(id[:]); err != nil {
		return mandate.Mandate{}, err
	}
	acts := make([]intent.Action, 0, len(scope))
	for _, s := range scope {
		a := strings.TrimSpace(s)
		if !actionRE.MatchString(a) {
			return mandate.Mandate{}, fmt.Errorf("scope %q: an action is written pack.verb (e.g. banking.send_money); there are no wildcards", a)
		}
		acts = append(acts, intent.Action(a))
	}
	now = now.UTC().Truncate(time.Second)
	return mandate.Mandate{
		ID: "m-" + hex.EncodeToString(id[:]), Issuer: issuer, Audience: audience, Owner: owner,
		Scope: acts, Budget: budget, Claims: claims, Mode: mode,
		NotBefore: now, Expiry: now.Add(ttl),
	}, nil
}

// showClaim prints a claim value so that a look-alike cannot pass for the
// genuine value on screen: plain printable ASCII as it is, anything else
// also escaped, with a warning ("DE89 37В…" reads differently from
// "DE89 37B…").
func showClaim(v string) string {
	for _, r := range v {
		if r < 0x20 || r > 0x7e {
			return v + " [not plain ASCII: " + strconv.QuoteToASCII(v) + "]"
		}
	}
	return v
}
