package approvals_test

import (
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/mem"
)

// runOf returns the run of lines (pending requests of one mandate) as one
// request of level.
func runOf(t *testing.T, level intent.Level, lines ...approval.Request) approval.Request {
	t.Helper()
	var hs []intent.OperationHash
	for _, l := range lines {
		hs = append(hs, l.Hash)
	}
	op, err := approval.RunOperation(lines[0].Operation.MandateID, lines[0].Operation.Owner, hs)
	if err != nil {
		t.Fatal(err)
	}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return approval.Request{Operation: op, Hash: h, Level: level, Currency: "EUR", Lines: lines}
}

// threeLines is a run of three payments to one payee, the third alone
// needing no one.
func threeLines(t *testing.T) []approval.Request {
	a, b, c := pending(t, 150000, "INV-1", intent.LevelConfirm), pending(t, 20000, "INV-2", intent.LevelConfirm), pending(t, 5000, "INV-3", intent.LevelConfirm)
	c.Level = intent.LevelAuto
	return []approval.Request{a, b, c}
}

// TestRunApprovedOnce: a run's page lists its payments with the totals;
// one approval signs the run's hash over all its lines, which the gateway
// accepts for each line and for nothing else.
func TestRunApprovedOnce(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	lines := threeLines(t)
	run := runOf(t, intent.LevelConfirm, lines...)
	tk := f.request(run)
	c := f.signedIn("alice")
	p := c.do("GET", "/requests/"+tk.ID, nil, nil)
	for _, want := range []string{"Pay a run of 3 payments to 1 payee: 1,750.00 EUR in all", "What executes: 3 payments", `name="line"`, "Approve the ticked payments", "rejected, finally"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the run's page lacks %q", want)
		}
	}
	if strings.Count(p.body, `name="line"`) != 3 {
		t.Errorf("%d boxes, want 3", strings.Count(p.body, `name="line"`))
	}
	if got := c.decide(tk.ID, true); got.code != http.StatusSeeOther {
		t.Fatalf("approve: %d %.300s", got.code, got.body)
	}
	out := f.outcome(tk.ID)
	if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 {
		t.Fatalf("outcome %s with %d approvals", out.Status, len(out.Approvals))
	}
	a := out.Approvals[0]
	if a.Operation != run.Hash || len(a.Lines) != 3 {
		t.Fatalf("approval over %s with %d lines, want the run's hash over 3", a.Operation, len(a.Lines))
	}
	keys := approval.StaticKeys{"alice": approverKeys["alice"].Public().(ed25519.PublicKey)}
	for _, l := range lines {
		if _, err := approval.Evaluate(keys, l.Hash, "m-emma", t0, []approval.Approval{a}); err != nil {
			t.Errorf("line %s: %v", l.Operation.Args["memo"].Str, err)
		}
	}
	// Once a line executes (its receipt in the owner's chain), the run's
	// page says so on that line only.
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log}); err != nil {
		t.Fatal(err)
	}
	if _, err := f.log.Append(t.Context(), receipt.Receipt{Owner: "emma", Time: t0, Action: "pay.send", Args: lines[1].Operation.Args,
		Verdict: intent.Allow, Result: receipt.ResultExecuted, Output: "paid TX-77", Operation: lines[1].Hash.String()}); err != nil {
		t.Fatal(err)
	}
	p = c.do("GET", "/requests/"+tk.ID, nil, nil)
	if strings.Count(p.body, "<strong>Executed</strong>") != 1 || !strings.Contains(p.body, "paid TX-77") {
		t.Errorf("the run's page does not show the one line executed")
	}
	// The audit names the run's own receipts as a run.
	if p := c.do("GET", "/audit", nil, nil); !strings.Contains(p.body, "payment run of 3") {
		t.Errorf("the audit does not name the run's receipts")
	}
	_, other := operation(t, 150001, "INV-1")
	if _, err := approval.Evaluate(keys, other, "m-emma", t0, []approval.Approval{a}); !errors.Is(err, approval.ErrOtherOperation) {
		t.Errorf("a line changed by one cent: %v", err)
	}
}

