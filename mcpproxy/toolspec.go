package mcpproxy

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

// ToolSpec declares a downstream tool as a gateway action: the action its
// calls propose and how each argument is typed and trusted. Contract turns
// it into the action's contract, checked against the tool's input schema.
type ToolSpec struct {
	// Action is the gateway action ("bank.send_money"). Required.
	Action intent.Action
	// Name is the tool's name as the client sees it; empty means the
	// downstream's.
	Name string
	// Description replaces the downstream's description; empty keeps it.
	Description string
	// Budget names the amount parameter reserved against the mandate's
	// budget; empty means the tool spends nothing, which Contract allows
	// only for a tool without amount parameters or a ReadOnly one.
	Budget string
	// ReadOnly tools change nothing (pass-through reads).
	ReadOnly bool
	// Params are the tool's arguments, in the order declared. Every
	// argument the input schema requires must be declared.
	Params []ParamSpec
	// Totals are the running totals of the Budget amount, with their
	// thresholds (TotalsPolicy); empty means none.
	Totals []TotalSpec
}

// ParamSpec declares one argument of a tool.
type ParamSpec struct {
	// Name is the argument's name in the input schema.
	Name string
	// Type is "string" (or empty), "amount", "integer", "bool" or "date".
	Type string
	// Scale is an amount's number of decimals (2 for cents), 0 to 18.
	Scale int
	// MaxLength bounds a string in bytes; zero means 1024.
	MaxLength int
	// Required overrides the input schema's "required"; nil keeps it.
	Required *bool
	// Critical parameters take their values only from Sources.
	Critical bool
	// Sources are "registry:NAME" or "mandate:CLAIM"; a critical parameter
	// needs at least one, another parameter none.
	Sources []string
	// Normalizer names a normalizer (Normalizer); empty means none. A
	// parameter resolved through a registry uses the registry's.
	Normalizer string
	// Format is how the downstream takes an amount: "number" (or empty),
	// "string" or "minor_units"; amounts only.
	Format string
	// OnNoMatch tells the agent what the user can do when a critical value
	// matches nothing; empty means a generic text.
	OnNoMatch string
	// Sensitive marks a secret (contract.Parameter.Sensitive): receipts
	// keep its digest, and Tool.Sensitive names it. It cannot key a
	// total, whose store account would then hold it.
	Sensitive bool
}

// SpecError is a ToolSpec that Contract refuses, with where the fault is,
// so that a caller can point at the declaration's line.
type SpecError struct {
	// Param names the parameter at fault (possibly one the schema requires
	// but the spec does not declare); empty means the tool itself.
	Param string
	// Field names the parameter's field at fault ("type", "scale",
	// "format", "normalizer", "sources"); empty means the parameter (or
	// the tool) as a whole.
	Field string
	// Msg says what is wrong, in words for the person writing the
	// declaration.
	Msg string
	// Err is the underlying error, if any (a *contract error wrapping
	// contract.ErrInvalidContract, or the amount format's).
	Err error
}

func (e *SpecError) Error() string {
	if e.Msg == "" && e.Err != nil {
		return e.Err.Error()
	}
	return e.Msg
}

func (e *SpecError) Unwrap() error { return e.Err }

// normalizers are the normalizers a ToolSpec or a registry can name.
var normalizers = map[string]contract.Normalizer{
	"iban":           normalize.IBAN,
	"account_number": normalize.AccountNumber,
	"email":          normalize.Email,
	"identifier":     normalize.Identifier,
}

// NormalizerNames lists the names Normalizer knows, for messages.
const NormalizerNames = "iban, account_number, email, identifier"

// Normalizer returns the normalizer called name: "iban", "account_number",
// "email" or "identifier" (package core/normalize); ok is false for any
// other name.
func Normalizer(name string) (n contract.Normalizer, ok bool) {
	n, ok = normalizers[name]
	return n, ok
}

