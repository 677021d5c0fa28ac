package postgres_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/internal/proptest"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/postgres/internal/pgtest"
)

// TestTotalsAcrossReplicas: two gateways, each with its own connection
// pool to one schema (two replicas), send 999.99 to the same recipient at
// the same moment, round after round. Either alone needs no approval; the
// two together are above 1,000.00, so at most one may execute without a
// person: the recipient's running total (contract.Total) is reserved in
// the store before it is read, so the later of the two sees the other
// (issue 13). Banking has no record lock: only the totals stand between
// the two.
func TestTotalsAcrossReplicas(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn, _ := pgtest.Schema(t)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	bank := banking.NewMem()
	if err := bank.Open("emma", banking.Account{IBAN: "DE89370400440532013000"}); err != nil {
		t.Fatal(err)
	}
	pack, err := banking.NewPack(bank)
	if err != nil {
		t.Fatal(err)
	}
	issuerPub, issuerKey, err := ed25519.GenerateKey(nil)
	if err != nil {
		t.Fatal(err)
	}
	var gws [2]*gateway.Gateway
	for i := range gws {
		st, err := postgres.Open(ctx, dsn, postgres.Config{Now: clock})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		if gws[i], err = gateway.New(gateway.Config{
			Audience: "intentplane-test",
			Issuers:  mandate.StaticKeys{"bank-app": issuerPub},
			Now:      clock,
		}, st, pack); err != nil {
			t.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(13, 2026))
	const rounds = 40
	both := 0 // rounds in which each saw the other: they overlapped
	for round := range rounds {
		recipient := proptest.MakeIBAN(rng, "DE")
		tok, err := mandate.Issue(mandate.Mandate{
			ID: fmt.Sprintf("m-%d", round), Audience: "intentplane-test", Owner: "emma",
			Scope:  []intent.Action{banking.ActionSendMoney},
			Budget: intent.Money{Currency: "EUR", Amount: 1000000}, Mode: mandate.ModeKnownCounterparties,
			Claims:    map[string][]string{banking.ClaimPayees: {recipient}},
			NotBefore: now.Add(-time.Minute), Expiry: now.Add(time.Hour),
		}, "bank-app", issuerKey)
		if err != nil {
			t.Fatal(err)
		}
		var ds [2]gateway.Decision
		var errs [2]error
		var start, done sync.WaitGroup
		start.Add(1)
		for i := range gws {
			done.Add(1)
			go func() {
				defer done.Done()
				body := fmt.Sprintf(`{"action":"banking.send_money","args":{"recipient":%q,"amount":"999.99","subject":"part %d","date":"2026-11-30"}}`, recipient, i+1)
				start.Wait()
				ds[i], errs[i] = gws[i].Decide(ctx, gateway.Request{Mandate: tok, Proposal: []byte(body)})
			}()
		}
		start.Done()
		done.Wait()
		executed := 0
		for i, d := range ds {
			if errs[i] != nil {
				t.Fatalf("round %d, replica %d: %v", round, i, errs[i])
			}
			if d.Executed {
				executed++
			} else if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm {
				t.Fatalf("round %d, replica %d: %s %s %+v, want executed or a confirmation", round, i, d.Verdict, d.Level, d.Refusal)
			}
		}
		switch executed {
		case 2:
			t.Fatalf("round %d: both halves of 1,999.98 executed with no one asked", round)
		case 0:
			both++
		}
	}
	t.Logf("%d rounds: %d with one half executed and the other asked, %d with both asked (each saw the other's reservation)", rounds, rounds-both, both)
}
