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
