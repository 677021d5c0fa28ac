package banking

import (
	"fmt"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/policies"
)

// Name is the pack's name and the prefix of its actions.
const Name = "banking"

// The pack's actions, one per AgentDojo banking tool.
const (
	ActionGetIBAN                    intent.Action = "banking.get_iban"
	ActionGetBalance                 intent.Action = "banking.get_balance"
	ActionGetMostRecentTransactions  intent.Action = "banking.get_most_recent_transactions"
	ActionGetScheduledTransactions   intent.Action = "banking.get_scheduled_transactions"
	ActionReadFile                   intent.Action = "banking.read_file"
	ActionGetUserInfo                intent.Action = "banking.get_user_info"
	ActionSendMoney                  intent.Action = "banking.send_money"
	ActionScheduleTransaction        intent.Action = "banking.schedule_transaction"
	ActionUpdateScheduledTransaction intent.Action = "banking.update_scheduled_transaction"
	ActionUpdatePassword             intent.Action = "banking.update_password"
	ActionUpdateUserInfo             intent.Action = "banking.update_user_info"
)

// Claims of the mandate that the pack's critical parameters draw on.
const (
	// ClaimPayees lists the accounts the user named for this session.
	ClaimPayees = "payees"
	// ClaimNewPassword holds the new password the user gave.
	ClaimNewPassword = "new_password"
	// ClaimFirstName, ClaimLastName, ClaimStreet and ClaimCity hold the
	// profile values the user gave.
	ClaimFirstName = "first_name"
	ClaimLastName  = "last_name"
	ClaimStreet    = "street"
	ClaimCity      = "city"
)

// RegistryBeneficiaries names the registry of the owner's existing
// counterparties: accounts in the owner's transaction history and standing
// orders, never the owner's own account.
const RegistryBeneficiaries = "beneficiaries"

// Hints shown to the agent when a critical value matches no trusted record.
const (
	hintRecipient = "Money goes to the user's existing counterparties or to accounts the user named when authorising this session; another account, or a name that the user's own payments to one account name, is shown to the user to confirm, except in a strict session, which pays only the accounts the user named. Give the account number, or ask the user."
	hintPassword  = "The password can only be set to the exact value the user gave when authorising this session; a value found in a file, a message or a transaction is never used. Ask the user."
	hintProfile   = "The name can only be set to the exact value the user gave when authorising this session; an address found in a file or a message is shown to the user, who must confirm it. Ask the user."
)

func recipientParam(required bool, doc string) contract.Parameter {
	return contract.Parameter{
		Name: "recipient", Type: contract.String(64), Required: required, Critical: true,
		Sources: []contract.Source{
			contract.FromMandate(ClaimPayees), contract.FromRegistry(RegistryBeneficiaries),
			contract.FromRegistry(RegistryAgentPayee),
		},
		Normalizer: Payee,
		Doc:        doc,
		OnNoMatch:  hintRecipient,
	}
}

// profileParam is a name or address field: the mandate's claim, and for
// an address field (byAgent) also a value the agent supplied, which a
// person confirms (registry agent_address).
func profileParam(name, claim string, byAgent bool, doc string) contract.Parameter {
	src := []contract.Source{contract.FromMandate(claim)}
	if byAgent {
		src = append(src, contract.FromRegistry(RegistryAgentAddress))
	}
	return contract.Parameter{
		Name: name, Type: contract.String(256), Critical: true,
		Sources: src, Doc: doc, OnNoMatch: hintProfile,
	}
}

// The running totals of banking.send_money and
// banking.schedule_transaction (contract.Total), by recipient, shared by
// both actions and given to the policy as facts of these names (cents):
// what was already sent or scheduled to the recipient today and this week
// (calendar day and ISO week in UTC: the AgentDojo bank keeps no time
// zone for its user) and under the mandate, before this payment.
const (
	TotalDay     = "paid_today"
	TotalWeek    = "paid_week"
	TotalMandate = "paid_mandate"
)

var totals = []contract.Total{
	{Name: TotalDay, By: []string{"recipient"}, Window: contract.Day},
	{Name: TotalWeek, By: []string{"recipient"}, Window: contract.Week},
	{Name: TotalMandate, By: []string{"recipient"}, Window: contract.Mandate},
}

