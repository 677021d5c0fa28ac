package embedded_test

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/embedded"
)

// The crash test re-executes the test binary as a gateway process (the
// child) that decides a stream of proposals against the embedded store and
// acknowledges each decision on stdout once Decide has returned. The parent
// kills it with SIGKILL in the middle of the stream, reopens the store and
// checks what survived, then replays the whole stream.

const (
	childEnv    = "INTENTPLANE_EMBEDDED_CHILD"
	crashOwner  = intent.Owner("emma")
	crashID     = "m-crash"
	crashBudget = intent.Amount(8_000_00) // 8,000.00 EUR: not exhausted when the kill comes
	childWorker = 8
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(deferredEnv); dir != "" {
		if err := deferredChild(dir); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	if dir := os.Getenv(childEnv); dir != "" {
		if err := child(dir); err != nil {
			fmt.Fprintln(os.Stderr, "child:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// proposal i of the stream: mostly small payments, every 16th one large
// enough to need a confirmation.
func proposal(i int) []byte {
	amount := fmt.Sprintf("%d.%02d", 1+i%5, i%100)
	if i%16 == 15 {
		amount = "150.00"
	}
	return gatewaytest.Send(gatewaytest.Recipients[i%len(gatewaytest.Recipients)], amount, fmt.Sprintf("stream %d", i))
}

// decideOne decides proposal i, presenting an approval if it steps up.
func decideOne(ctx context.Context, gw *gateway.Gateway, tok string, i int, now time.Time) (gateway.Decision, error) {
	req := gateway.Request{Mandate: tok, Proposal: proposal(i)}
	d, err := gw.Decide(ctx, req)
	if err != nil || d.Verdict != intent.StepUp {
		return d, err
	}
	a, err := gatewaytest.Approve(d, "crash", now)
	if err != nil {
		return d, err
	}
	req.Approvals = []approval.Approval{a}
	return gw.Decide(ctx, req)
}

func openExecLog(dir string) (*os.File, error) {
	return os.OpenFile(filepath.Join(dir, "exec.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
}

func child(dir string) error {
	st, err := embedded.Open(filepath.Join(dir, "state.db"), embedded.Options{})
	if err != nil {
		return err
	}
	log, err := openExecLog(dir)
	if err != nil {
		return err
	}
	gw, err := gatewaytest.Gateway(st, &gatewaytest.Recorder{Out: log})
	if err != nil {
		return err
	}
	now := time.Now()
	tok, err := gatewaytest.Mandate(crashID, crashOwner, crashBudget, now)
	if err != nil {
		return err
	}
	var next atomic.Int64
	var mu sync.Mutex
	out := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	errc := make(chan error, childWorker)
	for range childWorker {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= 1_000_000 {
					return
				}
				d, err := decideOne(context.Background(), gw, tok, i, now)
				if err != nil {
					errc <- err
					return
				}
				mu.Lock()
				fmt.Fprintf(out, "ack %d %s %d %s\n", i, d.Verdict, d.Receipt.Seq, d.Receipt.Hash)
				out.Flush()
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	close(errc)
	return <-errc
}

type ack struct {
	i       int
	verdict string
	seq     uint64
	hash    string
}

func TestKill9MidStream(t *testing.T) {
	if testing.Short() {
		t.Skip("re-executes the test binary")
	}
	dir := t.TempDir()
	var acks []ack
	for _, line := range killedChild(t, childEnv, dir, 400) {
		f := strings.Fields(line)
		if len(f) != 5 || f[0] != "ack" {
			t.Fatalf("child said %q", line)
		}
		i, _ := strconv.Atoi(f[1])
		seq, _ := strconv.ParseUint(f[3], 10, 64)
		acks = append(acks, ack{i: i, verdict: f[2], seq: seq, hash: f[4]})
	}
	t.Logf("child killed after %d acknowledged decisions", len(acks))

	ctx := context.Background()
	st, err := embedded.Open(filepath.Join(dir, "state.db"), embedded.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	// 1. The chain verifies and holds every acknowledged receipt.
	rs := verifyChain(t, st)
	bySeq := map[uint64]receipt.Receipt{}
	for _, r := range rs {
		bySeq[r.Seq] = r
	}
	for _, a := range acks {
		r, ok := bySeq[a.seq]
		if !ok || r.Hash.String() != a.hash {
			t.Fatalf("acknowledged receipt seq %d (%s) of proposal %d is lost after kill -9", a.seq, a.hash, a.i)
		}
	}
	t.Logf("after kill -9: %d receipts in the chain, %d acknowledged", len(rs), len(acks))

	// 2. No operation executed twice; the budget holds what executed.
	checkExecutions(t, ctx, st, dir, rs)

	// 3. Restart: replay the whole stream as far as it went, and further.
	last := 0
	for _, a := range acks {
		last = max(last, a.i)
	}
	log, err := openExecLog(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer log.Close()
	rec := &gatewaytest.Recorder{Out: log}
	gw, err := gatewaytest.Gateway(st, rec)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	tok, err := gatewaytest.Mandate(crashID, crashOwner, crashBudget, now)
	if err != nil {
		t.Fatal(err)
	}
	replays := 0
	for i := 0; i <= last+2*childWorker; i++ {
		d, err := decideOne(ctx, gw, tok, i, now)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict == intent.Deny && d.Refusal.Code == intent.CodeReplayed || d.Refusal != nil && d.Refusal.Code == intent.CodeApprovalInvalid {
			replays++
		}
	}
	t.Logf("replay after restart: %d proposals refused as already executed, %d executed for the first time", replays, len(rec.Executions()))
	rs = verifyChain(t, st)
	checkExecutions(t, ctx, st, dir, rs)
}

// killedChild re-executes the test binary with env set to dir, reads its
// stdout lines, kills it with SIGKILL after n of them, and returns every
// line it said; it fails unless the child ended by that SIGKILL.
func killedChild(t *testing.T, env, dir string, n int) []string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+dir)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) == n {
			if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
		}
	}
	err = cmd.Wait()
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() || ws.Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, not by SIGKILL (stderr: %s)", err, stderr.String())
	}
	return lines
}

func verifyChain(t *testing.T, st *embedded.Store) []receipt.Receipt {
	t.Helper()
	rs, err := st.Receipts(context.Background(), crashOwner, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	verify(t, rs)
	return rs
}

// checkExecutions reads the executor's log: no operation twice, every
// receipt that says executed is in it, and the ledger holds exactly what
// executed (committed, or still reserved if the kill came between
// execution and commit), never more than the budget.
func checkExecutions(t *testing.T, ctx context.Context, st *embedded.Store, dir string, rs []receipt.Receipt) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(dir, "exec.log"))
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var total intent.Amount
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			t.Fatalf("exec log line %q", line)
		}
		if seen[f[1]] {
			t.Fatalf("operation %s executed twice", f[1])
		}
		seen[f[1]] = true
		n, _ := strconv.ParseInt(f[2], 10, 64)
		total += intent.Amount(n)
	}
	for _, r := range rs {
		if r.Result == receipt.ResultExecuted && !seen[r.Operation] {
			t.Fatalf("receipt %d says operation %s executed; the executor never saw it", r.Seq, r.Operation)
		}
	}
	u, err := st.Usage(ctx, crashID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Committed > total || total > u.Committed+u.Reserved || u.Committed+u.Reserved > crashBudget {
		t.Fatalf("ledger committed %d reserved %d, executed %d, budget %d", u.Committed, u.Reserved, total, crashBudget)
	}
	t.Logf("%d operations executed once each, %d minor units; ledger committed %d reserved %d of %d", len(seen), total, u.Committed, u.Reserved, crashBudget)
}
