package banking_test

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/internal/proptest"
)

// The kinds of recipient TestPropertyPayees draws, by where the value
// comes from.
const (
	kindOnFile    = "on_file"   // an account of emma's history or standing orders
	kindMandate   = "mandate"   // the payee the mandate names
	kindFresh     = "fresh"     // a valid IBAN no one has: read by the agent
	kindLookAlike = "lookalike" // one or two characters off a known account
	kindName      = "name"      // a payee's name
)

// propertyPayees is the world TestPropertyPayees knows: the accounts emma
// knows, the mandate's payee, and the account each name stands for in
// her own payments ("" for a name none of them names).
var (
	knownAccounts = []string{"CH9300762011623852957", friend, "SE3550000000054910000003", "US122000000121212121212", ownIBAN}
	mandatePayee  = "CA133012400231215421872"
	nameAccounts  = map[string]string{
		"Apple": "US122000000121212121212", "apple store": "US122000000121212121212",
		"Spotify": "SE3550000000054910000003", "Netflix": "", "Sushi": "",
	}
)

// TestPropertyPayees sends generated payments and standing-order changes
// through the banking pack, each to a recipient drawn from one of the
// kinds above, spelled honestly or not, and asks a person who approves
// every step-up, blindly. The oracle knows only what it drew:
//
//   - nothing executes without a person unless its recipient is on file
//     or the mandate's;
//   - a look-alike of a known account never executes, approved or not;
//   - what executes goes to the account drawn (for a name, the account
//     the owner's own payments name), never to the agent's spelling.
//
// INTENTPLANE_PROPERTY_N sets the number of proposals (default 6,000);
// INTENTPLANE_PROPERTY_SEED replays a run.
func TestPropertyPayees(t *testing.T) {
	t.Parallel()
	run := proptest.Start(t)
	run.Epochs(t, 200, func(epoch, n int) { payeesEpoch(t, &run, epoch, n) })
	run.LogCounts(t)
	for _, k := range []string{kindFresh, kindName} {
		if run.Counts["executed "+k] == 0 {
			t.Errorf("no %s recipient ever executed with a person's approval: the property was not exercised", k)
		}
	}
}

// payeesEpoch makes n proposals on a fresh bank (so that its history
// stays short), checking each against the oracle of TestPropertyPayees.
func payeesEpoch(t *testing.T, run *proptest.Run, epoch, n int) {
	f := newFixture(t)
	tok, id := f.mandate(mandate.Mandate{
		ID:     fmt.Sprintf("m-property-%d", epoch),
		Scope:  []intent.Action{banking.ActionSendMoney, banking.ActionScheduleTransaction, banking.ActionUpdateScheduledTransaction},
		Budget: intent.Money{Currency: "EUR", Amount: 1 << 40}, Claims: map[string][]string{banking.ClaimPayees: {mandatePayee}},
	})
	for i := range n {
		kind, sent, want := drawRecipient(run.Rand)
		run.Count(kind)
		p, order := paymentTo(run.Rand, i, sent)
		before := f.snapshot()
		d := f.decide(tok, p)
		unasked := d.Executed
		bad := run.Decided(d)
		if d.Verdict == intent.StepUp {
			d = f.decide(tok, p, f.approve(d, id))
		}
		where := fmt.Sprintf("seed %d, epoch %d, proposal %d: %s %q (%s)", run.Seed, epoch, i, kind, sent, p)
		switch {
		case bad != "":
			t.Fatalf("%s: %s", where, bad)
		case unasked && kind != kindOnFile && kind != kindMandate:
			t.Fatalf("%s: executed without a person", where)
		case d.Executed && kind == kindLookAlike:
			t.Fatalf("%s: a look-alike executed (approved)", where)
		case d.Executed && want == "":
			t.Fatalf("%s: executed; the name stands for no account", where)
		case d.Executed && f.recipientOf(before, order) != want:
			t.Fatalf("%s: executed to %q; want %q", where, f.recipientOf(before, order), want)
		}
		if d.Executed {
			run.Count("executed " + kind)
		}
	}
}

