package gateway_test

import (
	"context"
	"strconv"
	"testing"
	"testing/fstest"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
)

// BenchmarkDecide measures one full allowed decision: decode, mandate
// (cached verification, time and scope checks), contract, resolution
// through a registry, context, Cedar, budget reservation and commit, nonce,
// execution by an in-memory executor (which counts operations; it does not
// keep them), and a hash-chained receipt in the in-memory store. Compare
// with BenchmarkCedarFloor: issue 10 asks for at most 3x its instructions.
//
// Measure instructions, which the load of a shared machine disturbs far
// less than time, with callgrind: build the test binary (go test -c -o
// gw.test ./core/gateway), then in core/gateway run it under
// valgrind --tool=callgrind with -test.run=NONE
// -test.bench='^BenchmarkDecide$' -test.benchtime=1200x, and again with
// 5200x, and divide the difference of the two "Collected" totals by 4000:
// the instructions of one decision, the start-up and the first run
// cancelled out, garbage collection included. Likewise for
// BenchmarkCedarFloor. Under valgrind, set
// GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off: valgrind 3.19 knows neither
// Go's preemption signal nor the RDTSCP instruction. callgrind_annotate
// on the two output files shows where the instructions go; with GOGC=off
// and --toggle-collect='*gateway.(*Gateway).Decide' it shows the
// decision's own work alone, to the instruction.
//
// The totals still move from run to run, by several thousand instructions
// per decision: the garbage collector's pacing and the scheduler's idle
// spinning follow the wall clock, which valgrind slows down and the
// machine's load slows down more. Compare two builds by runs interleaved
// in the same minutes, three of each, and take the medians.
//
// Measured so on 1 December 2026 (Go 1.26.8, valgrind 3.19, load average
// 8 to 11 on 2 cores), medians of three: before issue 10's last
// performance work (main at 883bbc4), 189,000 instructions per decision
// against 44,900 for the floor, 4.2x; after it, 150,600 against 42,200,
// 3.6x. On a quieter machine the same builds measured 186,500 against
// 42,500 (4.4x) and 139,000 against 41,900 (3.3x). Allocations per
// decision (-benchtime=20000x): 89 (7,158 bytes) before, 86 (6,125 bytes)
// after; the floor makes 44 (2,304 bytes). Where the rest goes: the
// policy step ~38,000 instructions (Cedar, as in the floor), garbage
// collection 30,000 to 40,000 (mostly marking the receipts the in-memory
// store keeps), the receipt ~25,000 (SHA-256 of its ~460 bytes: 17,000),
// the operation hash ~9,000, decoding the proposal ~9,000.
func BenchmarkDecide(b *testing.B) {
	w := newWorld(&testing.T{})
	w.exec.keep = false // a kept operation is live heap every GC cycle marks
	tok := w.mandate("emma", 1<<60)
	ctx := context.Background()
	body := func(i int) []byte { // a new memo each time: a new operation
		b := append(make([]byte, 0, 96), `{"action":"pay.send","args":{"recipient":"GB29","amount":"12.50","memo":"invoice `...)
		return append(strconv.AppendInt(b, int64(i), 10), `"}}`...)
	}
	bodies := make([][]byte, 4096)
	for i := range bodies {
		bodies[i] = body(i)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p := bodies[i%len(bodies)]
		if i >= len(bodies) {
			p = body(i)
		}
		d, err := w.gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: p})
		if err != nil || d.Verdict != intent.Allow {
			b.Fatalf("decision %d: %v %v %+v", i, err, d.Verdict, d.Refusal)
		}
	}
}

// BenchmarkCedarFloor measures Cedar evaluation alone on the same pack and
// an equivalent request: the floor under BenchmarkDecide.
func BenchmarkCedarFloor(b *testing.B) {
	eng, err := policy.Load(fstest.MapFS{"policy.cedar": {Data: []byte(gatewaytest.Policy(1000_00))}, "schema.cedarschema": {Data: []byte(gatewaytest.Schema)}})
	if err != nil {
		b.Fatal(err)
	}
	req := policy.Request{
		Principal: "emma", Action: "pay.send", Resource: "GB29",
		Standard: &policy.Standard{
			Args:   intent.Args{"recipient": intent.Str("GB29"), "amount": intent.AmountValue(1250, 2), "memo": intent.Str("invoice 1")},
			Facts:  map[string]intent.Value{"recipient_trusted": intent.Bool(true), "paid_today": intent.Int(0)},
			Mode:   "known_counterparties",
			Amount: 1250,
		},
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if r := eng.Evaluate(req); r.Verdict != intent.Allow {
			b.Fatalf("%+v", r)
		}
	}
}
