package postgres_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/postgres"
)

// TestRestart restarts PostgreSQL in the middle of a stream of decisions,
// with the shell command in PG_RESTART_CMD (for example "pg_ctlcluster 15
// main restart"); without it the test is skipped, since it disturbs every
// other user of the server. While the server is down, decisions must be
// refusals (gateway.unavailable), never executions without a budget
// reservation; afterwards the store must work again, no operation may have
// executed twice, the ledger must hold what executed, and the chain must
// verify.
func TestRestart(t *testing.T) {
	restart := os.Getenv("PG_RESTART_CMD")
	if restart == "" {
		t.Skip("PG_RESTART_CMD is not set")
	}
	st, _ := open(t, postgres.Config{Timeout: 2 * time.Second})
	rec := &gatewaytest.Recorder{}
	gw, err := gatewaytest.Gateway(st, rec)
	if err != nil {
		t.Fatal(err)
	}
	const budget = intent.Amount(1_000_000_00)
	tok, err := gatewaytest.Mandate("m-restart", "acme", budget, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	var (
		next                          atomic.Int64
		allowed, refused, receiptLost atomic.Int64
		executedUnreceipted           atomic.Int64
		mu                            sync.Mutex
		codes                         = map[intent.Code]int{}
		afterRestart                  atomic.Bool
		okAfter                       atomic.Int64
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := next.Add(1)
				d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: gatewaytest.Send("GB29", fmt.Sprintf("1.%02d", k%100), fmt.Sprintf("restart %d", k))})
				switch {
				case err != nil:
					receiptLost.Add(1)
					if !errors.Is(err, postgres.ErrUnavailable) {
						t.Errorf("Decide error %v does not wrap ErrUnavailable", err)
					}
					if d.Executed {
						executedUnreceipted.Add(1)
					}
				case d.Verdict == intent.Allow:
					allowed.Add(1)
					if afterRestart.Load() {
						okAfter.Add(1)
					}
				default:
					refused.Add(1)
				}
				if d.Verdict != intent.Allow {
					mu.Lock()
					codes[d.Refusal.Code]++
					mu.Unlock()
					if d.Refusal.Code != intent.CodeUnavailable {
						t.Errorf("refusal %s while the database restarts: %s", d.Refusal.Code, d.Refusal.Message)
					}
					time.Sleep(10 * time.Millisecond)
				}
			}
		}()
	}
	time.Sleep(time.Second)
	start := time.Now()
	out, err := exec.Command("sh", "-c", restart).CombinedOutput()
	if err != nil {
		close(stop)
		wg.Wait()
		t.Fatalf("%s: %v\n%s", restart, err, out)
	}
	t.Logf("%q took %s", restart, time.Since(start).Round(time.Millisecond))
	afterRestart.Store(true)
	time.Sleep(3 * time.Second)
	close(stop)
	wg.Wait()
	t.Logf("allowed %d, refused %d %v, Decide errors (receipt not stored) %d, of which executed %d; allowed after the restart %d",
		allowed.Load(), refused.Load(), codes, receiptLost.Load(), executedUnreceipted.Load(), okAfter.Load())
	if okAfter.Load() == 0 {
		t.Fatal("no decision was allowed after the restart: the store did not recover")
	}

	// The state is consistent.
	seen := map[intent.OperationHash]bool{}
	var executed intent.Amount
	for _, e := range rec.Executions() {
		if seen[e.Hash] {
			t.Errorf("operation %s executed twice", e.Hash)
		}
		seen[e.Hash] = true
		executed += e.Amount
	}
	u, err := st.Usage(ctx, "m-restart")
	if err != nil {
		t.Fatal(err)
	}
	if u.Committed > executed || executed > u.Committed+u.Reserved {
		t.Errorf("ledger committed %d reserved %d, executed %d", u.Committed, u.Reserved, executed)
	}
	rs, err := st.Receipts(ctx, "acme", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	verifyReceipts(t, rs)
	t.Logf("after the restart: %d receipts verify; %d operations executed once each; ledger committed %d reserved %d (executed %d)",
		len(rs), len(seen), u.Committed, u.Reserved, executed)
}

func verifyReceipts(t *testing.T, rs []receipt.Receipt) {
	t.Helper()
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(&buf, nil); err != nil {
		t.Fatalf("the chain does not verify: %v", err)
	}
}
