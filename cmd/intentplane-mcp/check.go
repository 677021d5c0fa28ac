package main

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/resolve/filereg"
)

// checkDecidable proves that the gateway can decide every action of packs:
// each action is declared in its pack's Cedar schema (else every call
// would be refused as undecidable), and a pack whose policy can ask for
// four eyes has at least two page approvers who may approve for owner.
// The proxied tools' pack (named proxied, "" for none) is the operator's:
// its faults are errors at the tool's action key or at the policy's file
// and line. A mounted pack's four-eyes guard without two approvers is a
// warning on warn: its large operations can never be approved. So is the
// ap pack with fewer than three page approvers: a bank-detail change needs
// two of them besides whoever recorded its call-back (see
// docs/approvals.md), so no bank change could ever execute.
func checkDecidable(c *config.Config, packs []gateway.Pack, proxied string, owner intent.Owner, warn io.Writer) error {
	approvers := pageApprovers(c, owner)
	for _, p := range packs {
		if p.Name == ap.Name && approvers < 3 {
			fmt.Fprintf(warn, "intentplane-mcp: warning: pack ap: %s:%d: [[approvals.approvers]]: %d page approver(s) may approve for %s; "+
				"a bank-detail change (ap.change_vendor_bank) needs two approvers other than the person who recorded its call-back, "+
				"so with fewer than three no bank change can ever execute; configure three or more\n", c.Path(), c.Line("approvals"), approvers, owner)
		}
		eng, err := policy.Load(p.Policies)
		if err != nil {
			return c.ErrAt([]string{"policy", "dir"}, "pack %s: %v", p.Name, err)
		}
		known := eng.Actions()
		for _, ct := range p.Contracts {
			if slices.Contains(known, ct.Action) {
				continue
			}
			msg := fmt.Sprintf("action %q is not declared in the policy's schema (it declares: %s): the gateway could not decide any call of it. Add the action to the schema and a policy for it", ct.Action, joinActions(known))
			if p.Name != proxied {
				return fmt.Errorf("pack %s: %s", p.Name, msg)
			}
			return c.ErrAt(toolActionKey(c, ct.Action), "%s", msg)
		}
		if err := checkArgs(c, p, eng, proxied, warn); err != nil {
			return err
		}
		for _, pi := range eng.Policies() {
			if pi.Approval != intent.LevelFourEyes || approvers >= 2 {
				continue
			}
			msg := fmt.Sprintf("policy %q can ask for four eyes, but %d page approver(s) may approve for %s; four eyes needs two different [[approvals.approvers]] (the client's user never counts)", pi.ID, approvers, owner)
			if p.Name != proxied {
				fmt.Fprintf(warn, "intentplane-mcp: warning: pack %s: %s:%d: %s\n", p.Name, pi.File, pi.Line, msg)
				continue
			}
			return &config.Error{File: filepath.Join(c.File(c.Policy.Dir), pi.File), Line: pi.Line, Msg: msg + fmt.Sprintf(" (configured at %s:%d)", c.Path(), c.Line("approvals"))}
		}
	}
	return nil
}

// argFinding is one parameter of a contract that the policy's schema
// makes undecidable in some calls: Param is the parameter ("" for a
// schema attribute no parameter gives), Msg says why and how to fix it.
type argFinding struct{ Param, Msg string }

// argFindings compares the parameters of ct with the attributes of
// context.args the schema declares for its action. The gateway gives the
// policy every argument of a call, and none it omits, so a call is
// undecidable ("the policy could not decide") when it gives an argument
// the schema does not declare or of another type, or omits one the schema
// declares required: an optional parameter that the schema requires (the
// policies reading it are named), or a required attribute that no
// parameter gives. None for an action the schema does not declare
// (checkDecidable reports it) or whose context.args is not a record.
func argFindings(ct *contract.Contract, eng *policy.Engine) []argFinding {
	args, ok := eng.Args(ct.Action)
	if !ok {
		return nil
	}
	var out []argFinding
	for _, p := range ct.Params {
		a, declared := args[p.Name]
		delete(args, p.Name)
		kind := p.Type.Kind()
		if kind == intent.KindAmount {
			kind = intent.KindInt // amounts are Longs in minor units
		}
		switch {
		case !declared:
			out = append(out, argFinding{p.Name, fmt.Sprintf("parameter %q is not in the schema's context.args of %s, so every call giving it is refused as undecidable: declare it there (%s%s: %s)",
				p.Name, ct.Action, p.Name, optionalMark(p.Required), cedarType(kind))})
		case a.Kind != kind:
			out = append(out, argFinding{p.Name, fmt.Sprintf("parameter %q is %s, but the schema's context.args.%s of %s is not %s, so every call giving it is refused as undecidable: declare it %s: %s",
				p.Name, p.Type, p.Name, ct.Action, cedarType(kind), p.Name, cedarType(kind))})
		case a.Required && !p.Required:
			out = append(out, argFinding{p.Name, optionalRequired(ct.Action, p.Name, kind, eng.Reading(ct.Action, p.Name))})
		}
	}
	for _, name := range config.SortedKeys(args) {
		if args[name].Required {
			out = append(out, argFinding{"", fmt.Sprintf("the schema requires context.args.%s of %s, which no parameter gives, so every call is refused as undecidable: remove it from the schema, or declare the parameter", name, ct.Action)})
		}
	}
	return out
}

