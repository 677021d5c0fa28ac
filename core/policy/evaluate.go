package policy

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/intentplane/intentplane/core/intent"
)

// Evaluate decides r. It is pure and deterministic: the same request
// against the same Engine gives the same Result. It fails closed: a
// context that does not convert or does not match the action's context
// type in the schema, and any evaluation error (an overflow, a missing
// attribute), give Deny with Result.Errors filled in.
func (e *Engine) Evaluate(r Request) Result {
	if r.Standard == nil {
		return failed([]string{"context: Request.Standard is nil"}, nil, nil)
	}
	ctx, err := e.convertStandard(r.Standard)
	if err != nil {
		return failed([]string{err.Error()}, nil, nil)
	}
	resource := r.Resource
	if resource == "" {
		resource = noResource
	}
	req := cedar.Request{
		Principal: types.NewEntityUID(ownerType, types.String(r.Principal)),
		Action:    types.NewEntityUID(actionType, types.String(r.Action)),
		Resource:  types.NewEntityUID(resourceType, types.String(resource)),
		Context:   ctx,
	}
	if err := e.validator.Request(req); err != nil {
		return failed([]string{e.requestError(req, r.Action, err)}, nil, nil)
	}
	decision, diag := cedar.Authorize(e.set, requestEntities{req.Principal, req.Resource}, req)

	ids := make([]string, len(diag.Reasons))
	for i, rs := range diag.Reasons {
		ids[i] = string(rs.PolicyID)
	}
	slices.Sort(ids)
	if len(diag.Errors) > 0 {
		if decision == cedar.Allow {
			ids = nil // permits do not determine a denial
		}
		return e.evaluationFailed(diag.Errors, ids)
	}
	res := Result{Verdict: intent.Deny, Level: intent.LevelAuto, Policies: ids, Reasons: e.reasons(ids)}
	switch {
	case decision == cedar.Allow:
		res.Verdict = intent.Allow
	case len(ids) == 0:
		res.Policies = nil
		res.Reasons = []string{NoPermitReason}
	default:
		// Deny with determining forbids: step up only if all are guards.
		level := intent.LevelAuto
		for _, id := range ids {
			g := e.meta[cedar.PolicyID(id)].Approval
			if g == intent.LevelAuto {
				return res
			}
			if g.Rank() > level.Rank() {
				level = g
			}
		}
		res.Verdict, res.Level = intent.StepUp, level
	}
	return res
}

// evaluationFailed is the result of an evaluation whose policies failed
// (errs, cedar-go's diagnostic), ids the forbids that determined it: each
// error as "policy X: message", and the policies whose arithmetic
// overflowed named apart (Result.Overflowed).
func (e *Engine) evaluationFailed(errs []cedar.DiagnosticError, ids []string) Result {
	msgs := make([]string, len(errs))
	var over []string
	for i, de := range errs {
		msgs[i] = fmt.Sprintf("policy %q: %s", de.PolicyID, de.Message)
		// cedar-go's overflow errors are not exported; its messages
		// all begin so ("integer overflow while attempting to add").
		if strings.HasPrefix(de.Message, "integer overflow") {
			over = append(over, string(de.PolicyID))
		}
	}
	res := failed(msgs, ids, e.reasons(ids))
	slices.Sort(over)
	res.Overflowed = slices.Compact(over)
	return res
}

// failed is the Deny result for a request that could not be evaluated.
func failed(errs, ids, reasons []string) Result {
	sort.Strings(errs)
	if len(ids) == 0 {
		ids, reasons = nil, nil
	}
	return Result{Verdict: intent.Deny, Level: intent.LevelAuto, Policies: ids, Reasons: reasons, Errors: errs}
}

func (e *Engine) reasons(ids []string) []string {
	out := make([]string, len(ids))
	for i, id := range ids {
		out[i] = e.meta[cedar.PolicyID(id)].Reason
	}
	return out
}

// requestError rewrites the validator's message. Load checked that every
// action of the schema applies to Owner and Resource, the types Evaluate
// always uses, so for an action of the schema the only possible fault is
// a context that does not match; the validator's message for it quotes the
// whole context, which may hold long attacker-chosen strings, and is
// replaced. For any other action the validator's message names the action.
func (e *Engine) requestError(req cedar.Request, action intent.Action, err error) string {
	if _, known := slices.BinarySearch(e.actions, action); known {
		return fmt.Sprintf("request: context does not match the schema for %s", req.Action)
	}
	return "request: " + err.Error()
}

