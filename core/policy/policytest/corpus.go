package policytest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
)

// Case is one entry of a pack's decision corpus: a request and the
// decision it must get. LoadCases reads it from tests/*.json, where the
// keys are "name", "principal", "action", "resource", "context",
// "decision", "level", "policies" and "errors"; unknown keys are refused.
type Case struct {
	// Name identifies the case; unique within the corpus.
	Name string
	// Principal, Action and Resource build the Request ("" resource is
	// Resource::"none").
	Principal string
	Action    string
	Resource  string
	// Context is the request context. In JSON it is the record of the
	// request convention: {"args": {...}, "facts": {...}, "approval":
	// {"confirm": bool, "four_eyes": bool}, "mandate": {"mode": string},
	// "amount": integer}; args and facts hold strings, booleans and
	// integers (an int64: no fraction or exponent), which become
	// intent.Str, intent.Bool and intent.Int. Absent keys are zero; null,
	// arrays, nested objects and unknown keys are refused.
	Context policy.Standard
	// Decision is the expected decision: "allow", "deny" or "step_up".
	Decision string
	// Level is the expected approval level; "" means not checked.
	Level string
	// Policies are the expected determining policy ids, in any order; nil
	// means not checked, an empty list means "no policy determined it".
	Policies []string
	// Errors says the request is expected to fail evaluation (and so be
	// denied). A case without it fails if evaluation reports any error, so
	// a malformed context cannot pass as a deny.
	Errors bool
	// File is the corpus file the case came from (set by LoadCases).
	File string
}

// Request returns the Request the case describes.
func (c Case) Request() policy.Request {
	ctx := c.Context
	return policy.Request{
		Principal: intent.Owner(c.Principal),
		Action:    intent.Action(c.Action),
		Resource:  c.Resource,
		Standard:  &ctx,
	}
}

// jsonCase is a Case as tests/*.json writes it.
type jsonCase struct {
	Name      string       `json:"name"`
	Principal string       `json:"principal"`
	Action    string       `json:"action"`
	Resource  string       `json:"resource"`
	Context   *jsonContext `json:"context"`
	Decision  string       `json:"decision"`
	Level     string       `json:"level"`
	Policies  []string     `json:"policies"`
	Errors    bool         `json:"errors"`
}

type jsonContext struct {
	Args     map[string]any `json:"args"`
	Facts    map[string]any `json:"facts"`
	Approval struct {
		Confirm  bool `json:"confirm"`
		FourEyes bool `json:"four_eyes"`
	} `json:"approval"`
	Mandate struct {
		Mode string `json:"mode"`
	} `json:"mandate"`
	Amount json.Number `json:"amount"`
}

// Failure is a Case whose result differs from what it expects.
type Failure struct {
	Case Case
	Got  policy.Result
	// Msg says what differs, e.g. "decision: want allow, got deny".
	Msg string
}

// String returns "file: name: msg".
func (f Failure) String() string {
	return fmt.Sprintf("%s: %s: %s", f.Case.File, f.Case.Name, f.Msg)
}

// LoadCases reads the decision corpus tests/*.json of fsys, in file name
// order. Each file holds one JSON test case object or an array of them.
// A pack without tests/ gives no cases and no error. It returns an error
// naming the file for malformed JSON, unknown keys, unsupported values,
// a missing name, principal, action or decision, an unknown decision or
// level, and duplicate names.
func LoadCases(fsys fs.FS) ([]Case, error) {
	files, err := fs.Glob(fsys, "tests/*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var cases []Case
	seen := map[string]string{}
	for _, name := range files {
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		cs, err := decodeCases(b)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		for i := range cs {
			c := &cs[i]
			c.File = name
			if err := c.check(); err != nil {
				return nil, fmt.Errorf("%s: case %d (%q): %w", name, i, c.Name, err)
			}
			if prev, dup := seen[c.Name]; dup {
				return nil, fmt.Errorf("%s: duplicate case name %q (also in %s)", name, c.Name, prev)
			}
			seen[c.Name] = name
		}
		cases = append(cases, cs...)
	}
	return cases, nil
}

func decodeCases(b []byte) ([]Case, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var cases []jsonCase
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if err := dec.Decode(&cases); err != nil {
			return nil, err
		}
	} else {
		var c jsonCase
		if err := dec.Decode(&c); err != nil {
			return nil, err
		}
		cases = []jsonCase{c}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the test cases")
	}
	out := make([]Case, len(cases))
	for i, c := range cases {
		out[i] = Case{Name: c.Name, Principal: c.Principal, Action: c.Action, Resource: c.Resource,
			Decision: c.Decision, Level: c.Level, Policies: c.Policies, Errors: c.Errors}
		ctx, err := c.Context.standard()
		if err != nil {
			return nil, fmt.Errorf("case %d (%q): %w", i, c.Name, err)
		}
		out[i].Context = ctx
	}
	return out, nil
}

