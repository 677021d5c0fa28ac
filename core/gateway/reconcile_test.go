package gateway_test

import (
	"context"
	"errors"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/mem"
)

// crashing is a pack executor that keeps an idempotency record of what it
// executed (a Settler) and can make the decision's goroutine die, as a
// process killed at that point would: before executing, or after.
type crashing struct {
	mu     sync.Mutex
	ran    map[intent.OperationHash]bool
	crash  string // "", "before" or "after"
	lookup error
}

func (c *crashing) Execute(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
	c.mu.Lock()
	crash := c.crash
	c.mu.Unlock()
	if crash == "before" {
		runtime.Goexit()
	}
	c.mu.Lock()
	c.ran[h] = true
	c.mu.Unlock()
	if crash == "after" {
		runtime.Goexit()
	}
	return gateway.Result{Output: "ok"}, nil
}

func (c *crashing) Lookup(ctx context.Context, owner intent.Owner, action intent.Action, h intent.OperationHash) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.ran[h], c.lookup
}

func (c *crashing) set(crash string) {
	c.mu.Lock()
	c.crash = crash
	c.mu.Unlock()
}

// blind is an executor without idempotency record (no Lookup).
type blind struct{ c *crashing }

func (b blind) Execute(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
	return b.c.Execute(ctx, op, h)
}

// consumeCrash makes the decision's goroutine die when it consumes an
// operation's nonce, as a crash right after the budget reservation would;
// runtime.Goexit still runs the gateway's deferred clean-up, so the store
// then refuses to release anything (a dead process writes nothing) until
// the next decision reserves.
type consumeCrash struct {
	*mem.Store
	on   bool
	dead bool
}

func (s *consumeCrash) Consume(ctx context.Context, key string, expires time.Time) error {
	if s.on {
		s.dead = true
		runtime.Goexit()
	}
	return s.Store.Consume(ctx, key, expires)
}

// Release fails while the process is dead: from its crash until the next
// decision's first reservation.
func (s *consumeCrash) Release(ctx context.Context, id string) error {
	if s.dead {
		return errors.New("the process is dead")
	}
	return s.Store.Release(ctx, id)
}

func (s *consumeCrash) Reserve(ctx context.Context, account string, limit intent.Money, id string, amount intent.Money) error {
	s.dead = false
	return s.Store.Reserve(ctx, account, limit, id, amount)
}

// crashWorld is newWorld's pack over a fresh mem store, with exec as its
// executor and a store that can crash at Consume.
func crashWorld(t *testing.T, exec gateway.Executor) (*world, *consumeCrash) {
	t.Helper()
	return crashWorldWith(t, exec, nil)
}

// crashWorldWith is crashWorld with the pack changed by edit, if not nil,
// before the gateway is built.
func crashWorldWith(t *testing.T, exec gateway.Executor, edit func(*gateway.Pack)) (*world, *consumeCrash) {
	t.Helper()
	w := newWorld(t)
	st := &consumeCrash{Store: mem.New(func() time.Time { return w.now })}
	w.store = st.Store
	w.pack.Executor = exec
	if edit != nil {
		edit(&w.pack)
	}
	issuerPub, _ := gatewaytest.KeyPair(1)
	alicePub, _ := gatewaytest.KeyPair(2)
	var err error
	w.gw, err = gateway.New(gateway.Config{
		Audience:  "intentplane-test",
		Issuers:   mandate.StaticKeys{"bank-app": issuerPub},
		Approvers: approval.StaticKeys{"alice": alicePub},
		Now:       func() time.Time { return w.now },
	}, st, w.pack)
	if err != nil {
		t.Fatal(err)
	}
	return w, st
}

// crashDecide runs a decision in a goroutine of its own and waits for it to
// end, normally or by a simulated crash; it reports whether it crashed.
func crashDecide(w *world, tok, body string) (crashed bool) {
	done := make(chan bool)
	go func() {
		finished := false
		defer func() { done <- !finished }()
		_, _ = w.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: []byte(body)})
		finished = true
	}()
	return <-done
}

// crashTwice sends 1.00 to GB29 and crashes at its nonce (it never
// executes), then 2.00 and crashes after executing it.
func crashTwice(t *testing.T, w *world, st *consumeCrash, exec *crashing, tok string) {
	t.Helper()
	st.on = true
	if !crashDecide(w, tok, send("GB29", "1.00")) {
		t.Fatal("no crash at Consume")
	}
	st.on = false
	exec.set("after")
	if !crashDecide(w, tok, send("GB29", "2.00")) {
		t.Fatal("no crash after executing")
	}
}