// Contract returns the contract of the tool raw declared by s, and the
// format each amount parameter is sent to the downstream in. registries
// maps each registry a source may name to the normalizer name its values
// are normalized with ("" for none); a parameter resolved through a
// registry must use the same normalizer. Each parameter must be an
// argument of raw's input schema (when it lists properties), and every
// argument the schema requires must be declared; a schema that cannot be
// read checks nothing. A parameter's documentation is the schema's
// description of it. Errors are *SpecError.
func (s ToolSpec) Contract(raw RawTool, registries map[string]string) (*contract.Contract, map[string]AmountFormat, error) {
	var schema struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	_ = json.Unmarshal(raw.InputSchema, &schema) // a schema we cannot read checks nothing
	declared := map[string]bool{}
	for _, p := range s.Params {
		declared[p.Name] = true
	}
	inSchemaRequired := map[string]bool{}
	for _, r := range schema.Required {
		inSchemaRequired[r] = true
		if !declared[r] {
			return nil, nil, &SpecError{Param: r, Msg: fmt.Sprintf("tool %q requires the argument %q: declare it as a parameter (params.%s)", raw.Name, r, r)}
		}
	}
	if s.Action == "" {
		return nil, nil, &SpecError{Msg: "tool needs an action (\"pack.verb\")"}
	}
	amounts := map[string]AmountFormat{}
	var params []contract.Parameter
	for _, ps := range s.Params {
		d, inSchema := schema.Properties[ps.Name]
		if schema.Properties != nil && !inSchema {
			return nil, nil, &SpecError{Param: ps.Name, Msg: fmt.Sprintf("tool %q has no argument %q in its input schema", raw.Name, ps.Name)}
		}
		p, err := ps.parameter(inSchemaRequired[ps.Name], registries)
		if err != nil {
			return nil, nil, err
		}
		if inSchema {
			var doc struct {
				Description string `json:"description"`
			}
			_ = json.Unmarshal(d, &doc)
			p.Doc = doc.Description
		}
		if ps.Type == "amount" {
			if !s.ReadOnly && s.Budget == "" {
				return nil, nil, &SpecError{Param: ps.Name, Field: "type", Msg: fmt.Sprintf("tool %q takes the amount %q but has no budget binding: its payments would bypass the mandate's budget and every amount rule of the policy. Set budget = %q on the tool (or read_only = true if it moves no money)", raw.Name, ps.Name, ps.Name)}
			}
			f, err := ParseAmountFormat(ps.Format)
			if err != nil {
				return nil, nil, &SpecError{Param: ps.Name, Field: "format", Err: err}
			}
			amounts[ps.Name] = f
		}
		params = append(params, p)
	}
	for _, t := range s.Totals {
		for _, by := range t.By {
			for _, ps := range s.Params {
				if ps.Name == by && ps.Sensitive {
					return nil, nil, &SpecError{Param: by, Field: "sensitive", Msg: fmt.Sprintf("total %q is kept by %q, which is sensitive: the store would hold the secret in the total's key. Key the total by another parameter", t.Name, by)}
				}
			}
		}
	}
	ct, err := contract.New(contract.Contract{
		Action: s.Action, Params: params, Budget: s.Budget, ReadOnly: s.ReadOnly, Doc: raw.Description,
		Totals: s.contractTotals(),
	})
	if err != nil {
		return nil, nil, &SpecError{Err: err}
	}
	return ct, amounts, nil
}

// parameter checks ps and returns its contract parameter, without Doc.
func (ps ParamSpec) parameter(required bool, registries map[string]string) (contract.Parameter, error) {
	p := contract.Parameter{Name: ps.Name, Critical: ps.Critical, OnNoMatch: ps.OnNoMatch, Required: required, Sensitive: ps.Sensitive}
	if ps.Required != nil {
		p.Required = *ps.Required
	}
	var err error
	if p.Type, err = ps.paramType(); err != nil {
		return contract.Parameter{}, err
	}
	if ps.Format != "" && ps.Type != "amount" {
		return contract.Parameter{}, ps.fail("format", "format applies to amounts only")
	}
	if ps.Sensitive && ps.Type == "amount" {
		return contract.Parameter{}, ps.fail("sensitive", "an amount cannot be sensitive: budgets, totals and the audit add it up")
	}
	if ps.Normalizer != "" {
		var ok bool
		if p.Normalizer, ok = Normalizer(ps.Normalizer); !ok {
			return contract.Parameter{}, ps.fail("normalizer", "unknown normalizer %q (%s)", ps.Normalizer, NormalizerNames)
		}
	}
	if p.Sources, err = ps.sources(registries); err != nil {
		return contract.Parameter{}, err
	}
	return p, nil
}

