package main

import (
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
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