// TestRunLineByLine: an approver unticks a payment: the approval covers
// the others, and the one left out is rejected, shown so to the next
// approver, who cannot approve it back.
func TestRunLineByLine(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	lines := threeLines(t)
	tk := f.request(runOf(t, intent.LevelFourEyes, lines...))
	alice := f.signedIn("alice")
	p := alice.do("GET", "/requests/"+tk.ID, nil, nil)
	form := url.Values{"csrf": {csrfOf(t, p)}, "operation": {f.outcome(tk.ID).Hash.String()}, "run": {"1"},
		"line": {lines[0].Hash.String(), lines[2].Hash.String()}}
	if got := alice.do("POST", "/requests/"+tk.ID+"/approve", form, nil); got.code != http.StatusSeeOther {
		t.Fatalf("approve two lines: %d %.300s", got.code, got.body)
	}
	out := f.outcome(tk.ID)
	if len(out.Approvals) != 1 || len(out.Approvals[0].Lines) != 2 || len(out.Votes[0].Left) != 1 || out.Votes[0].Left[0] != lines[1].Hash {
		t.Fatalf("after alice: %+v", out)
	}
	bob := f.signedIn("bob")
	p = bob.do("GET", "/requests/"+tk.ID, nil, nil)
	if !strings.Contains(p.body, "Left out by alice") || strings.Count(p.body, `name="line"`) != 2 {
		t.Errorf("bob's page does not show the line alice left out as such")
	}
	// A forged form ticking the line left out is refused.
	form = url.Values{"csrf": {csrfOf(t, p)}, "operation": {out.Hash.String()}, "run": {"1"}, "line": {lines[1].Hash.String()}}
	if got := bob.do("POST", "/requests/"+tk.ID+"/approve", form, nil); got.code != http.StatusConflict {
		t.Fatalf("ticking the line left out: %d", got.code)
	}
	// Ticking none approves nothing.
	form.Del("line")
	if got := bob.do("POST", "/requests/"+tk.ID+"/approve", form, nil); got.code != http.StatusConflict || !strings.Contains(got.body, "ticked none") {
		t.Fatalf("ticking none: %d", got.code)
	}
	if got := bob.decide(tk.ID, true); got.code != http.StatusSeeOther {
		t.Fatalf("bob approves: %d %.300s", got.code, got.body)
	}
	out = f.outcome(tk.ID)
	if out.Status != approvals.StatusApproved || len(out.Approvals) != 2 || len(out.Approvals[1].Lines) != 2 {
		t.Fatalf("after bob: %s, %d approvals", out.Status, len(out.Approvals))
	}
	if msg := f.log.all("emma")[1].Message; !strings.Contains(msg, "covers 2 of the run's 3 lines; it leaves out, and so rejects, 1") {
		t.Errorf("alice's receipt: %s", msg)
	}
}

// TestRunTampered: a run whose lines are not what its hash names, or
// whose level is below a line's, is refused.
func TestRunTampered(t *testing.T) {
	t.Parallel()
	for name, mutate := range map[string]func(*approval.Request){
		"a line changed":       func(r *approval.Request) { r.Lines[0].Operation.Args["amount"] = intent.AmountValue(150001, 2) },
		"a line added":         func(r *approval.Request) { r.Lines = append(r.Lines, pending(t, 100, "INV-9", intent.LevelConfirm)) },
		"a line dropped":       func(r *approval.Request) { r.Lines = r.Lines[1:] },
		"no lines":             func(r *approval.Request) { r.Lines = nil },
		"below a line's level": func(r *approval.Request) { r.Lines[1].Level = intent.LevelFourEyes },
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f := newFixture(t, nil)
			run := runOf(t, intent.LevelConfirm, threeLines(t)...)
			mutate(&run)
			if _, err := f.srv.Request(t.Context(), run); !errors.Is(err, approvals.ErrTampered) {
				t.Fatalf("Request: %v, want ErrTampered", err)
			}
		})
	}
}

