package policy

// This is the only file of the module that imports cedar-go's x/exp
// packages (ast, schema, schema/resolved, schema/validate). cedar-go
// exempts them from semantic versioning ("Caveat emptor", x/exp/README.md),
// so go.mod pins cedar-go exactly (v1.9.1) and everything that depends on
// their API is here: parsing and resolving the schema, strict validation of
// policies and requests, and the syntax-tree reading behind Mutants. On a
// cedar-go upgrade this file is what may break; go test ./core/policy/...
// ./policies says whether it did. arch_test.go keeps x/exp out of every
// other file.

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	cast "github.com/cedar-policy/cedar-go/ast"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/cedar-policy/cedar-go/x/exp/schema"
	"github.com/cedar-policy/cedar-go/x/exp/schema/resolved"
	"github.com/cedar-policy/cedar-go/x/exp/schema/validate"

	"github.com/intentplane/intentplane/core/intent"
)

// validator validates policies and requests against a pack's schema in
// strict mode.
type validator = validate.Validator

// newValidator loads the schema file name of fsys and returns its
// validator, its actions (see schemaActions) and the attributes of each
// action's context.args (see schemaArgs).
func newValidator(fsys fs.FS, name string) (*validator, []intent.Action, map[intent.Action]map[string]Arg, error) {
	rs, err := loadSchema(fsys, name)
	if err != nil {
		return nil, nil, nil, err
	}
	actions, err := schemaActions(rs, name)
	if err != nil {
		return nil, nil, nil, err
	}
	return validate.New(rs, validate.WithStrict()), actions, schemaArgs(rs), nil
}

// schemaArgs returns, per action of the request convention whose context
// has an args record, that record's attributes.
func schemaArgs(rs *resolved.Schema) map[intent.Action]map[string]Arg {
	out := map[intent.Action]map[string]Arg{}
	for uid, a := range rs.Actions {
		if uid.Type != actionType || a.AppliesTo == nil {
			continue
		}
		rec, ok := a.AppliesTo.Context[keyArgs].Type.(resolved.RecordType)
		if !ok {
			continue
		}
		args := make(map[string]Arg, len(rec))
		for name, attr := range rec {
			args[string(name)] = Arg{Kind: attrKind(attr.Type), Required: !attr.Optional}
		}
		out[intent.Action(uid.ID)] = args
	}
	return out
}

// attrKind is the intent.Kind a value of Cedar type t is given as: String
// for String, Int for Long (integers and amounts), Bool for Bool; 0 for
// any other type, which no argument converts to.
func attrKind(t resolved.IsType) intent.Kind {
	switch t.(type) {
	case resolved.StringType:
		return intent.KindString
	case resolved.LongType:
		return intent.KindInt
	case resolved.BoolType:
		return intent.KindBool
	}
	return 0
}

// Reading returns the policies that may apply to action (their action
// scope names it, or is not limited to listed actions) and whose
// conditions mention context.args.arg, reading it or testing it with
// has, in file and line order.
func (e *Engine) Reading(action intent.Action, arg string) []Info {
	var out []Info
	uid := types.NewEntityUID(actionType, types.String(action))
	for _, l := range e.policies {
		p := (*xast.Policy)(l.policy.AST())
		if acts := scopeActions(p); acts != nil && !slices.Contains(acts, uid) {
			continue
		}
		if mentionsArg(p, arg) {
			out = append(out, l.info)
		}
	}
	return out
}

// mentionsArg reports whether a condition of p reads context.args.arg or
// tests context.args has arg.
func mentionsArg(p *xast.Policy, arg string) bool {
	found := false
	for _, c := range p.Conditions {
		xast.Inspect(xast.NewNode(c.Body), func(n xast.IsNode) bool {
			var op xast.StrOpNode
			switch x := n.(type) {
			case xast.NodeTypeAccess:
				op = x.StrOpNode
			case xast.NodeTypeHas:
				op = x.StrOpNode
			default:
				return !found
			}
			if string(op.Value) == arg && isArgs(op.Arg) {
				found = true
			}
			return !found
		})
	}
	return found
}

