package contract

import (
	"errors"
	"fmt"
	"regexp"
	"sort"

	"github.com/intentplane/intentplane/core/intent"
)

// Type is the type of a parameter. Build one with String, Amount, Integer,
// Bool or Date.
type Type struct {
	kind  intent.Kind
	scale uint8 // KindAmount: decimal places of the minor unit
	// KindAmount in the currency of the parameter of this name
	// (AmountIn): the scale is that currency's exponent.
	currency string
	maxLen   int  // KindString: maximum length in bytes; zero means 1024
	date     bool // KindString holding a calendar date YYYY-MM-DD
	// KindInt with bounded: the value must lie in [min, max].
	bounded  bool
	min, max int64
}

// String is a text parameter of at most maxLen bytes of UTF-8; zero means
// 1024.
func String(maxLen int) Type { return Type{kind: intent.KindString, maxLen: maxLen} }

// Amount is a sum of money given as an exact decimal (a JSON number or a
// JSON string such as "1250.00") with at most scale fraction digits, and
// decoded to integer minor units: Amount(2) turns "12.5" into 1250. It must
// be greater than zero.
func Amount(scale uint8) Type { return Type{kind: intent.KindAmount, scale: scale} }

// AmountIn is an Amount in the currency that the parameter currency
// gives: a required String parameter whose value (normalized) is an ISO
// 4217 code. Its scale is that currency's minor unit
// (intent.CurrencyExponent): "12.50" is 1250 in EUR, "100" is 100 in
// JPY, "1.250" is 1250 in KWD; more decimals than the currency has are
// refused, and so is a currency that is not an active ISO 4217 code
// (intent.ISOCurrency). The decoded Value carries the scale.
func AmountIn(currency string) Type { return Type{kind: intent.KindAmount, currency: currency} }

// Currency returns the parameter an AmountIn type takes its currency
// from; "" for every other type.
func (t Type) Currency() string { return t.currency }

// Integer is a JSON integer that fits in int64.
func Integer() Type { return Type{kind: intent.KindInt} }

// IntegerIn is a JSON integer from min to max inclusive (a page size, an
// offset); a value outside is a bad argument, refused before anything is
// read or executed.
func IntegerIn(min, max int64) Type {
	return Type{kind: intent.KindInt, bounded: true, min: min, max: max}
}

// Bool is a JSON true or false.
func Bool() Type { return Type{kind: intent.KindBool} }

// Date is a calendar date written YYYY-MM-DD.
func Date() Type { return Type{kind: intent.KindString, maxLen: 10, date: true} }

// Kind returns the kind of value the type decodes to.
func (t Type) Kind() intent.Kind { return t.kind }

// Bounds returns an IntegerIn type's least and greatest value; ok is false
// for every other type.
func (t Type) Bounds() (min, max int64, ok bool) { return t.min, t.max, t.bounded }

// Scale returns the number of fraction digits of an Amount type; for an
// AmountIn type it is known only per call (its currency's) and Scale is 0.
func (t Type) Scale() uint8 { return t.scale }

// String describes the type for messages: "text", "amount with 2 decimals".
func (t Type) String() string {
	switch {
	case t.date:
		return "date (YYYY-MM-DD)"
	case t.kind == intent.KindString:
		return "text"
	case t.kind == intent.KindAmount && t.currency != "":
		return fmt.Sprintf("amount with at most the decimals of its currency (%s: 2 for EUR, 0 for JPY, 3 for KWD)", t.currency)
	case t.kind == intent.KindAmount:
		return fmt.Sprintf("amount with at most %d decimals", t.scale)
	case t.kind == intent.KindInt:
		return "integer"
	case t.kind == intent.KindBool:
		return "true or false"
	}
	return "invalid type"
}

// SourceKind says where a trusted value comes from.
type SourceKind uint8

// The kinds of trusted source.
const (
	SourceMandate  SourceKind = iota + 1 // a claim of the user's signed mandate
	SourceRegistry                       // a registry: a system of record scoped to the owner
)

// Source is one trusted source of a critical parameter.
type Source struct {
	Kind SourceKind
	Name string // the claim name or the registry name
}

// FromMandate is the source "the values the user listed in the mandate's
// claim".
func FromMandate(claim string) Source { return Source{Kind: SourceMandate, Name: claim} }

