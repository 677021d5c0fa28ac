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
// Measure instructions, which the load of a shared machine does not
// disturb, with callgrind: build the test binary (go test -c -o gw.test
// ./core/gateway), then in core/gateway run it under
// valgrind --tool=callgrind with -test.run=NONE
// -test.bench='^BenchmarkDecide$' -test.benchtime=1200x, and again with
// 5200x, and divide the difference of the two "Collected" totals by 4000:
// the instructions of one decision, the start-up and the first run
// cancelled out, garbage collection included. Likewise for
// BenchmarkCedarFloor. Under valgrind, set
// GODEBUG=asyncpreemptoff=1,cpu.rdtscp=off: valgrind 3.19 knows neither
// Go's preemption signal nor the RDTSCP instruction. callgrind_annotate
// on the two output files shows where the instructions go.
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
