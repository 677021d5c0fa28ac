package contract

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
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

// parseAmountRegexp is parseAmount as it was written with a regexp: the
// reference the hand-written split must match.
func parseAmountRegexp(raw json.RawMessage, scale uint8) (intent.Amount, error) {
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
	m := regexp.MustCompile(`^(0|[1-9][0-9]*)(\.([0-9]+))?$`).FindStringSubmatch(text)
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

func TestParseAmountMatchesRegexp(t *testing.T) {
	inputs := []string{`"12.50"`, `12.5`, `"0.01"`, `"0"`, `"0.00"`, `"00.1"`, `"01"`, `"1."`, `".5"`, `"1.2.3"`, `"1e3"`, `1e3`,
		`"-1"`, `-1`, `"+1"`, `" 1"`, `"1 "`, `"١٢"`, `"1,000.00"`, `""`, `"."`, `"9223372036854775807"`, `"92233720368547758.07"`,
		`"92233720368547758.08"`, `"922337203685477580.7"`, `"1.000000"`, `"1.001"`, `"1.0010"`, `"18446744073709551616"`, `"0.5"`, `"10"`}
	for _, in := range inputs {
		for _, scale := range []uint8{0, 2, 3, 18} {
			got, gerr := parseAmount(json.RawMessage(in), scale)
			want, werr := parseAmountRegexp(json.RawMessage(in), scale)
			if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
				t.Errorf("parseAmount(%s, %d) = %d, %v; want %d, %v", in, scale, got, gerr, want, werr)
			}
		}
	}
}

func FuzzParseAmountMatchesRegexp(f *testing.F) {
	f.Add(`"12.50"`, uint8(2))
	f.Add(`"01.5"`, uint8(1))
	f.Fuzz(func(t *testing.T, in string, scale uint8) {
		scale %= 20
		got, gerr := parseAmount(json.RawMessage(in), scale)
		want, werr := parseAmountRegexp(json.RawMessage(in), scale)
		if got != want || fmt.Sprint(gerr) != fmt.Sprint(werr) {
			t.Errorf("parseAmount(%s, %d) = %d, %v; want %d, %v", in, scale, got, gerr, want, werr)
		}
	})
}