// FromRegistry is the source "a record of the owner in the named registry".
func FromRegistry(name string) Source { return Source{Kind: SourceRegistry, Name: name} }

// String returns "mandate:<claim>" or "registry:<name>", the form used in
// provenance and configuration.
func (s Source) String() string {
	switch s.Kind {
	case SourceMandate:
		return "mandate:" + s.Name
	case SourceRegistry:
		return "registry:" + s.Name
	}
	return "invalid:" + s.Name
}

// Normalizer turns an agent's spelling into the canonical form or refuses
// it (see package normalize). It must be deterministic and idempotent.
type Normalizer func(string) (string, error)

// Parameter is one argument of an action.
type Parameter struct {
	// Name is the argument's key in the proposal's args.
	Name string
	// Type is what the value must be.
	Type Type
	// Required parameters must be present; others may be omitted.
	Required bool
	// Critical parameters (payee, recipient, patient, bank account) only
	// take values from Sources; what executes is the trusted record's value.
	Critical bool
	// Sources are tried in order; a critical parameter needs at least one.
	Sources []Source
	// Normalizer canonicalizes the value before lookup; nil means the
	// value is compared exactly. Only for text types.
	Normalizer Normalizer
	// Doc says what the parameter is, for the agent.
	Doc string
	// Sensitive values (a password, a clinical note) never enter receipts:
	// the receipt keeps their SHA-256 digest instead, in what the agent
	// sent, in the arguments and in the resolved values. The operation and
	// the policy still see the value.
	Sensitive bool
	// OnNoMatch tells the agent what the user can do when a critical value
	// matches no trusted record ("payments go only to the bank account on
	// file; bank details are changed by ..."); empty means a generic text.
	OnNoMatch string
}

// Contract is what an action accepts. Build it with New.
type Contract struct {
	// Action is the action's name ("banking.send_money").
	Action intent.Action
	// Params are the parameters, in the order they are documented.
	Params []Parameter
	// Budget names the Amount parameter that is reserved against the
	// mandate's budget; empty when the action moves no money.
	Budget string
	// BudgetCurrency names the fact that gives the ISO 4217 currency of
	// the Budget amount: a fact of the pack's context providers, or an
	// attribute of a resolved record (<param>_<attr>), read from a system
	// of record (the bill's currency), never an argument. The amount is
	// reserved against the mandate's budget in that currency; a mandate
	// with none refuses it (budget.exceeded, naming the setting). Empty
	// means the amount is in the currency of the mandate's main budget.
	// Only with Budget.
	BudgetCurrency string
	// ReadOnly actions change nothing; they are still decided, scoped and
	// receipted, and consume no nonce.
	ReadOnly bool
	// Resource names the parameter whose resolved value is the Cedar
	// resource id; empty means Resource::"none".
	Resource string
	// Exclusive names critical parameters whose resolved values identify a
	// record that at most one operation may act on at a time (the bill
	// being paid): while one such operation is between its context read
	// and its execution, any other is refused as in flight. Empty means no
	// exclusion.
	Exclusive []string
	// Totals are the running totals of the Budget amount that the gateway
	// keeps for the action (see Total); empty means none. They need a
	// Budget.
	Totals []Total
	// TotalsAmount, if not empty, names a fact (Long: minor units of the
	// currency the fact TotalsCurrency names, an ISO 4217 code) that the
	// pack's context providers give: the Budget amount converted into
	// one currency (a company's, at its system of record's rate), which
	// the Totals add up, in that currency, instead of the Budget amount
	// in its own: then operations in several currencies add up in one,
	// and the Totals' Outside facts are in that currency too. Empty means
	// the Totals add up the Budget amount, per currency. Both or neither;
	// only with Totals.
	TotalsAmount, TotalsCurrency string
	// Doc says what the action does, for the agent.
	Doc string

	byName    map[string]int
	sensitive bool
}

// ErrInvalidContract is wrapped by every error New returns.
var ErrInvalidContract = errors.New("contract: invalid contract")

var nameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
var actionRE = regexp.MustCompile(`^[a-z][a-z0-9_]*\.[a-z][a-z0-9_]*$`)

