package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// ErrMalformed is matched (errors.Is) by every error DecodeProposal
// returns; the error itself is a *MalformedError.
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

// MalformedError is the error DecodeProposal returns: Reason says, in
// words the agent can act on, what is wrong with the proposal (for example
// `unknown key "approved": a proposal has only "action" and "args"`). It
// matches ErrMalformed with errors.Is.
type MalformedError struct {
	Reason string
}

// Error returns "contract: malformed proposal: " followed by Reason.
func (e *MalformedError) Error() string { return ErrMalformed.Error() + ": " + e.Reason }

// Is reports whether target is ErrMalformed.
func (e *MalformedError) Is(target error) bool { return target == ErrMalformed }

func malformed(format string, a ...any) error {
	return &MalformedError{Reason: fmt.Sprintf(format, a...)}
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
	if !validJSON(body) {
		if !utf8.Valid(body) {
			return p, malformed("the proposal is not valid UTF-8")
		}
		return p, syntaxError(body)
	}
	return decodeValid(body, lim)
}

// syntaxError describes why body, which is UTF-8 but not JSON, is not:
// not an object, an object followed by more data, or where the syntax
// breaks.
func syntaxError(body []byte) error {
	if t := bytes.TrimLeft(body, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return malformed("a proposal is a JSON object with \"action\" and \"args\"")
	}
	var first json.RawMessage
	err := json.NewDecoder(bytes.NewReader(body)).Decode(&first)
	var se *json.SyntaxError
	switch {
	case err == nil:
		return malformed("data after the proposal object")
	case errors.As(err, &se):
		return malformed("invalid JSON at byte %d: %v", se.Offset, se)
	}
	return malformed("invalid JSON: %v", err)
}

// decodeValid decodes body, which validJSON accepts. Syntax being
// settled, it only walks the tokens; it allocates the strings it keeps and
// one copy of the body that all argument values share. It is the one
// proposal decoder; decodeTokens in decode_internal_test.go, a token by
// token decoder over encoding/json, is its oracle (FuzzDecodeOracle).
func decodeValid(body []byte, lim Limits) (intent.Proposal, error) {
	var p intent.Proposal
	w := walker{b: body}
	if w.next() != '{' {
		return p, malformed("a proposal is a JSON object with \"action\" and \"args\"")
	}
	w.i++
	var sawAction, sawArgs bool
	for w.member() {
		key := w.keyBytes()
		switch {
		case string(key) == "action" && !sawAction:
			sawAction = true
			if w.next() != '"' {
				return p, malformed("\"action\" must be a string")
			}
			p.Action = intent.Action(w.string())
		case string(key) == "args" && !sawArgs:
			sawArgs = true
			args, err := w.args(lim.maxArgs())
			if err != nil {
				return p, err
			}
			p.Args = args
		case string(key) == "action" || string(key) == "args":
			return p, malformed("key %q appears twice", key)
		default:
			return p, malformed("unknown key %q: a proposal has only \"action\" and \"args\"", truncate(string(key)))
		}
	}
	if !sawAction {
		return p, malformed("missing \"action\"")
	}
	if p.Args == nil {
		p.Args = map[string]json.RawMessage{}
	}
	return p, nil
}

// walker reads a valid JSON text: it never meets a syntax error, so it
// does not look for one.
type walker struct {
	b    []byte
	i    int    // the next byte to read
	copy []byte // a copy of b for the argument values, made when needed
}

// next skips white space and returns the byte at the next token.
func (w *walker) next() byte {
	for w.i < len(w.b) {
		switch c := w.b[w.i]; c {
		case ' ', '\t', '\n', '\r':
			w.i++
		default:
			return c
		}
	}
	return 0
}

// member moves to the next member of the object being read and reports
// whether there is one; at the object's end it moves past the '}'.
func (w *walker) member() bool {
	if w.next() == ',' {
		w.i++
		w.next()
	}
	if w.b[w.i] == '}' {
		w.i++
		return false
	}
	return true
}

// key reads a member's key and the colon after it.
func (w *walker) key() string {
	k := w.string()
	w.next()
	w.i++ // ':'
	return k
}

// keyBytes is key, without making a string of a key that has no escape:
// the top level's keys are only compared.
func (w *walker) keyBytes() []byte {
	k := w.token()
	w.next()
	w.i++ // ':'
	return k
}

// string reads a string token: its bytes when it has no escape, otherwise
// what encoding/json decodes it to.
func (w *walker) string() string {
	return string(w.token())
}

// token reads a string token and returns what it holds: its bytes when it
// has no escape (a slice of the body), otherwise what encoding/json decodes
// it to.
func (w *walker) token() []byte {
	start := w.i
	// The string ends at the first quote, unless a backslash comes before
	// it: found with IndexByte, which reads many bytes at a time.
	end := start + 1 + bytes.IndexByte(w.b[start+1:], '"')
	if bytes.IndexByte(w.b[start+1:end], '\\') < 0 {
		w.i = end + 1
		return w.b[start+1 : end]
	}
	w.i++
	for w.b[w.i] != '"' {
		if w.b[w.i] == '\\' {
			w.i++
		}
		w.i++
	}
	w.i++
	var s string
	_ = json.Unmarshal(w.b[start:w.i], &s) // cannot fail: the JSON is valid
	return []byte(s)
}

