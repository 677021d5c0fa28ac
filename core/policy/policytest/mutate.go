package policytest

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
)

// Report is the result of [Mutate]: one entry per mutant, in the
// order the policies appear in their files.
type Report struct {
	Mutants []MutantResult
	// Requests is how many generated requests the equivalence check
	// compared each survivor on.
	Requests int
}

// MutantResult is what became of one mutant.
type MutantResult struct {
	// ID, Description and PolicyID are the mutant's (see policy.Mutant).
	ID          string
	Description string
	PolicyID    string
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
func (r *Report) Survivors() []MutantResult {
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
func Mutate(fsys fs.FS) (*Report, error) {
	e, err := policy.Load(fsys)
	if err != nil {
		return nil, err
	}
	cases, err := LoadCases(fsys)
	if err != nil {
		return nil, err
	}
	if len(cases) == 0 {
		return nil, errors.New("policytest: the pack has no tests (tests/*.json)")
	}
	if fails := Run(e, cases); len(fails) > 0 {
		msgs := make([]string, len(fails))
		for i, f := range fails {
			msgs[i] = f.String()
		}
		return nil, fmt.Errorf("policytest: %d test(s) fail on the original policy:\n%s", len(fails), strings.Join(msgs, "\n"))
	}

	var gen []generated // built on the first survivor
	report := &Report{}
	for _, m := range e.Mutants() {
		res := MutantResult{ID: m.ID, Description: m.Description, PolicyID: m.PolicyID}
		mutantEngine, err := e.Apply(m)
		if err != nil {
			res.Killed, res.KilledBy = true, "schema validation: "+err.Error()
			report.Mutants = append(report.Mutants, res)
			continue
		}
		if fails := Run(mutantEngine, cases); len(fails) > 0 {
			res.Killed, res.KilledBy = true, fails[0].Case.Name
			report.Mutants = append(report.Mutants, res)
			continue
		}
		if why := e.EquivalentBySyntax(m); why != "" {
			res.Equivalent, res.Why = true, why
			report.Mutants = append(report.Mutants, res)
			continue
		}
		if gen == nil {
			gen = generate(e, cases)
			report.Requests = len(gen)
		}
		res.Equivalent, res.Why = compareOn(mutantEngine, gen)
		report.Mutants = append(report.Mutants, res)
	}
	return report, nil
}

// generated is one request of the equivalence check, with how it was made.
type generated struct {
	req  policy.Request
	desc string
	want policy.Result // the original engine's result
}

// maxGenerated bounds the requests of the equivalence check.
const maxGenerated = 50000

// generate derives requests from the test cases: every single change of a
// number to a policy literal or ±1 around it, of a string to a policy
// string literal, each combined with no or one boolean flip, for every
// action of the schema. Requests the original engine cannot evaluate (a
// context that does not fit the action) are dropped.
func generate(e *policy.Engine, cases []Case) []generated {
	longs, strs := e.Literals()
	actions := e.Actions()
	nums := around(longs)
	var out []generated
	for _, c := range cases {
		for _, v := range contextVariants(c, nums, strs) {
			for _, a := range actions {
				if len(out) >= maxGenerated {
					return out
				}
				ctx := v.ctx
				r := policy.Request{Principal: intent.Owner(c.Principal), Action: a, Resource: c.Resource, Standard: &ctx}
				if res := e.Evaluate(r); len(res.Errors) == 0 {
					out = append(out, generated{req: r, desc: fmt.Sprintf("%s on %s", a, v.desc), want: res})
				}
			}
		}
	}
	return out
}

// variant is a test case's context changed, and how, in words.
type variant struct {
	ctx  policy.Standard
	desc string
}

// contextVariants returns test case c's context, each single change of a
// number in it to one of nums or of a string to one of strs, and each of
// those with one boolean of the context flipped.
func contextVariants(c Case, nums []int64, strs []string) []variant {
	base := c.Context
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
	var out []variant
	for _, v := range variants {
		out = append(out, v)
		for _, b := range bools {
			cur := lookup(v.ctx, b.path).Bool
			out = append(out, variant{with(v.ctx, b.path, intent.Bool(!cur)), fmt.Sprintf("%s, context.%s=%t", v.desc, b.path, !cur)})
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
func leaves(s policy.Standard) []leaf {
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
func lookup(s policy.Standard, path string) intent.Value {
	for _, l := range leaves(s) {
		if l.path == path {
			return l.value
		}
	}
	return intent.Value{}
}

// with returns s with the scalar at path replaced by v; s is not changed.
func with(s policy.Standard, path string, v intent.Value) policy.Standard {
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

// compareOn evaluates the mutant on the generated requests and compares
// with the original's results.
func compareOn(mut *policy.Engine, gen []generated) (equivalent bool, why string) {
	for _, g := range gen {
		a, b := g.want, mut.Evaluate(g.req)
		if a.Verdict != b.Verdict || a.Level != b.Level {
			return false, fmt.Sprintf("not equivalent: %s gives %s on the original and %s on the mutant; add a test like it",
				g.desc, decisionText(a), decisionText(b))
		}
	}
	return true, "no difference on " + strconv.Itoa(len(gen)) + " generated requests: likely equivalent"
}

func decisionText(r policy.Result) string {
	if r.Verdict == intent.StepUp {
		return fmt.Sprintf("%s(%s)", r.Verdict, r.Level)
	}
	return r.Verdict.String()
}
