package scenarios_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/internal/pgtest"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/postgres"
)

// recorder wraps an executor: it records each operation executed, fails
// the test if one executes twice, and is a gateway.Settler over what it
// recorded (the idempotency record a real system of record keeps).
type recorder struct {
	t    testing.TB
	exec gateway.Executor

	mu  sync.Mutex
	ran map[intent.OperationHash]intent.Amount
}

func (r *recorder) Execute(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
	out, err := r.exec.Execute(ctx, op, h)
	if err == nil {
		r.mu.Lock()
		if _, twice := r.ran[h]; twice {
			r.t.Errorf("operation %s executed twice", h)
		}
		r.ran[h] = intent.Amount(op.Args["amount"].Int)
		r.mu.Unlock()
	}
	return out, err
}

func (r *recorder) Lookup(ctx context.Context, owner intent.Owner, action intent.Action, h intent.OperationHash) (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, ok := r.ran[h]
	return ok, nil
}

func (r *recorder) executed() (map[intent.OperationHash]intent.Amount, intent.Amount) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var sum intent.Amount
	out := map[intent.OperationHash]intent.Amount{}
	for h, a := range r.ran {
		out[h], sum = a, sum+a
	}
	return out, sum
}

// observed is a store that counts the failures of its writes (errors that
// are not the store's answers), to prove that a fault was met.
type observed struct {
	gateway.Store
	failures atomic.Int64
}

func (o *observed) count(err error) error {
	if err != nil && !errors.Is(err, state.ErrReplayed) && !errors.Is(err, state.ErrExceeded) && !errors.Is(err, state.ErrDuplicate) && !errors.Is(err, state.ErrNotFound) {
		o.failures.Add(1)
	}
	return err
}

func (o *observed) Reserve(ctx context.Context, account string, limit intent.Money, id string, amount intent.Money) error {
	return o.count(o.Store.Reserve(ctx, account, limit, id, amount))
}

func (o *observed) Consume(ctx context.Context, key string, expires time.Time) error {
	return o.count(o.Store.Consume(ctx, key, expires))
}

func (o *observed) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	out, err := o.Store.Append(ctx, r)
	return out, o.count(err)
}

// AppendDeferred passes deferred receipts on (the embedded store's), so
// that the faults also meet the receipts a write failure loses.
func (o *observed) AppendDeferred(ctx context.Context, r receipt.Receipt) error {
	if dl, ok := o.Store.(state.DeferredLog); ok {
		return o.count(dl.AppendDeferred(ctx, r))
	}
	_, err := o.Append(ctx, r)
	return err
}

func (o *observed) OpenReservations(ctx context.Context, before time.Time) ([]gateway.Reservation, error) {
	return o.Store.(gateway.ReconcileStore).OpenReservations(ctx, before)
}