// isArgs reports whether n is context.args.
func isArgs(n xast.IsNode) bool {
	a, ok := n.(xast.NodeTypeAccess)
	return ok && a.Value == keyArgs && isVar(a.Arg, "context")
}

// validatePolicy validates p, whose @id is id, against the schema.
func validatePolicy(v *validator, id string, p *cedar.Policy) error {
	return v.Policy(id, (*xast.Policy)(p.AST()))
}

// loadSchema parses and resolves the Cedar schema file name.
func loadSchema(fsys fs.FS, name string) (*resolved.Schema, error) {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return nil, &LoadError{File: name, Msg: err.Error()}
	}
	var s schema.Schema
	s.SetFilename(name)
	if err := s.UnmarshalCedar(b); err != nil {
		return nil, positioned(name, err.Error())
	}
	rs, err := s.Resolve()
	if err != nil {
		return nil, &LoadError{File: name, Msg: err.Error()}
	}
	return rs, nil
}

// schemaActions lists the actions of the request convention declared in
// the schema, sorted, and checks they apply to Owner and Resource.
func schemaActions(rs *resolved.Schema, file string) ([]intent.Action, error) {
	var actions []intent.Action
	for uid, a := range rs.Actions {
		if uid.Type != actionType || a.AppliesTo == nil {
			continue
		}
		if !slices.Contains(a.AppliesTo.Principals, ownerType) {
			return nil, &LoadError{File: file, Msg: fmt.Sprintf("action %q does not apply to principal type %s", uid.ID, ownerType)}
		}
		if !slices.Contains(a.AppliesTo.Resources, resourceType) {
			return nil, &LoadError{File: file, Msg: fmt.Sprintf("action %q does not apply to resource type %s", uid.ID, resourceType)}
		}
		actions = append(actions, intent.Action(uid.ID))
	}
	if len(actions) == 0 {
		return nil, &LoadError{File: file, Msg: "the schema declares no action"}
	}
	slices.Sort(actions)
	return actions, nil
}

// Mutant is one syntactic weakening of one policy of an Engine: the
// policy removed, or one of its conditions removed. A condition is a when
// or unless clause; when a when clause is a conjunction (a && b) or an
// unless clause a disjunction (a || b), each of its operands is also
// removed on its own. [Engine.Mutants] lists them, [Engine.Apply] builds
// the mutated Engine; package policytest runs a pack's corpus on each.
type Mutant struct {
	// ID names the mutant: "<policy>:remove", "<policy>:cond<i>" (the i-th
	// when/unless clause removed, from 1) or "<policy>:cond<i>.<j>" (the
	// j-th operand of that clause removed).
	ID string
	// Description says what was changed, in Cedar terms.
	Description string
	// PolicyID is the @id of the policy that was changed.
	PolicyID string

	index       int          // in Engine.policies
	replacement *xast.Policy // nil: the policy is removed
	// For a removed condition: the clause index and, for an operand of a
	// clause, the operand's index (-1 for the whole clause).
	clause, operand int
}

