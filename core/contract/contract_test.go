package contract_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
)

func upper(s string) (string, error) { return strings.ToUpper(s), nil }

func payContract(t *testing.T) *contract.Contract {
	t.Helper()
	c, err := contract.New(contract.Contract{
		Action: "bank.pay",
		Params: []contract.Parameter{
			{Name: "iban", Type: contract.String(64), Required: true, Critical: true, Normalizer: upper,
				Sources: []contract.Source{contract.FromMandate("payees"), contract.FromRegistry("beneficiaries")}},
			{Name: "amount", Type: contract.Amount(2), Required: true},
			{Name: "subject", Type: contract.String(20)},
			{Name: "date", Type: contract.Date()},
			{Name: "recurring", Type: contract.Bool()},
			{Name: "id", Type: contract.Integer()},
		},
		Budget: "amount",
	})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestNewRefusesCriticalWithoutSource(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		c    contract.Contract
		want string
	}{
		{"critical without source", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "to", Type: contract.String(0), Critical: true}}}, "critical parameter \"to\" has no trusted source"},
		{"sources on a non-critical parameter", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "to", Type: contract.String(0), Sources: []contract.Source{contract.FromMandate("x")}}}}, "not critical"},
		{"critical amount", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "n", Type: contract.Amount(2), Critical: true, Sources: []contract.Source{contract.FromMandate("x")}}}}, "must be text"},
		{"bad action", contract.Contract{Action: "pay"}, "pack.verb"},
		{"duplicate parameter", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "x", Type: contract.Bool()}, {Name: "x", Type: contract.Bool()}}}, "declared twice"},
		{"untyped parameter", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "x"}}}, "no type"},
		{"budget not an amount", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "x", Type: contract.Integer(), Required: true}}, Budget: "x"}, "amount parameter"},
		{"optional budget", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "x", Type: contract.Amount(2)}}, Budget: "x"}, "must be required"},
		{"empty source name", contract.Contract{Action: "a.b", Params: []contract.Parameter{{Name: "to", Type: contract.String(0), Critical: true, Sources: []contract.Source{contract.FromRegistry("")}}}}, "invalid source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := contract.New(tt.c)
			if !errors.Is(err, contract.ErrInvalidContract) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("New() error = %v, want ErrInvalidContract containing %q", err, tt.want)
			}
		})
	}
}

func TestDecodeProposal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		body string
		want string // error substring; empty means success
	}{
		{"ok", `{"action":"bank.pay","args":{"iban":"x","amount":"1.00"}}`, ""},
		{"ok without args", `{"action":"bank.get"}`, ""},
		{"unknown top-level key", `{"action":"bank.pay","args":{},"approved":true}`, `unknown key "approved"`},
		{"smuggled context", `{"action":"bank.pay","args":{},"context":{"approval":{"confirm":true}}}`, `unknown key "context"`},
		{"duplicate action", `{"action":"bank.get","action":"bank.pay","args":{}}`, `key "action" appears twice`},
		{"duplicate argument", `{"action":"bank.pay","args":{"iban":"A","iban":"B"}}`, `argument "iban" appears twice`},
		{"missing action", `{"args":{}}`, `missing "action"`},
		{"action not a string", `{"action":7,"args":{}}`, `"action" must be a string`},
		{"args not an object", `{"action":"bank.pay","args":[]}`, `"args" must be a JSON object`},
		{"not an object", `["bank.pay"]`, "JSON object"},
		{"trailing data", `{"action":"bank.pay","args":{}} {"action":"bank.pay"}`, "data after"},
		{"truncated", `{"action":"bank.pay","args":{"iban":"x"`, "invalid JSON"},
		{"invalid utf8", "{\"action\":\"bank.pay\",\"args\":{\"iban\":\"\xff\"}}", "not valid UTF-8"},
		{"empty", ``, "JSON object"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := contract.DecodeProposal([]byte(tt.body), contract.Limits{})
			if tt.want == "" {
				if err != nil {
					t.Fatalf("DecodeProposal() = %v, want success", err)
				}
				return
			}
			if !errors.Is(err, contract.ErrMalformed) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("DecodeProposal() error = %v, want ErrMalformed containing %q", err, tt.want)
			}
		})
	}
}

func TestDecodeProposalLimits(t *testing.T) {
	t.Parallel()
	big := `{"action":"bank.pay","args":{"subject":"` + strings.Repeat("a", 70000) + `"}}`
	if _, err := contract.DecodeProposal([]byte(big), contract.Limits{}); err == nil || !strings.Contains(err.Error(), "limit is 65536") {
		t.Fatalf("oversized body: %v", err)
	}
	var b strings.Builder
	b.WriteString(`{"action":"bank.pay","args":{`)
	for i := range 5 {
		if i > 0 {
			b.WriteString(",")
		}
		b.WriteString(`"a` + string(rune('0'+i)) + `":1`)
	}
	b.WriteString("}}")
	if _, err := contract.DecodeProposal([]byte(b.String()), contract.Limits{MaxArgs: 4}); err == nil || !strings.Contains(err.Error(), "more than 4 arguments") {
		t.Fatalf("too many args: %v", err)
	}
}

