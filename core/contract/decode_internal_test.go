package contract

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// FuzzDecodeOracle: DecodeProposal agrees with the oracle decodeTokens on
// every input: the same proposal when both accept it, an error from both
// otherwise, and on valid JSON the same error text.
func FuzzDecodeOracle(f *testing.F) {
	for _, s := range []string{
		`{"action":"bank.pay","args":{"iban":"DE89 3704","amount":"12.50"}}`,
		` { "action" : "a\u0062" , "args" : { "x" : [ 1 , {"y":"}]\""} ] , "z" : -1.5e3 , "n":null } } `,
		`{"action":"a","action":"b"}`,
		`{"args":{},"args":{}}`,
		`{"args":{"a":1,"a":2},"action":"x"}`,
		`{"action":7}`,
		`{"args":[]}`,
		`{"other":1}`,
		`["x"]`,
		`"x"`,
		`{"action":"\ud800","args":{"\u0061":true,"a":false}}`,
		`{"action":"x","args":{"a":1,"b":2,"c":3}}`,
		`{"action":"x","args":{"a":1}} {}`,
		`{"action":"x","args":{"a":`,
		"{\"action\":\"\xff\"}",
		``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		lim := Limits{MaxArgs: 2, MaxBody: 1 << 10}
		got, gerr := DecodeProposal(body, lim)
		var want intent.Proposal
		var werr error
		switch {
		case len(body) > lim.maxBody() || !utf8.Valid(body):
			werr = gerr // checked before either decoder runs
		default:
			want, werr = decodeTokens(body, lim)
		}
		var me *MalformedError
		if gerr != nil && !errors.As(gerr, &me) {
			t.Fatalf("DecodeProposal(%q) error %v is not a *MalformedError", body, gerr)
		}
		if (gerr == nil) != (werr == nil) {
			t.Fatalf("DecodeProposal(%q) = %v; the oracle gives %v", body, gerr, werr)
		}
		if json.Valid(body) && fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Fatalf("errors differ on %q:\ngot:    %v\noracle: %v", body, gerr, werr)
		}
		if gerr == nil && !reflect.DeepEqual(got, want) {
			t.Fatalf("proposals differ on %q:\ngot:    %#v\noracle: %#v", body, got, want)
		}
	})
}

// FuzzUnquote: unquote agrees with encoding/json on every input.
func FuzzUnquote(f *testing.F) {
	for _, s := range []string{`"abc"`, `"a\"b"`, `"\u00e9\n"`, "\"\xff\"", "\"a\x01\"", `"`, `""`, `7`, `"a"b"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		got, ok := unquote(raw)
		var want string
		wantOK := len(raw) > 0 && raw[0] == '"' && json.Unmarshal(raw, &want) == nil
		if got != want || ok != wantOK {
			t.Fatalf("unquote(%q) = %q, %v; encoding/json gives %q, %v", raw, got, ok, want, wantOK)
		}
	})
}

// decodeTokens is the reference proposal decoder: it decodes body token by
// token through encoding/json's Decoder, stopping at the first fault. It
// was DecodeProposal's path for invalid JSON before decodeValid became the
// only one; it stays here as the oracle that decodeValid must match.
func decodeTokens(body []byte, lim Limits) (intent.Proposal, error) {
	var p intent.Proposal
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

// FuzzValidJSON: validJSON(b) is json.Valid(b) && utf8.Valid(b), its
// oracle, on every input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range []string{
		`{"action":"bank.pay","args":{"iban":"DE89 3704","amount":"12.50"}}`,
		` { "a" : [ 1 , {"y":"}]\""} , -0.5e+3 , 0, 1E9, true, false, null, "\u00e9\ud800\/" ] } `,
		`01`, `-`, `1.`, `.5`, `1e`, `-01`, `[1,]`, `{"a":1,}`, `{"a" 1}`, `{1:2}`, `[`, `]`, `tru`, `nulll`,
		`"\x"`, `"\u12G4"`, "\"\x01\"", "\"\xff\"", "\"\xed\xa0\x80\"", "\"é\"", "é", `""`, ``, ` `, `{}{}`,
		"[\"\xe2\x82\"]", `[[[[[]]]]]`, "\t\r\n1\t",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b) && utf8.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v; json.Valid && utf8.Valid = %v", b, got, want)
		}
	})
}

// TestValidJSONDepth: validJSON accepts the nesting encoding/json accepts
// (10,000 levels) and refuses one more, as it does.
func TestValidJSONDepth(t *testing.T) {
	for _, n := range []int{maxDepth, maxDepth + 1} {
		b := append(bytes.Repeat([]byte("["), n), bytes.Repeat([]byte("]"), n)...)
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Errorf("%d levels: validJSON %v, json.Valid %v", n, got, want)
		}
	}
	if !json.Valid(append(bytes.Repeat([]byte("["), maxDepth), bytes.Repeat([]byte("]"), maxDepth)...)) {
		t.Error("encoding/json no longer accepts 10,000 levels: maxDepth must follow it")
	}
}
