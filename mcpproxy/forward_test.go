package mcpproxy_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/mcpproxy"
)

func TestEncodeArgs(t *testing.T) {
	t.Parallel()
	args := intent.Args{
		"iban":   intent.Str("DE89370400440532013000"),
		"note":   intent.Str(`<a&b> "q"`),
		"n":      intent.Int(-7),
		"ok":     intent.Bool(true),
		"amount": intent.AmountValue(9007199254740993, 2), // beyond float64's exact integers
		"fee":    intent.AmountValue(5, 2),
		"cents":  intent.AmountValue(125000, 2),
	}
	for _, tc := range []struct {
		name    string
		formats map[string]mcpproxy.AmountFormat
		renames map[string]string
		want    string
	}{
		{"numbers", nil, nil,
			`{"amount":90071992547409.93,"cents":1250.00,"fee":0.05,"iban":"DE89370400440532013000","n":-7,"note":"<a&b> \"q\"","ok":true}`},
		{"formats", map[string]mcpproxy.AmountFormat{"amount": mcpproxy.AmountString, "cents": mcpproxy.AmountMinorUnits}, nil,
			`{"amount":"90071992547409.93","cents":125000,"fee":0.05,"iban":"DE89370400440532013000","n":-7,"note":"<a&b> \"q\"","ok":true}`},
		{"renamed", nil, map[string]string{"iban": "recipient"},
			`{"amount":90071992547409.93,"cents":1250.00,"fee":0.05,"n":-7,"note":"<a&b> \"q\"","ok":true,"recipient":"DE89370400440532013000"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := mcpproxy.EncodeArgs(args, tc.formats, tc.renames)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
			if !json.Valid(got) {
				t.Errorf("not JSON: %s", got)
			}
		})
	}
	if _, err := mcpproxy.EncodeArgs(intent.Args{"x": {}}, nil, nil); err == nil {
		t.Error("an invalid value was encoded")
	}
}

func TestParseAmountFormat(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]mcpproxy.AmountFormat{"": mcpproxy.AmountNumber, "number": mcpproxy.AmountNumber, "string": mcpproxy.AmountString, "minor_units": mcpproxy.AmountMinorUnits} {
		if got, err := mcpproxy.ParseAmountFormat(in); err != nil || got != want {
			t.Errorf("%q: got %v, %v", in, got, err)
		}
	}
	if _, err := mcpproxy.ParseAmountFormat("float"); err == nil {
		t.Error("float accepted")
	}
}

func TestContractTool(t *testing.T) {
	t.Parallel()
	c, err := contract.New(contract.Contract{
		Action: "ap.pay_bill", Doc: "Pays a bill.", Budget: "amount",
		Params: []contract.Parameter{
			{Name: "iban", Type: contract.String(64), Required: true, Critical: true, Sources: []contract.Source{contract.FromRegistry("accounts")}, Doc: "IBAN."},
			{Name: "amount", Type: contract.Amount(2), Required: true},
			{Name: "due", Type: contract.Date()},
			{Name: "n", Type: contract.Integer()},
			{Name: "urgent", Type: contract.Bool()},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tool := mcpproxy.ContractTool("pay_bill", c)
	want := `{"additionalProperties":false,"properties":{"amount":{"description":"(amount with at most 2 decimals)","type":["number","string"]},"due":{"format":"date","type":"string"},"iban":{"description":"IBAN. Only a value on file or named by the user is accepted.","type":"string"},"n":{"type":"integer"},"urgent":{"type":"boolean"}},"required":["iban","amount"],"type":"object"}`
	if string(tool.InputSchema) != want || tool.Action != "ap.pay_bill" || tool.Description != "Pays a bill." {
		t.Errorf("got %s %s %q\nwant schema %s", tool.Action, tool.InputSchema, tool.Description, want)
	}
}

// The forwarder writes what the gateway resolved, in the downstream's
// representation: amounts exactly, from minor units.
func ExampleEncodeArgs() {
	op := intent.Args{
		"recipient_iban": intent.Str("DE89370400440532013000"), // the record on file, not the agent's spelling
		"amount":         intent.AmountValue(240000, 2),
		"reference":      intent.Str("INV-2291"),
	}
	b, _ := mcpproxy.EncodeArgs(op, map[string]mcpproxy.AmountFormat{"amount": mcpproxy.AmountNumber}, nil)
	fmt.Println(string(b))
	// Output: {"amount":2400.00,"recipient_iban":"DE89370400440532013000","reference":"INV-2291"}
}