// standard converts the JSON context; nil is the zero context.
func (c *jsonContext) standard() (policy.Standard, error) {
	if c == nil {
		return policy.Standard{}, nil
	}
	var s policy.Standard
	var err error
	if s.Args, err = values("context.args", c.Args); err != nil {
		return s, err
	}
	if s.Facts, err = values("context.facts", c.Facts); err != nil {
		return s, err
	}
	if c.Amount != "" {
		n, err := c.Amount.Int64()
		if err != nil {
			return s, fmt.Errorf("context.amount: %s is not an int64", c.Amount)
		}
		s.Amount = intent.Amount(n)
	}
	s.Confirm, s.FourEyes, s.Mode = c.Approval.Confirm, c.Approval.FourEyes, c.Mandate.Mode
	return s, nil
}

// values converts a JSON object of strings, booleans and integers.
func values(path string, m map[string]any) (map[string]intent.Value, error) {
	out := make(map[string]intent.Value, len(m))
	for k, v := range m {
		switch v := v.(type) {
		case string:
			out[k] = intent.Str(v)
		case bool:
			out[k] = intent.Bool(v)
		case json.Number:
			n, err := v.Int64()
			if err != nil {
				return nil, fmt.Errorf("%s.%s: %s is not an int64", path, k, v)
			}
			out[k] = intent.Int(n)
		case nil:
			return nil, fmt.Errorf("%s.%s: null is not allowed", path, k)
		default:
			return nil, fmt.Errorf("%s.%s: only strings, booleans and integers are allowed", path, k)
		}
	}
	return out, nil
}

// check validates the case.
func (c *Case) check() error {
	switch {
	case c.Name == "":
		return errors.New("missing name")
	case c.Principal == "":
		return errors.New("missing principal")
	case c.Action == "":
		return errors.New("missing action")
	}
	if _, err := intent.ParseVerdict(c.Decision); err != nil {
		return err
	}
	if c.Level != "" && !intent.Level(c.Level).Valid() {
		return fmt.Errorf("unknown level %q", c.Level)
	}
	return nil
}

// Run evaluates every case on e and returns those whose result differs
// from what they expect, in the order of cases. A case fails when the
// decision differs, when Level is set and differs, when Policies is
// non-nil and differs as a set, and when evaluation errors are present
// but not expected (or expected but absent).
func Run(e *policy.Engine, cases []Case) []Failure {
	var fails []Failure
	for _, c := range cases {
		got := e.Evaluate(c.Request())
		if msg := c.mismatch(got); msg != "" {
			fails = append(fails, Failure{Case: c, Got: got, Msg: msg})
		}
	}
	return fails
}

func (c Case) mismatch(got policy.Result) string {
	var msgs []string
	if want, _ := intent.ParseVerdict(c.Decision); want != got.Verdict {
		msgs = append(msgs, fmt.Sprintf("decision: want %s, got %s", want, got.Verdict))
	}
	if c.Level != "" && intent.Level(c.Level) != got.Level {
		msgs = append(msgs, fmt.Sprintf("level: want %s, got %s", c.Level, got.Level))
	}
	if c.Policies != nil {
		want := slices.Sorted(slices.Values(c.Policies))
		if !slices.Equal(want, got.Policies) && !(len(want) == 0 && len(got.Policies) == 0) {
			msgs = append(msgs, fmt.Sprintf("policies: want %v, got %v", want, got.Policies))
		}
	}
	switch {
	case c.Errors && len(got.Errors) == 0:
		msgs = append(msgs, "errors: want evaluation errors, got none")
	case !c.Errors && len(got.Errors) > 0:
		msgs = append(msgs, fmt.Sprintf("unexpected errors: %s", strings.Join(got.Errors, "; ")))
	}
	if len(msgs) > 0 && len(got.Policies) > 0 {
		msgs = append(msgs, fmt.Sprintf("(determined by %v)", got.Policies))
	}
	return strings.Join(msgs, "; ")
}
