package policy

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/cedar-policy/cedar-go/types"

	"github.com/intentplane/intentplane/core/intent"
)

// standardMap is the map form of s, as callers of Request.Context write it.
func standardMap(s *Standard) map[string]any {
	args, facts := s.Args, s.Facts
	if args == nil {
		args = intent.Args{}
	}
	if facts == nil {
		facts = map[string]intent.Value{}
	}
	return map[string]any{
		"args":     args,
		"facts":    facts,
		"approval": map[string]any{"confirm": s.Confirm, "four_eyes": s.FourEyes},
		"mandate":  map[string]any{"mode": s.Mode},
		"amount":   s.Amount,
	}
}

func TestStandardMatchesContext(t *testing.T) {
	t.Parallel()
	e := mustLoadInternal(t)
	args := intent.Args{"recipient": intent.Str("DE89"), "amount": intent.AmountValue(150000, 2), "urgent": intent.Bool(true), "n": intent.Int(-3)}
	facts := map[string]intent.Value{"beneficiary_known": intent.Bool(true), "daily_total": intent.Int(1 << 40), "name": intent.Str("é")}
	var cases []*Standard
	for _, a := range []intent.Args{nil, {}, args} {
		for _, f := range []map[string]intent.Value{nil, facts} {
			for _, mode := range []string{"", "strict", "known_counterparties", "other"} {
				for _, confirm := range []bool{false, true} {
					for _, fourEyes := range []bool{false, true} {
						cases = append(cases, &Standard{Args: a, Facts: f, Confirm: confirm, FourEyes: fourEyes, Mode: mode, Amount: 150000})
					}
				}
			}
		}
	}
	for _, s := range cases {
		got, err := e.convertStandard(s)
		if err != nil {
			t.Fatalf("convertStandard(%+v): %v", s, err)
		}
		want, err := convertContext(standardMap(s))
		if err != nil {
			t.Fatalf("convertContext: %v", err)
		}
		if !got.Equal(want) || got.String() != want.String() {
			t.Errorf("convertStandard(%+v) = %v, want %v", s, got, want)
		}
	}
}

func TestStandardErrors(t *testing.T) {
	t.Parallel()
	e := mustLoadInternal(t)
	bad := intent.Value{Kind: 99}
	for _, tt := range []struct {
		s    Standard
		want string
	}{
		{Standard{Args: intent.Args{"x": bad}}, "context.args.x: value of invalid kind 99"},
		{Standard{Facts: map[string]intent.Value{"y": bad}}, "context.facts.y: value of invalid kind 99"},
	} {
		_, err := e.convertStandard(&tt.s)
		if err == nil || err.Error() != tt.want {
			t.Errorf("convertStandard(%+v) = %v, want %q", tt.s, err, tt.want)
		}
		if _, err := convertContext(standardMap(&tt.s)); err == nil || err.Error() != tt.want {
			t.Errorf("convertContext(%+v) = %v, want %q", tt.s, err, tt.want)
		}
		r := e.Evaluate(Request{Principal: "alice", Action: "bank.send_money", Standard: &tt.s})
		if r.Verdict != intent.Deny || len(r.Errors) != 1 || r.Errors[0] != tt.want {
			t.Errorf("Evaluate = %+v, want a denial with %q", r, tt.want)
		}
	}
	r := e.Evaluate(Request{Principal: "alice", Action: "bank.send_money"})
	if r.Verdict != intent.Deny || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "Standard is nil") {
		t.Errorf("Evaluate without a context = %+v, want a denial", r)
	}
}

// FuzzStandardMatchesContext: on any arguments and facts the fuzzer
// builds, convertStandard gives the record the oracle gives.
func FuzzStandardMatchesContext(f *testing.F) {
	f.Add("recipient", "DE89", int64(150000), true, "known", "strict", uint8(1))
	f.Add("", "{\"__entity\":{\"type\":\"Owner\",\"id\":\"x\"}}", int64(-1), false, "é", "", uint8(6))
	e := mustLoadInternal(f)
	f.Fuzz(func(t *testing.T, key, str string, n int64, b bool, fact, mode string, kinds uint8) {
		s := &Standard{Args: intent.Args{}, Facts: map[string]intent.Value{}, Confirm: b, FourEyes: kinds&1 == 1, Mode: mode, Amount: intent.Amount(n)}
		vals := []intent.Value{intent.Str(str), intent.Int(n), intent.AmountValue(intent.Amount(n), 2), intent.Bool(b)}
		s.Args[key] = vals[kinds%4]
		s.Args[key+"2"] = vals[(kinds/4)%4]
		s.Facts[fact] = vals[(kinds/16)%4]
		got, err := e.convertStandard(s)
		if err != nil {
			t.Fatal(err)
		}
		want, err := convertContext(standardMap(s))
		if err != nil {
			t.Fatal(err)
		}
		if !got.Equal(want) || got.String() != want.String() {
			t.Errorf("convertStandard(%+v) = %v, want %v", s, got, want)
		}
	})
}

func mustLoadInternal(t testing.TB) *Engine {
	t.Helper()
	e, err := Load(os.DirFS("testdata/bank"))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// convertContext is the reference conversion of a context written as a
// map, as Request.Context took it before Standard was the only form:
// values may be intent.Value, intent.Amount, string, int64, int, bool,
// []string (a Set of String), map[string]any, map[string]intent.Value or
// intent.Args (records). It is the oracle convertStandard must match.
func convertContext(m map[string]any) (types.Record, error) {
	rm := make(types.RecordMap, len(m))
	for k, v := range m {
		cv, err := convertValue(v)
		if err != nil {
			return types.Record{}, err.in("context." + k)
		}
		rm[types.String(k)] = cv
	}
	return types.NewRecord(rm), nil
}

func convertValue(v any) (types.Value, *conversionError) {
	switch v := v.(type) {
	case intent.Value:
		return convertIntent(v)
	case intent.Amount:
		return types.Long(v), nil
	case string:
		return types.String(v), nil
	case int64:
		return types.Long(v), nil
	case int:
		return types.Long(v), nil
	case bool:
		return types.Boolean(v), nil
	case []string:
		vs := make([]types.Value, len(v))
		for i, s := range v {
			vs[i] = types.String(s)
		}
		return types.NewSet(vs...), nil
	case map[string]any:
		rm := make(types.RecordMap, len(v))
		for k, x := range v {
			cv, err := convertValue(x)
			if err != nil {
				return nil, err.in(k)
			}
			rm[types.String(k)] = cv
		}
		return types.NewRecord(rm), nil
	case map[string]intent.Value:
		return convertValues(v)
	case intent.Args:
		return convertValues(v)
	}
	return nil, &conversionError{msg: fmt.Sprintf("unsupported type %T", v)}
}

func convertValues(m map[string]intent.Value) (types.Value, *conversionError) {
	rm := make(types.RecordMap, len(m))
	for k, x := range m {
		cv, err := convertIntent(x)
		if err != nil {
			return nil, err.in(k)
		}
		rm[types.String(k)] = cv
	}
	return types.NewRecord(rm), nil
}
