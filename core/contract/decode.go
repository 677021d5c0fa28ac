package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// Limits bound what DecodeProposal accepts. The zero value means the
// defaults given on each field.
type Limits struct {
	// MaxBody is the maximum size of a proposal in bytes; zero means 64 KiB.
	MaxBody int
	// MaxArgs is the maximum number of arguments; zero means 64.
	MaxArgs int
}

func (l Limits) maxBody() int {
	if l.MaxBody <= 0 {
		return 64 << 10
	}
	return l.MaxBody
}

func (l Limits) maxArgs() int {
	if l.MaxArgs <= 0 {
		return 64
	}
	return l.MaxArgs
}

// ErrMalformed is wrapped by every error DecodeProposal returns.
var ErrMalformed = errors.New("contract: malformed proposal")

// ErrBadArgument is wrapped by every error Decode returns.
var ErrBadArgument = errors.New("contract: bad argument")

// ArgumentError says which argument was refused and why, in words the agent
// can act on.
type ArgumentError struct {
	Action intent.Action
	Param  string
	Reason string
	Err    error // ErrBadArgument
}

func (e *ArgumentError) Error() string {
	if e.Param == "" {
		return fmt.Sprintf("%s: %s", e.Action, e.Reason)
	}
	return fmt.Sprintf("%s: argument %q: %s", e.Action, e.Param, e.Reason)
}

// Unwrap returns ErrBadArgument.
func (e *ArgumentError) Unwrap() error { return e.Err }

func malformed(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, a...))
}

// DecodeProposal parses body as {"action": string, "args": {...}}, and
// nothing else: unknown or duplicate keys at the top level or in args,
// trailing data, invalid UTF-8, a body larger than lim.MaxBody or more than
// lim.MaxArgs arguments are refused with an error wrapping ErrMalformed.
// Argument values stay raw; Contract.Decode checks them.
func DecodeProposal(body []byte, lim Limits) (intent.Proposal, error) {
	var p intent.Proposal
	if len(body) > lim.maxBody() {
		return p, malformed("the proposal is %d bytes; the limit is %d", len(body), lim.maxBody())
	}
	if !utf8.Valid(body) {
		return p, malformed("the proposal is not valid UTF-8")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := expectDelim(dec, '{'); err != nil {
		return p, malformed("a proposal is a JSON object with \"action\" and \"args\"")
	}
	seen := map[string]bool{}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return p, malformed("invalid JSON: %v", err)
		}
		if seen[key] {
			return p, malformed("key %q appears twice", key)
		}
		seen[key] = true
		switch key {
		case "action":
			s, err := stringToken(dec)
			if err != nil {
				return p, malformed("\"action\" must be a string")
			}
			p.Action = intent.Action(s)
		case "args":
			args, err := decodeArgs(dec, lim.maxArgs())
			if err != nil {
				return p, err
			}
			p.Args = args
		default:
			return p, malformed("unknown key %q: a proposal has only \"action\" and \"args\"", truncate(key))
		}
	}
	if err := expectDelim(dec, '}'); err != nil {
		return p, malformed("invalid JSON: %v", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return p, malformed("data after the proposal object")
	}
	if !seen["action"] {
		return p, malformed("missing \"action\"")
	}
	if p.Args == nil {
		p.Args = map[string]json.RawMessage{}
	}
	return p, nil
}

func decodeArgs(dec *json.Decoder, maxArgs int) (map[string]json.RawMessage, error) {
	if err := expectDelim(dec, '{'); err != nil {
		return nil, malformed("\"args\" must be a JSON object")
	}
	args := map[string]json.RawMessage{}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, malformed("invalid JSON in args: %v", err)
		}
		if _, dup := args[key]; dup {
			return nil, malformed("argument %q appears twice", truncate(key))
		}
		if len(args) == maxArgs {
			return nil, malformed("more than %d arguments", maxArgs)
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, malformed("invalid JSON in argument %q: %v", truncate(key), err)
		}
		args[key] = raw
	}
	if err := expectDelim(dec, '}'); err != nil {
		return nil, malformed("invalid JSON in args: %v", err)
	}
	return args, nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	if t != d {
		return fmt.Errorf("expected %q", d)
	}
	return nil
}

func stringToken(dec *json.Decoder) (string, error) {
	t, err := dec.Token()
	if err != nil {
		return "", err
	}
	s, ok := t.(string)
	if !ok {
		return "", fmt.Errorf("expected a string")
	}
	return s, nil
}

func truncate(s string) string {
	if len(s) <= 64 {
		return s
	}
	for i := 64; i > 0; i-- {
		if utf8.RuneStart(s[i]) {
			return s[:i] + "…"
		}
	}
	return ""
}

