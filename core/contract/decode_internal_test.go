package contract

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"
	"unicode/utf8"
)

// FuzzDecodeValid: on valid JSON, the walker and the token decoder agree
// exactly, in results and in errors.
func FuzzDecodeValid(f *testing.F) {
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
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if !utf8.Valid(body) || !json.Valid(body) {
			return
		}
		lim := Limits{MaxArgs: 2}
		p1, err1 := decodeTokens(body, lim)
		p2, err2 := decodeValid(body, lim)
		if fmt.Sprint(err1) != fmt.Sprint(err2) {
			t.Fatalf("errors differ:\ntokens: %v\nvalid:  %v", err1, err2)
		}
		if err1 == nil && !reflect.DeepEqual(p1, p2) {
			t.Fatalf("proposals differ:\ntokens: %#v\nvalid:  %#v", p1, p2)
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
