package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/healthcare"
	"github.com/intentplane/intentplane/workspace"
)

// knownActions is what a mandate may name: the actions of the built-in
// packs' contracts and of an operator's policy schema, and for each claim
// a contract reads (mandate:CLAIM) the normalizer its values go through.
type knownActions struct {
	actions map[intent.Action]bool
	claims  map[string]contract.Normalizer // nil normalizer: kept as written
}

// builtinActions builds the built-in packs over empty or demo data to read
// their contracts; with policyDir, the actions of that directory's Cedar
// schema are known too.
func builtinActions(policyDir string) (*knownActions, error) {
	k := &knownActions{actions: map[intent.Action]bool{}, claims: map[string]contract.Normalizer{}}
	now := time.Now
	var packs []gateway.Pack
	for _, mk := range []func() (gateway.Pack, error){
		func() (gateway.Pack, error) { return banking.NewPack(banking.NewMem()) },
		func() (gateway.Pack, error) { return healthcare.NewPack(healthcare.NewMem(now)) },
		func() (gateway.Pack, error) { return workspace.NewPack(workspace.NewMem()) },
		func() (gateway.Pack, error) { return ap.NewPack(ap.DemoERP(now), ap.Config{}) },
	} {
		p, err := mk()
		if err != nil {
			return nil, err
		}
		packs = append(packs, p)
	}
	for _, p := range packs {
		for _, ct := range p.Contracts {
			k.actions[ct.Action] = true
			for _, prm := range ct.Params {
				for _, s := range prm.Sources {
					if s.Kind == contract.SourceMandate {
						if _, seen := k.claims[s.Name]; !seen || k.claims[s.Name] == nil {
							k.claims[s.Name] = prm.Normalizer
						}
					}
				}
			}
		}
	}
	if policyDir != "" {
		eng, err := policy.Load(os.DirFS(policyDir))
		if err != nil {
			return nil, fmt.Errorf("--policy %s: %w", policyDir, err)
		}
		for _, a := range eng.Actions() {
			k.actions[a] = true
		}
	}
	return k, nil
}

// check refuses a scope action nobody declares, and a claim value its
// normalizer refuses (an IBAN with a wrong check digit); it returns the
// claims normalized. A claim no built-in contract reads is kept as
// written (an operator's tool may read it).
func (k *knownActions) check(scope []intent.Action, claims map[string][]string) (map[string][]string, error) {
	for _, a := range scope {
		if !k.actions[a] {
			return nil, fmt.Errorf("scope %q: no known action has that name (known: %s); give --policy DIR for an operator's own policy", a, strings.Join(k.sorted(), ", "))
		}
	}
	out := map[string][]string{}
	for name, vs := range claims {
		norm := k.claims[name]
		for _, v := range vs {
			if norm != nil {
				n, err := norm(v)
				if err != nil {
					return nil, fmt.Errorf("claim %s=%s: %w", name, v, err)
				}
				v = n
			}
			out[name] = append(out[name], v)
		}
	}
	return out, nil
}

func (k *knownActions) sorted() []string {
	out := make([]string, 0, len(k.actions))
	for a := range k.actions {
		out = append(out, string(a))
	}
	sort.Strings(out)
	return out
}