// Decode checks raw arguments against the contract and returns them typed:
// every argument must be a declared parameter, every required parameter must
// be present (JSON null counts as absent), and each value must have the
// parameter's type. Normalizers of non-critical parameters are applied here;
// critical values are normalized during resolution, so that the receipt
// keeps what the agent sent. Errors are *ArgumentError wrapping
// ErrBadArgument.
func (c *Contract) Decode(raw map[string]json.RawMessage) (intent.Args, error) {
	bad := func(param, format string, a ...any) error {
		return &ArgumentError{Action: c.Action, Param: param, Reason: fmt.Sprintf(format, a...), Err: ErrBadArgument}
	}
	for name := range raw {
		if _, ok := c.byName[name]; !ok {
			return nil, bad("", "unknown argument %q; this action takes %s", truncate(name), c.paramList())
		}
	}
	args := make(intent.Args, len(c.Params))
	for _, p := range c.Params {
		r, ok := raw[p.Name]
		if !ok || string(bytes.TrimSpace(r)) == "null" {
			if p.Required {
				return nil, bad(p.Name, "is required (%s)", p.Type)
			}
			continue
		}
		v, err := decodeValue(p.Type, r)
		if err != nil {
			return nil, bad(p.Name, "%v", err)
		}
		if p.Normalizer != nil && !p.Critical {
			n, err := p.Normalizer(v.Str)
			if err != nil {
				return nil, bad(p.Name, "%v", err)
			}
			v.Str = n
		}
		args[p.Name] = v
	}
	return args, nil
}

func (c *Contract) paramList() string {
	names := make([]string, len(c.Params))
	for i, p := range c.Params {
		names[i] = p.Name
	}
	if len(names) == 0 {
		return "no arguments"
	}
	return strings.Join(names, ", ")
}

var (
	jsonNumberRE = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)
	decimalRE    = regexp.MustCompile(`^(0|[1-9][0-9]*)(\.([0-9]+))?$`)
	integerRE    = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

func decodeValue(t Type, raw json.RawMessage) (intent.Value, error) {
	raw = bytes.TrimSpace(raw)
	switch t.kind {
	case intent.KindString:
		var s string
		if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
			return intent.Value{}, fmt.Errorf("must be %s", t)
		}
		max := t.maxLen
		if max <= 0 {
			max = 1024
		}
		if len(s) > max {
			return intent.Value{}, fmt.Errorf("is %d bytes long; at most %d are accepted", len(s), max)
		}
		for i, r := range s {
			if (r < 0x20 && r != '\t' && r != '\n' && r != '\r') || r == 0x7f {
				return intent.Value{}, fmt.Errorf("contains the control character U+%04X at byte %d", r, i)
			}
		}
		if t.date {
			if _, err := time.Parse("2006-01-02", s); err != nil {
				return intent.Value{}, fmt.Errorf("must be a date written YYYY-MM-DD")
			}
		}
		return intent.Str(s), nil
	case intent.KindBool:
		switch string(raw) {
		case "true":
			return intent.Bool(true), nil
		case "false":
			return intent.Bool(false), nil
		}
		return intent.Value{}, fmt.Errorf("must be true or false")
	case intent.KindInt:
		if !integerRE.Match(raw) {
			return intent.Value{}, fmt.Errorf("must be an integer")
		}
		var n int64
		if _, err := fmt.Sscan(string(raw), &n); err != nil {
			return intent.Value{}, fmt.Errorf("is out of range")
		}
		return intent.Int(n), nil
	case intent.KindAmount:
		a, err := parseAmount(raw, t.scale)
		if err != nil {
			return intent.Value{}, err
		}
		return intent.AmountValue(a, t.scale), nil
	}
	return intent.Value{}, fmt.Errorf("has an unsupported type")
}

// parseAmount reads a JSON number or a JSON string holding a plain decimal
// and returns it in minor units of the given scale, exactly.
func parseAmount(raw json.RawMessage, scale uint8) (intent.Amount, error) {
	text := string(raw)
	if len(raw) > 0 && raw[0] == '"' {
		if err := json.Unmarshal(raw, &text); err != nil {
			return 0, fmt.Errorf("must be an amount such as \"12.50\"")
		}
	} else if !jsonNumberRE.MatchString(text) {
		return 0, fmt.Errorf("must be an amount such as 12.50")
	}
	if strings.HasPrefix(text, "-") {
		return 0, fmt.Errorf("must be greater than zero")
	}
	m := decimalRE.FindStringSubmatch(text)
	if m == nil {
		return 0, fmt.Errorf("must be written as a plain decimal such as 1250.00 (no exponent, no sign, no thousands separator)")
	}
	whole, frac := m[1], m[3]
	if trimmed := strings.TrimRight(frac, "0"); len(trimmed) > int(scale) {
		return 0, fmt.Errorf("has more than %d decimals", scale)
	} else {
		frac = trimmed
	}
	frac += strings.Repeat("0", int(scale)-len(frac))
	var n int64
	for _, c := range whole + frac {
		d := int64(c - '0')
		if n > (math.MaxInt64-d)/10 {
			return 0, fmt.Errorf("is too large")
		}
		n = n*10 + d
	}
	if n == 0 {
		return 0, fmt.Errorf("must be greater than zero")
	}
	return intent.Amount(n), nil
}
