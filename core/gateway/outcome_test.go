package gateway_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// TestExecutionRefusedFreesTheOperation: when the system of record refuses
// an operation (a payer without the right to pay), nothing happened, so
// its nonce and reservation are given back and the same operation runs
// once the cause is fixed. Regression (issue 11): the retry was refused as
// "already executed" and the budget stayed reserved.
func TestExecutionRefusedFreesTheOperation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 100000)
	fixed := false
	w.exec.fail = func() error {
		if fixed {
			return nil
		}
		return gateway.Visible("the payer may not pay bills", fmt.Errorf("odoo: access denied: %w", gateway.ErrNotExecuted))
	}
	d := w.decide(tok, send("GB29", "10.00"))
	if d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeExecutionRefused || d.Executed || d.Receipt.Result != receipt.ResultNotExecuted {
		t.Fatalf("refused execution: %s %+v result %s", d.Verdict, d.Refusal, d.Receipt.Result)
	}
	if !strings.Contains(d.Refusal.Message, "the payer may not pay bills") || !strings.Contains(d.Refusal.Message, "can be sent again") {
		t.Errorf("message %q: want the system's reason and that it can be sent again", d.Refusal.Message)
	}
	if u, err := w.store.Usage(context.Background(), "m-emma"); err != nil || u.Reserved != 0 || u.Committed != 0 {
		t.Fatalf("usage after a refused execution = %+v, %v; want nothing held", u, err)
	}
	fixed = true
	d = w.decide(tok, send("GB29", "10.00"))
	if d.Verdict != intent.Allow || !d.Executed {
		t.Fatalf("the same operation once the cause is fixed: %s %+v", d.Verdict, d.Refusal)
	}
	if u, _ := w.store.Usage(context.Background(), "m-emma"); u.Committed != 1000 || u.Reserved != 0 {
		t.Fatalf("usage after the execution = %+v, want 10.00 committed", u)
	}
	if d := w.decide(tok, send("GB29", "10.00")); d.Refusal == nil || d.Refusal.Code != intent.CodeReplayed {
		t.Fatalf("the executed operation again: %s %+v, want replayed", d.Verdict, d.Refusal)
	}
	if len(w.exec.ops) != 1 {
		t.Fatalf("executed %d times, want 1", len(w.exec.ops))
	}
}

// TestExecutionUnknownStaysHeld: an error that leaves the outcome unknown
// (a timeout after sending) keeps the operation held: its amount counts as
// spent and the same operation is refused, so it cannot run twice.
func TestExecutionUnknownStaysHeld(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 100000)
	w.exec.fail = func() error { return errors.New("odoo: no answer within 30s") }
	d := w.decide(tok, send("GB29", "10.00"))
	if d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeExecutionFailed || d.Receipt.Result != receipt.ResultFailed {
		t.Fatalf("unknown outcome: %s %+v result %s", d.Verdict, d.Refusal, d.Receipt.Result)
	}
	if !strings.Contains(d.Refusal.Message, "may or may not have taken effect") || !strings.Contains(d.Refusal.Message, "stays held") {
		t.Errorf("message %q: want that it may have taken effect and stays held", d.Refusal.Message)
	}
	if u, _ := w.store.Usage(context.Background(), "m-emma"); u.Committed != 1000 {
		t.Fatalf("usage after an unknown outcome = %+v, want 10.00 committed", u)
	}
	w.exec.fail = nil
	if d := w.decide(tok, send("GB29", "10.00")); d.Refusal == nil || d.Refusal.Code != intent.CodeReplayed || d.Executed {
		t.Fatalf("retry of an operation whose outcome is unknown: %s %+v, want replayed", d.Verdict, d.Refusal)
	}
}

// TestExecutionRefusedConcurrent: identical operations sent concurrently,
// in rounds, while the system of record refuses the first execution: the
// refused one gives its nonce back, and still at most one executes.
func TestExecutionRefusedConcurrent(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.now = t0
	tok := w.mandate("emma", 100000)
	calls := 0
	w.exec.fail = func() error {
		calls++
		if calls == 1 {
			return fmt.Errorf("bank: account locked: %w", gateway.ErrNotExecuted)
		}
		return nil
	}
	w.exec.hook = func(intent.Operation) { time.Sleep(time.Millisecond) } // widens the window
	body := send("GB29", "10.00")
	var mu sync.Mutex
	codes := map[intent.Code]int{}
	executed := 0
	for range 4 {
		var wg sync.WaitGroup
		for range 16 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				d, err := w.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: []byte(body)})
				if err != nil {
					t.Errorf("Decide: %v", err)
					return
				}
				mu.Lock()
				defer mu.Unlock()
				if d.Executed {
					executed++
				} else {
					codes[d.Refusal.Code]++
				}
			}()
		}
		wg.Wait()
	}
	if executed != 1 || len(w.exec.ops) != 1 {
		t.Fatalf("%d decisions executed, the executor ran %d; want exactly 1 (refusals %v)", executed, len(w.exec.ops), codes)
	}
	if codes[intent.CodeExecutionRefused] != 1 {
		t.Fatalf("refusals %v: want exactly one execution.refused", codes)
	}
	if u, _ := w.store.Usage(context.Background(), "m-emma"); u.Committed != 1000 || u.Reserved != 0 {
		t.Fatalf("usage = %+v, want 10.00 committed, nothing reserved", u)
	}
}
