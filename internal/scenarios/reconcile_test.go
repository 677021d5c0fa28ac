package scenarios_test

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// crashAt makes the decision's goroutine die at one point, as a process
// killed there would. runtime.Goexit still runs the gateway's deferred
// clean-up, so from that point on the store refuses every write (a dead
// process writes nothing): the reservation stays open, the record lock
// held until its TTL, and no receipt is written.
type crashAt struct {
	gateway.Store
	exec  gateway.Executor
	point string // "consume": before the nonce; "before", "after": executing
	dead  atomic.Bool
}

var errDead = errors.New("the process is dead")

func (c *crashAt) die() {
	c.dead.Store(true)
	runtime.Goexit()
}

func (c *crashAt) Consume(ctx context.Context, key string, expires time.Time) error {
	if c.point == "consume" && strings.HasPrefix(key, "op:") {
		c.die()
	}
	return c.Store.Consume(ctx, key, expires)
}

func (c *crashAt) Commit(ctx context.Context, id string) error {
	if c.dead.Load() {
		return errDead
	}
	return c.Store.Commit(ctx, id)
}

func (c *crashAt) Release(ctx context.Context, id string) error {
	if c.dead.Load() {
		return errDead
	}
	return c.Store.Release(ctx, id)
}

func (c *crashAt) Unconsume(ctx context.Context, key string) error {
	if c.dead.Load() {
		return errDead
	}
	return c.Store.Unconsume(ctx, key)
}

func (c *crashAt) Unhold(ctx context.Context, key, holder string) error {
	if c.dead.Load() {
		return errDead
	}
	return c.Store.Unhold(ctx, key, holder)
}

func (c *crashAt) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	if c.dead.Load() {
		return receipt.Receipt{}, errDead
	}
	return c.Store.Append(ctx, r)
}

func (c *crashAt) Execute(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
	if c.point == "before" {
		c.die()
	}
	out, err := c.exec.Execute(ctx, op, h)
	if c.point == "after" {
		c.die()
	}
	return out, err
}

// crashLockTTL is the record-lock TTL of the crashing gateways, so that
// the locks a crash leaves expire before the test goes on.
const crashLockTTL = 300 * time.Millisecond

// crash runs one decision through a gateway over st whose executor and
// store die at point, and waits for it to die.
func (h *apHarness) crash(pack gateway.Pack, point, tok string, args map[string]any) {
	h.t.Helper()
	h.crashHolding(pack, point, tok, args, crashLockTTL)
	// Its record lock expires (by the test clock for mem and embedded,
	// the server's for PostgreSQL).
	h.clock.Advance(time.Second)
	time.Sleep(crashLockTTL)
}

// crashHolding is crash with a record-lock TTL of ttl and the approvals
// as, returning as soon as the decision died: the record lock it took is
// still held.
func (h *apHarness) crashHolding(pack gateway.Pack, point, tok string, args map[string]any, ttl time.Duration, as ...approval.Approval) {
	h.t.Helper()
	c := &crashAt{Store: h.store, exec: pack.Executor, point: point}
	pack.Executor = c
	cfg := h.cfg
	cfg.LockTTL = ttl
	gw, err := gateway.New(cfg, c, pack)
	if err != nil {
		h.t.Fatal(err)
	}
	done := make(chan bool)
	go func() {
		finished := false
		defer func() { done <- finished }()
		_, _ = gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: proposal(h.t, ap.ActionPayBill, args), Approvals: as})
		finished = true
	}()
	if <-done {
		h.t.Fatalf("the decision crashing at %q finished", point)
	}
}