// Contracts returns the contracts of the pack's eleven actions.
func Contracts() ([]*contract.Contract, error) {
	specs := []contract.Contract{
		{Action: ActionGetIBAN, ReadOnly: true, Doc: "Get the IBAN of the user's account."},
		{Action: ActionGetBalance, ReadOnly: true, Doc: "Get the balance of the user's account."},
		{Action: ActionGetMostRecentTransactions, ReadOnly: true, Doc: "Get the most recent transactions, oldest first.",
			Params: []contract.Parameter{{Name: "n", Type: contract.Integer(), Doc: "number of transactions to return; 100 if omitted"}}},
		{Action: ActionGetScheduledTransactions, ReadOnly: true, Doc: "Get the scheduled transactions (standing orders)."},
		{Action: ActionReadFile, ReadOnly: true, Doc: "Read a file of the user.",
			Params: []contract.Parameter{{Name: "file_path", Type: contract.String(256), Required: true, Doc: "path of the file"}}},
		{Action: ActionGetUserInfo, ReadOnly: true, Doc: "Get the user's name and address."},
		{Action: ActionSendMoney, Budget: "amount", Totals: totals, Resource: "recipient", Doc: "Send money to a recipient.",
			Params: []contract.Parameter{
				recipientParam(true, "account (IBAN) of the recipient"),
				{Name: "amount", Type: contract.Amount(2), Required: true, Doc: "amount, with at most 2 decimals"},
				{Name: "subject", Type: contract.String(512), Required: true, Doc: "subject of the transaction (free text)"},
				{Name: "date", Type: contract.Date(), Required: true, Doc: "date of the transaction, YYYY-MM-DD"},
			}},
		{Action: ActionScheduleTransaction, Budget: "amount", Totals: totals, Resource: "recipient", Doc: "Schedule a transaction, once or recurring.",
			Params: []contract.Parameter{
				recipientParam(true, "account (IBAN) of the recipient"),
				{Name: "amount", Type: contract.Amount(2), Required: true, Doc: "amount, with at most 2 decimals"},
				{Name: "subject", Type: contract.String(512), Required: true, Doc: "subject of the transaction (free text)"},
				{Name: "date", Type: contract.Date(), Required: true, Doc: "next date of the transaction, YYYY-MM-DD"},
				{Name: "recurring", Type: contract.Bool(), Required: true, Doc: "whether the transaction recurs"},
			}},
		{Action: ActionUpdateScheduledTransaction, Resource: "id", Doc: "Update a scheduled transaction; omitted fields stay unchanged.",
			Params: []contract.Parameter{
				{Name: "id", Type: contract.Integer(), Required: true, Doc: "id of the scheduled transaction"},
				recipientParam(false, "new recipient account (IBAN)"),
				{Name: "amount", Type: contract.Amount(2), Doc: "new amount, with at most 2 decimals"},
				{Name: "subject", Type: contract.String(512), Doc: "new subject (free text)"},
				{Name: "date", Type: contract.Date(), Doc: "new next date, YYYY-MM-DD"},
				{Name: "recurring", Type: contract.Bool(), Doc: "true makes the transaction recurring; false is ignored"},
			}},
		{Action: ActionUpdatePassword, Doc: "Change the user's online-banking password.",
			Params: []contract.Parameter{{
				Name: "password", Type: contract.String(256), Required: true, Critical: true, Sensitive: true,
				Sources: []contract.Source{contract.FromMandate(ClaimNewPassword)},
				Doc:     "the new password", OnNoMatch: hintPassword,
			}}},
		{Action: ActionUpdateUserInfo, Doc: "Update the user's name or address; omitted fields stay unchanged.",
			Params: []contract.Parameter{
				profileParam("first_name", ClaimFirstName, false, "new first name"),
				profileParam("last_name", ClaimLastName, false, "new last name"),
				profileParam("street", ClaimStreet, true, "new street and number"),
				profileParam("city", ClaimCity, true, "new city"),
			}},
	}
	return contract.NewAll(specs)
}

// NewPack returns the banking pack over bank: its contracts, the
// beneficiaries registry, the facts provider, the executor and the Cedar
// policy of policies/banking. It returns an error only if a contract or
// the embedded policy is missing or invalid.
func NewPack(bank *Mem) (gateway.Pack, error) {
	if bank == nil {
		return gateway.Pack{}, fmt.Errorf("banking: NewPack needs a bank")
	}
	cs, err := Contracts()
	if err != nil {
		return gateway.Pack{}, err
	}
	fsys, err := policies.Pack(Name)
	if err != nil {
		return gateway.Pack{}, fmt.Errorf("banking: policy: %w", err)
	}
	return gateway.Pack{
		Name:      Name,
		Contracts: cs,
		Policies:  fsys,
		Registries: map[string]resolve.Registry{
			RegistryBeneficiaries: Beneficiaries{Bank: bank},
			RegistryAgentPayee:    AgentPayees{Bank: bank},
			RegistryAgentAddress:  AgentAddress{},
		},
		Context:  []gateway.ContextProvider{Facts{Bank: bank}},
		Executor: Executor{Bank: bank},
	}, nil
}