// Mutants lists the mutants of e: (1) each forbid that is not an approval
// guard, removed; (2) each approval guard, removed; (3) each condition of
// each permit, removed; (4) each condition of each forbid and guard,
// removed; within each group in file and line order.
func (e *Engine) Mutants() []Mutant {
	var forbids, guards, permitConds, forbidConds []Mutant
	for i, l := range e.policies {
		p := (*xast.Policy)(l.policy.AST())
		id := l.info.ID
		switch {
		case l.info.Effect == "permit":
		case l.info.Guard():
			guards = append(guards, Mutant{ID: id + ":remove", PolicyID: id, index: i,
				Description: fmt.Sprintf("remove approval guard %q (%s)", id, l.info.Approval)})
		default:
			forbids = append(forbids, Mutant{ID: id + ":remove", PolicyID: id, index: i,
				Description: fmt.Sprintf("remove forbid %q", id)})
		}
		var conds []Mutant
		for ci, c := range p.Conditions {
			conds = append(conds, Mutant{
				ID: fmt.Sprintf("%s:cond%d", id, ci+1), PolicyID: id, index: i,
				Description: fmt.Sprintf("drop %q from %s %q", conditionText(c), l.info.Effect, id),
				replacement: withConditions(p, slices.Delete(slices.Clone(p.Conditions), ci, ci+1)),
				clause:      ci, operand: -1,
			})
			ops := operands(c)
			if len(ops) < 2 {
				continue
			}
			for oi := range ops {
				rest := slices.Delete(slices.Clone(ops), oi, oi+1)
				conds2 := slices.Clone(p.Conditions)
				conds2[ci] = xast.ConditionType{Condition: c.Condition, Body: rejoin(c.Condition, rest)}
				conds = append(conds, Mutant{
					ID: fmt.Sprintf("%s:cond%d.%d", id, ci+1, oi+1), PolicyID: id, index: i,
					Description: fmt.Sprintf("drop %q from %q of %s %q", nodeText(ops[oi]), conditionText(c), l.info.Effect, id),
					replacement: withConditions(p, conds2),
					clause:      ci, operand: oi,
				})
			}
		}
		if l.info.Effect == "permit" {
			permitConds = append(permitConds, conds...)
		} else {
			forbidConds = append(forbidConds, conds...)
		}
	}
	return slices.Concat(forbids, guards, permitConds, forbidConds)
}

// Apply returns a copy of e with the mutant m applied, or the validator's
// error if the mutated policy no longer validates against the schema. e is
// not changed.
func (e *Engine) Apply(m Mutant) (*Engine, error) {
	ps := slices.Clone(e.policies)
	if m.replacement == nil {
		ps = slices.Delete(ps, m.index, m.index+1)
		return e.withPolicies(ps), nil
	}
	if err := e.validator.Policy(m.PolicyID, m.replacement); err != nil {
		return nil, errors.New(joinLines(err.Error()))
	}
	ps[m.index].policy = cedar.NewPolicyFromAST((*cast.Policy)(m.replacement))
	return e.withPolicies(ps), nil
}

func withConditions(p *xast.Policy, conds []xast.ConditionType) *xast.Policy {
	np := *p
	np.Conditions = conds
	return &np
}

// operands splits a when clause at its top-level && and an unless clause
// at its top-level ||: removing one operand weakens the clause.
func operands(c xast.ConditionType) []xast.IsNode {
	var out []xast.IsNode
	var walk func(n xast.IsNode)
	walk = func(n xast.IsNode) {
		switch v := n.(type) {
		case xast.NodeTypeAnd:
			if c.Condition == xast.ConditionWhen {
				walk(v.Left)
				walk(v.Right)
				return
			}
		case xast.NodeTypeOr:
			if c.Condition == xast.ConditionUnless {
				walk(v.Left)
				walk(v.Right)
				return
			}
		}
		out = append(out, n)
	}
	walk(c.Body)
	return out
}

// rejoin is the inverse of operands.
func rejoin(cond xast.Condition, ops []xast.IsNode) xast.IsNode {
	n := xast.NewNode(ops[0])
	for _, o := range ops[1:] {
		if cond == xast.ConditionWhen {
			n = n.And(xast.NewNode(o))
		} else {
			n = n.Or(xast.NewNode(o))
		}
	}
	return n.AsIsNode()
}

// conditionText renders a clause as Cedar, e.g. "when { context.amount > 100 }".
func conditionText(c xast.ConditionType) string {
	p := &xast.Policy{Effect: xast.EffectPermit, Principal: xast.ScopeTypeAll{}, Action: xast.ScopeTypeAll{},
		Resource: xast.ScopeTypeAll{}, Conditions: []xast.ConditionType{c}}
	text := string(cedar.NewPolicyFromAST((*cast.Policy)(p)).MarshalCedar())
	if i := strings.Index(text, ")\n"); i >= 0 {
		text = text[i+2:]
	}
	return strings.Join(strings.Fields(strings.TrimSuffix(strings.TrimSpace(text), ";")), " ")
}