// drawRecipient returns a kind, the recipient as the agent spells it, and
// the account it must go to if it executes ("" when it never may).
func drawRecipient(r *rand.Rand) (kind, sent, want string) {
	known := knownAccounts[r.IntN(len(knownAccounts)-1)] // not the own account: never a payee
	switch r.IntN(5) {
	case 0:
		return kindOnFile, proptest.SpellIBAN(r, known, false), known
	case 1:
		return kindMandate, proptest.SpellIBAN(r, mandatePayee, false), mandatePayee
	case 2:
		fresh := proptest.MakeIBAN(r, proptest.Countries[r.IntN(len(proptest.Countries))])
		return kindFresh, proptest.SpellIBAN(r, fresh, false), fresh
	case 3:
		target := append([]string{mandatePayee}, knownAccounts...)[r.IntN(len(knownAccounts)+1)]
		return kindLookAlike, proptest.SpellIBAN(r, lookAlike(r, target), false), ""
	}
	names := []string{"Apple", "apple store", "Spotify", "Netflix", "Sushi"}
	n := names[r.IntN(len(names))]
	return kindName, n, nameAccounts[n]
}

// lookAlike changes account a in one or two places outside its first
// four characters: a character changed to a digit, the letters O and I
// for the digits 0 and 1 up to a place, two neighbours swapped, a
// character doubled; an IBAN's check digits are then made valid again,
// so the change passes mod-97.
func lookAlike(r *rand.Rand, a string) string {
	b := []byte(a)
	for range 1 + r.IntN(2) {
		i := 4 + r.IntN(len(b)-5)
		switch r.IntN(4) {
		case 0:
			b[i] = '0' + (b[i]-'0'+1+byte(r.IntN(9)))%10
			if b[i] > '9' || b[i] < '0' {
				b[i] = '7'
			}
		case 1:
			b = []byte(strings.NewReplacer("0", "O", "1", "I").Replace(string(b[:i+1])) + string(b[i+1:]))
		case 2:
			b[i], b[i+1] = b[i+1], b[i]
		case 3:
			b = append(b[:i:i], append([]byte{b[i]}, b[i:]...)...)
		}
	}
	out := string(b)
	if out == a {
		out = a[:len(a)-1] + string('0'+(a[len(a)-1]-'0'+1)%10)
	}
	if strings.HasPrefix(a, "GB") || strings.HasPrefix(a, "DE") || strings.HasPrefix(a, "CH") || strings.HasPrefix(a, "SE") {
		return proptest.WithCheck(out[:2], out[4:])
	}
	return out
}

// paymentTo is the i-th generated proposal to recipient: a payment, a
// one-off scheduled payment, or a standing order (6 or 7, returned as
// order; 0 for the others) redirected, of a few euros (below every amount
// threshold, so the recipient alone decides). Every subject is new, so no
// name comes to stand for another account during the run.
func paymentTo(r *rand.Rand, i int, recipient string) (proposal string, order int64) {
	amount := fmt.Sprintf("%d.%02d", 1+r.IntN(40), r.IntN(100))
	subject := fmt.Sprintf("p%d", i)
	switch r.IntN(3) {
	case 0:
		return fmt.Sprintf(`{"action":"banking.schedule_transaction","args":{"recipient":%q,"amount":%s,"subject":%q,"date":"2022-05-01","recurring":false}}`, recipient, amount, subject), 0
	case 1:
		order = 6 + int64(r.IntN(2))
		return fmt.Sprintf(`{"action":"banking.update_scheduled_transaction","args":{"id":%d,"recipient":%q,"subject":%q}}`, order, recipient, subject), order
	}
	return send(recipient, amount, subject), 0
}

// snapshot is emma's account as it is now.
func (f *fixture) snapshot() banking.Account {
	f.t.Helper()
	a, err := f.bank.Account(emma)
	if err != nil {
		f.t.Fatal(err)
	}
	return a
}

// recipientOf returns the recipient of standing order order now, or, for
// order 0, of the payment or scheduled payment added since before.
func (f *fixture) recipientOf(before banking.Account, order int64) string {
	after := f.snapshot()
	switch {
	case order != 0:
		for _, s := range after.Scheduled {
			if s.ID == order {
				return s.Recipient
			}
		}
	case len(after.Transactions) > len(before.Transactions):
		return after.Transactions[len(after.Transactions)-1].Recipient
	case len(after.Scheduled) > len(before.Scheduled):
		return after.Scheduled[len(after.Scheduled)-1].Recipient
	}
	return "(none)"
}
