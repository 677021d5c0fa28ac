package scenarios_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

// BenchmarkReconcile measures the start-up reconciliation of 10,000
// reservations left open by crashes, per store: 10,000 banking payments
// die between their budget reservation and their nonce (crashAt
// "consume"), then one Reconcile releases each and appends its receipt
// (128 at a time). ns/op is the time of one Reconcile of all 10,000;
// reservations/s is reported besides. Run it with -benchtime=1x: each
// round sets up its 10,000 crashes first, outside the timer.
func BenchmarkReconcile(b *testing.B) {
	const n = 10000
	for _, k := range kinds {
		b.Run("store="+k.name, func(b *testing.B) {
			for range b.N {
				b.StopTimer()
				h, pack := crashedBanking(b, k, n)
				b.StartTimer()
				start := time.Now()
				rep, err := h.gw.Reconcile(context.Background(), time.Now().Add(time.Hour))
				elapsed := time.Since(start)
				b.StopTimer()
				if err != nil {
					b.Fatal(err)
				}
				if got := rep.Count(gateway.OutcomeReleased); got != n {
					b.Fatalf("%d of %d released (%d settlements)", got, n, len(rep.Settlements))
				}
				if u, err := h.store.Usage(context.Background(), "m-bench"); err != nil || u.Reserved != 0 {
					b.Fatalf("after reconciling: %+v, %v", u, err)
				}
				b.ReportMetric(float64(n)/elapsed.Seconds(), "reservations/s")
				_ = pack
				b.StartTimer()
			}
		})
	}
}

// crashedBanking returns a harness on a new store of kind k where n
// banking payments crashed after their reservation, before their nonce.
func crashedBanking(b *testing.B, k storeKind, n int) (*harness, gateway.Pack) {
	b.Helper()
	bank := banking.NewMem()
	if err := bank.Open(bankOwner, banking.Account{IBAN: "DE89370400440532013000", Balance: 1 << 40,
		Transactions: []banking.Transaction{{ID: 1, Sender: "me", Recipient: bankFriend, Amount: 100, Subject: "x", Date: "2022-01-01"}}}); err != nil {
		b.Fatal(err)
	}
	pack, err := banking.NewPack(bank)
	if err != nil {
		b.Fatal(err)
	}
	h := newHarness(b, k, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), pack, nil)
	tok := h.mandate(mandate.Mandate{ID: "m-bench", Owner: bankOwner, Scope: []intent.Action{banking.ActionSendMoney},
		Budget: intent.Money{Currency: "EUR", Amount: 1 << 50}})
	c := &crashAt{Store: h.store, exec: pack.Executor, point: "consume"}
	gw, err := gateway.New(h.cfg, c, pack)
	if err != nil {
		b.Fatal(err)
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(n) {
					return
				}
				done := make(chan struct{})
				go func() {
					defer close(done)
					_, _ = gw.Decide(context.Background(), gateway.Request{Mandate: tok,
						Proposal: proposal(b, banking.ActionSendMoney, send(bankFriend, "1.00", fmt.Sprintf("crash %d", i)))})
				}()
				<-done
			}
		}()
	}
	wg.Wait()
	if u, err := h.store.Usage(context.Background(), "m-bench"); err != nil || u.Reserved != intent.Amount(100*n) {
		b.Fatalf("after %d crashes: %+v, %v", n, u, err)
	}
	return h, pack
}
