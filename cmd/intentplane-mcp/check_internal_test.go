package main

import (
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/healthcare"
	"github.com/intentplane/intentplane/workspace"
)

// TestPacksArgsDecidable: every pack's contracts match the context.args
// its schema declares (argFindings finds nothing): no call of a pack's
// action is undecidable for an argument given or omitted.
func TestPacksArgsDecidable(t *testing.T) {
	t.Parallel()
	now := func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) }
	build := []func() (gateway.Pack, error){
		func() (gateway.Pack, error) { return ap.NewPack(erp.NewMem(now), ap.Config{Now: now}) },
		func() (gateway.Pack, error) { return banking.NewPack(banking.NewMem()) },
		func() (gateway.Pack, error) { return healthcare.NewPack(healthcare.NewMem(now)) },
		func() (gateway.Pack, error) { return workspace.NewPack(workspace.NewMem()) },
	}
	for _, b := range build {
		p, err := b()
		if err != nil {
			t.Fatal(err)
		}
		eng, err := policy.Load(p.Policies)
		if err != nil {
			t.Fatalf("pack %s: %v", p.Name, err)
		}
		n := 0
		for _, ct := range p.Contracts {
			for _, f := range argFindings(ct, eng) {
				t.Errorf("pack %s: %s", p.Name, f.Msg)
			}
			if _, ok := eng.Args(ct.Action); ok {
				n++
			}
		}
		if n == 0 {
			t.Errorf("pack %s: no contract's action has args in the schema; nothing was compared", p.Name)
		}
	}
}
