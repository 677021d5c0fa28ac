package gateway_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
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
	// A crash while executing leaves the recipient held, as a killed
	// process does, until its hold expires (LockTTL, 10 minutes).
	if d := w.decide(tok, send("GB29", "4.00")); d.Refusal == nil || d.Refusal.Code != intent.CodeInFlight {
		t.Fatalf("a decision on the recipient the crash left held: %s %+v", d.Verdict, d.Refusal)
	}
	w.now = w.now.Add(11 * time.Minute)
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
		if r.Code == intent.CodeInFlight { // the decision refused while the crash held the recipient
			continue
		}
		results[r.Result]++
		if r.Action != "pay.send" || r.MandateID != "m-emma" || r.Operation == "" {
			t.Errorf("settlement receipt %+v", r)
		}
	}
	if len(rs) != 4 || results[receipt.ResultExecuted] != 1 || results[receipt.ResultNotExecuted] != 2 {
		t.Errorf("receipts %v, want one executed and two not executed", results)
	}

	// Nothing is left to settle but what is in flight.
	if rep, err := w.gw.Reconcile(ctx, before); err != nil || len(rep.Settlements) != 0 {
		t.Errorf("second run: %+v, %v", rep.Settlements, err)
	}
	// Once the hold of the last crash has expired, the operation that
	// never reached its executor can run, and so can the one that reached
	// it but did not execute (its nonce was given back); the one that
	// executed cannot run again.
	w.now = w.now.Add(11 * time.Minute)
	if d := w.decide(tok, send("GB29", "1.00")); !d.Executed {
		t.Errorf("the released operation: %s %+v", d.Verdict, d.Refusal)
	}
	if d := w.decide(tok, send("GB29", "4.00")); !d.Executed {
		t.Errorf("the operation that did not execute: %s %+v", d.Verdict, d.Refusal)
	}
	if d := w.decide(tok, send("GB29", "2.00")); d.Executed || d.Refusal.Code != intent.CodeReplayed {
		t.Errorf("the executed operation again: %s %+v", d.Verdict, d.Refusal)
	}
}

// TestReconcileRetry: after a crash while executing an approved payment
// that the executor's record shows did not execute, reconciliation gives
// its nonce back. Until the crashed decision's hold on the recipient
// expires, a retry is refused as in flight, with when the hold was taken
// and when it ends, in UTC; then the approval the crash consumed stays
// used, the identical operation asks for approval again (it is not
// "already executed"), executes once with a new approval, and is a replay
// after that.
func TestReconcileRetry(t *testing.T) {
	t.Parallel()
	exec := &crashing{ran: map[intent.OperationHash]bool{}}
	w, _ := crashWorld(t, exec)
	tok := w.mandate("emma", 1000000)
	ctx := context.Background()
	big := send("GB29", "1500.00")
	d := w.decide(tok, big)
	if d.Refusal == nil || d.Refusal.Code != intent.CodeApprovalRequired {
		t.Fatalf("first decision: %s %+v", d.Verdict, d.Refusal)
	}
	hash := d.OperationHash
	approve := func(id string) approval.Approval {
		a, err := approval.Sign(approval.Approval{ID: id, Operation: hash, MandateID: "m-emma",
			Approver: "alice", IssuedAt: w.now, ExpiresAt: w.now.Add(time.Hour)}, w.approvers["alice"])
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	first := approve("first")
	exec.set("before")
	crashed := make(chan bool)
	go func() {
		finished := false
		defer func() { crashed <- !finished }()
		_, _ = w.gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: []byte(big), Approvals: []approval.Approval{first}})
		finished = true
	}()
	if !<-crashed {
		t.Fatal("no crash while executing")
	}
	exec.set("")
	held := w.now

	rep, err := w.gw.Reconcile(ctx, w.now.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Settlements) != 1 || rep.Settlements[0].Outcome != gateway.OutcomeReleased ||
		!strings.Contains(rep.Settlements[0].Reason, "nonce given back") || rep.Settlements[0].Mandate != "m-emma" {
		t.Fatalf("settlements %+v", rep.Settlements)
	}

	// The recipient stays held by the crashed decision: the refusal says
	// so truly, with its times.
	d = w.decide(tok, big)
	if d.Refusal == nil || d.Refusal.Code != intent.CodeInFlight {
		t.Fatalf("retry while held: %s %+v", d.Verdict, d.Refusal)
	}
	for _, want := range []string{"took it at " + held.UTC().Format(time.DateTime) + " UTC", "has not finished", "until " + held.Add(10*time.Minute).UTC().Format(time.DateTime) + " UTC"} {
		if !strings.Contains(d.Refusal.Message, want) {
			t.Errorf("in-flight refusal %q does not say %q", d.Refusal.Message, want)
		}
	}
	if strings.Contains(d.Refusal.Message, "is under way") {
		t.Errorf("in-flight refusal says another operation is under way: %q", d.Refusal.Message)
	}

	w.now = w.now.Add(10*time.Minute + time.Second)
	if d := w.decide(tok, big, first); d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeApprovalInvalid {
		t.Errorf("retry with the approval the crash consumed: %s %+v", d.Verdict, d.Refusal)
	}
	if d := w.decide(tok, big); d.Refusal == nil || d.Refusal.Code != intent.CodeApprovalRequired {
		t.Errorf("retry without approval: %s %+v, want approval.required", d.Verdict, d.Refusal)
	}
	if d := w.decide(tok, big, approve("second")); !d.Executed {
		t.Fatalf("retry with a new approval: %s %+v", d.Verdict, d.Refusal)
	}
	if d := w.decide(tok, big, approve("third")); d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeReplayed {
		t.Errorf("the executed operation again: %s %+v", d.Verdict, d.Refusal)
	}
	if u, _ := w.store.Usage(ctx, "m-emma"); u.Committed != 150000 || u.Reserved != 0 {
		t.Errorf("usage %+v, want 1500.00 committed once", u)
	}
}