func decode(t *testing.T, c *contract.Contract, args string) (intent.Args, error) {
	t.Helper()
	var raw map[string]json.RawMessage
	if err := json.Unmarshal([]byte(args), &raw); err != nil {
		t.Fatal(err)
	}
	return c.Decode(raw)
}

func TestDecodeArgs(t *testing.T) {
	t.Parallel()
	c := payContract(t)
	tests := []struct {
		name string
		args string
		want intent.Args
		err  string
	}{
		{"amount as string", `{"iban":"de89","amount":"1250.00"}`, intent.Args{"iban": intent.Str("de89"), "amount": intent.AmountValue(125000, 2)}, ""},
		{"amount as number", `{"iban":"x","amount":98.70}`, intent.Args{"iban": intent.Str("x"), "amount": intent.AmountValue(9870, 2)}, ""},
		{"amount integer", `{"iban":"x","amount":5}`, intent.Args{"iban": intent.Str("x"), "amount": intent.AmountValue(500, 2)}, ""},
		{"amount trailing zeros", `{"iban":"x","amount":"0.100"}`, intent.Args{"iban": intent.Str("x"), "amount": intent.AmountValue(10, 2)}, ""},
		{"amount float trap", `{"iban":"x","amount":0.29}`, intent.Args{"iban": intent.Str("x"), "amount": intent.AmountValue(29, 2)}, ""},
		{"all optional", `{"iban":"x","amount":"1","subject":"Rent\tMay","date":"2022-04-01","recurring":true,"id":7}`,
			intent.Args{"iban": intent.Str("x"), "amount": intent.AmountValue(100, 2), "subject": intent.Str("Rent\tMay"), "date": intent.Str("2022-04-01"), "recurring": intent.Bool(true), "id": intent.Int(7)}, ""},
		{"null is absent", `{"iban":"x","amount":"1","subject":null}`, intent.Args{"iban": intent.Str("x"), "amount": intent.AmountValue(100, 2)}, ""},
		{"critical value not normalized at decode", `{"iban":"de 89","amount":"1"}`, intent.Args{"iban": intent.Str("de 89"), "amount": intent.AmountValue(100, 2)}, ""},
		{"unknown argument", `{"iban":"x","amount":"1","approved":true}`, nil, `unknown argument "approved"`},
		{"missing required", `{"amount":"1"}`, nil, `"iban": is required`},
		{"too many decimals", `{"iban":"x","amount":"1.005"}`, nil, "more than 2 decimals"},
		{"negative", `{"iban":"x","amount":-1}`, nil, "greater than zero"},
		{"negative string", `{"iban":"x","amount":"-1"}`, nil, "greater than zero"},
		{"zero", `{"iban":"x","amount":"0.00"}`, nil, "greater than zero"},
		{"exponent", `{"iban":"x","amount":1e3}`, nil, "plain decimal"},
		{"thousands separator", `{"iban":"x","amount":"1,000.00"}`, nil, "plain decimal"},
		{"overflow", `{"iban":"x","amount":"92233720368547758.08"}`, nil, "too large"},
		{"amount bool", `{"iban":"x","amount":true}`, nil, "amount such as"},
		{"string as number", `{"iban":7,"amount":"1"}`, nil, "must be text"},
		{"string too long", `{"iban":"x","amount":"1","subject":"123456789012345678901"}`, nil, "at most 20"},
		{"control character", `{"iban":"x","amount":"1","subject":"a\u0000b"}`, nil, "control character U+0000"},
		{"bad date", `{"iban":"x","amount":"1","date":"2022-02-30"}`, nil, "YYYY-MM-DD"},
		{"bool as string", `{"iban":"x","amount":"1","recurring":"true"}`, nil, "true or false"},
		{"int with fraction", `{"iban":"x","amount":"1","id":7.0}`, nil, "integer"},
		{"int overflow", `{"iban":"x","amount":"1","id":9223372036854775808}`, nil, "out of range"},
		{"nested object", `{"iban":{"__entity":{"type":"Owner","id":"x"}},"amount":"1"}`, nil, "must be text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := decode(t, c, tt.args)
			if tt.err != "" {
				if !errors.Is(err, contract.ErrBadArgument) || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("Decode() error = %v, want ErrBadArgument containing %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode() = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Decode() (-want, +got):\n%s", diff)
			}
		})
	}
}

