package postgres_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/checkpoint"
	"github.com/intentplane/intentplane/store/postgres"
)

// The replica tests re-execute the test binary as gateway processes that
// share one database schema. Each replica runs its clients concurrently on
// one mandate and writes to stdout a line per execution (from inside the
// executor, before it returns) and a line per decision (after Decide
// returns). The parent checks the database against those lines.

const replicaEnv = "INTENTPLANE_PG_REPLICA"

// replicaJob is what a replica process is asked to do.
type replicaJob struct {
	DSN     string
	Replica int
	Clients int
	Each    int    // proposals per client
	Mandate string // token
	// From skips the first From proposals of each client (a restart that
	// does not replay from the start).
	From int
}

var _ checkpoint.Sink = (*postgres.Store)(nil)

func TestMain(m *testing.M) {
	if job := os.Getenv(replicaEnv); job != "" {
		if err := replica(job); err != nil {
			fmt.Fprintln(os.Stderr, "replica:", err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	os.Exit(m.Run())
}

const (
	replicaOwner = intent.Owner("acme")
	replicaID    = "m-replicas"
	sharedPool   = 48 // proposals every replica sends, so they race
)

// replicaProposal returns proposal k of client c of replica r, and whether
// it is one of the shared proposals that every replica sends. One in four
// is shared; a shared one is large (needs an approval) one time in three.
func replicaProposal(r, c, k int) []byte {
	if k%4 == 0 {
		n := (k/4 + c) % sharedPool
		amount := fmt.Sprintf("%d.%02d", 1+n%9, (n*37)%100)
		if n%3 == 0 {
			amount = fmt.Sprintf("%d.00", 101+n)
		}
		return gatewaytest.Send(gatewaytest.Recipients[n%len(gatewaytest.Recipients)], amount, fmt.Sprintf("shared %d", n))
	}
	n := (r*1000+c)*1000 + k
	amount := fmt.Sprintf("%d.%02d", n%7, (n*7919)%100)
	return gatewaytest.Send(gatewaytest.Recipients[n%len(gatewaytest.Recipients)], amount, fmt.Sprintf("r%d c%d k%d", r, c, k))
}

// lockedWriter serializes writes to w, one line per Write.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func replica(spec string) error {
	var job replicaJob
	if err := json.Unmarshal([]byte(spec), &job); err != nil {
		return err
	}
	ctx := context.Background()
	st, err := postgres.Open(ctx, job.DSN, postgres.Config{MaxConns: 8, Timeout: 20 * time.Second})
	if err != nil {
		return err
	}
	defer st.Close()
	_, cpriv := gatewaytest.CheckpointKey()
	cp := checkpoint.Wrap(st, st, receipt.NewEd25519Signer("cp", cpriv), checkpoint.Config{Every: 25, Interval: -1})
	out := &lockedWriter{w: os.Stdout}
	gw, err := gatewaytest.Gateway(cp, &gatewaytest.Recorder{Out: out})
	if err != nil {
		return err
	}
	now := time.Now()
	var wg sync.WaitGroup
	errc := make(chan error, job.Clients)
	for c := range job.Clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := job.From; k < job.Each; k++ {
				req := gateway.Request{Mandate: job.Mandate, Proposal: replicaProposal(job.Replica, c, k)}
				d, err := gw.Decide(ctx, req)
				if err == nil && d.Verdict == intent.StepUp {
					fmt.Fprintf(out, "decision %s %s %d\n", d.Verdict, d.Refusal.Code, d.Receipt.Seq)
					var a approval.Approval
					if a, err = gatewaytest.Approve(d, "replicas", now); err != nil {
						errc <- err
						return
					}
					req.Approvals = []approval.Approval{a}
					d, err = gw.Decide(ctx, req)
				}
				if err != nil {
					errc <- err
					return
				}
				code := intent.Code("-")
				if d.Refusal != nil {
					code = d.Refusal.Code
				}
				fmt.Fprintf(out, "decision %s %s %d\n", d.Verdict, code, d.Receipt.Seq)
			}
		}()
	}
	wg.Wait()
	if err := cp.Flush(ctx); err != nil {
		return err
	}
	close(errc)
	return <-errc
}

// outcome collects what the replicas said.
type outcome struct {
	mu        sync.Mutex
	decisions int
	verdicts  map[string]int // "allow", "deny budget_exceeded", ...
	execs     map[string]int // operation hash → times executed
	executed  intent.Amount
}

func newOutcome() *outcome {
	return &outcome{verdicts: map[string]int{}, execs: map[string]int{}}
}

func (o *outcome) line(t *testing.T, s string) {
	f := strings.Fields(s)
	o.mu.Lock()
	defer o.mu.Unlock()
	switch {
	case len(f) == 3 && f[0] == "exec":
		o.execs[f[1]]++
		n, _ := strconv.ParseInt(f[2], 10, 64)
		o.executed += intent.Amount(n)
	case len(f) == 4 && f[0] == "decision":
		o.decisions++
		k := f[1]
		if f[2] != "-" {
			k += " " + f[2]
		}
		o.verdicts[k]++
	default:
		t.Errorf("replica said %q", s)
	}
}

// startReplica starts a replica process; its lines go to o. If killAfter
// is positive, the process is killed with SIGKILL after that many decision
// lines. The returned function waits for it and reports whether it was
// killed.
func startReplica(t *testing.T, job replicaJob, o *outcome, killAfter int) func() (killed bool) {
	t.Helper()
	spec, _ := json.Marshal(job)
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), replicaEnv+"="+string(spec))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		sc := bufio.NewScanner(stdout)
		seen := 0
		for sc.Scan() {
			o.line(t, sc.Text())
			if strings.HasPrefix(sc.Text(), "decision ") {
				seen++
				if seen == killAfter {
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
			}
		}
	}()
	return func() bool {
		<-done
		err := cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
			return true
		}
		if err != nil {
			t.Errorf("replica %d: %v\n%s", job.Replica, err, stderr.String())
		}
		return false
	}
}

