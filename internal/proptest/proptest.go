// Package proptest is the machinery the property tests of core/gateway and
// ap share: the run's size and seed from the environment, the tally of
// what was generated, the report, the failure report, the offline check of
// the receipt chains, and generators of IBANs, tokens and JSON spellings.
// Each test keeps its own world and its own oracle.
//
// It is imported only by _test.go files; core never imports it.
package proptest

import (
	"bytes"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// Run is one property test run: its size and seed, the random source every
// epoch draws from, and the tally the oracle keeps. The zero value (no N,
// no Rand) serves a hand-written fixture.
type Run struct {
	N      int    // proposals to generate
	Seed   uint64 // replays the run
	Rand   *rand.Rand
	Counts map[string]int // label → proposals generated with it

	Decides, Executed, Reads, Receipts, Checks int

	start time.Time
}

// Start reads INTENTPLANE_PROPERTY_N (the number of proposals; zero or
// unset means 6,000) and INTENTPLANE_PROPERTY_SEED (unset means the clock),
// logs the seed and seeds Rand. It fails t if either is not a number.
func Start(t testing.TB) Run {
	t.Helper()
	n := 6000
	if s := os.Getenv("INTENTPLANE_PROPERTY_N"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v <= 0 {
			t.Fatalf("INTENTPLANE_PROPERTY_N=%q is not a positive number", s)
		}
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("INTENTPLANE_PROPERTY_SEED"); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("INTENTPLANE_PROPERTY_SEED=%q is not a number", s)
		}
		seed = v
	}
	return StartAt(t, seed, n)
}

// StartAt starts a run of n proposals from a fixed seed: a regression
// case, a seed that once found a bug, replayed on every run. It logs the
// seed as Start does.
func StartAt(t testing.TB, seed uint64, n int) Run {
	t.Helper()
	t.Logf("seed %d (INTENTPLANE_PROPERTY_SEED=%d to replay), %d proposals", seed, seed, n)
	return Run{
		N: n, Seed: seed, Rand: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		Counts: map[string]int{}, start: time.Now(),
	}
}

// Epochs calls epoch(i, n) for i = 0, 1, … until Decides reaches N or t
// has failed; n is how many proposals epoch i is to make, at most size.
func (r *Run) Epochs(t testing.TB, size int, epoch func(i, n int)) {
	for i := 0; r.Decides < r.N && !t.Failed(); i++ {
		epoch(i, min(size, r.N-r.Decides))
	}
}

// Count adds a proposal to label k.
func (r *Run) Count(k string) {
	if r.Counts == nil {
		r.Counts = map[string]int{}
	}
	r.Counts[k]++
}

// Decided tallies decision d (one more decision, its verdict and refusal
// code) and returns what is wrong with it whatever the world: a
// violation, or "".
func (r *Run) Decided(d gateway.Decision) string {
	r.Decides++
	r.Count("verdict/" + d.Verdict.String())
	if d.Refusal != nil {
		r.Count("code/" + string(d.Refusal.Code))
	}
	if d.Receipt.Seq == 0 || d.Receipt.Hash.IsZero() {
		return "no receipt was appended"
	}
	return ""
}

// Elapsed is the time since Start.
func (r *Run) Elapsed() time.Duration { return time.Since(r.start).Round(time.Millisecond) }

// LogCounts logs how many proposals were generated with each label.
func (r *Run) LogCounts(t testing.TB) {
	t.Helper()
	keys := slices.Sorted(maps.Keys(r.Counts))
	width := 0
	for _, k := range keys {
		width = max(width, len(k))
	}
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "\n  %-*s %d", width+1, k, r.Counts[k])
	}
	t.Logf("generated:%s", b.String())
}

// Request is a request as the front door relays it, and Label how the
// test made it.
type Request struct {
	Label     string
	Token     string
	Body      []byte
	Approvals []approval.Approval
}

// Violation fails t with msg, an oracle violation of req; where says which
// seed, epoch, decision and clock.
func Violation(t testing.TB, where string, req Request, msg string) {
	t.Helper()
	body := string(req.Body)
	if len(body) > 500 {
		body = body[:500] + "…"
	}
	var as []string
	for _, a := range req.Approvals {
		as = append(as, fmt.Sprintf("{id %s by %s for %.12s… mandate %s %s–%s}", a.ID, a.Approver, a.Operation.String(), a.MandateID, a.IssuedAt.Format(time.TimeOnly), a.ExpiresAt.Format(time.TimeOnly)))
	}
	t.Errorf("ORACLE VIOLATION (%s): %s\n  request %s\n  token %.60s…\n  body %q\n  approvals %v",
		where, msg, req.Label, req.Token, body, as)
}

// Where names a decision in a failure report: the seed, the epoch, the
// decision's number in it and the world's clock.
func Where(seed uint64, epoch, decision int, now time.Time) string {
	return fmt.Sprintf("seed %d, epoch %d, decision %d, clock %s", seed, epoch, decision, now.Format(time.RFC3339))
}

// Store is the part of a receipt store CheckChains reads; store/mem's
// Store has it.
type Store interface {
	Owners() []intent.Owner
	Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error)
}

// CheckChains verifies every owner's receipt chain in s offline, as
// receipt.Verify does with an exported log, and fails t unless they verify
// and hold one receipt for each of the decides decisions. It returns the
// number of receipts verified; where prefixes the messages.
func CheckChains(t testing.TB, s Store, decides int, where string) int {
	t.Helper()
	ctx := context.Background()
	var buf bytes.Buffer
	total := 0
	for _, o := range s.Owners() {
		rs, err := s.Receipts(ctx, o, 1, 0)
		if err != nil {
			t.Fatalf("%s: receipts of %q: %v", where, o, err)
		}
		total += len(rs)
		if err := receipt.WriteJSONL(&buf, rs); err != nil {
			t.Fatalf("%s: WriteJSONL: %v", where, err)
		}
	}
	rep, err := receipt.Verify(&buf, nil)
	if err != nil {
		t.Errorf("%s: receipt chains do not verify: %v", where, err)
	}
	if total != decides || rep.Receipts != total {
		t.Errorf("%s: %d decisions, %d receipts stored, %d verified", where, decides, total, rep.Receipts)
	}
	return rep.Receipts
}