// nodeText renders an expression as Cedar.
func nodeText(n xast.IsNode) string {
	t := conditionText(xast.ConditionType{Condition: xast.ConditionWhen, Body: n})
	return strings.TrimSuffix(strings.TrimPrefix(t, "when { "), " }")
}

// literal is one operand of a policy's conditions in normal form: a when
// operand, or the negation of an unless operand.
type literal struct {
	negated bool
	node    xast.IsNode
}

func literals(p *xast.Policy) []literal {
	var out []literal
	for _, c := range p.Conditions {
		for _, o := range operands(c) {
			out = append(out, literal{negated: c.Condition == xast.ConditionUnless, node: o})
		}
	}
	return out
}

func (l literal) equal(m literal) bool {
	return l.negated == m.negated && xast.Equal(xast.NewNode(l.node), xast.NewNode(m.node))
}

// EquivalentBySyntax returns why the mutant m cannot change a decision,
// or "" if it finds no syntactic reason: a removed condition implied by
// the policy's scope or repeated in its other conditions, or a removed
// forbid that another forbid with the same or a wider scope and a subset
// of its conditions covers.
func (e *Engine) EquivalentBySyntax(m Mutant) string {
	orig := (*xast.Policy)(e.policies[m.index].policy.AST())
	if m.replacement == nil {
		return e.coveredForbid(m.index)
	}
	c := orig.Conditions[m.clause]
	removed := []literal{}
	neg := c.Condition == xast.ConditionUnless
	if m.operand >= 0 {
		removed = append(removed, literal{negated: neg, node: operands(c)[m.operand]})
	} else {
		for _, o := range operands(c) {
			removed = append(removed, literal{negated: neg, node: o})
		}
	}
	kept := literals(m.replacement)
	allKept, allScope := true, true
	for _, r := range removed {
		if !slices.ContainsFunc(kept, r.equal) {
			allKept = false
		}
		if !impliedByScope(orig, r) {
			allScope = false
		}
	}
	switch {
	case allScope:
		return "the removed condition is implied by the scope"
	case allKept:
		return "the removed condition is repeated in the policy's other conditions"
	}
	return ""
}

// coveredForbid returns why removing the forbid at index i changes no
// decision: another forbid with the same or a wider scope and a subset of
// its conditions matches whenever it does, and denies at least as hard.
func (e *Engine) coveredForbid(i int) string {
	f := e.policies[i]
	fp := (*xast.Policy)(f.policy.AST())
	fl := literals(fp)
	for j, g := range e.policies {
		if j == i || g.info.Effect != "forbid" {
			continue
		}
		// A guard covers only a guard of the same or a lower level.
		if g.info.Guard() && (!f.info.Guard() || g.info.Approval.Rank() < f.info.Approval.Rank()) {
			continue
		}
		gp := (*xast.Policy)(g.policy.AST())
		if !scopeCovers(gp, fp) {
			continue
		}
		covers := true
		for _, l := range literals(gp) {
			if !slices.ContainsFunc(fl, l.equal) {
				covers = false
				break
			}
		}
		if covers {
			return fmt.Sprintf("another forbid with a superset condition denies the same requests (%q)", g.info.ID)
		}
	}
	return ""
}

// scopeCovers reports whether g's scope contains f's.
func scopeCovers(g, f *xast.Policy) bool {
	if _, all := g.Principal.(xast.ScopeTypeAll); !all && !scopeEqual(g.Principal, f.Principal) {
		return false
	}
	if _, all := g.Resource.(xast.ScopeTypeAll); !all && !scopeEqual(g.Resource, f.Resource) {
		return false
	}
	ga, fa := scopeActions(g), scopeActions(f)
	if ga == nil {
		return true
	}
	if fa == nil {
		return false
	}
	for _, a := range fa {
		if !slices.Contains(ga, a) {
			return false
		}
	}
	return true
}