// NewAll returns New of each of specs, in order: a pack's contracts. It
// returns the first error, which names the action.
func NewAll(specs []Contract) ([]*Contract, error) {
	out := make([]*Contract, len(specs))
	for i, s := range specs {
		c, err := New(s)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// New checks c and returns it ready for decoding. It refuses, wrapping
// ErrInvalidContract: an action not of the form "pack.verb", a parameter
// without a valid name or type, duplicate names, a critical parameter with no
// source (the design's first rule), a critical parameter that is not text, a
// normalizer on a non-text parameter, a budget or resource parameter that
// does not exist or has the wrong type.
func New(c Contract) (*Contract, error) {
	fail := func(format string, a ...any) (*Contract, error) {
		return nil, fmt.Errorf("%w: %s: %s", ErrInvalidContract, c.Action, fmt.Sprintf(format, a...))
	}
	if !actionRE.MatchString(string(c.Action)) {
		return fail("action must look like pack.verb")
	}
	c.Params = append([]Parameter(nil), c.Params...)
	c.byName = make(map[string]int, len(c.Params))
	for i, p := range c.Params {
		if _, dup := c.byName[p.Name]; dup {
			return fail("parameter %q declared twice", p.Name)
		}
		if problem := checkParameter(p); problem != "" {
			return fail("%s", problem)
		}
		c.Params[i].Sources = append([]Source(nil), p.Sources...)
		c.byName[p.Name] = i
		c.sensitive = c.sensitive || p.Sensitive
	}
	if problem := c.checkAmounts(); problem != "" {
		return fail("%s", problem)
	}
	c.Exclusive = append([]string(nil), c.Exclusive...)
	for _, name := range c.Exclusive {
		i, ok := c.byName[name]
		if !ok || !c.Params[i].Critical || !c.Params[i].Required {
			return fail("exclusive parameter %q must be a required critical parameter", name)
		}
	}
	if c.Resource != "" {
		if _, ok := c.byName[c.Resource]; !ok {
			return fail("resource parameter %q does not exist", c.Resource)
		}
	}
	if problem := c.checkTotals(); problem != "" {
		return fail("%s", problem)
	}
	return &c, nil
}

// checkAmounts is New's check of the budget and the AmountIn parameters:
// the budget is a required amount parameter, the budget currency fact
// needs it, and each AmountIn takes its currency from a required string
// parameter that is not critical (so that it is normalized when
// decoding). It returns the first problem found, or "".
func (c *Contract) checkAmounts() string {
	if c.Budget != "" {
		i, ok := c.byName[c.Budget]
		if !ok || c.Params[i].Type.kind != intent.KindAmount {
			return fmt.Sprintf("budget parameter %q must be an amount parameter", c.Budget)
		}
		if !c.Params[i].Required {
			return fmt.Sprintf("budget parameter %q must be required", c.Budget)
		}
	}
	if c.BudgetCurrency != "" && (c.Budget == "" || !nameRE.MatchString(c.BudgetCurrency)) {
		return fmt.Sprintf("budget currency fact %q needs a budget parameter and a name of lowercase letters, digits and _", c.BudgetCurrency)
	}
	for _, p := range c.Params {
		cur := p.Type.currency
		if cur == "" {
			continue
		}
		i, ok := c.byName[cur]
		if !ok || c.Params[i].Type.kind != intent.KindString || !c.Params[i].Required || c.Params[i].Critical {
			return fmt.Sprintf("the currency of amount parameter %q must be a required string parameter that is not critical, not %q", p.Name, cur)
		}
	}
	return ""
}

// checkTotals is New's check of c.Totals: a Budget to add up, valid and
// distinct names, a known window, and By naming required critical
// parameters. It returns the first problem found, or "".
func (c *Contract) checkTotals() string {
	if len(c.Totals) > 0 && c.Budget == "" {
		return "totals need a budget parameter to add up"
	}
	if (c.TotalsAmount != "" || c.TotalsCurrency != "") &&
		(len(c.Totals) == 0 || !nameRE.MatchString(c.TotalsAmount) || !nameRE.MatchString(c.TotalsCurrency)) {
		return fmt.Sprintf("totals amount fact %q and currency fact %q need totals, and both a name of lowercase letters, digits and _",
			c.TotalsAmount, c.TotalsCurrency)
	}
	c.Totals = append([]Total(nil), c.Totals...)
	seen := map[string]bool{}
	for i, t := range c.Totals {
		if seen[t.Name] {
			return fmt.Sprintf("total %q: name must be lowercase letters, digits and _, and used once", t.Name)
		}
		seen[t.Name] = true
		if why := c.checkTotal(t); why != "" {
			return why
		}
		c.Totals[i].By = append([]string(nil), t.By...)
	}
	return ""
}

// checkTotal is checkTotals' check of one total on its own: a name, a
// known window, an outside fact's name, and By parameters that are
// required critical parameters of c.
func (c *Contract) checkTotal(t Total) string {
	if !nameRE.MatchString(t.Name) {
		return fmt.Sprintf("total %q: name must be lowercase letters, digits and _, and used once", t.Name)
	}
	if t.Window < Ever || t.Window > Week {
		return fmt.Sprintf("total %q has an unknown window", t.Name)
	}
	if t.Outside != "" && !nameRE.MatchString(t.Outside) {
		return fmt.Sprintf("total %q: outside fact %q must be lowercase letters, digits and _", t.Name, t.Outside)
	}
	if len(t.By) == 0 {
		return fmt.Sprintf("total %q names no parameter to add up by", t.Name)
	}
	for _, name := range t.By {
		j, ok := c.byName[name]
		if !ok || !c.Params[j].Critical || !c.Params[j].Required {
			return fmt.Sprintf("total %q: parameter %q must be a required critical parameter", t.Name, name)
		}
	}
	return ""
}

// checkParameter is New's check of one parameter on its own: a name of
// lowercase letters, digits and _, a type, trusted sources if and only if
// it is critical, text if it is critical or has a normalizer, and only
// mandate or registry sources, each named. It returns the first problem
// found, as New reports it, or "".
func checkParameter(p Parameter) string {
	if !nameRE.MatchString(p.Name) {
		return fmt.Sprintf("parameter %q: name must be lowercase letters, digits and _", p.Name)
	}
	if p.Type.kind == 0 {
		return fmt.Sprintf("parameter %q has no type", p.Name)
	}
	if p.Critical && len(p.Sources) == 0 {
		return fmt.Sprintf("critical parameter %q has no trusted source", p.Name)
	}
	if !p.Critical && len(p.Sources) > 0 {
		return fmt.Sprintf("parameter %q has sources but is not critical", p.Name)
	}
	if p.Critical && p.Type.kind != intent.KindString {
		return fmt.Sprintf("critical parameter %q must be text", p.Name)
	}
	if p.Normalizer != nil && p.Type.kind != intent.KindString {
		return fmt.Sprintf("parameter %q: normalizers apply to text only", p.Name)
	}
	for _, s := range p.Sources {
		if (s.Kind != SourceMandate && s.Kind != SourceRegistry) || s.Name == "" {
			return fmt.Sprintf("parameter %q has an invalid source %q", p.Name, s)
		}
	}
	return ""
}

// Param returns the parameter named name.
func (c *Contract) Param(name string) (Parameter, bool) {
	i, ok := c.byName[name]
	if !ok {
		return Parameter{}, false
	}
	return c.Params[i], true
}

// HasSensitive reports whether some parameter is Sensitive.
func (c *Contract) HasSensitive() bool { return c.sensitive }

// Critical returns the critical parameters in declaration order.
func (c *Contract) Critical() []Parameter {
	var out []Parameter
	for _, p := range c.Params {
		if p.Critical {
			out = append(out, p)
		}
	}
	return out
}

// Set is an immutable set of contracts by action.
type Set map[intent.Action]*Contract

// NewSet indexes contracts by action, refusing duplicates.
func NewSet(cs ...*Contract) (Set, error) {
	s := make(Set, len(cs))
	for _, c := range cs {
		if c == nil {
			return nil, fmt.Errorf("%w: nil contract", ErrInvalidContract)
		}
		if _, dup := s[c.Action]; dup {
			return nil, fmt.Errorf("%w: action %s declared twice", ErrInvalidContract, c.Action)
		}
		s[c.Action] = c
	}
	return s, nil
}

// Actions returns the actions of the set, sorted.
func (s Set) Actions() []intent.Action {
	out := make([]intent.Action, 0, len(s))
	for a := range s {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