// TestTrackerRun: a run's rejection rejects each of its lines, and a line
// left out of an approved run is rejected: proposed again, alone or in
// another run, it is refused without a new request.
func TestTrackerRun(t *testing.T) {
	t.Parallel()
	ctx := t.Context()
	now := func() time.Time { return t0 }
	ch := &fakeChannel{outcomes: map[string]approvals.Outcome{}}
	tr := approvals.NewTracker(ch, mem.New(now), approvals.TrackerConfig{Until: t0.Add(8 * time.Hour), Now: now})
	a, b, c := stepUp(1), stepUp(2), stepUp(3)
	run := stepUp(10)
	run.Lines = []approval.Request{a, b}
	if _, err := tr.Request(ctx, run); err != nil {
		t.Fatal(err)
	}
	ch.set(fmt.Sprintf("%032x", 1), approvals.StatusRejected)
	if _, err := tr.Await(ctx, run.Hash, 0); !errors.Is(err, approval.ErrRejected) {
		t.Fatalf("await rejected run: %v", err)
	}
	for _, l := range []approval.Request{a, b} {
		if _, err := tr.Request(ctx, l); !errors.Is(err, approval.ErrRejected) {
			t.Errorf("a line of the rejected run, alone: %v", err)
		}
	}
	again := stepUp(11)
	again.Lines = []approval.Request{c, b}
	if _, err := tr.Request(ctx, again); !errors.Is(err, approval.ErrRejected) || ch.n != 1 {
		t.Errorf("another run with a rejected line: %v (%d requests)", err, ch.n)
	}

	// Approved with c left out.
	third := stepUp(12)
	third.Lines = []approval.Request{c, stepUp(4)}
	if _, err := tr.Request(ctx, third); err != nil {
		t.Fatal(err)
	}
	id := fmt.Sprintf("%032x", 2)
	ch.set(id, approvals.StatusApproved, approval.Approval{ID: "r1", Approver: "alice"})
	o := ch.outcomes[id]
	o.Votes = []approvals.Vote{{Approver: "alice", Approve: true, Left: []intent.OperationHash{c.Hash}}}
	ch.outcomes[id] = o
	if as, err := tr.Await(ctx, third.Hash, 0); err != nil || len(as) != 1 {
		t.Fatalf("await approved run: %v %v", as, err)
	}
	if _, err := tr.Request(ctx, c); !errors.Is(err, approval.ErrRejected) {
		t.Errorf("the line left out, alone: %v", err)
	}
}

// TestRunSurvivesRestart: a run's lines are kept with it: after a
// restart its page still lists them, and its approval covers them.
func TestRunSurvivesRestart(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	lines := threeLines(t)
	tk := f.request(runOf(t, intent.LevelConfirm, lines...))
	f.restart(nil)
	c := f.signedIn("bob")
	if p := c.do("GET", "/requests/"+tk.ID, nil, nil); strings.Count(p.body, `name="line"`) != 3 {
		t.Fatalf("after a restart the run lists %d lines", strings.Count(p.body, `name="line"`))
	}
	if got := c.decide(tk.ID, true); got.code != http.StatusSeeOther {
		t.Fatalf("approve: %d", got.code)
	}
	f.restart(nil)
	if out := f.outcome(tk.ID); out.Status != approvals.StatusApproved || len(out.Approvals[0].Lines) != 3 {
		t.Fatalf("after another restart: %s %+v", out.Status, out.Approvals)
	}
}

// TestRunNotApprover: a person a line's facts name as one who may not
// approve it (who recorded its call-back) may not approve the run.
func TestRunNotApprover(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *approvals.Config) { c.NotApprovers = []string{"iban_called_by"} })
	lines := threeLines(t)
	lines[1].Facts = map[string]intent.Value{"iban_called_by": intent.Str("alice")}
	tk := f.request(runOf(t, intent.LevelFourEyes, lines...))
	if p := f.signedIn("alice").decide(tk.ID, true); p.code != http.StatusConflict {
		t.Fatalf("alice approves a run with a line she called back for: %d", p.code)
	}
	if out := f.outcome(tk.ID); len(out.Approvals) != 0 {
		t.Fatalf("%d approvals", len(out.Approvals))
	}
}

// TestRunWebhook: a run is posted with its lines, each with its
// operation hash, arguments and level, so that a chat approver sees what
// the run's approval approves.
func TestRunWebhook(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	var got approvals.WebhookPayload
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = json.NewDecoder(r.Body).Decode(&got)
	}))
	defer receiver.Close()
	hook, err := approvals.NewWebhook(f.srv, approvals.WebhookConfig{URL: receiver.URL, Key: key(21)})
	if err != nil {
		t.Fatal(err)
	}
	lines := threeLines(t)
	if _, err := hook.Request(t.Context(), runOf(t, intent.LevelConfirm, lines...)); err != nil {
		t.Fatal(err)
	}
	if got.Action != "run" || len(got.Lines) != 3 || got.Lines[1].Operation != lines[1].Hash.String() ||
		got.Lines[1].Args["amount"].Text != "200.00 EUR" || got.Lines[2].Level != "auto" || got.Lines[0].Type != "run.line" {
		t.Fatalf("payload %+v", got)
	}
}
