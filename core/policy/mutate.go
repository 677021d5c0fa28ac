package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	cast "github.com/cedar-policy/cedar-go/ast"
	"github.com/cedar-policy/cedar-go/types"
	xast "github.com/cedar-policy/cedar-go/x/exp/ast"
	"github.com/intentplane/intentplane/core/intent"
)

// MutationReport is the result of [Mutate]: one entry per mutant, in the
// order the policies appear in their files.
type MutationReport struct {
	Mutants []MutantResult
	// Requests is how many generated requests the equivalence check
	// compared each survivor on.
	Requests int
}

// MutantResult is what became of one mutant.
type MutantResult struct {
	// ID names the mutant: "<policy>:remove", "<policy>:cond<i>" (the i-th
	// when/unless clause removed, from 1) or "<policy>:cond<i>.<j>" (the
	// j-th conjunct of a when clause, or disjunct of an unless clause,
	// removed).
	ID string
	// Description says what was changed, in Cedar terms.
	Description string
	// PolicyID is the @id of the policy that was changed.
	PolicyID string
	// Killed reports whether some test failed on the mutant, or the
	// mutant no longer validates against the schema.
	Killed bool
	// KilledBy is the name of the first failing test, or "schema
	// validation: ..." for a mutant the validator rejects; "" if the
	// mutant survived.
	KilledBy string
	// Equivalent reports, for a survivor, that the mutant cannot (or very
	// likely cannot) change any decision, so no test can kill it.
	Equivalent bool
	// Why explains Equivalent, or for a survivor that is not equivalent,
	// shows a generated request on which the mutant decides differently:
	// a test to add.
	Why string
}

// Survivors returns the mutants no test killed, equivalent or not. The
// ones with Equivalent false are the gaps in the corpus.
func (r *MutationReport) Survivors() []MutantResult {
	var out []MutantResult
	for _, m := range r.Mutants {
		if !m.Killed {
			out = append(out, m)
		}
	}
	return out
}

// Mutate checks how well a pack's decision corpus pins down its policy.
// fsys is one pack directory (policy, schema and tests/). It loads the pack
// and runs its tests, which must all pass, then builds mutants one at a
// time from the policies' syntax trees:
//
//  1. each forbid that is not an approval guard, removed;
//  2. each approval guard, removed;
//  3. each condition of each permit, removed;
//  4. each condition of each forbid and guard, removed.
//
// A condition is a when or unless clause; when a when clause is a
// conjunction (a && b) or an unless clause a disjunction (a || b), each of
// its operands is also removed on its own. Every mutant is run against the
// corpus: it is killed when a test fails (or when it no longer validates
// against the schema) and survives otherwise.
//
// For each survivor Mutate looks for a reason it is equivalent to the
// original: a removed condition implied by the policy's scope or repeated
// in it, or a removed forbid that another forbid covers. Failing that, it
// compares mutant and original on requests generated from the tests by
// setting numbers to every integer literal of the policies and ±1 around
// it, strings to every string literal, flipping booleans and trying every
// action of the schema. No difference means "likely equivalent"; a
// difference is reported as the request that shows it.
//
// Mutate returns an error if the pack does not load, has no tests, or a
// test fails on the original policy.
func Mutate(fsys fs.FS) (*MutationReport, error) {
	e, err := Load(fsys)
	if err != nil {
		return nil, err
	}
	cases, err := LoadTests(fsys)
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, errors.New("policy: the pack has no tests (tests/*.json)")
	}
	if fails := e.RunTests(cases); len(fails) > 0 {
		msgs := make([]string, len(fails))
		for i, f := range fails {
			msgs[i] = f.String()
		}
		return nil, fmt.Errorf("policy: %d test(s) fail on the original policy:\n%s", len(fails), strings.Join(msgs, "\n"))
	}

	var gen []generated // built on the first survivor
	report := &MutationReport{}
	for _, m := range e.mutants() {
		res := MutantResult{ID: m.id, Description: m.desc, PolicyID: m.policyID}
		mutantEngine, err := e.mutantEngine(m)
		if err != nil {
			res.Killed, res.KilledBy = true, "schema validation: "+err.Error()
			report.Mutants = append(report.Mutants, res)
			continue
		}
		if fails := mutantEngine.RunTests(cases); len(fails) > 0 {
			res.Killed, res.KilledBy = true, fails[0].Case.Name
			report.Mutants = append(report.Mutants, res)
			continue
		}
		if why := e.equivalentBySyntax(m); why != "" {
			res.Equivalent, res.Why = true, why
			report.Mutants = append(report.Mutants, res)
			continue
		}
		if gen == nil {
			gen = e.generate(cases)
			report.Requests = len(gen)
		}
		res.Equivalent, res.Why = compareOn(mutantEngine, gen)
		report.Mutants = append(report.Mutants, res)
	}
	return report, nil
}

