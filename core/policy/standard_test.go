package policy

import (
	"os"
	"strings"
	"testing"

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
	r := e.Evaluate(Request{Principal: "alice", Action: "bank.send_money", Context: map[string]any{}, Standard: &Standard{}})
	if r.Verdict != intent.Deny || len(r.Errors) != 1 || !strings.Contains(r.Errors[0], "both") {
		t.Errorf("Evaluate with Context and Standard = %+v, want a denial", r)
	}
}

func mustLoadInternal(t *testing.T) *Engine {
	t.Helper()
	e, err := Load(os.DirFS("testdata/bank"))
	if err != nil {
		t.Fatal(err)
	}
	return e
}
