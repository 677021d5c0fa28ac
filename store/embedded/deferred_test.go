package embedded_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/embedded"
)

// TestAppendDeferred: a deferred receipt is linked in the order of the
// store's writes, read back by Receipts and Head at once, and kept by
// Close.
func TestAppendDeferred(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	s, err := embedded.Open(path, embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	at := func(i int) receipt.Receipt {
		return receipt.Receipt{Owner: "o", Time: time.Unix(int64(i), 0), Action: "bank.get_balance", Verdict: intent.Allow, Output: strconv.Itoa(i)}
	}
	for i := 1; i <= 3; i++ {
		if err := s.AppendDeferred(ctx, at(i)); err != nil {
			t.Fatal(err)
		}
	}
	r4, err := s.Append(ctx, at(4))
	if err != nil {
		t.Fatal(err)
	}
	if r4.Seq != 4 {
		t.Fatalf("Append after three deferred receipts linked as seq %d, want 4", r4.Seq)
	}
	if err := s.AppendDeferred(ctx, at(5)); err != nil {
		t.Fatal(err)
	}
	h, err := s.Head(ctx, "o")
	if err != nil || h.Seq != 5 || h.Output != "5" || h.Prev != r4.Hash {
		t.Fatalf("Head = seq %d output %q prev %s, %v; want 5 after %s", h.Seq, h.Output, h.Prev, err, r4.Hash)
	}
	if _, err := s.Head(ctx, "nobody"); !errors.Is(err, receipt.ErrNotFound) {
		t.Fatalf("Head of an owner without receipts = %v, want receipt.ErrNotFound", err)
	}
	if err := s.AppendDeferred(ctx, receipt.Receipt{Owner: "o"}); !errors.Is(err, receipt.ErrInvalid) {
		t.Fatalf("AppendDeferred of a receipt without a time = %v, want receipt.ErrInvalid", err)
	}
	for i := 6; i <= 8; i++ {
		if err := s.AppendDeferred(ctx, at(i)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.AppendDeferred(ctx, at(9)); !errors.Is(err, embedded.ErrClosed) {
		t.Fatalf("AppendDeferred after Close = %v, want ErrClosed", err)
	}
	s = open(t, path)
	rs, err := s.Receipts(ctx, "o", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 8 {
		t.Fatalf("after Close and Open: %d receipts, want 8", len(rs))
	}
	for i, r := range rs {
		if r.Output != strconv.Itoa(i+1) {
			t.Fatalf("receipt %d holds output %q, want %d", r.Seq, r.Output, i+1)
		}
	}
	verify(t, rs)
}

func verify(t *testing.T, rs []receipt.Receipt) {
	t.Helper()
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(&buf, nil); err != nil {
		t.Fatalf("chain does not verify: %v", err)
	}
}

// The deferred crash test re-executes the test binary (deferredEnv set) as
// a process that, in deferWorkers goroutines, appends deferred receipts
// (read-only decisions) and, every fourth step, makes a payment's writes:
// a reservation, a consumed nonce and a receipt appended with Append. It
// acknowledges each step on stdout once its calls have returned; the
// parent kills it with SIGKILL and checks what the reopened store holds.
const (
	deferredEnv   = "INTENTPLANE_EMBEDDED_DEFERRED_CHILD"
	deferWorkers  = 4
	deferAcct     = "m-deferred"
	deferKillAt   = 2000
	deferredOwner = intent.Owner("olga")
)

var deferLimit = intent.Money{Currency: "EUR", Amount: 1 << 40}

func deferredChild(dir string) error {
	st, err := embedded.Open(filepath.Join(dir, "state.db"), embedded.Options{})
	if err != nil {
		return err
	}
	ctx := context.Background()
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	say := func(format string, args ...any) {
		mu.Lock()
		fmt.Fprintf(out, format+"\n", args...)
		out.Flush()
		mu.Unlock()
	}
	errc := make(chan error, deferWorkers)
	for w := range deferWorkers {
		go func() {
			for i := 0; ; i++ {
				id := fmt.Sprintf("%d-%d", w, i)
				r := receipt.Receipt{Owner: deferredOwner, Time: time.Now(), Action: "bank.get_balance", Verdict: intent.Allow, Output: id}
				if i%4 != 3 {
					if err := st.AppendDeferred(ctx, r); err != nil {
						errc <- err
						return
					}
					say("d %s", id)
					continue
				}
				r.Action, r.Operation, r.Result = "bank.send_money", id, receipt.ResultExecuted
				if err := st.Reserve(ctx, deferAcct, deferLimit, id, intent.Money{Currency: "EUR", Amount: 1}); err != nil {
					errc <- err
					return
				}
				if err := st.Consume(ctx, "op:"+id, time.Now().Add(time.Hour)); err != nil {
					errc <- err
					return
				}
				if _, err := st.Append(ctx, r); err != nil {
					errc <- err
					return
				}
				say("s %s", id)
			}
		}()
	}
	return <-errc
}

// TestKill9Deferred: after kill -9, the reopened store holds every
// acknowledged payment's reservation, nonce and receipt, and every deferred
// receipt acknowledged before a payment that its goroutine acknowledged
// after it; only deferred receipts acknowledged after a goroutine's last
// payment may be lost. The chain verifies.
func TestKill9Deferred(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	type step struct {
		kind string
		id   string
	}
	var steps []step
	for _, line := range killedChild(t, deferredEnv, dir, deferKillAt) {
		f := strings.Fields(line)
		if len(f) != 2 || f[0] != "d" && f[0] != "s" {
			t.Fatalf("child said %q", line)
		}
		steps = append(steps, step{f[0], f[1]})
	}

	ctx := context.Background()
	st := open(t, filepath.Join(dir, "state.db"))
	rs, err := st.Receipts(ctx, deferredOwner, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, rs)
	stored := map[string]bool{}
	for _, r := range rs {
		stored[r.Output] = true
	}
	open, err := st.OpenReservations(ctx, time.Now().Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	reserved := map[string]bool{}
	for _, r := range open {
		reserved[r.ID] = true
	}
	// Per goroutine, the deferred receipts acknowledged before its last
	// acknowledged payment must be stored.
	lastPayment := map[string]int{}
	for n, s := range steps {
		if s.kind == "s" {
			lastPayment[worker(s.id)] = n
		}
	}
	var payments, deferred, lost int
	for n, s := range steps {
		switch {
		case s.kind == "s":
			payments++
			if !stored[s.id] {
				t.Errorf("payment %s: acknowledged, its receipt is lost", s.id)
			}
			if !reserved[s.id] {
				t.Errorf("payment %s: acknowledged, its reservation is lost", s.id)
			}
			if ok, err := st.Consumed(ctx, "op:"+s.id); err != nil || !ok {
				t.Errorf("payment %s: acknowledged, its nonce is not consumed (%v)", s.id, err)
			}
		case stored[s.id]:
			deferred++
		case n < lastPayment[worker(s.id)]:
			t.Errorf("deferred receipt %s lost, though its goroutine's later payment was acknowledged", s.id)
		default:
			lost++
		}
	}
	t.Logf("killed after %d steps: %d payments, all kept; %d deferred receipts kept, %d acknowledged after their goroutine's last payment lost; %d receipts in the chain",
		len(steps), payments, deferred, lost, len(rs))
}

func worker(id string) string { w, _, _ := strings.Cut(id, "-"); return w }

var _ state.DeferredLog = (*embedded.Store)(nil)
