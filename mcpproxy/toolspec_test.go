package mcpproxy_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/mcpproxy"
)

// sendMoney is a downstream tool as its server lists it.
var sendMoney = mcpproxy.RawTool{
	Name:        "send_money",
	Description: "Send money to an IBAN.",
	InputSchema: []byte(`{"type":"object","properties":{
		"recipient_iban":{"type":"string","description":"the payee's IBAN"},
		"amount":{"type":"number"},
		"reference":{"type":"string"},
		"when":{"type":"string"}},
		"required":["recipient_iban","amount"]}`),
}

// sendMoneySpec is a valid declaration of sendMoney.
func sendMoneySpec() mcpproxy.ToolSpec {
	return mcpproxy.ToolSpec{
		Action: "bank.send_money", Budget: "amount",
		Params: []mcpproxy.ParamSpec{
			{Name: "recipient_iban", Critical: true, Sources: []string{"registry:payees", "mandate:payees"}, Normalizer: "iban", OnNoMatch: "Add the payee first."},
			{Name: "amount", Type: "amount", Scale: 2, Format: "minor_units"},
			{Name: "reference", MaxLength: 140},
		},
	}
}

func TestToolSpecContract(t *testing.T) {
	t.Parallel()
	ct, amounts, err := sendMoneySpec().Contract(sendMoney, map[string]string{"payees": "iban"})
	if err != nil {
		t.Fatal(err)
	}
	if ct.Action != "bank.send_money" || ct.Budget != "amount" || ct.Doc != "Send money to an IBAN." || len(ct.Params) != 3 {
		t.Fatalf("contract = %+v", ct)
	}
	iban, amount, ref := ct.Params[0], ct.Params[1], ct.Params[2]
	if !iban.Critical || !iban.Required || iban.Doc != "the payee's IBAN" || len(iban.Sources) != 2 || iban.Normalizer == nil || iban.OnNoMatch != "Add the payee first." {
		t.Errorf("recipient_iban = %+v", iban)
	}
	if n, err := iban.Normalizer("gb29 nwbk 6016 1331 9268 19"); err != nil || n != "GB29NWBK60161331926819" {
		t.Errorf("recipient_iban's normalizer gives %q, %v", n, err)
	}
	if !amount.Required || amount.Critical {
		t.Errorf("amount = %+v", amount)
	}
	if ref.Required {
		t.Errorf("reference is required, but the schema does not require it")
	}
	if amounts["amount"] != mcpproxy.AmountMinorUnits || len(amounts) != 1 {
		t.Errorf("amount formats = %v", amounts)
	}

	// Required overrides the schema's; a schema that cannot be read checks
	// nothing.
	no, yes := false, true
	spec := mcpproxy.ToolSpec{Action: "bank.note", ReadOnly: true, Params: []mcpproxy.ParamSpec{
		{Name: "amount", Type: "amount", Required: &no}, {Name: "anything", Type: "date", Required: &yes}, {Name: "n", Type: "integer"}, {Name: "b", Type: "bool"},
	}}
	ct, amounts, err = spec.Contract(mcpproxy.RawTool{Name: "note", InputSchema: []byte(`not json`)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ct.ReadOnly || ct.Params[0].Required || !ct.Params[1].Required || amounts["amount"] != mcpproxy.AmountNumber {
		t.Errorf("contract = %+v, amounts %v", ct, amounts)
	}
}

func TestToolSpecContractErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		edit         func(*mcpproxy.ToolSpec)
		param, field string
		want         string
		wrapped      error
	}{
		{"schema requires an undeclared argument", func(s *mcpproxy.ToolSpec) { s.Params = s.Params[1:] },
			"recipient_iban", "", `tool "send_money" requires the argument "recipient_iban"`, nil},
		{"no action", func(s *mcpproxy.ToolSpec) { s.Action = "" }, "", "", "tool needs an action", nil},
		{"argument not in the schema", func(s *mcpproxy.ToolSpec) { s.Params = append(s.Params, mcpproxy.ParamSpec{Name: "memo"}) },
			"memo", "", `tool "send_money" has no argument "memo" in its input schema`, nil},
		{"unknown type", func(s *mcpproxy.ToolSpec) { s.Params[2].Type = "text" }, "reference", "type", `unknown type "text"`, nil},
		{"scale too large", func(s *mcpproxy.ToolSpec) { s.Params[1].Scale = 19 }, "amount", "scale", "scale must be between 0 and 18", nil},
		{"negative scale", func(s *mcpproxy.ToolSpec) { s.Params[1].Scale = -1 }, "amount", "scale", "scale must be between 0 and 18", nil},
		{"unknown amount format", func(s *mcpproxy.ToolSpec) { s.Params[1].Format = "cents" }, "amount", "format", `amount format "cents" is not number, string or minor_units`, nil},
		{"format of a string", func(s *mcpproxy.ToolSpec) { s.Params[2].Format = "string" }, "reference", "format", "format applies to amounts only", nil},
		{"unknown normalizer", func(s *mcpproxy.ToolSpec) { s.Params[2].Normalizer = "upper" }, "reference", "normalizer", `unknown normalizer "upper"`, nil},
		{"critical without sources", func(s *mcpproxy.ToolSpec) { s.Params[0].Sources = nil }, "recipient_iban", "", `critical parameter "recipient_iban" has no sources`, nil},
		{"sources but not critical", func(s *mcpproxy.ToolSpec) { s.Params[2].Sources = []string{"mandate:refs"} }, "reference", "sources", `parameter "reference" has sources but is not critical`, nil},
		{"unknown registry", func(s *mcpproxy.ToolSpec) { s.Params[0].Sources[0] = "registry:vendors" }, "recipient_iban", "sources", `unknown registry "vendors" (declare it under [registries.vendors])`, nil},
		{"registry with another normalizer", func(s *mcpproxy.ToolSpec) { s.Params[0].Normalizer = "account_number" }, "recipient_iban", "normalizer",
			`parameter "recipient_iban" uses normalizer "account_number" but registry "payees" normalizes with "iban"`, nil},
		{"source of no kind", func(s *mcpproxy.ToolSpec) { s.Params[0].Sources[1] = "payees" }, "recipient_iban", "sources", `source "payees" is not registry:NAME or mandate:CLAIM`, nil},
		{"source without a name", func(s *mcpproxy.ToolSpec) { s.Params[0].Sources[1] = "mandate:" }, "recipient_iban", "sources", `source "mandate:" is not registry:NAME or mandate:CLAIM`, nil},
		{"action not pack.verb", func(s *mcpproxy.ToolSpec) { s.Action = "send_money" }, "", "", "action must look like pack.verb", contract.ErrInvalidContract},
		// Issue 14: a payment tool without a budget binding paid 3 x
		// 15,000.00 under a 12,000.00 mandate with no confirmation.
		{"amount without a budget binding", func(s *mcpproxy.ToolSpec) { s.Budget = "" }, "amount", "type",
			`tool "send_money" takes the amount "amount" but has no budget binding`, nil},
		{"budget of no parameter", func(s *mcpproxy.ToolSpec) { s.Budget = "total" }, "", "", "", contract.ErrInvalidContract},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := sendMoneySpec()
			s.Params[0].Sources = append([]string(nil), s.Params[0].Sources...)
			tc.edit(&s)
			ct, _, err := s.Contract(sendMoney, map[string]string{"payees": "iban"})
			var se *mcpproxy.SpecError
			if !errors.As(err, &se) {
				t.Fatalf("Contract() = %v, %v; want a *SpecError", ct, err)
			}
			if se.Param != tc.param || se.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = {Param: %q, Field: %q} %q; want {%q, %q} containing %q", se.Param, se.Field, err, tc.param, tc.field, tc.want)
			}
			if tc.wrapped != nil && !errors.Is(err, tc.wrapped) {
				t.Errorf("error %v does not wrap %v", err, tc.wrapped)
			}
		})
	}
}