// mutant is one change to one policy: the policy removed (replacement
// nil), or replaced by a policy with fewer conditions.
type mutant struct {
	id, desc, policyID string
	index              int          // in Engine.policies
	replacement        *xast.Policy // nil: the policy is removed
	// For a removed condition: the clause index and, for an operand of a
	// clause, the operand's index (-1 for the whole clause).
	clause, operand int
}

// mutants lists the mutants of e in the order of the package doc.
func (e *Engine) mutants() []mutant {
	var forbids, guards, permitConds, forbidConds []mutant
	for i, l := range e.policies {
		p := (*xast.Policy)(l.policy.AST())
		id := l.info.ID
		switch {
		case l.info.Effect == "permit":
		case l.info.Guard():
			guards = append(guards, mutant{id: id + ":remove", policyID: id, index: i,
				desc: fmt.Sprintf("remove approval guard %q (%s)", id, l.info.Approval)})
		default:
			forbids = append(forbids, mutant{id: id + ":remove", policyID: id, index: i,
				desc: fmt.Sprintf("remove forbid %q", id)})
		}
		var conds []mutant
		for ci, c := range p.Conditions {
			conds = append(conds, mutant{
				id: fmt.Sprintf("%s:cond%d", id, ci+1), policyID: id, index: i,
				desc:        fmt.Sprintf("drop %q from %s %q", conditionText(c), l.info.Effect, id),
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
				conds = append(conds, mutant{
					id: fmt.Sprintf("%s:cond%d.%d", id, ci+1, oi+1), policyID: id, index: i,
					desc:        fmt.Sprintf("drop %q from %q of %s %q", nodeText(ops[oi]), conditionText(c), l.info.Effect, id),
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

// mutantEngine builds the Engine of a mutant, or returns the validator's
// error if the mutated policy is no longer valid.
func (e *Engine) mutantEngine(m mutant) (*Engine, error) {
	ps := slices.Clone(e.policies)
	if m.replacement == nil {
		ps = slices.Delete(ps, m.index, m.index+1)
		return e.withPolicies(ps), nil
	}
	if err := e.validator.Policy(m.policyID, m.replacement); err != nil {
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

// equivalentBySyntax returns why the mutant m cannot change a decision, or
// "" if it finds no syntactic reason.
func (e *Engine) equivalentBySyntax(m mutant) string {
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
	var allowed []types.EntityUID
	switch n := l.node.(type) {
	case xast.NodeTypeEquals:
		if !isVar(n.Left, "action") {
			return false
		}
		if v, ok := n.Right.(xast.NodeValue); ok {
			if uid, ok := v.Value.(types.EntityUID); ok {
				allowed = []types.EntityUID{uid}
			}
		}
	case xast.NodeTypeIn:
		if !isVar(n.Left, "action") {
			return false
		}
		switch r := n.Right.(type) {
		case xast.NodeTypeSet:
			for _, el := range r.Elements {
				if v, ok := el.(xast.NodeValue); ok {
					if uid, ok := v.Value.(types.EntityUID); ok {
						allowed = append(allowed, uid)
					}
				}
			}
		case xast.NodeValue:
			if uid, ok := r.Value.(types.EntityUID); ok {
				allowed = []types.EntityUID{uid}
			}
		}
	}
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

func isVar(n xast.IsNode, name string) bool {
	v, ok := n.(xast.NodeTypeVariable)
	return ok && string(v.Name) == name
}

// generated is one request of the equivalence check, with how it was made.
type generated struct {
	req  Request
	desc string
	want Result // the original engine's result
}

// maxGenerated bounds the requests of the equivalence check.
const maxGenerated = 50000

// generate derives requests from the test cases: every single change of a
// number to a policy literal or ±1 around it, of a string to a policy
// string literal, each combined with no or one boolean flip, for every
// action of the schema. Requests the original engine cannot evaluate (a
// context that does not fit the action) are dropped.
func (e *Engine) generate(cases []TestCase) []generated {
	longs, strs := e.policyLiterals()
	nums := around(longs)
	var out []generated
	add := func(r Request, desc string) bool {
		if len(out) >= maxGenerated {
			return false
		}
		if res := e.Evaluate(r); len(res.Errors) == 0 {
			out = append(out, generated{req: r, desc: desc, want: res})
		}
		return true
	}
	for _, c := range cases {
		base := c.Context
		type variant struct {
			ctx  Standard
			desc string
		}
		variants := []variant{{base, fmt.Sprintf("the context of test %q", c.Name)}}
		var bools []leaf
		for _, l := range leaves(base) {
			switch l.value.Kind {
			case intent.KindInt, intent.KindAmount:
				for _, n := range nums {
					if n != l.value.Int {
						v := l.value
						v.Int = n
						variants = append(variants, variant{with(base, l.path, v), fmt.Sprintf("the context of test %q with context.%s=%d", c.Name, l.path, n)})
					}
				}
			case intent.KindString:
				for _, str := range strs {
					if str != l.value.Str {
						variants = append(variants, variant{with(base, l.path, intent.Str(str)), fmt.Sprintf("the context of test %q with context.%s=%s", c.Name, l.path, str)})
					}
				}
			case intent.KindBool:
				bools = append(bools, l)
			}
		}
		for _, v := range variants {
			flips := []variant{v}
			for _, b := range bools {
				cur := lookup(v.ctx, b.path).Bool
				flips = append(flips, variant{with(v.ctx, b.path, intent.Bool(!cur)), fmt.Sprintf("%s, context.%s=%t", v.desc, b.path, !cur)})
			}
			for _, f := range flips {
				for _, a := range e.actions {
					ctx := f.ctx
					r := Request{Principal: intent.Owner(c.Principal), Action: a, Resource: c.Resource, Standard: &ctx}
					if !add(r, fmt.Sprintf("%s on %s", a, f.desc)) {
						return out
					}
				}
			}
		}
	}
	return out
}

// around returns each literal and its neighbours, without overflowing.
func around(longs []int64) []int64 {
	set := map[int64]bool{}
	for _, l := range longs {
		set[l] = true
		if l > math.MinInt64 {
			set[l-1] = true
		}
		if l < math.MaxInt64 {
			set[l+1] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// leaf is a scalar of a context with its path ("amount",
// "approval.confirm", "args.<name>", ...); every scalar is an intent.Value.
type leaf struct {
	path  string
	value intent.Value
}

// leaves lists the scalars of s in the order of their paths.
func leaves(s Standard) []leaf {
	out := []leaf{
		{"amount", intent.Int(int64(s.Amount))},
		{"approval.confirm", intent.Bool(s.Confirm)},
		{"approval.four_eyes", intent.Bool(s.FourEyes)},
	}
	for _, k := range slices.Sorted(maps.Keys(s.Args)) {
		out = append(out, leaf{"args." + k, s.Args[k]})
	}
	for _, k := range slices.Sorted(maps.Keys(s.Facts)) {
		out = append(out, leaf{"facts." + k, s.Facts[k]})
	}
	return append(out, leaf{"mandate.mode", intent.Str(s.Mode)})
}

// lookup returns the scalar of s at path.
func lookup(s Standard, path string) intent.Value {
	for _, l := range leaves(s) {
		if l.path == path {
			return l.value
		}
	}
	return intent.Value{}
}

// with returns s with the scalar at path replaced by v; s is not changed.
func with(s Standard, path string, v intent.Value) Standard {
	switch path {
	case "amount":
		s.Amount = intent.Amount(v.Int)
	case "approval.confirm":
		s.Confirm = v.Bool
	case "approval.four_eyes":
		s.FourEyes = v.Bool
	case "mandate.mode":
		s.Mode = v.Str
	default:
		section, key, _ := strings.Cut(path, ".")
		if section == "args" {
			s.Args = maps.Clone(s.Args)
			s.Args[key] = v
		} else {
			s.Facts = maps.Clone(s.Facts)
			s.Facts[key] = v
		}
	}
	return s
}

// policyLiterals collects the Long and String literals of all conditions.
func (e *Engine) policyLiterals() ([]int64, []string) {
	longs := map[int64]bool{0: true}
	strs := map[string]bool{}
	for _, l := range e.policies {
		for _, c := range (*xast.Policy)(l.policy.AST()).Conditions {
			xast.Inspect(xast.NewNode(c.Body), func(n xast.IsNode) bool {
				if v, ok := n.(xast.NodeValue); ok {
					switch x := v.Value.(type) {
					case types.Long:
						longs[int64(x)] = true
					case types.String:
						strs[string(x)] = true
					}
				}
				return true
			})
		}
	}
	return slices.Sorted(maps.Keys(longs)), slices.Sorted(maps.Keys(strs))
}

// compareOn evaluates the mutant on the generated requests and compares
// with the original's results.
func compareOn(mut *Engine, gen []generated) (equivalent bool, why string) {
	for _, g := range gen {
		a, b := g.want, mut.Evaluate(g.req)
		if a.Verdict != b.Verdict || a.Level != b.Level {
			return false, fmt.Sprintf("not equivalent: %s gives %s on the original and %s on the mutant; add a test like it",
				g.desc, decisionText(a), decisionText(b))
		}
	}
	return true, "no difference on " + strconv.Itoa(len(gen)) + " generated requests: likely equivalent"
}

func decisionText(r Result) string {
	if r.Verdict == intent.StepUp {
		return fmt.Sprintf("%s(%s)", r.Verdict, r.Level)
	}
	return r.Verdict.String()
}