// TestReconcileNotExecuted: an operation whose contract holds no records,
// reserved less than LockTTL before reconciliation, keeps its nonce spent
// (the crashed execution could still reach the system of record, and
// nothing would keep a retry out meanwhile); a retry is then refused as
// not executed, never as already executed. Reserved more than LockTTL
// before, its nonce is given back.
func TestReconcileNotExecuted(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		wait time.Duration // between the crash and reconciliation
		want intent.Code   // of the retry
	}{
		{"young", time.Minute, intent.CodeNotExecuted},
		{"older than LockTTL", 11 * time.Minute, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			exec := &crashing{ran: map[intent.OperationHash]bool{}}
			w, _ := crashWorldWith(t, exec, func(p *gateway.Pack) {
				np, err := gatewaytest.Pack(gatewaytest.Options{Executor: exec})
				if err != nil {
					t.Fatal(err)
				}
				np.Registries = p.Registries
				*p = np
			})
			tok := w.mandate("emma", 1000000)
			exec.set("before")
			if !crashDecide(w, tok, send("GB29", "4.00")) {
				t.Fatal("no crash before executing")
			}
			exec.set("")
			w.now = w.now.Add(tt.wait)
			rep, err := w.gw.Reconcile(context.Background(), w.now)
			if err != nil || len(rep.Settlements) != 1 || rep.Settlements[0].Outcome != gateway.OutcomeReleased {
				t.Fatalf("settlements %+v, %v", rep.Settlements, err)
			}
			d := w.decide(tok, send("GB29", "4.00"))
			switch {
			case tt.want == "" && !d.Executed:
				t.Errorf("retry: %s %+v, want executed", d.Verdict, d.Refusal)
			case tt.want != "" && (d.Executed || d.Refusal == nil || d.Refusal.Code != tt.want):
				t.Errorf("retry: %s %+v, want %s", d.Verdict, d.Refusal, tt.want)
			case tt.want != "" && (strings.Contains(d.Refusal.Message, "already executed") || !strings.Contains(d.Refusal.Message, "did not execute")):
				t.Errorf("retry's refusal is not true: %q", d.Refusal.Message)
			}
		})
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