// faultStream runs 8 clients deciding distinct banking payments on st
// until it ends: normally for a while, then with inject's fault for a
// while, then healed. During the fault every refusal must be
// gateway.unavailable; after it, payments must execute again. Then it
// reconciles what the fault left open and checks that the state is
// consistent: no operation executed twice, the budget committed exactly
// what executed with nothing left reserved, the receipt chain verifies,
// and an executed operation's nonce stays spent.
func faultStream(t *testing.T, open func(now func() time.Time) gateway.Store, inject, heal func()) {
	t.Helper()
	bank := banking.NewMem()
	if err := bank.Open(bankOwner, banking.Account{IBAN: "DE89370400440532013000", Balance: 1 << 40,
		Transactions: []banking.Transaction{{ID: 1, Sender: "me", Recipient: bankFriend, Amount: 100, Subject: "x", Date: "2022-01-01"}}}); err != nil {
		t.Fatal(err)
	}
	pack, err := banking.NewPack(bank)
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{t: t, exec: pack.Executor, ran: map[intent.OperationHash]intent.Amount{}}
	pack.Executor = rec
	obs := &observed{}
	h := newHarness(t, storeKind{name: "fault", open: func(t testing.TB, now func() time.Time) (gateway.Store, func() gateway.Store) {
		obs.Store = open(now)
		return obs, func() gateway.Store { return obs }
	}}, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), pack, nil)
	tok := h.mandate(mandate.Mandate{ID: "m-fault", Owner: bankOwner, Scope: []intent.Action{banking.ActionSendMoney},
		Budget: intent.Money{Currency: "EUR", Amount: 1 << 50}})

	const (
		normal, healthy = 0, 2
		faulty          = 1
	)
	var (
		phase                  atomic.Int32
		next                   atomic.Int64
		mu                     sync.Mutex
		allowed, refused, errs [3]int
		codes                  = map[intent.Code]int{}
		executedWithoutReceipt int
		stop                   = make(chan struct{})
		wg                     sync.WaitGroup
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				p := phase.Load()
				k := next.Add(1)
				d, err := h.gw.Decide(context.Background(), gateway.Request{Mandate: tok,
					// Cents, so that the stream stays under the pack's daily
					// confirmation threshold (1,000.00 to one recipient)
					// however long a loaded machine makes it run.
					Proposal: proposal(t, banking.ActionSendMoney, send(bankFriend, fmt.Sprintf("0.%02d", 1+k%99), fmt.Sprintf("fault %d", k)))})
				mu.Lock()
				switch {
				case err != nil:
					errs[p]++
					if d.Executed {
						executedWithoutReceipt++
					}
				case d.Verdict == intent.Allow:
					allowed[p]++
				default:
					refused[p]++
				}
				if d.Verdict != intent.Allow {
					codes[d.Refusal.Code]++
					if d.Refusal.Code != intent.CodeUnavailable {
						t.Errorf("refusal %s %s: only gateway.unavailable is expected", d.Refusal.Code, d.Refusal.Message)
					}
				}
				mu.Unlock()
				if d.Verdict != intent.Allow {
					time.Sleep(5 * time.Millisecond)
				}
			}
		}()
	}
	// Phases are bounded by progress, not time alone, so that a loaded
	// machine still sees payments before and after the fault.
	allowedIn := func(p int) int {
		mu.Lock()
		defer mu.Unlock()
		return allowed[p]
	}
	waitAllowed := func(p, n int) {
		for deadline := time.Now().Add(time.Minute); allowedIn(p) < n && time.Now().Before(deadline); {
			time.Sleep(20 * time.Millisecond)
		}
	}
	waitAllowed(normal, 20)
	inject()
	phase.Store(faulty)
	time.Sleep(time.Second)
	heal()
	phase.Store(healthy)
	waitAllowed(healthy, 20)
	close(stop)
	wg.Wait()
	t.Logf("allowed %v, refused %v, Decide errors (receipt not stored) %v, of which executed %d; refusal codes %v (phases: before, during, after the fault)",
		allowed, refused, errs, executedWithoutReceipt, codes)
	if allowed[normal] == 0 || allowed[healthy] == 0 {
		t.Fatalf("payments before the fault %d, after it %d: want some of each", allowed[normal], allowed[healthy])
	}
	// A decision meets the fault whenever its store calls do, and the
	// receipt of an executed operation is retried for about five seconds,
	// so refusals cannot be counted by phase: the store's failures show
	// that the fault was met.
	if n := obs.failures.Load(); n == 0 {
		t.Fatal("no store write failed: the fault was not injected")
	} else {
		t.Logf("%d store writes failed", n)
	}

	// What the fault left open is settled; the state is consistent.
	rep, err := h.gw.Reconcile(context.Background(), time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("reconciled: %d committed, %d released, %d unsettled", rep.Count(gateway.OutcomeCommitted), rep.Count(gateway.OutcomeReleased), rep.Count(gateway.OutcomeUnsettled))
	ran, sum := rec.executed()
	h.checkBudget("m-fault", sum)
	rs, err := h.store.Receipts(context.Background(), bankOwner, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	h.mu.Lock()
	h.decisions[bankOwner] = len(rs) // the chain is checked, not the count: receipts were lost with their decisions
	h.mu.Unlock()
	h.checkReceipts()
	if min := allowed[normal] + allowed[faulty] + allowed[healthy]; len(ran) < min {
		t.Errorf("%d operations executed, fewer than the %d allowed", len(ran), min)
	}
	acct, err := bank.Account(bankOwner)
	if err != nil {
		t.Fatal(err)
	}
	if got := len(acct.Transactions) - 1; got != len(ran) {
		t.Errorf("the bank holds %d payments, the executor recorded %d", got, len(ran))
	}
	// Replays of executed payments stay refused.
	replayed := 0
	for _, tx := range acct.Transactions[1:] {
		if replayed == 5 {
			break
		}
		d := h.decide(tok, banking.ActionSendMoney, send(bankFriend, intent.FormatAmount(tx.Amount, 2), tx.Subject))
		if d.Executed || code(d) != intent.CodeReplayed {
			t.Errorf("replay of %q: %s %s %s", tx.Subject, d.Verdict, code(d), message(d))
		}
		replayed++
	}
}

// proxy is a TCP proxy to PostgreSQL that can be stopped, as the server
// going down looks to its clients: every connection is cut and new ones
// are refused until it starts again. It disturbs no other user of the
// server.
type proxy struct {
	ln     net.Listener
	target string

	mu    sync.Mutex
	down  bool
	conns map[net.Conn]bool
}

func newProxy(t *testing.T, target string) *proxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &proxy{ln: ln, target: target, conns: map[net.Conn]bool{}}
	t.Cleanup(func() { ln.Close(); p.stop() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go p.serve(c)
		}
	}()
	return p
}

