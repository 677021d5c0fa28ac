package aptest

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// RunsOf says how a clerk groups payments into runs.
type RunsOf int

const (
	// RunPerDay is one run of every payment of a day.
	RunPerDay RunsOf = iota
	// RunPerVendor is one run per vendor and day (the vendor's bills).
	RunPerVendor
)

// PayRuns pays bk as Pay does, with the same expectations from practice,
// but as an AP clerk pays with payment runs (by: a run per day, or per
// vendor and day): the payments of a run are prepared (ap.get_vendor,
// ap.list_open_bills), proposed as one run (gateway.DecideRun), approved
// once when any line needs a person (by one person, or two for four
// eyes), and then executed line by line with the run's approvals. A bill
// is in a run at most once: a second instalment of it the same day goes
// into a run after (its residual is what the first leaves).
// Figures.Runs counts the runs; Confirms and FourEyes count the approvals
// asked (one per run that needs a person, plus any line that asks again).
// Each line's level, as a line of its run, is checked against practice
// with the run's earlier lines counted in the vendor's day and the bill,
// as Pay counts the payments made before.
func PayRuns(t testing.TB, e Env, bk *Book, by RunsOf) Figures {
	t.Helper()
	e.Day = bk.day
	d := newDriver(t, e)
	l := limitsOf(e.Config)
	f := Figures{Payments: len(bk.b.payments), Limited: map[string]int{}, Why: map[string]int{}}
	r := &runner{d: d, l: l, f: &f, paidVendor: map[string]intent.Amount{}, paidBill: map[string]intent.Amount{}, paidVendors: map[string]bool{}}
	for _, run := range runs(order(bk.b), by) {
		d.clock.AdvanceTo(run[len(run)-1].at)
		r.run(t, &bk.b, run)
	}
	f.finish(t, d, e, " in runs")
	return f
}

// runs groups the payments, in order, into runs: by day (UTC), and by
// vendor too for RunPerVendor; a bill already in a run starts another
// after it.
func runs(ps []payment, by RunsOf) [][]payment {
	var out [][]payment
	var inRun map[string]bool
	for i, p := range ps {
		if i == 0 || !sameDay(p.at, ps[i-1].at) || by == RunPerVendor && p.vendor != ps[i-1].vendor || inRun[p.bill] {
			out, inRun = append(out, nil), map[string]bool{}
		}
		out[len(out)-1] = append(out[len(out)-1], p)
		inRun[p.bill] = true
	}
	return out
}

func sameDay(a, b time.Time) bool {
	ay, am, ad := a.UTC().Date()
	by, bm, bd := b.UTC().Date()
	return ay == by && am == bm && ad == bd
}

// runner pays the runs of a book, keeping what practice counts across
// them.
type runner struct {
	d                    *driver
	l                    limits
	f                    *Figures
	paidVendor, paidBill map[string]intent.Amount // in EUR, by vendor and by bill
	paidVendors          map[string]bool
}

// line is a payment of a run: its arguments, what it pays in EUR and what
// practice expects of it.
type line struct {
	p    payment
	args map[string]any
	eur  intent.Amount
	exp  expected
	what string
}

// run prepares, proposes, approves and executes the payments of one day.
func (r *runner) run(t testing.TB, bk *book, day []payment) {
	t.Helper()
	lines := r.prepare(t, bk, day)
	if len(lines) == 0 {
		return
	}
	r.f.Runs++
	var proposals [][]byte
	for _, ln := range lines {
		b, err := json.Marshal(map[string]any{"action": ap.ActionPayBill, "args": ln.args})
		if err != nil {
			t.Fatal(err)
		}
		proposals = append(proposals, b)
	}
	run, err := r.d.gw.DecideRun(context.Background(), gateway.RunRequest{Mandate: r.d.tok, Proposals: proposals})
	if err != nil {
		t.Fatalf("DecideRun: %v", err)
	}
	as := r.approve(run)
	for i, ln := range lines {
		r.execute(t, ln, run.Lines[i], as)
	}
}

