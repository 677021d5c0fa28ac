package policy

import (
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	cedar "github.com/cedar-policy/cedar-go"
	"github.com/cedar-policy/cedar-go/types"

	"github.com/intentplane/intentplane/core/intent"
)

// Entity types of the request convention (see the package doc).
const (
	ownerType    = types.EntityType("Owner")
	actionType   = types.EntityType("Action")
	resourceType = types.EntityType("Resource")
	noResource   = "none"
)

// Engine evaluates requests against one pack's policies. It is immutable
// after [Load] and safe for concurrent use.
type Engine struct {
	set       *cedar.PolicySet
	meta      map[cedar.PolicyID]Info
	policies  []loaded // in file, line order
	validator *validator
	actions   []intent.Action
	args      map[intent.Action]map[string]Arg // the schema's context.args per action
	schema    string                           // name of the schema file
	constants constants
}

// loaded is one policy as parsed, with its metadata.
type loaded struct {
	info   Info
	policy *cedar.Policy
}

// Load reads a pack from fsys: every *.cedar file at its root, in name
// order, and exactly one *.cedarschema file. It checks annotations (a
// unique non-empty @id on every policy; @approval only on forbid, with the
// value "confirm" or "four_eyes"), validates every policy against the
// schema in strict mode, and checks that every action of the schema
// applies to principal Owner and resource Resource. Any failure is a
// *LoadError.
func Load(fsys fs.FS) (*Engine, error) {
	policyFiles, schema, err := policyDir(fsys)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		set:       cedar.NewPolicySet(),
		meta:      make(map[cedar.PolicyID]Info),
		schema:    schema,
		constants: newConstants(),
	}
	if e.validator, e.actions, e.args, err = newValidator(fsys, e.schema); err != nil {
		return nil, err
	}
	for _, name := range policyFiles {
		if err := e.loadFile(fsys, name); err != nil {
			return nil, err
		}
	}
	return e, nil
}

// policyDir lists the policy files (*.cedar) of fsys's top directory and
// names its one schema file (*.cedarschema); a *LoadError says what is
// missing or repeated.
func policyDir(fsys fs.FS) (policyFiles []string, schema string, err error) {
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, "", &LoadError{File: ".", Msg: err.Error()}
	}
	var schemaFiles []string
	for _, de := range entries {
		if de.IsDir() {
			continue
		}
		switch path.Ext(de.Name()) {
		case ".cedar":
			policyFiles = append(policyFiles, de.Name())
		case ".cedarschema":
			schemaFiles = append(schemaFiles, de.Name())
		}
	}
	switch {
	case len(schemaFiles) == 0:
		return nil, "", &LoadError{File: ".", Msg: "no *.cedarschema file"}
	case len(schemaFiles) > 1:
		return nil, "", &LoadError{File: ".", Msg: fmt.Sprintf("more than one schema file: %s", strings.Join(schemaFiles, ", "))}
	case len(policyFiles) == 0:
		return nil, "", &LoadError{File: ".", Msg: "no *.cedar policy file"}
	}
	return policyFiles, schemaFiles[0], nil
}

// loadFile parses the policy file name of fsys and adds each policy,
// checked (annotations, a unique @id, the schema), to e.
func (e *Engine) loadFile(fsys fs.FS, name string) error {
	b, err := fs.ReadFile(fsys, name)
	if err != nil {
		return &LoadError{File: name, Msg: err.Error()}
	}
	list, err := cedar.NewPolicyListFromBytes(name, b)
	if err != nil {
		// cedar-go wraps the parser's error in "parser error: %w";
		// the parser's own error is the message to show.
		if inner := errors.Unwrap(err); inner != nil {
			err = inner
		}
		return positioned(name, err.Error())
	}
	for _, p := range list {
		info, err := describe(name, p)
		if err != nil {
			return err
		}
		if prev, dup := e.meta[cedar.PolicyID(info.ID)]; dup {
			return policyError(name, p, info.ID, fmt.Sprintf("duplicate @id %q (first at %s:%d)", info.ID, prev.File, prev.Line))
		}
		if err := validatePolicy(e.validator, info.ID, p); err != nil {
			return policyError(name, p, info.ID, joinLines(err.Error()))
		}
		e.set.Add(cedar.PolicyID(info.ID), p)
		e.meta[cedar.PolicyID(info.ID)] = info
		e.policies = append(e.policies, loaded{info: info, policy: p})
	}
	return nil
}

