package banking

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
)

var (
	_ resolve.Registry        = Beneficiaries{}
	_ gateway.ContextProvider = Facts{}
)

// Beneficiaries is the registry of an owner's existing counterparties: the
// accounts that appear as sender or recipient in the owner's transaction
// history and scheduled transactions, normalized with
// normalize.AccountNumber, excluding the owner's own account. Entries that
// are not account numbers ("me", a name) are ignored.
//
// A sender of an incoming payment counts as a counterparty (AgentDojo's
// user task 15 refunds the friend who paid the user); the facts provider
// tells the policy whether the owner ever paid the account
// (recipient_paid_before), so that paying an account known only from
// incoming payments needs a confirmation.
type Beneficiaries struct {
	Bank *Mem
}

// Lookup returns the owner's counterparty whose normalized account number
// is value. The record's ID names the first transaction it appears in
// ("transaction:2", "scheduled:6"). It returns an error wrapping
// resolve.ErrNoMatch when there is none, including for an owner the bank
// does not know.
func (b Beneficiaries) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	a, err := payer(ctx, b.Bank, owner, value)
	if err != nil {
		return resolve.Record{}, err
	}
	find := func(kind string, ts []Transaction) (resolve.Record, bool) {
		for _, t := range ts {
			if canonical(t.Sender) == value || canonical(t.Recipient) == value {
				return resolve.Record{ID: kind + ":" + strconv.FormatInt(t.ID, 10), Value: value}, true
			}
		}
		return resolve.Record{}, false
	}
	if r, ok := find("transaction", a.Transactions); ok {
		return r, nil
	}
	if r, ok := find("scheduled", a.Scheduled); ok {
		return r, nil
	}
	return resolve.Record{}, resolve.ErrNoMatch
}

// payer returns owner's account for a registry looking up value, or an
// error: ctx's, one wrapping resolve.ErrNoMatch for an owner the bank does
// not know, an empty value or the owner's own account, or the bank's.
func payer(ctx context.Context, bank *Mem, owner intent.Owner, value string) (Account, error) {
	if err := ctx.Err(); err != nil {
		return Account{}, err
	}
	a, err := bank.Account(owner)
	if errors.Is(err, ErrUnknownOwner) {
		return Account{}, fmt.Errorf("%w: no account", resolve.ErrNoMatch)
	}
	if err != nil {
		return Account{}, err
	}
	if value == "" || value == canonical(a.IBAN) {
		return Account{}, resolve.ErrNoMatch
	}
	return a, nil
}

// canonical returns s normalized as an account number, or "" if it is not
// one.
func canonical(s string) string {
	n, err := normalize.AccountNumber(s)
	if err != nil {
		return ""
	}
	return n
}

// Facts is the pack's context provider. For banking.send_money and
// banking.schedule_transaction it gives, about the resolved recipient:
//
//   - recipient_is_own_account: it is the owner's own account;
//   - recipient_in_mandate: it was resolved from the mandate's "payees";
//   - recipient_paid_before: the owner's history or standing orders hold a
//     payment to it;
//   - recipient_read_by_agent: no trusted source holds it; it was resolved
//     from the agent_payee registry (the agent supplied it);
//   - recipient_looks_like_on_file: it was read by the agent and could be
//     taken for an account on file or named in the mandate (looksLike).
//
// For banking.update_scheduled_transaction it gives the same five about
// the new recipient (false when none is given), and about the standing
// order: scheduled_found, scheduled_amount (cents), scheduled_recurring,
// recipient_changed, new_amount (cents, after the update), new_recurring
// and date_changed (a date is given and differs from the order's next
// date). A standing order the owner does not have gives
// scheduled_found false, never an error. For banking.update_user_info it
// gives address_read_by_agent: a field was resolved from the
// agent_address registry. Other actions get no facts.
type Facts struct {
	Bank *Mem
}