// TestAPReconcileAfterCrash: on every store, three payments die between
// their reservation and its settlement (before the nonce, before the ERP
// call, after it). After a restart, Reconcile commits the one the ERP
// shows paid (its payment carries the operation hash) and releases the
// other two, with a receipt each; the budget is exact, the chain verifies,
// the payment that never reached the ERP can be made, the one that did is
// a replay.
func TestAPReconcileAfterCrash(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, k storeKind) {
		h := newAP(t, k)
		pack, err := ap.NewPack(h.erp, ap.Config{Callbacks: h.callbacks, Now: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		tok := h.apMandate("m-crash")
		h.crash(pack, "consume", tok, pay(ap.DemoBill, ap.DemoIBAN, "100.00"))
		h.crash(pack, "before", tok, pay(ap.DemoBill, ap.DemoIBAN, "200.00"))
		h.crash(pack, "after", tok, pay(ap.DemoBill, ap.DemoIBAN, "300.00"))
		if u, err := h.store.Usage(context.Background(), "m-crash"); err != nil || u.Reserved != 60000 {
			t.Fatalf("after the crashes: %+v, %v; want 600.00 reserved", u, err)
		}
		if ps := h.payments(); len(ps) != 1 {
			t.Fatalf("%d payments in the ERP, want 1", len(ps))
		}

		h.clock.Advance(time.Minute)
		rep, before := h.restartReconciled(pack)
		// Each operation's budget reservation and its shares of the
		// running totals (the vendor's bill, day, week and mandate) are
		// settled alike.
		outcomes := map[string]string{}
		for _, st := range rep.Settlements {
			if o, ok := outcomes[st.Operation]; ok && o != st.Outcome {
				t.Fatalf("operation %s settled both %s and %s: %+v", st.Operation, o, st.Outcome, rep.Settlements)
			}
			outcomes[st.Operation] = st.Outcome
		}
		byOutcome := map[string]int{}
		for _, o := range outcomes {
			byOutcome[o]++
		}
		if len(outcomes) != 3 || byOutcome[gateway.OutcomeCommitted] != 1 || byOutcome[gateway.OutcomeReleased] != 2 {
			t.Fatalf("operations settled %v; settlements %+v", byOutcome, rep.Settlements)
		}
		h.checkBudget("m-crash", 30000)
		rs, err := h.store.Receipts(context.Background(), ap.DemoCompany, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		results := map[string]int{}
		for _, r := range rs {
			results[r.Result]++
		}
		if len(rs) != 3 || results[receipt.ResultExecuted] != 1 || results[receipt.ResultNotExecuted] != 2 {
			t.Errorf("settlement receipts %v, want 1 executed and 2 not executed", results)
		}
		h.mu.Lock()
		h.decisions[ap.DemoCompany] += 3
		h.mu.Unlock()
		if rep, err := h.gw.Reconcile(context.Background(), before); err != nil || len(rep.Settlements) != 0 {
			t.Errorf("second reconciliation: %+v, %v", rep.Settlements, err)
		}

		if d := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, ap.DemoIBAN, "100.00")); !d.Executed {
			t.Errorf("the payment that never reached its nonce: %s %s %s", d.Verdict, code(d), message(d))
		}
		// The one that reached the ERP's call but not the ERP is decided
		// again (its nonce was given back): it is not "already executed".
		if d := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, ap.DemoIBAN, "200.00")); !d.Executed {
			t.Errorf("the payment the ERP did not make: %s %s %s", d.Verdict, code(d), message(d))
		}
		if d := h.decide(tok, ap.ActionPayBill, pay(ap.DemoBill, ap.DemoIBAN, "300.00")); d.Executed || code(d) != intent.CodeReplayed {
			t.Errorf("the payment the ERP made: %s %s %s", d.Verdict, code(d), message(d))
		}
		if ps := h.payments(); len(ps) != 3 {
			t.Errorf("%d payments in the ERP, want 3", len(ps))
		}
		h.checkBudget("m-crash", 60000)
		h.checkReceipts()
	})
}

// restartReconciled restarts the gateway with pack and reconciles every
// reservation made so far, returning the report and the bound used.
func (h *apHarness) restartReconciled(pack gateway.Pack) (gateway.ReconcileReport, time.Time) {
	h.t.Helper()
	h.restart(pack)
	// Stores date reservations by their own clock: the test's for mem
	// and embedded, the server's for PostgreSQL. Bound by the later.
	before := h.clock.Now()
	if now := time.Now(); now.After(before) {
		before = now
	}
	rep, err := h.gw.Reconcile(context.Background(), before)
	if err != nil {
		h.t.Fatal(err)
	}
	return rep, before
}

// retryHold is the record-lock TTL of TestAPRetryAfterCrash's gateways:
// long enough for a restart and a reconciliation to end before the
// crashed decision's hold expires, even on a loaded machine.
const retryHold = 3 * time.Second