// checkState checks the database against what the replicas said: no
// operation executed twice, the ledger holds what executed and never more
// than the budget, no approval used twice, and the chain (with its
// checkpoints) verifies and holds a receipt per decision.
func checkState(t *testing.T, st *postgres.Store, o *outcome, budget intent.Amount, killed bool) []receipt.Receipt {
	t.Helper()
	ctx := context.Background()
	for h, n := range o.execs {
		if n > 1 {
			t.Errorf("operation %s executed %d times", h, n)
		}
	}
	u, err := st.Usage(ctx, replicaID)
	if err != nil {
		t.Fatal(err)
	}
	if u.Committed+u.Reserved > budget || o.executed > budget {
		t.Errorf("budget %d exceeded: committed %d reserved %d executed %d", budget, u.Committed, u.Reserved, o.executed)
	}
	if killed {
		// Between execution and commit, a kill leaves the amount reserved.
		if u.Committed > o.executed || o.executed > u.Committed+u.Reserved {
			t.Errorf("ledger committed %d reserved %d, executors report %d", u.Committed, u.Reserved, o.executed)
		}
	} else if u.Committed != o.executed || u.Reserved != 0 {
		t.Errorf("ledger committed %d reserved %d, executors report %d", u.Committed, u.Reserved, o.executed)
	}

	rs, err := st.Receipts(ctx, replicaOwner, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if killed && len(rs) < o.decisions || !killed && len(rs) != o.decisions {
		t.Errorf("%d receipts for %d decisions", len(rs), o.decisions)
	}
	approvals := map[string]int{}
	executedOps := map[string]bool{}
	for _, r := range rs {
		if r.Result != receipt.ResultExecuted {
			continue
		}
		if executedOps[r.Operation] {
			t.Errorf("two receipts say operation %s executed", r.Operation)
		}
		executedOps[r.Operation] = true
		if o.execs[r.Operation] != 1 {
			t.Errorf("receipt %d says %s executed; executors ran it %d times", r.Seq, r.Operation, o.execs[r.Operation])
		}
		for _, a := range r.Approvals {
			approvals[a.ID]++
			if approvals[a.ID] > 1 {
				t.Errorf("approval %s used twice", a.ID)
			}
		}
	}
	cs, err := st.Checkpoints(ctx, replicaOwner)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if err := receipt.WriteCheckpoints(&buf, cs); err != nil {
		t.Fatal(err)
	}
	pub, _ := gatewaytest.CheckpointKey()
	rep, err := receipt.Verify(&buf, receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{"cp": pub}))
	if err != nil {
		t.Fatalf("the chain does not verify: %v", err)
	}
	if rep.Checkpoints == 0 || rep.Unverified != 0 {
		t.Errorf("Verify report %+v: want verified checkpoints", rep)
	}
	t.Logf("%d decisions, %d receipts, %d checkpoints; verdicts %v; %d operations executed for %s of %s EUR; %d approvals used; ledger committed %d reserved %d",
		o.decisions, len(rs), rep.Checkpoints, o.verdicts, len(o.execs), intent.FormatAmount(o.executed, 2), intent.FormatAmount(budget, 2), len(approvals), u.Committed, u.Reserved)
	return rs
}

// TestReplicas: 4 gateway processes × 16 clients each, 64 in all, on one
// mandate whose budget runs out midway.
func TestReplicas(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts 4 processes")
	}
	st, dsn := open(t, postgres.Config{})
	const budget = intent.Amount(6_000_00)
	tok, err := gatewaytest.Mandate(replicaID, replicaOwner, budget, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o := newOutcome()
	var waits []func() bool
	for r := range 4 {
		waits = append(waits, startReplica(t, replicaJob{DSN: dsn, Replica: r, Clients: 16, Each: 40, Mandate: tok}, o, 0))
	}
	for _, w := range waits {
		w()
	}
	checkState(t, st, o, budget, false)
	if o.verdicts["deny "+string(intent.CodeBudgetExceeded)] == 0 {
		t.Errorf("the budget was never reached: %v", o.verdicts)
	}
	if o.verdicts["deny "+string(intent.CodeReplayed)]+o.verdicts["deny "+string(intent.CodeApprovalInvalid)] == 0 {
		t.Errorf("no replica ever lost a race for a shared operation: %v", o.verdicts)
	}
}

// TestReplicaKill9: one of two replicas is killed with SIGKILL in the middle
// of its stream, then restarted on the same stream: nothing executes twice,
// the chain verifies, the ledger holds what executed.
func TestReplicaKill9(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("starts processes")
	}
	st, dsn := open(t, postgres.Config{})
	const budget = intent.Amount(1_000_000_00)
	tok, err := gatewaytest.Mandate(replicaID, replicaOwner, budget, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	o := newOutcome()
	other := startReplica(t, replicaJob{DSN: dsn, Replica: 1, Clients: 8, Each: 40, Mandate: tok}, o, 0)
	victim := startReplica(t, replicaJob{DSN: dsn, Replica: 0, Clients: 8, Each: 40, Mandate: tok}, o, 100)
	if !victim() {
		t.Fatal("the replica finished before it could be killed")
	}
	restarted := startReplica(t, replicaJob{DSN: dsn, Replica: 0, Clients: 8, Each: 40, Mandate: tok}, o, 0)
	restarted()
	other()
	checkState(t, st, o, budget, true)
	if o.verdicts["deny "+string(intent.CodeReplayed)] == 0 {
		t.Errorf("the restarted replica replayed nothing: %v", o.verdicts)
	}
}
