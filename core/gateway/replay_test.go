package gateway_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/resolve"
)

// TestExecutedBeforeDenial (issue 13): an operation that executed is
// answered "already executed" when it is sent again, also when the policy
// would now deny it (what it paid changed the facts), so that a retry of a
// call whose answer was lost learns that it executed. A denial of an
// operation that never executed stays a denial.
func TestExecutedBeforeDenial(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	var untrusted atomic.Bool
	reg := resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
		if v != "GB29" {
			return resolve.Record{}, resolve.ErrNoMatch
		}
		return resolve.Record{ID: "ben-1", Value: v, Attrs: map[string]intent.Value{"trusted": intent.Bool(!untrusted.Load())}}, nil
	})
	pack, err := gatewaytest.Pack(gatewaytest.Options{Executor: w.exec, Beneficiaries: reg})
	if err != nil {
		t.Fatal(err)
	}
	issuer, _ := gatewaytest.KeyPair(1)
	w.gw, err = gateway.New(gateway.Config{Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuer},
		Now: func() time.Time { return w.now }}, w.store, pack)
	if err != nil {
		t.Fatal(err)
	}
	tok := w.mandate("emma", 500000)
	first := w.decide(tok, send("GB29", "12.50"))
	if !first.Executed {
		t.Fatalf("first: %s %+v", first.Verdict, first.Refusal)
	}
	untrusted.Store(true)
	if d := w.decide(tok, send("GB29", "12.50")); d.Executed || d.Refusal == nil || d.Refusal.Code != intent.CodeReplayed {
		t.Errorf("the executed operation again, now denied by the policy: %s %+v; want %s", d.Verdict, d.Refusal, intent.CodeReplayed)
	}
	if d := w.decide(tok, send("GB29", "12.51")); d.Refusal == nil || d.Refusal.Code != intent.CodePolicyDenied {
		t.Errorf("another operation, denied by the policy: %s %+v", d.Verdict, d.Refusal)
	}
}
