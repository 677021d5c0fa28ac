package gateway_test

import (
	"context"
	"fmt"
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
// execution by an in-memory executor, and a hash-chained receipt in the
// in-memory store. Compare with BenchmarkCedarFloor.
func BenchmarkDecide(b *testing.B) {
	w := newWorld(&testing.T{})
	tok := w.mandate("emma", 1<<60)
	ctx := context.Background()
	bodies := make([][]byte, 4096)
	for i := range bodies {
		bodies[i] = []byte(fmt.Sprintf(`{"action":"pay.send","args":{"recipient":"GB29","amount":"12.50","memo":"invoice %d"}}`, i))
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		body := bodies[i%len(bodies)]
		if i >= len(bodies) {
			body = []byte(fmt.Sprintf(`{"action":"pay.send","args":{"recipient":"GB29","amount":"12.50","memo":"invoice %d"}}`, i))
		}
		d, err := w.gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body})
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