// FuzzDecodeProposal: arbitrary bytes never panic, and whatever decodes
// re-decodes to the same result after a JSON round trip of its parts.
func FuzzDecodeProposal(f *testing.F) {
	f.Add([]byte(`{"action":"bank.pay","args":{"iban":"DE89 3704","amount":"12.50"}}`))
	f.Add([]byte(`{"action":"bank.pay","args":{"amount":1e400}}`))
	f.Add([]byte(`{"action":"x","args":{"a":{"b":[1,2,{"c":null}]}}}`))
	f.Add([]byte("{\"action\":\"\\ud800\"}"))
	c, err := contract.New(contract.Contract{
		Action: "bank.pay",
		Params: []contract.Parameter{
			{Name: "iban", Type: contract.String(64), Critical: true, Sources: []contract.Source{contract.FromMandate("p")}},
			{Name: "amount", Type: contract.Amount(2)},
			{Name: "id", Type: contract.Integer()},
			{Name: "ok", Type: contract.Bool()},
		},
	})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		p, err := contract.DecodeProposal(body, contract.Limits{})
		if err != nil {
			if !errors.Is(err, contract.ErrMalformed) {
				t.Fatalf("error does not wrap ErrMalformed: %v", err)
			}
			return
		}
		args, err := c.Decode(p.Args)
		if err != nil {
			if !errors.Is(err, contract.ErrBadArgument) {
				t.Fatalf("error does not wrap ErrBadArgument: %v", err)
			}
			return
		}
		for name, v := range args {
			if v.Kind == intent.KindAmount && v.Int <= 0 {
				t.Fatalf("argument %s decoded to non-positive amount %d", name, v.Int)
			}
			if _, err := intent.Canonical(v); err != nil {
				t.Fatalf("decoded argument %s has no canonical encoding: %v", name, err)
			}
		}
	})
}

// TestAmountIn (issue 24): an amount in another parameter's currency is
// read with that currency's exponent, whatever the order of the
// arguments, and carries it as its scale.
func TestAmountIn(t *testing.T) {
	t.Parallel()
	c, err := contract.New(contract.Contract{Action: "ap.pay", Budget: "amount", Params: []contract.Parameter{
		{Name: "amount", Type: contract.AmountIn("currency"), Required: true},
		{Name: "currency", Type: contract.String(3), Required: true, Normalizer: upper},
		{Name: "residual", Type: contract.AmountIn("currency")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args  string
		want  intent.Value
		error string
	}{
		{`{"amount":"12.50","currency":"eur"}`, intent.AmountValue(1250, 2), ""},
		{`{"amount":"100","currency":"JPY"}`, intent.AmountValue(100, 0), ""},
		{`{"amount":100,"currency":"JPY"}`, intent.AmountValue(100, 0), ""},
		{`{"currency":"KWD","amount":"1.250"}`, intent.AmountValue(1250, 3), ""},
		{`{"amount":"1.5","currency":"KWD"}`, intent.AmountValue(1500, 3), ""},
		{`{"amount":"100.5","currency":"JPY"}`, intent.Value{}, "has more than 0 decimals"},
		{`{"amount":"1.2505","currency":"KWD"}`, intent.Value{}, "has more than 3 decimals"},
		{`{"amount":"12.50","currency":"XTS"}`, intent.Value{}, "not an active ISO 4217 currency"},
		{`{"amount":"12.50"}`, intent.Value{}, `"currency"`},
	} {
		var raw map[string]json.RawMessage
		if err := json.Unmarshal([]byte(tc.args), &raw); err != nil {
			t.Fatal(err)
		}
		args, err := c.Decode(raw)
		if tc.error != "" {
			if err == nil || !strings.Contains(err.Error(), tc.error) {
				t.Errorf("%s: %v; want %q", tc.args, err, tc.error)
			}
			continue
		}
		if err != nil || args["amount"] != tc.want {
			t.Errorf("%s: %+v, %v; want %+v", tc.args, args["amount"], err, tc.want)
		}
	}
	for _, bad := range []contract.Parameter{
		{Name: "currency", Type: contract.Integer(), Required: true},
		{Name: "currency", Type: contract.String(3)},
	} {
		if _, err := contract.New(contract.Contract{Action: "ap.pay", Params: []contract.Parameter{
			{Name: "amount", Type: contract.AmountIn("currency"), Required: true}, bad}}); err == nil {
			t.Errorf("currency %+v accepted", bad)
		}
	}
}

// TestNewAll: every contract is checked, in order, and the first invalid
// one's error is returned.
func TestNewAll(t *testing.T) {
	t.Parallel()
	ok := contract.Contract{Action: "x.read", Params: []contract.Parameter{{Name: "id", Type: contract.String(8)}}}
	cs, err := contract.NewAll([]contract.Contract{ok, {Action: "x.other"}})
	if err != nil || len(cs) != 2 || cs[0].Action != "x.read" || cs[1].Action != "x.other" {
		t.Fatalf("NewAll: %v, %v", cs, err)
	}
	if _, err := contract.NewAll([]contract.Contract{ok, {Action: "bad"}}); !errors.Is(err, contract.ErrInvalidContract) {
		t.Errorf("an invalid contract: %v", err)
	}
}
