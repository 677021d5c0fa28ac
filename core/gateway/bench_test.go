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
// Measure instructions, not time, with callgrind: build the test binary
// (go test -c -o gw.test ./core/gateway), then in core/gateway run
//
//	GOMAXPROCS=1 GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off,gcstoptheworld=1 \
//	  valgrind --tool=callgrind --callgrind-out-file=/dev/null ./gw.test \
//	  -test.run=NONE -test.bench='^BenchmarkDecide$' -test.benchtime=1200x
//
// and again with 5200x, and divide the difference of the two "Collected"
// totals by 4000: the instructions of one decision, the start-up and the
// first run cancelled out, garbage collection included. Likewise for
// BenchmarkCedarFloor. valgrind 3.19 knows neither Go's preemption signal
// nor the RDTSCP instruction (asyncpreemptoff, cpu.rdtscp=off). The other
// two settings make the count repeatable: with two Ps the idle P spins and
// runs idle mark workers for as long as the wall clock says, and with a
// concurrent collector the write barriers the decision runs depend on how
// long each cycle's marking lasts, so that the same run measured 258 to
// 616 million instructions on a loaded machine; with one P and every
// cycle's marking done at once (gcstoptheworld=1) three runs agree to
// 0.3%. callgrind_annotate on two output files shows where the
// instructions go; with GOGC=off, garbage collection left out.
//
// Measured so on 2 December 2026 (Go 1.26.8, valgrind 3.19), medians of
// three interleaved runs of each binary, this harness for both:
//
//	                               before (main at d995377)   after
//	collection stop-the-world      134,400 / 39,100 = 3.43x   112,100 / 39,000 = 2.87x
//	no collection (GOGC=off)       112,600 / 37,100 = 3.03x   107,300 / 37,000 = 2.90x
//	concurrent collection, one P   3.2x to 3.7x over runs     132,200 / 43,600 = 3.03x (runs 2.87x to 3.08x)
//
// In time, natively (two Ps, -benchtime=30000x -count=5 of each binary in
// one minute): 21.1 against 6.1 µs before, 14.9 against 5.4 µs after.
//
// Allocations per decision (-benchtime=20000x): 86 (6,125 bytes) before,
// 76 (5,723 bytes) after; the floor makes 44 (2,304 bytes). What changed:
// the in-memory store keeps receipts as bytes (receipt.LinkAppend, from
// the encoding the hash covers) that the collector need not scan, where it
// walked every map and string of every receipt at each cycle; resolution
// copies the arguments only when it changes one; one pass validates the
// proposal's JSON and UTF-8; and this harness keeps its 8192 proposals in
// one buffer, where 4096 separate ones gave the collector 4096 more
// objects to mark at each cycle, which the floor's harness does not have
// (3.51x before with that harness, stop-the-world). Where the rest goes
// beyond the floor: SHA-256 ~23,000 (the receipt's ~460 bytes, 8 blocks;
// the operation hash, 3; the output's digest, 1: Go's AVX2 code, valgrind
// knowing no SHA instructions), allocation and collection ~15,000, maps ~6,000, the
// receipt's encoding ~4,000, the proposal's decoding ~4,000. With a
// concurrent collector, write barriers during marking add ~18,000 (one P:
// marking spans much of the decisions' run; natively, with a dedicated
// worker on another P, far less).
func BenchmarkDecide(b *testing.B) {
	w := newWorld(&testing.T{})
	w.exec.keep = false // a kept operation is live heap every GC cycle marks
	tok := w.mandate("emma", 1<<60)
	ctx := context.Background()
	body := func(dst []byte, i int) []byte { // a new memo each time: a new operation
		dst = append(dst, `{"action":"pay.send","args":{"recipient":"GB29","amount":"12.50","memo":"invoice `...)
		return append(strconv.AppendInt(dst, int64(i), 10), `"}}`...)
	}
	// The bodies of the first 8192 decisions, made beforehand in one
	// buffer: one object for the collector to mark, not one per body, so
	// that the harness adds no marking work the floor does not have.
	var buf []byte
	at := make([]int, 8192+1) // body i is buf[at[i]:at[i+1]]
	for i := range 8192 {
		buf = body(buf, i)
		at[i+1] = len(buf)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		var p []byte
		if i < 8192 {
			p = buf[at[i]:at[i+1]:at[i+1]]
		} else {
			p = body(make([]byte, 0, 96), i)
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