// requestEntities is the entity store of one request: the principal and
// the resource, without attributes or parents.
type requestEntities struct{ principal, resource types.EntityUID }

func (r requestEntities) Get(uid types.EntityUID) (types.Entity, bool) {
	if uid == r.principal || uid == r.resource {
		return types.Entity{UID: uid}, true
	}
	return types.Entity{}, false
}

// Keys of the context record of the request convention.
const (
	keyArgs     = types.String("args")
	keyFacts    = types.String("facts")
	keyApproval = types.String("approval")
	keyMandate  = types.String("mandate")
	keyAmount   = types.String("amount")
	keyConfirm  = types.String("confirm")
	keyFourEyes = types.String("four_eyes")
	keyMode     = types.String("mode")
)

// constants holds the context's sub-records that take few values, built
// once: Cedar records are immutable, so evaluations may share them.
type constants struct {
	approval [2][2]types.Value // by confirm, four_eyes
	modes    map[string]types.Value
}

func newConstants() constants {
	var c constants
	for i, confirm := range []bool{false, true} {
		for j, fourEyes := range []bool{false, true} {
			c.approval[i][j] = approvalRecord(confirm, fourEyes)
		}
	}
	// The modes core/mandate defines; the record of any other mode is
	// built per request.
	known := []string{"strict", "known_counterparties"}
	c.modes = make(map[string]types.Value, len(known))
	for _, m := range known {
		c.modes[m] = modeRecord(m)
	}
	return c
}

func approvalRecord(confirm, fourEyes bool) types.Value {
	return types.NewRecord(types.RecordMap{keyConfirm: types.Boolean(confirm), keyFourEyes: types.Boolean(fourEyes)})
}

func modeRecord(mode string) types.Value {
	return types.NewRecord(types.RecordMap{keyMode: types.String(mode)})
}

// convertStandard converts s to the Cedar context record, never
// interpreting strings: a string that looks like Cedar's JSON escapes
// ({"__entity": ...}) stays a String. One scratch map serves every record
// built, since NewRecord copies it. Its oracle is the map-based conversion
// in standard_test.go.
func (e *Engine) convertStandard(s *Standard) (types.Record, error) {
	scratch := make(types.RecordMap, 8)
	args, cerr := scratchRecord(scratch, s.Args)
	if cerr != nil {
		return types.Record{}, cerr.in("context.args")
	}
	facts, cerr := scratchRecord(scratch, s.Facts)
	if cerr != nil {
		return types.Record{}, cerr.in("context.facts")
	}
	mode, ok := e.constants.modes[s.Mode]
	if !ok {
		mode = modeRecord(s.Mode)
	}
	scratch[keyArgs] = args
	scratch[keyFacts] = facts
	scratch[keyApproval] = e.constants.approval[b2i(s.Confirm)][b2i(s.FourEyes)]
	scratch[keyMandate] = mode
	scratch[keyAmount] = types.Long(s.Amount)
	return types.NewRecord(scratch), nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

// scratchRecord converts m into a record, using scratch, which it leaves
// empty.
func scratchRecord(scratch types.RecordMap, m map[string]intent.Value) (types.Value, *conversionError) {
	defer clear(scratch)
	for k, x := range m {
		cv, err := convertIntent(x)
		if err != nil {
			return nil, err.in(k)
		}
		scratch[types.String(k)] = cv
	}
	return types.NewRecord(scratch), nil
}

// conversionError is a value of unsupported type; path is built while the
// error travels up, so that successful conversions build no strings.
type conversionError struct {
	path []string // innermost first
	msg  string
}

func (e *conversionError) in(key string) *conversionError {
	e.path = append(e.path, key)
	return e
}

func (e *conversionError) Error() string {
	p := slices.Clone(e.path)
	slices.Reverse(p)
	return strings.Join(p, ".") + ": " + e.msg
}

// convertIntent converts v without boxing it in an interface.
func convertIntent(v intent.Value) (types.Value, *conversionError) {
	switch v.Kind {
	case intent.KindString:
		return types.String(v.Str), nil
	case intent.KindInt, intent.KindAmount:
		return types.Long(v.Int), nil
	case intent.KindBool:
		return types.Boolean(v.Bool), nil
	}
	return nil, &conversionError{msg: fmt.Sprintf("value of invalid kind %d", v.Kind)}
}
