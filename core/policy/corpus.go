package policy

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
)

// TestCase is one entry of a pack's decision corpus: a request and the
// decision it must get. In tests/*.json the keys are the lowercase field
// names ("name", "principal", ...); unknown keys are refused.
type TestCase struct {
	// Name identifies the case; unique within the corpus.
	Name string `json:"name"`
	// Principal, Action and Resource build the Request ("" resource is
	// Resource::"none").
	Principal string `json:"principal"`
	Action    string `json:"action"`
	Resource  string `json:"resource,omitempty"`
	// Context is the request context. From JSON, integers become int64
	// (a number with a fraction or exponent is refused), arrays must hold
	// only strings and become []string, objects become map[string]any;
	// null is refused.
	Context map[string]any `json:"context"`
	// Decision is the expected decision: "allow", "deny" or "step_up".
	Decision string `json:"decision"`
	// Level is the expected approval level; "" means not checked.
	Level string `json:"level,omitempty"`
	// Policies are the expected determining policy ids, in any order; nil
	// means not checked, an empty list means "no policy determined it".
	Policies []string `json:"policies,omitempty"`
	// Errors says the request is expected to fail evaluation (and so be
	// denied). A case without it fails if evaluation reports any error, so
	// a malformed context cannot pass as a deny.
	Errors bool `json:"errors,omitempty"`
	// File is the corpus file the case came from (set by LoadTests).
	File string `json:"-"`
}

// Request returns the Request the case describes.
func (c TestCase) Request() Request {
	return Request{
		Principal: intent.Owner(c.Principal),
		Action:    intent.Action(c.Action),
		Resource:  c.Resource,
		Context:   c.Context,
	}
}

// TestFailure is a TestCase whose result differs from what it expects.
type TestFailure struct {
	Case TestCase
	Got  Result
	// Msg says what differs, e.g. "decision: want allow, got deny".
	Msg string
}

// String returns "file: name: msg".
func (f TestFailure) String() string {
	return fmt.Sprintf("%s: %s: %s", f.Case.File, f.Case.Name, f.Msg)
}

// LoadTests reads the decision corpus tests/*.json of fsys, in file name
// order. Each file holds one JSON test case object or an array of them.
// A pack without tests/ gives no cases and no error. It returns an error
// naming the file for malformed JSON, unknown keys, unsupported values,
// a missing name, principal, action or decision, an unknown decision or
// level, and duplicate names.
func LoadTests(fsys fs.FS) ([]TestCase, error) {
	files, err := fs.Glob(fsys, "tests/*.json")
	if err != nil {
		return nil, err
	}
	slices.Sort(files)
	var cases []TestCase
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

func decodeCases(b []byte) ([]TestCase, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	var cases []TestCase
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) > 0 && t[0] == '[' {
		if err := dec.Decode(&cases); err != nil {
			return nil, err
		}
	} else {
		var c TestCase
		if err := dec.Decode(&c); err != nil {
			return nil, err
		}
		cases = []TestCase{c}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the test cases")
	}
	return cases, nil
}

// check validates the case and converts its JSON context to the Go types
// Request.Context takes.
func (c *TestCase) check() error {
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
	ctx, err := fromJSON("context", c.Context)
	if err != nil {
		return err
	}
	c.Context, _ = ctx.(map[string]any)
	if c.Context == nil {
		c.Context = map[string]any{}
	}
	return nil
}

func fromJSON(path string, v any) (any, error) {
	switch v := v.(type) {
	case json.Number:
		n, err := v.Int64()
		if err != nil {
			return nil, fmt.Errorf("%s: %s is not an int64", path, v)
		}
		return n, nil
	case string, bool:
		return v, nil
	case []any:
		ss := make([]string, len(v))
		for i, x := range v {
			s, ok := x.(string)
			if !ok {
				return nil, fmt.Errorf("%s[%d]: arrays may hold only strings", path, i)
			}
			ss[i] = s
		}
		return ss, nil
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, x := range v {
			y, err := fromJSON(path+"."+k, x)
			if err != nil {
				return nil, err
			}
			out[k] = y
		}
		return out, nil
	case nil:
		if path == "context" {
			return map[string]any{}, nil
		}
		return nil, fmt.Errorf("%s: null is not allowed", path)
	}
	return nil, fmt.Errorf("%s: unsupported JSON value %T", path, v)
}

// RunTests evaluates every case and returns those whose result differs
// from what they expect, in the order of cases. A case fails when the
// decision differs, when Level is set and differs, when Policies is
// non-nil and differs as a set, and when evaluation errors are present
// but not expected (or expected but absent).
func (e *Engine) RunTests(cases []TestCase) []TestFailure {
	var fails []TestFailure
	for _, c := range cases {
		got := e.Evaluate(c.Request())
		if msg := c.mismatch(got); msg != "" {
			fails = append(fails, TestFailure{Case: c, Got: got, Msg: msg})
		}
	}
	return fails
}

func (c TestCase) mismatch(got Result) string {
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