// fail returns the *SpecError of ps's field.
func (ps ParamSpec) fail(field, format string, a ...any) error {
	return &SpecError{Param: ps.Name, Field: field, Msg: fmt.Sprintf(format, a...)}
}

// paramType returns the contract type ps.Type and ps.Scale or
// ps.MaxLength name.
func (ps ParamSpec) paramType() (contract.Type, error) {
	switch ps.Type {
	case "", "string":
		return contract.String(ps.MaxLength), nil
	case "amount":
		if ps.Scale < 0 || ps.Scale > 18 {
			return contract.Type{}, ps.fail("scale", "scale must be between 0 and 18")
		}
		return contract.Amount(uint8(ps.Scale)), nil
	case "integer":
		return contract.Integer(), nil
	case "bool":
		return contract.Bool(), nil
	case "date":
		return contract.Date(), nil
	}
	return contract.Type{}, ps.fail("type", "unknown type %q (string, amount, integer, bool, date)", ps.Type)
}

// sources returns the trusted sources of ps: a critical parameter needs
// one at least, another none; each registry must be declared in
// registries with ps's normalizer.
func (ps ParamSpec) sources(registries map[string]string) ([]contract.Source, error) {
	if ps.Critical && len(ps.Sources) == 0 {
		return nil, ps.fail("", "critical parameter %q has no sources: give sources = [\"registry:NAME\"] or [\"mandate:CLAIM\"]", ps.Name)
	}
	if !ps.Critical && len(ps.Sources) > 0 {
		return nil, ps.fail("sources", "parameter %q has sources but is not critical", ps.Name)
	}
	var out []contract.Source
	for _, src := range ps.Sources {
		kind, name, _ := strings.Cut(src, ":")
		switch {
		case kind == "registry" && name != "":
			rn, ok := registries[name]
			if !ok {
				return nil, ps.fail("sources", "unknown registry %q (declare it under [registries.%s])", name, name)
			}
			if rn != ps.Normalizer {
				return nil, ps.fail("normalizer", "parameter %q uses normalizer %q but registry %q normalizes with %q; they must match", ps.Name, ps.Normalizer, name, rn)
			}
			out = append(out, contract.FromRegistry(name))
		case kind == "mandate" && name != "":
			out = append(out, contract.FromMandate(name))
		default:
			return nil, ps.fail("sources", "source %q is not registry:NAME or mandate:CLAIM", src)
		}
	}
	return out, nil
}

// Tool returns the tool the client sees for raw, served by d, whose calls
// propose ct's action (ct as Contract returned it): raw's title and input
// schema byte for byte, s's name and description when set, and a Mirror
// that follows d's changes to the tool, made unavailable when it drops a
// declared or critical parameter.
func (s ToolSpec) Tool(d *Downstream, raw RawTool, ct *contract.Contract) Tool {
	t := Tool{Name: raw.Name, Title: raw.Title, Action: ct.Action, Description: raw.Description, InputSchema: raw.InputSchema, ReadOnly: s.ReadOnly,
		Mirror: &Mirror{Server: d, Tool: raw.Name, Description: s.Description}}
	if s.Name != "" {
		t.Name = s.Name
	}
	if s.Description != "" {
		t.Description = s.Description
	}
	for _, p := range ct.Params {
		t.Mirror.Params = append(t.Mirror.Params, p.Name)
		if p.Critical {
			t.Mirror.Critical = append(t.Mirror.Critical, p.Name)
		}
		if p.Sensitive {
			t.Sensitive = append(t.Sensitive, p.Name)
		}
	}
	return t
}