// args reads the "args" object, keeping each value's bytes.
func (w *walker) args(maxArgs int) (map[string]json.RawMessage, error) {
	if w.next() != '{' {
		return nil, malformed("\"args\" must be a JSON object")
	}
	w.i++
	args := map[string]json.RawMessage{}
	for w.member() {
		key := w.key()
		if _, dup := args[key]; dup {
			return nil, malformed("argument %q appears twice", truncate(key))
		}
		if len(args) == maxArgs {
			return nil, malformed("more than %d arguments", maxArgs)
		}
		w.next()
		start := w.i
		w.skip()
		if w.copy == nil {
			w.copy = bytes.Clone(w.b)
		}
		args[key] = w.copy[start:w.i:w.i]
	}
	return args, nil
}

// skip moves past one value.
func (w *walker) skip() {
	switch w.b[w.i] {
	case '"':
		w.string()
	case '{', '[':
		depth := 0
		for {
			switch w.b[w.i] {
			case '"':
				w.string()
				continue
			case '{', '[':
				depth++
			case '}', ']':
				depth--
			}
			w.i++
			if depth == 0 {
				return
			}
		}
	default: // a number, true, false or null
		for w.i < len(w.b) {
			switch w.b[w.i] {
			case ',', '}', ']', ' ', '\t', '\n', '\r':
				return
			}
			w.i++
		}
	}
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
	// Amounts in another parameter's currency come last, once it is
	// decoded and normalized.
	params := make([]Parameter, 0, len(c.Params))
	for _, p := range c.Params {
		if p.Type.currency == "" {
			params = append(params, p)
		}
	}
	for _, p := range c.Params {
		if p.Type.currency != "" {
			params = append(params, p)
		}
	}
	for _, p := range params {
		r, ok := raw[p.Name]
		if !ok || string(bytes.TrimSpace(r)) == "null" {
			if p.Required {
				return nil, bad(p.Name, "is required (%s)", p.Type)
			}
			continue
		}
		v, why := decodeParam(p, r, args)
		if why != "" {
			return nil, bad(p.Name, "%s", why)
		}
		args[p.Name] = v
	}
	return args, nil
}

// decodeParam decodes the value r of parameter p: an amount in another
// parameter's currency at that currency's scale (args holds it, decoded
// first), a text normalized unless it is critical (resolution normalizes
// those). It returns why r is refused, or "".
func decodeParam(p Parameter, r json.RawMessage, args intent.Args) (intent.Value, string) {
	t := p.Type
	if t.currency != "" {
		cur := args[t.currency].Str
		e, known := intent.CurrencyExponent(cur)
		if !known || !intent.ISOCurrency(cur) {
			return intent.Value{}, fmt.Sprintf("is in %q, which is not an active ISO 4217 currency: its minor unit is unknown", truncate(cur))
		}
		t.scale = uint8(e)
	}
	v, err := decodeValue(t, r)
	if err != nil {
		return intent.Value{}, err.Error()
	}
	if p.Normalizer != nil && !p.Critical {
		n, err := p.Normalizer(v.Str)
		if err != nil {
			return intent.Value{}, err.Error()
		}
		v.Str = n
	}
	return v, ""
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
	integerRE    = regexp.MustCompile(`^-?(0|[1-9][0-9]*)$`)
)

func decodeValue(t Type, raw json.RawMessage) (intent.Value, error) {
	raw = bytes.TrimSpace(raw)
	switch t.kind {
	case intent.KindString:
		return decodeString(t, raw)
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
		if t.bounded && (n < t.min || n > t.max) {
			return intent.Value{}, fmt.Errorf("must be from %d to %d", t.min, t.max)
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

// decodeString decodes a string argument of type t: at most its maximum
// length (1024 bytes by default), no control character other than tab and
// line breaks, and for a date type a valid YYYY-MM-DD.
func decodeString(t Type, raw json.RawMessage) (intent.Value, error) {
	s, ok := unquote(raw)
	if !ok {
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
}

// unquote returns the string the JSON string raw encodes, and false if raw
// is not one. A string without escapes, control characters or invalid
// UTF-8, the common case, is its bytes; any other goes through
// encoding/json, which decodes it exactly as before.
func unquote(raw []byte) (string, bool) {
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' {
		plain := utf8.Valid(raw[1 : n-1])
		for _, c := range raw[1 : n-1] {
			if c < 0x20 || c == '"' || c == '\\' {
				plain = false
				break
			}
		}
		if plain {
			return string(raw[1 : n-1]), true
		}
	}
	var s string
	if len(raw) == 0 || raw[0] != '"' || json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// parseAmount reads a JSON number or a JSON string holding a plain decimal
// (intent.ParseAmount's rules) and returns it in minor units of the given
// scale, exactly; it must be greater than zero.
func parseAmount(raw json.RawMessage, scale uint8) (intent.Amount, error) {
	var text string
	if len(raw) > 0 && raw[0] == '"' {
		var ok bool
		if text, ok = unquote(raw); !ok {
			return 0, fmt.Errorf("must be an amount such as \"12.50\"")
		}
	} else if text = string(raw); !jsonNumberRE.MatchString(text) {
		return 0, fmt.Errorf("must be an amount such as 12.50")
	}
	if strings.HasPrefix(text, "-") {
		return 0, fmt.Errorf("must be greater than zero")
	}
	a, err := intent.ParseAmount(text, int(scale))
	switch {
	case errors.Is(err, intent.ErrAmountPrecision):
		return 0, fmt.Errorf("has more than %d decimals", scale)
	case errors.Is(err, intent.ErrAmountRange):
		return 0, fmt.Errorf("is too large: the largest amount the gateway can count is %s", intent.FormatAmount(math.MaxInt64, scale))
	case err != nil:
		return 0, fmt.Errorf("must be written as a plain decimal such as 1250.00 (no exponent, no sign, no thousands separator)")
	case a == 0:
		return 0, fmt.Errorf("must be greater than zero")
	}
	return a, nil
}