// optionalRequired is the finding of the optional parameter name, of kind
// kind, that the schema requires and the policies readers read.
func optionalRequired(action intent.Action, name string, kind intent.Kind, readers []policy.Info) string {
	who := "no policy reads it, but the schema still requires it"
	if len(readers) > 0 {
		var ps []string
		for _, r := range readers {
			ps = append(ps, fmt.Sprintf("policy %q (%s:%d)", r.ID, r.File, r.Line))
		}
		who = strings.Join(ps, ", ") + " reads it"
	}
	return fmt.Sprintf("parameter %q is optional (the tool may omit it), but the schema requires context.args.%s of %s, so every call without it is refused as undecidable; %s. "+
		"Make the parameter required (required = true), or declare it optional in the schema (%s?: %s) and guard each read with `context.args has %s`",
		name, name, action, who, name, cedarType(kind), name)
}

// optionalMark is "?" for a parameter that is not required.
func optionalMark(required bool) string {
	if required {
		return ""
	}
	return "?"
}

// cedarType names the Cedar type an argument of kind k is given as.
func cedarType(k intent.Kind) string {
	switch k {
	case intent.KindInt:
		return "Long"
	case intent.KindBool:
		return "Bool"
	}
	return "String"
}

// checkArgs reports argFindings of p's contracts: for the proxied tools'
// pack as errors at the parameter's key (or the tool's action), for a
// mounted pack as warnings on warn.
func checkArgs(c *config.Config, p gateway.Pack, eng *policy.Engine, proxied string, warn io.Writer) error {
	var errs []error
	for _, ct := range p.Contracts {
		for _, f := range argFindings(ct, eng) {
			if p.Name != proxied {
				fmt.Fprintf(warn, "intentplane-mcp: warning: pack %s: %s\n", p.Name, f.Msg)
				continue
			}
			at := toolActionKey(c, ct.Action)
			if f.Param != "" && len(at) == 3 {
				at = []string{"tools", at[1], "params", f.Param}
			}
			errs = append(errs, c.ErrAt(at, "%s", f.Msg))
		}
	}
	return errors.Join(errs...)
}

// checkScales refuses a proxied tool whose budget amount is read with
// another scale than the minor unit of the mandate's budget currency
// (scale = 2 under a JPY budget): the gateway would refuse every call of
// it (ScaleMismatch). Tools paying in a record's currency
// (BudgetCurrency) are checked per call.
func checkScales(c *config.Config, packs []gateway.Pack, proxied string, budget intent.Money) error {
	for _, p := range packs {
		if p.Name != proxied {
			continue
		}
		for _, ct := range p.Contracts {
			if ct.Budget == "" || ct.BudgetCurrency != "" {
				continue
			}
			for _, prm := range ct.Params {
				if prm.Name != ct.Budget || prm.Type.Kind() != intent.KindAmount || int(prm.Type.Scale()) == budget.Exponent() {
					continue
				}
				at := toolActionKey(c, ct.Action)
				if len(at) == 3 {
					at = []string{"tools", at[1], "params", prm.Name, "scale"}
				}
				return c.ErrAt(at, "the amount %q is read with %d decimals, but the mandate's budget is in %s, which has %d (ISO 4217): every call would be refused. Set scale = %d",
					prm.Name, prm.Type.Scale(), budget.Currency, budget.Exponent(), budget.Exponent())
			}
		}
	}
	return nil
}

// pageApprovers counts the page approvers who may approve for owner.
func pageApprovers(c *config.Config, owner intent.Owner) int {
	names := map[string]bool{}
	for _, a := range c.Approvals.Approvers {
		if len(a.Owners) == 0 || slices.Contains(a.Owners, string(owner)) {
			names[a.Name] = true
		}
	}
	return len(names)
}

// toolActionKey is the key path of the [tools] entry declaring action.
func toolActionKey(c *config.Config, action intent.Action) []string {
	for _, key := range config.Ordered(c, []string{"tools"}, c.Tools) {
		if intent.Action(c.Tools[key].Action) == action {
			return []string{"tools", key, "action"}
		}
	}
	return []string{"tools"}
}

func joinActions(as []intent.Action) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = string(a)
	}
	return strings.Join(s, ", ")
}

// warnRegistries warns on warn about each registry with no record for
// owner: every critical value looked up there would match nothing.
func warnRegistries(c *config.Config, regs map[string]*filereg.Registry, owner intent.Owner, warn io.Writer) {
	for _, name := range config.Ordered(c, []string{"registries"}, c.Registries) {
		if r := regs[name]; r != nil && !r.Has(owner) {
			fmt.Fprintf(warn, "intentplane-mcp: warning: %s:%d: registry %q (%s) has no record for the mandate's owner %q: every value looked up there will match nothing\n",
				c.Path(), c.Line("registries", name), name, c.File(c.Registries[name].File), owner)
		}
	}
}