func TestNormalizer(t *testing.T) {
	t.Parallel()
	for _, name := range strings.Split(mcpproxy.NormalizerNames, ", ") {
		if n, ok := mcpproxy.Normalizer(name); !ok || n == nil {
			t.Errorf("Normalizer(%q) missing, though NormalizerNames lists it", name)
		}
	}
	if _, ok := mcpproxy.Normalizer("upper"); ok {
		t.Error(`Normalizer("upper") found`)
	}
}

func TestToolSpecTool(t *testing.T) {
	t.Parallel()
	spec := sendMoneySpec()
	ct, _, err := spec.Contract(sendMoney, map[string]string{"payees": "iban"})
	if err != nil {
		t.Fatal(err)
	}
	got := spec.Tool(nil, sendMoney, ct)
	if got.Name != "send_money" || got.Action != "bank.send_money" || got.Description != sendMoney.Description ||
		string(got.InputSchema) != string(sendMoney.InputSchema) || got.ReadOnly {
		t.Errorf("tool = %+v", got)
	}
	if m := got.Mirror; m == nil || m.Tool != "send_money" || strings.Join(m.Params, ",") != "recipient_iban,amount,reference" ||
		strings.Join(m.Critical, ",") != "recipient_iban" || m.Description != "" {
		t.Errorf("mirror = %+v", got.Mirror)
	}
	spec.Name, spec.Description, spec.ReadOnly = "pay", "Pay a payee on file.", true
	got = spec.Tool(nil, sendMoney, ct)
	if got.Name != "pay" || got.Description != "Pay a payee on file." || got.Mirror.Description != "Pay a payee on file." || got.Mirror.Tool != "send_money" || !got.ReadOnly {
		t.Errorf("renamed tool = %+v, mirror %+v", got, got.Mirror)
	}
}
