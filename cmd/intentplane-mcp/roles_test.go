package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
)

// TestArgRoles: the audit view's payee is what every running total of
// the action adds up by, its amount the budget parameter, in the
// BudgetCurrency fact's currency or else the mandate's.
func TestArgRoles(t *testing.T) {
	send := &contract.Contract{Action: "bank.send_money", Budget: "amount",
		Totals: []contract.Total{{Name: "paid_payee_day", By: []string{"recipient_iban"}}}}
	pay := &contract.Contract{Action: ap.ActionPayBill, Budget: "amount", BudgetCurrency: "budget_currency",
		Totals: []contract.Total{{Name: "paid_bill", By: []string{"vendor", "bill"}}, {Name: "paid_day", By: []string{"vendor"}}}}
	read := &contract.Contract{Action: "bank.read_inbox", ReadOnly: true}
	packs := []gateway.Pack{{Name: "x", Contracts: []*contract.Contract{send, read}}, {Name: "ap", Contracts: []*contract.Contract{pay}}}
	roles := argRoles(packs, "EUR")
	for _, c := range []struct {
		ct   *contract.Contract
		want approvals.ArgRoles
	}{
		{send, approvals.ArgRoles{Payee: []string{"recipient_iban"}, Amount: "amount", Currency: "EUR"}},
		{pay, approvals.ArgRoles{Payee: []string{"vendor"}, Amount: "amount", CurrencyFrom: "budget_currency"}},
		{read, approvals.ArgRoles{}},
	} {
		got, ok := roles(c.ct.Action)
		if !ok {
			t.Fatalf("no roles for %s", c.ct.Action)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("roles of %s (-want, +got):\n%s", c.ct.Action, diff)
		}
	}
	if _, ok := roles("bank.unknown"); ok {
		t.Error("roles of an undeclared action")
	}
	// The payee filter's parameters: every action's payee, once.
	if diff := cmp.Diff([]string{"recipient_iban", "vendor"}, payeeParams(packs)); diff != "" {
		t.Errorf("payeeParams (-want, +got):\n%s", diff)
	}
}
