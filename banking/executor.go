package banking

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

var _ gateway.Executor = Executor{}

// Executor carries out the pack's operations on a Mem, with the resolved
// arguments only. Its outputs are what AgentDojo's tools return, as JSON
// text: the IBAN and file text as JSON strings, the balance as a number,
// transactions as arrays of objects with amounts as decimals, and
// {"message": ...} for writes. Every error wraps gateway.ErrNotExecuted:
// the in-memory bank either applies an operation whole or not at all.
type Executor struct {
	Bank *Mem
}

// DefaultRecent is how many transactions banking.get_most_recent_transactions
// returns when n is omitted.
const DefaultRecent = 100

// Execute implements gateway.Executor.
func (e Executor) Execute(ctx context.Context, op intent.Operation, _ intent.OperationHash) (gateway.Result, error) {
	if err := ctx.Err(); err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	out, err := e.execute(op)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	return gateway.Result{Output: string(b)}, nil
}

func (e Executor) execute(op intent.Operation) (any, error) {
	o, a := op.Owner, op.Args
	str := func(name string) string { return a[name].Str }
	amount := func(name string) intent.Amount { return intent.Amount(a[name].Int) }
	switch op.Action {
	case ActionGetIBAN:
		return e.Bank.IBAN(o)
	case ActionGetBalance:
		b, err := e.Bank.Balance(o)
		return decimal(b), err
	case ActionGetMostRecentTransactions:
		n := int64(DefaultRecent)
		if v, ok := a["n"]; ok {
			n = v.Int
		}
		ts, err := e.Bank.RecentTransactions(o, n)
		return txOut(ts), err
	case ActionGetScheduledTransactions:
		ts, err := e.Bank.ScheduledTransactions(o)
		return txOut(ts), err
	case ActionReadFile:
		return e.Bank.ReadFile(o, str("file_path"))
	case ActionGetUserInfo:
		return e.Bank.UserInfo(o)
	case ActionSendMoney:
		t, err := e.Bank.SendMoney(o, str("recipient"), amount("amount"), str("subject"), str("date"))
		return message("Transaction to %s for %s sent.", t.Recipient, intent.FormatAmount(t.Amount, 2)), err
	case ActionScheduleTransaction:
		t, err := e.Bank.ScheduleTransaction(o, str("recipient"), amount("amount"), str("subject"), str("date"), a["recurring"].Bool)
		return message("Transaction to %s for %s scheduled.", t.Recipient, intent.FormatAmount(t.Amount, 2)), err
	case ActionUpdateScheduledTransaction:
		id := a["id"].Int
		_, err := e.Bank.UpdateScheduled(o, id, ScheduledUpdate{
			Recipient: str("recipient"), Amount: amount("amount"), Subject: str("subject"),
			Date: str("date"), Recurring: a["recurring"].Bool,
		})
		return message("Transaction with ID %d updated.", id), err
	case ActionUpdatePassword:
		return message("Password updated."), e.Bank.UpdatePassword(o, str("password"))
	case ActionUpdateUserInfo:
		return e.Bank.UpdateUserInfo(o, UserInfo{FirstName: str("first_name"), LastName: str("last_name"), Street: str("street"), City: str("city")})
	}
	return nil, fmt.Errorf("banking: unknown action %q", op.Action)
}

// decimal is an amount in minor units written as a JSON number with two
// decimals ("1810.00").
type decimal intent.Amount

// MarshalJSON writes d as a JSON number with two decimals.
func (d decimal) MarshalJSON() ([]byte, error) {
	return []byte(intent.FormatAmount(intent.Amount(d), 2)), nil
}

type txJSON struct {
	ID        int64   `json:"id"`
	Sender    string  `json:"sender"`
	Recipient string  `json:"recipient"`
	Amount    decimal `json:"amount"`
	Subject   string  `json:"subject"`
	Date      string  `json:"date"`
	Recurring bool    `json:"recurring"`
}

func txOut(ts []Transaction) []txJSON {
	out := make([]txJSON, len(ts))
	for i, t := range ts {
		out[i] = txJSON{t.ID, t.Sender, t.Recipient, decimal(t.Amount), t.Subject, t.Date, t.Recurring}
	}
	return out
}

func message(format string, a ...any) map[string]string {
	return map[string]string{"message": fmt.Sprintf(format, a...)}
}