// describe checks a policy's annotations and returns its Info.
func describe(file string, p *cedar.Policy) (Info, error) {
	ann := p.Annotations()
	info := Info{
		ID:       string(ann["id"]),
		Effect:   "permit",
		Approval: intent.LevelAuto,
		Reason:   string(ann["reason"]),
		File:     file,
		Line:     p.Position().Line,
	}
	if p.Effect() == cedar.Forbid {
		info.Effect = "forbid"
	}
	if _, ok := ann["id"]; !ok || info.ID == "" {
		return info, policyError(file, p, "", info.Effect+" policy has no @id")
	}
	if v, ok := ann["approval"]; ok {
		if p.Effect() != cedar.Forbid {
			return info, policyError(file, p, info.ID, fmt.Sprintf("policy %q: @approval is allowed only on forbid", info.ID))
		}
		lvl := intent.Level(v)
		if lvl != intent.LevelConfirm && lvl != intent.LevelFourEyes {
			return info, policyError(file, p, info.ID, fmt.Sprintf("policy %q: @approval(%q) must be \"confirm\" or \"four_eyes\"", info.ID, string(v)))
		}
		info.Approval = lvl
	}
	return info, nil
}

func policyError(file string, p *cedar.Policy, id, msg string) *LoadError {
	pos := p.Position()
	return &LoadError{File: file, Line: pos.Line, Column: pos.Column, PolicyID: id, Msg: msg}
}

// posRE finds "name:line:col" in a parser message; cedar-go's policy
// parser names the file "<input>", its schema parser uses the real name.
// cedar-go v1.9.1 reports parse positions only in the message (its parser
// errors are fmt.Errorf values with no position field), so this is the one
// place that reads one; TestLoadErrors pins the positions it finds.
var posRE = regexp.MustCompile(`(?:<input>|[^\s:]+):(\d+):(\d+):? ?`)

// positioned turns a parser message into a LoadError with the position it
// mentions, if any.
func positioned(file, msg string) *LoadError {
	e := &LoadError{File: file, Msg: msg}
	if m := posRE.FindStringSubmatchIndex(msg); m != nil {
		e.Line, _ = strconv.Atoi(msg[m[2]:m[3]])
		e.Column, _ = strconv.Atoi(msg[m[4]:m[5]])
		e.Msg = strings.TrimSpace(msg[:m[0]] + msg[m[1]:])
	}
	e.Msg = joinLines(e.Msg)
	return e
}

func joinLines(s string) string { return strings.ReplaceAll(s, "\n", "; ") }

// Policies describes the loaded policies in file and line order.
func (e *Engine) Policies() []Info {
	out := make([]Info, len(e.policies))
	for i, l := range e.policies {
		out[i] = l.info
	}
	return out
}

// Arg is one attribute of an action's context.args in the schema: what
// the policy is given of one argument of the action.
type Arg struct {
	// Kind is the kind of value an argument must be to match the
	// attribute's type: intent.KindString (String), intent.KindInt (Long,
	// which integers and amounts convert to) or intent.KindBool (Bool);
	// zero for any other type, which no argument matches.
	Kind intent.Kind
	// Required is true when the schema declares the attribute without
	// "?": every request must then hold it, or it does not match the
	// schema and is denied as undecidable.
	Required bool
}

// Args returns the attributes of action's context.args as the schema
// declares them, by name, and false when the schema declares no such
// action or gives it no args record. The map is the caller's.
func (e *Engine) Args(action intent.Action) (map[string]Arg, bool) {
	a, ok := e.args[action]
	return maps.Clone(a), ok
}

// Actions returns the actions declared in the schema, sorted.
func (e *Engine) Actions() []intent.Action { return slices.Clone(e.actions) }

// withPolicies returns a copy of e that evaluates the given policies
// instead of its own; Apply uses it to build mutants.
func (e *Engine) withPolicies(ps []loaded) *Engine {
	m := *e
	m.set = cedar.NewPolicySet()
	m.policies = ps
	for _, l := range ps {
		m.set.Add(cedar.PolicyID(l.info.ID), l.policy)
	}
	return &m
}