// Facts implements gateway.ContextProvider. It returns an error when the
// bank has no account for the owner.
func (f Facts) Facts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	facts := map[string]intent.Value{}
	switch q.Action {
	case ActionSendMoney, ActionScheduleTransaction, ActionUpdateScheduledTransaction:
	case ActionUpdateUserInfo:
		return addressFacts(q), nil
	default:
		return facts, nil
	}
	a, err := f.Bank.Account(q.Owner)
	if err != nil {
		return nil, err
	}
	recipient := ""
	if v, ok := q.Args["recipient"]; ok {
		recipient = v.Str
	}
	facts["recipient_is_own_account"] = intent.Bool(recipient != "" && recipient == canonical(a.IBAN))
	facts["recipient_in_mandate"] = intent.Bool(recipient != "" && fromMandate(q.Resolved))
	facts["recipient_paid_before"] = intent.Bool(recipient != "" && paidBefore(a, recipient))
	byAgent := recipient != "" && readByAgent(q.Resolved)
	facts["recipient_read_by_agent"] = intent.Bool(byAgent)
	facts["recipient_looks_like_on_file"] = intent.Bool(byAgent && looksLike(recipient, onFile(a, q.Claims[ClaimPayees])))
	if q.Action != ActionUpdateScheduledTransaction {
		return facts, nil
	}

	var cur Transaction
	found := false
	for _, t := range a.Scheduled {
		if t.ID == q.Args["id"].Int {
			cur, found = t, true
			break
		}
	}
	newAmount := cur.Amount
	if v, ok := q.Args["amount"]; ok && v.Int != 0 {
		newAmount = intent.Amount(v.Int)
	}
	changed := false
	if recipient != "" {
		c := canonical(cur.Recipient)
		if c == "" {
			c = cur.Recipient
		}
		changed = c != recipient
	}
	facts["scheduled_found"] = intent.Bool(found)
	facts["scheduled_amount"] = intent.Int(int64(cur.Amount))
	facts["scheduled_recurring"] = intent.Bool(cur.Recurring)
	facts["recipient_changed"] = intent.Bool(changed)
	facts["new_amount"] = intent.Int(int64(newAmount))
	facts["new_recurring"] = intent.Bool(cur.Recurring || q.Args["recurring"].Bool)
	facts["date_changed"] = intent.Bool(q.Args["date"].Str != "" && q.Args["date"].Str != cur.Date)
	return facts, nil
}

// addressFacts are the facts of banking.update_user_info: whether a field
// was read by the agent, and whether such a field is one the mandate
// gives another value for.
func addressFacts(q gateway.FactQuery) map[string]intent.Value {
	byAgent, other := false, false
	for _, r := range q.Resolved {
		if r.Provenance.Source == agentAddress {
			byAgent = true
			other = other || len(q.Claims[r.Param]) > 0 // the claims are named as the fields
		}
	}
	return map[string]intent.Value{
		"address_read_by_agent":    intent.Bool(byAgent),
		"address_not_the_mandates": intent.Bool(other),
	}
}

var (
	agentPayee   = contract.FromRegistry(RegistryAgentPayee).String()
	agentAddress = contract.FromRegistry(RegistryAgentAddress).String()
)

// readByAgent reports whether the recipient was resolved from the
// agent_payee registry: the agent supplied it.
func readByAgent(rs []intent.Resolved) bool {
	return slices.ContainsFunc(rs, func(r intent.Resolved) bool {
		return r.Param == "recipient" && r.Provenance.Source == agentPayee
	})
}

// onFile returns the accounts a payee could be taken for: the owner's own
// account, every account in the history and standing orders, and the
// payees the mandate names (normalized; those that are not account
// numbers are left out).
func onFile(a Account, payees []string) []string {
	out := []string{canonical(a.IBAN)}
	for _, ts := range [][]Transaction{a.Transactions, a.Scheduled} {
		for _, t := range ts {
			out = append(out, canonical(t.Sender), canonical(t.Recipient))
		}
	}
	for _, p := range payees {
		out = append(out, canonical(p))
	}
	return out
}

// fromMandate reports whether the recipient was resolved from the
// mandate's payees.
func fromMandate(rs []intent.Resolved) bool {
	src := contract.FromMandate(ClaimPayees).String()
	for _, r := range rs {
		if r.Param == "recipient" && r.Provenance.Source == src {
			return true
		}
	}
	return false
}

// paidBefore reports whether the owner's history or standing orders hold
// a payment to recipient.
func paidBefore(a Account, recipient string) bool {
	for _, ts := range [][]Transaction{a.Transactions, a.Scheduled} {
		for _, t := range ts {
			if canonical(t.Recipient) == recipient {
				return true
			}
		}
	}
	return false
}