func scopeEqual(a, b xast.IsScopeNode) bool {
	switch a := a.(type) {
	case xast.ScopeTypeEq:
		b, ok := b.(xast.ScopeTypeEq)
		return ok && a.Entity == b.Entity
	case xast.ScopeTypeIs:
		b, ok := b.(xast.ScopeTypeIs)
		return ok && a.Type == b.Type
	}
	return false
}

// scopeActions returns the actions a policy's action scope is limited to
// by == or in [...]; nil means any action (or a scope it does not read).
func scopeActions(p *xast.Policy) []types.EntityUID {
	switch s := p.Action.(type) {
	case xast.ScopeTypeEq:
		return []types.EntityUID{s.Entity}
	case xast.ScopeTypeInSet:
		return s.Entities
	}
	return nil
}

// impliedByScope reports whether a removed operand is always true for the
// requests the policy's scope admits: "action == A" or "action in [A, B]"
// under a scope limited to those actions, or the literal true (false for
// an unless operand).
func impliedByScope(p *xast.Policy, l literal) bool {
	if v, ok := l.node.(xast.NodeValue); ok {
		b, isBool := v.Value.(types.Boolean)
		return isBool && bool(b) != l.negated
	}
	if l.negated {
		return false
	}
	acts := scopeActions(p)
	if acts == nil {
		return false
	}
	allowed := actionsAllowed(l.node)
	if len(allowed) == 0 {
		return false
	}
	for _, a := range acts {
		if !slices.Contains(allowed, a) {
			return false
		}
	}
	return true
}

// actionsAllowed returns the actions an operand "action == A" or
// "action in [A, B]" (or "action in A") admits, or nil for any other
// operand.
func actionsAllowed(node xast.IsNode) []types.EntityUID {
	uid := func(n xast.IsNode) (types.EntityUID, bool) {
		v, ok := n.(xast.NodeValue)
		if !ok {
			return types.EntityUID{}, false
		}
		u, ok := v.Value.(types.EntityUID)
		return u, ok
	}
	var allowed []types.EntityUID
	switch n := node.(type) {
	case xast.NodeTypeEquals:
		if u, ok := uid(n.Right); ok && isVar(n.Left, "action") {
			allowed = []types.EntityUID{u}
		}
	case xast.NodeTypeIn:
		if !isVar(n.Left, "action") {
			return nil
		}
		if set, ok := n.Right.(xast.NodeTypeSet); ok {
			for _, el := range set.Elements {
				if u, ok := uid(el); ok {
					allowed = append(allowed, u)
				}
			}
		} else if u, ok := uid(n.Right); ok {
			allowed = []types.EntityUID{u}
		}
	}
	return allowed
}

func isVar(n xast.IsNode, name string) bool {
	v, ok := n.(xast.NodeTypeVariable)
	return ok && string(v.Name) == name
}

// Literals returns the Long and String literals of the conditions of all
// policies, each sorted; the Longs always include 0.
func (e *Engine) Literals() (longs []int64, strs []string) {
	longSet := map[int64]bool{0: true}
	strSet := map[string]bool{}
	for _, l := range e.policies {
		for _, c := range (*xast.Policy)(l.policy.AST()).Conditions {
			xast.Inspect(xast.NewNode(c.Body), func(n xast.IsNode) bool {
				if v, ok := n.(xast.NodeValue); ok {
					switch x := v.Value.(type) {
					case types.Long:
						longSet[int64(x)] = true
					case types.String:
						strSet[string(x)] = true
					}
				}
				return true
			})
		}
	}
	return slices.Sorted(maps.Keys(longSet)), slices.Sorted(maps.Keys(strSet))
}