// TestAPRetryAfterCrash: on every store, an approved payment dies while
// its ERP call is being made, before the ERP pays (as with kill -9). After
// a restart, Reconcile releases it and gives its nonce back; its
// settlements name the mandate, or a running total's name and a key with
// no NUL byte. Until the crashed decision's hold on the vendor expires, a
// retry is refused as in flight with when the hold ends (not "is under
// way"); then the approval the crash consumed stays used, the identical
// payment asks for approval again, executes once with a new one, and is a
// replay after that.
func TestAPRetryAfterCrash(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, k storeKind) {
		h := newAP(t, k)
		h.cfg.LockTTL = retryHold // the restarted gateway's, as every replica's, equals the crashed one's
		pack, err := ap.NewPack(h.erp, ap.Config{Callbacks: h.callbacks, Now: h.clock.Now})
		if err != nil {
			t.Fatal(err)
		}
		tok := h.apMandate("m-retry")
		big := pay(ap.DemoBill2, ap.DemoIBAN, "2400.00")
		d := h.decide(tok, ap.ActionPayBill, big)
		if d.Verdict != intent.StepUp {
			t.Fatalf("above the threshold: %s %s %s", d.Verdict, code(d), message(d))
		}
		first := h.approve("alice", d)
		h.crashHolding(pack, "before", tok, big, retryHold, first)

		rep, _ := h.restartReconciled(pack)
		totals := 0
		for _, st := range rep.Settlements {
			if st.Outcome != gateway.OutcomeReleased || st.Operation != d.OperationHash.String() {
				t.Fatalf("settlement %+v", st)
			}
			switch {
			case st.Total == nil:
				if st.Mandate != "m-retry" || !strings.Contains(st.Reason, "nonce given back") {
					t.Errorf("the budget's settlement %+v", st)
				}
			default:
				totals++
				if st.Mandate != "" || st.TotalName() == "" || strings.ContainsAny(st.TotalName()+st.TotalKey(), "\x00") ||
					!strings.Contains(st.TotalKey(), "owner="+ap.DemoCompany+" ") {
					t.Errorf("a total's settlement names %q %q (mandate %q)", st.TotalName(), st.TotalKey(), st.Mandate)
				}
			}
		}
		if totals == 0 || len(rep.Settlements) != totals+1 {
			t.Fatalf("settlements %+v, want the budget's and the totals'", rep.Settlements)
		}
		h.mu.Lock()
		h.decisions[ap.DemoCompany]++ // the settlement's receipt
		h.mu.Unlock()

		d2 := h.decide(tok, ap.ActionPayBill, big)
		if code(d2) != intent.CodeInFlight || !strings.Contains(message(d2), "has not finished") ||
			!strings.Contains(message(d2), " UTC") || strings.Contains(message(d2), "is under way") {
			t.Fatalf("retry while the crashed decision's hold lasts: %s %s %s", d2.Verdict, code(d2), message(d2))
		}

		// The hold expires (the test clock for mem and embedded, the
		// server's for PostgreSQL).
		h.clock.Advance(retryHold + time.Second)
		time.Sleep(retryHold)
		if d := h.decide(tok, ap.ActionPayBill, big, first); d.Executed || code(d) != intent.CodeApprovalInvalid {
			t.Errorf("retry with the approval the crash consumed: %s %s %s", d.Verdict, code(d), message(d))
		}
		if d := h.decide(tok, ap.ActionPayBill, big); d.Verdict != intent.StepUp || code(d) != intent.CodeApprovalRequired {
			t.Errorf("retry without approval: %s %s %s", d.Verdict, code(d), message(d))
		}
		if d := h.decide(tok, ap.ActionPayBill, big, h.approve("alice", d)); !d.Executed {
			t.Fatalf("retry with a new approval: %s %s %s", d.Verdict, code(d), message(d))
		}
		if d := h.decide(tok, ap.ActionPayBill, big, h.approve("alice", d)); d.Executed || code(d) != intent.CodeReplayed {
			t.Errorf("the payment made, again: %s %s %s", d.Verdict, code(d), message(d))
		}
		if ps := h.payments(); len(ps) != 1 || ps[0].Key != d.OperationHash.String() {
			t.Errorf("payments %+v, want one under the operation's key", ps)
		}
		h.checkBudget("m-retry", 240000)
		h.checkReceipts()
	})
}