func (p *proxy) serve(c net.Conn) {
	p.mu.Lock()
	down := p.down
	p.mu.Unlock()
	if down {
		c.Close()
		return
	}
	s, err := net.Dial("tcp", p.target)
	if err != nil {
		c.Close()
		return
	}
	p.mu.Lock()
	p.conns[c], p.conns[s] = true, true
	p.mu.Unlock()
	go func() { _, _ = io.Copy(s, c); s.Close() }()
	_, _ = io.Copy(c, s)
	c.Close()
}

// stop cuts every connection and refuses new ones.
func (p *proxy) stop() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.down = true
	for c := range p.conns {
		c.Close()
	}
	clear(p.conns)
}

func (p *proxy) start() {
	p.mu.Lock()
	p.down = false
	p.mu.Unlock()
}

// TestPostgresDownMidStream: PostgreSQL goes away (every connection cut,
// new ones refused) in the middle of a stream of payments, then comes back:
// refusals say gateway.unavailable, receipts that could not be stored are
// reported as errors wrapping postgres.ErrUnavailable, and afterwards the
// state is consistent (see faultStream).
func TestPostgresDownMidStream(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Schema(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	p := newProxy(t, u.Host)
	u.Host = p.ln.Addr().String()
	faultStream(t, func(func() time.Time) gateway.Store { // PostgreSQL keeps its own clock
		st, err := postgres.Open(context.Background(), u.String(), postgres.Config{MaxConns: 8, Timeout: 2 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(st.Close)
		return st
	}, p.stop, p.start)
}

// tmpfs mounts a tmpfs of size bytes on a new directory and unmounts it
// when t ends. It needs root (CAP_SYS_ADMIN): without it the test is
// skipped, except under CI=true, where it fails.
func tmpfs(t *testing.T, size int) string {
	t.Helper()
	dir := t.TempDir()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%d", size), "tmpfs", dir).CombinedOutput()
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and a tmpfs cannot be mounted (the disk-full tests need root): %v: %s", err, out)
		}
		t.Skipf("cannot mount a tmpfs (needs root): %v: %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}

// TestEmbeddedDiskFull: the embedded store's disk fills up in the middle of
// a stream of payments (a filler file takes the rest of a small tmpfs),
// then space comes back: the same guarantees as for PostgreSQL.
func TestEmbeddedDiskFull(t *testing.T) {
	t.Parallel()
	dir := tmpfs(t, 8<<20)
	filler := filepath.Join(dir, "filler")
	faultStream(t, func(now func() time.Time) gateway.Store { return openEmbedded(t, filepath.Join(dir, "state.db"), now) },
		func() {
			// Fill every byte left; the write fails with ENOSPC at the end.
			f, err := os.Create(filler)
			if err != nil {
				t.Fatal(err)
			}
			buf := make([]byte, 64<<10)
			for {
				if _, err := f.Write(buf); err != nil {
					break
				}
			}
			f.Close()
		},
		func() {
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
		})
}

// TestEmbeddedReadOnly: the embedded store's file turns unwritable in the
// middle of a stream of payments (chattr +i: every write fails with EPERM,
// as on a filesystem remounted read-only after an I/O error), then
// writable again: the same guarantees. It needs root and a filesystem with
// the immutable flag (ext4, xfs): without them the test is skipped, except
// under CI=true, where it fails.
func TestEmbeddedReadOnly(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	chattr := func(flag string) func() {
		return func() {
			if out, err := exec.Command("chattr", flag, path).CombinedOutput(); err != nil {
				if os.Getenv("CI") == "true" {
					t.Fatalf("CI=true and chattr %s fails (the read-only test needs root and ext4 or xfs): %v: %s", flag, err, out)
				}
				t.Skipf("chattr %s: %v: %s", flag, err, out)
			}
		}
	}
	t.Cleanup(func() { _ = exec.Command("chattr", "-i", path).Run() })
	faultStream(t, func(now func() time.Time) gateway.Store { return openEmbedded(t, path, now) }, chattr("+i"), chattr("-i"))
}

// TestEmbeddedReadOnlyAtStart: a store file on a read-only filesystem is
// refused at Open with the filesystem's reason, and the file is unchanged
// once the filesystem is writable again.
func TestEmbeddedReadOnlyAtStart(t *testing.T) {
	t.Parallel()
	dir := tmpfs(t, 8<<20)
	path := filepath.Join(dir, "state.db")
	st := openEmbedded(t, path, nil)
	if _, err := st.Append(context.Background(), receiptFor(bankOwner)); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	mount := func(mode string) {
		if out, err := exec.Command("mount", "-o", "remount,"+mode, dir).CombinedOutput(); err != nil {
			t.Fatalf("remount %s: %v: %s", mode, err, out)
		}
	}
	mount("ro")
	_, err := embedded.Open(path, embedded.Options{})
	mount("rw")
	if err == nil || !strings.Contains(err.Error(), "read-only file system") {
		t.Fatalf("Open on a read-only filesystem = %v, want the filesystem's reason", err)
	}
	st = openEmbedded(t, path, nil)
	if rs, err := st.Receipts(context.Background(), bankOwner, 1, 0); err != nil || len(rs) != 1 {
		t.Fatalf("after the read-only start: %d receipts, %v; want the one written", len(rs), err)
	}
}

func receiptFor(owner intent.Owner) receipt.Receipt {
	return receipt.Receipt{Owner: owner, Time: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), Action: banking.ActionSendMoney, Verdict: intent.Deny, Result: receipt.ResultNotExecuted}
}

// openEmbedded opens the embedded store at path on the clock now (nil: the
// real clock); a stream of decisions gives it the gateway's, by which the
// consumed nonces expire.
func openEmbedded(t *testing.T, path string, now func() time.Time) *embedded.Store {
	t.Helper()
	st, err := embedded.Open(path, embedded.Options{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Close(); err != nil && !errors.Is(err, embedded.ErrClosed) {
			t.Logf("close: %v", err)
		}
	})
	return st
}