// TestReconcile: each way a crash leaves a reservation open is settled as
// the executor's idempotency record says, with a receipt; reservations
// made after the bound are left alone; a second run finds nothing.
func TestReconcile(t *testing.T) {
	t.Parallel()
	exec := &crashing{ran: map[intent.OperationHash]bool{}}
	w, st := crashWorld(t, exec)
	tok := w.mandate("emma", 1000000)
	ctx := context.Background()

	// 1. Crash after the reservation, before the nonce: never executed.
	// 2. Crash after executing: executed.
	crashTwice(t, w, st, exec, tok)
	// 3. Crash before executing, nonce consumed: not executed.
	exec.set("before")
	if !crashDecide(w, tok, send("GB29", "4.00")) {
		t.Fatal("no crash before executing")
	}
	exec.set("")
	if u, _ := w.store.Usage(ctx, "m-emma"); u.Reserved != 700 || u.Committed != 0 {
		t.Fatalf("before reconciling: %+v, want 7.00 reserved", u)
	}

	// Reservations made from now on are in flight, not left by a crash.
	before := w.now.Add(time.Second)
	w.now = w.now.Add(2 * time.Second)
	if err := w.store.Reserve(ctx, "m-emma", intent.Money{Currency: "EUR", Amount: 1000000}, "in-flight", intent.Money{Currency: "EUR", Amount: 800}); err != nil {
		t.Fatal(err)
	}

	rep, err := w.gw.Reconcile(ctx, before)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]int{}
	for _, s := range rep.Settlements {
		got[s.Outcome]++
		if s.Owner != "emma" || s.Action != "pay.send" || len(s.Operation) != 64 {
			t.Errorf("settlement %+v does not name the operation", s)
		}
	}
	if want := map[string]int{gateway.OutcomeReleased: 2, gateway.OutcomeCommitted: 1}; !equalCounts(got, want) {
		t.Fatalf("outcomes %v, want %v (%+v)", got, want, rep.Settlements)
	}
	if u, _ := w.store.Usage(ctx, "m-emma"); u.Committed != 200 || u.Reserved != 800 {
		t.Errorf("after reconciling: %+v, want 2.00 committed and only the 8.00 in flight reserved", u)
	}
	rs, err := w.store.Receipts(ctx, "emma", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	results := map[string]int{}
	for _, r := range rs {
		results[r.Result]++
		if r.Action != "pay.send" || r.MandateID != "m-emma" || r.Operation == "" {
			t.Errorf("settlement receipt %+v", r)
		}
	}
	if len(rs) != 3 || results[receipt.ResultExecuted] != 1 || results[receipt.ResultNotExecuted] != 2 {
		t.Errorf("receipts %v, want one executed and two not executed", results)
	}

	// Nothing is left to settle but what is in flight.
	if rep, err := w.gw.Reconcile(ctx, before); err != nil || len(rep.Settlements) != 0 {
		t.Errorf("second run: %+v, %v", rep.Settlements, err)
	}
	// The operation that never reached its executor can run now; the one
	// that executed cannot run again.
	if d := w.decide(tok, send("GB29", "1.00")); !d.Executed {
		t.Errorf("the released operation: %s %+v", d.Verdict, d.Refusal)
	}
	if d := w.decide(tok, send("GB29", "2.00")); d.Executed || d.Refusal.Code != intent.CodeReplay {
		t.Errorf("the executed operation again: %s %+v", d.Verdict, d.Refusal)
	}
}

// TestReconcileUnsettled: without an idempotency record, or when it cannot
// be read, the reservation stays open and says why.
func TestReconcileUnsettled(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name    string
		exec    gateway.Executor
		wantErr bool
	}{
		{"no idempotency record", blind{&crashing{ran: map[intent.OperationHash]bool{}}}, false},
		{"record unreadable", &crashing{ran: map[intent.OperationHash]bool{}, lookup: errors.New("ERP down")}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w, _ := crashWorld(t, tt.exec)
			switch e := tt.exec.(type) {
			case blind:
				e.c.set("after")
			case *crashing:
				e.set("after")
			}
			tok := w.mandate("emma", 1000000)
			if !crashDecide(w, tok, send("GB29", "3.00")) {
				t.Fatal("no crash")
			}
			rep, err := w.gw.Reconcile(context.Background(), w.now.Add(time.Second))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Reconcile error = %v", err)
			}
			if len(rep.Settlements) != 1 || rep.Settlements[0].Outcome != gateway.OutcomeUnsettled || rep.Settlements[0].Reason == "" {
				t.Fatalf("settlements %+v", rep.Settlements)
			}
			if u, _ := w.store.Usage(context.Background(), "m-emma"); u.Reserved != 300 {
				t.Errorf("usage %+v, want 3.00 still reserved", u)
			}
			if _, err := w.store.Receipts(context.Background(), "emma", 1, 0); !errors.Is(err, receipt.ErrNotFound) {
				t.Errorf("a receipt was written for an unsettled operation: %v", err)
			}
		})
	}
}

// TestReconcileNeedsStore: a store that cannot list reservations is an
// error, not a silent success.
func TestReconcileNeedsStore(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	gw, err := gateway.New(gateway.Config{Audience: "a", Issuers: mandate.StaticKeys{}}, struct{ gateway.Store }{w.store}, w.pack)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := gw.Reconcile(context.Background(), time.Now()); !errors.Is(err, gateway.ErrNotReconcilable) {
		t.Errorf("Reconcile = %v, want ErrNotReconcilable", err)
	}
}

func equalCounts(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

var _ state.Ledger = (*consumeCrash)(nil)
