package scenarios_test

import (
	"testing"
	"time"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

const (
	bankOwner    = intent.Owner("emma")
	bankFriend   = "GB29NWBK60161331926819" // a past recipient: on file
	bankAttacker = "US133000000121212121212"
)

// bankingHarness is the banking pack over an in-memory bank holding emma's
// account, on a store of kind k.
func bankingHarness(t *testing.T, k storeKind) (*harness, *banking.Mem) {
	t.Helper()
	bank := banking.NewMem()
	err := bank.Open(bankOwner, banking.Account{
		IBAN: "DE89370400440532013000", Balance: 500000,
		Transactions: []banking.Transaction{
			{ID: 1, Sender: "me", Recipient: bankFriend, Amount: 20000, Subject: "New year gift", Date: "2022-02-12"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	pack, err := banking.NewPack(bank)
	if err != nil {
		t.Fatal(err)
	}
	return newHarness(t, k, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), pack, nil), bank
}

func send(recipient, amount, subject string) map[string]any {
	return map[string]any{"recipient": recipient, "amount": amount, "subject": subject, "date": "2022-04-01"}
}

// TestBanking: allowed, refused, step-up then approved, replay refused, on
// every store; the ledger holds exactly what executed and the chain
// verifies.
func TestBanking(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, k storeKind) {
		h, bank := bankingHarness(t, k)
		tok := h.mandate(mandate.Mandate{ID: "m-bank", Owner: bankOwner, Scope: []intent.Action{banking.ActionSendMoney},
			Budget: intent.Money{Currency: "EUR", Amount: 1000000}})

		// Allowed: a known recipient, below the confirmation threshold.
		small := send(bankFriend, "5.00", "Refund")
		if d := h.decide(tok, banking.ActionSendMoney, small); d.Verdict != intent.Allow || !d.Executed {
			t.Fatalf("allowed: %s %s %s", d.Verdict, code(d), message(d))
		}
		// Not executed: the attacker's account is on file nowhere, so the
		// agent read it; only a person who confirms it could let it pay.
		if d := h.decide(tok, banking.ActionSendMoney, send(bankAttacker, "0.01", "spotify")); d.Verdict != intent.StepUp || code(d) != intent.CodeApprovalRequired || d.Executed {
			t.Fatalf("attacker: %s %s %s", d.Verdict, code(d), message(d))
		}
		// Step-up, then approved.
		large := send(bankFriend, "1500.00", "Car")
		d := h.decide(tok, banking.ActionSendMoney, large)
		if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || d.Executed {
			t.Fatalf("step-up: %s %s %s", d.Verdict, d.Level, message(d))
		}
		a := h.approve("alice", d)
		if d := h.decide(tok, banking.ActionSendMoney, large, a); d.Verdict != intent.Allow || !d.Executed {
			t.Fatalf("approved: %s %s %s", d.Verdict, code(d), message(d))
		}
		// Replays: the approval, and the small payment, are refused.
		if d := h.decide(tok, banking.ActionSendMoney, large, a); d.Executed || code(d) != intent.CodeApprovalInvalid {
			t.Fatalf("approval replayed: %s %s %s", d.Verdict, code(d), message(d))
		}
		if d := h.decide(tok, banking.ActionSendMoney, small); d.Executed || code(d) != intent.CodeReplayed {
			t.Fatalf("operation replayed: %s %s %s", d.Verdict, code(d), message(d))
		}

		acct, err := bank.Account(bankOwner)
		if err != nil {
			t.Fatal(err)
		}
		if n := len(acct.Transactions); n != 3 {
			t.Errorf("%d transactions, want 3 (the first and two sent)", n)
		}
		h.checkBudget("m-bank", 500+150000)
		h.checkReceipts()
	})
}