// prepare is what the careful assistant does before proposing the day's
// run: Pay's preparation of each payment, with the run's earlier lines
// counted (a credit note netted once).
func (r *runner) prepare(t testing.TB, bk *book, day []payment) []line {
	t.Helper()
	var lines []line
	netted := map[string]bool{} // by vendor
	vendor, bill := cloneAmounts(r.paidVendor), cloneAmounts(r.paidBill)
	for _, p := range day {
		acct := bk.accounts[p.vendor]
		if age := r.d.clock.Now().Sub(acct.SetAt); (age < r.l.cooling) != (acct.age < r.l.cooling) {
			t.Fatalf("%s: the account on file is %v old when paid, the book says %v", p.vendor, age, acct.age)
		}
		args, amount, ok := r.d.prepare(p)
		if !ok {
			r.f.FalseRefusals++
			continue
		}
		if amount != p.amount && netted[p.vendor] {
			amount = p.amount // the credit is netted by an earlier line
		}
		netted[p.vendor] = netted[p.vendor] || amount != p.amount
		args["amount"] = intent.FormatAmount(amount, 2)
		eur := inEUR(p.currency, amount)
		exp := r.l.expect(p, eur, vendor[p.vendor], bill[p.bill], p.newVendor && !r.paidVendors[p.vendor])
		if exp.limit == "" {
			vendor[p.vendor] += eur
			bill[p.bill] += eur
		}
		lines = append(lines, line{p: p, args: args, eur: eur, exp: exp, what: fmt.Sprintf("%s %s %s %s", p.vendor, p.bill, intent.FormatAmount(amount, 2), p.currency)})
	}
	return lines
}

func cloneAmounts(m map[string]intent.Amount) map[string]intent.Amount { return maps.Clone(m) }

// approve gives the run's approvals as the level it needs asks: none, one
// person's, or two people's; and counts them, with why the highest line
// asked.
func (r *runner) approve(run gateway.Run) []approval.Approval {
	if run.Level == intent.LevelAuto || run.Hash.IsZero() {
		return nil
	}
	for _, dec := range run.Lines {
		if dec.Verdict == intent.StepUp && dec.Level == run.Level {
			r.f.Why[string(run.Level)+": "+why(dec)]++
			break
		}
	}
	as := []approval.Approval{r.d.approveRun("alice", run)}
	if run.Level == intent.LevelFourEyes {
		r.f.FourEyes++
		return append(as, r.d.approveRun("bob", run))
	}
	r.f.Confirms++
	return as
}

// execute executes one line of an approved run and checks it against
// practice; a line that asks again is approved on its own and counted.
func (r *runner) execute(t testing.TB, ln line, dec gateway.Decision, as []approval.Approval) {
	t.Helper()
	level := ""
	if dec.Verdict == intent.StepUp && dec.Level != intent.LevelAuto {
		level = string(dec.Level)
	}
	if level != "" && level != ln.exp.level && !(level == "confirm" && ln.exp.level == "four_eyes") {
		r.f.Needless++
		t.Logf("needless %s for %s in its run (expected %q: %s): %s", level, ln.what, cmp.Or(ln.exp.level, ln.exp.limit), ln.exp.why, message(dec))
	}
	if dec.Verdict == intent.StepUp {
		dec = r.d.decide(ap.ActionPayBill, ln.args, as...)
		if dec.Verdict == intent.StepUp {
			t.Logf("%s asked again when executed: %s", ln.what, message(dec))
			_, dec = r.d.submit(ln.args, r.f)
		}
	}
	switch {
	case ln.exp.limit != "":
		r.f.checkLimited(t, ln.exp, ln.what, dec)
	case dec.Executed:
		r.paidVendor[ln.p.vendor] += ln.eur
		r.paidBill[ln.p.bill] += ln.eur
		r.paidVendors[ln.p.vendor] = true
		r.f.Paid++
	default:
		r.f.FalseRefusals++
		t.Errorf("false refusal: %s: %s %s", ln.what, code(dec), message(dec))
	}
}

// approveRun signs who's approval of the run's lines.
func (d *driver) approveRun(who string, run gateway.Run) approval.Approval {
	d.t.Helper()
	d.n++
	now := d.clock.Now()
	a, err := approval.Sign(approval.Approval{
		ID: fmt.Sprintf("%s-run-%s-%d", who, run.Hash.String()[:12], d.n), Operation: run.Hash, MandateID: "m-workload",
		Approver: who, IssuedAt: now, ExpiresAt: now.Add(10 * time.Minute), Lines: approval.SortedLines(run.Operations),
	}, approverKeys[who])
	if err != nil {
		d.t.Fatal(err)
	}
	return a
}
