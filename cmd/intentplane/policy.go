package main

import (
	"fmt"
	"io/fs"
	"os"
	"strings"

	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/policy/policytest"
	"github.com/intentplane/intentplane/policies"
)

type policyCmd struct {
	Test   policyTestCmd   `cmd:"" help:"Load a policy (parse + schema validation) and run its tests/*.json."`
	Mutate policyMutateCmd `cmd:"" help:"Neutralise each forbid, remove each guard and each condition, one at a time; fail if a mutant survives the policy's tests."`
}

// policySource names a policy: a built-in pack's, or a directory.
type policySource struct {
	Pack string `xor:"source" required:"" help:"A built-in pack's policy (directory under policies/)."`
	Dir  string `xor:"source" required:"" type:"existingdir" help:"A policy directory: *.cedar, one *.cedarschema and tests/*.json (an operator's policy for intentplane-mcp)." placeholder:"DIR"`
}

// fs returns the policy's files and a name for messages ("pack ap",
// "policy examples/mcp/policy"); a pack that does not exist is an error
// listing the packs.
func (s policySource) fs() (fs.FS, string, error) {
	if s.Dir != "" {
		return os.DirFS(s.Dir), "policy " + s.Dir, nil
	}
	fsys, err := policies.Pack(s.Pack)
	if err != nil {
		return nil, "", fmt.Errorf("no policy pack %q; the packs are: %s", s.Pack, strings.Join(policies.Packs(), ", "))
	}
	return fsys, "pack " + s.Pack, nil
}

type policyTestCmd struct {
	policySource
}

func (c *policyTestCmd) Run(e *env) error {
	fsys, name, err := c.fs()
	if err != nil {
		return err
	}
	eng, err := policy.Load(fsys)
	if err != nil {
		return err
	}
	cases, err := policytest.LoadCases(fsys)
	if err != nil {
		return err
	}
	if len(cases) == 0 {
		return fmt.Errorf("%s has no tests: write tests/*.json beside the policy (see skills/intentplane/SKILL.md)", name)
	}
	fails := policytest.Run(eng, cases)
	for _, f := range fails {
		fmt.Fprintln(e.stdout, "FAIL", f.String())
	}
	fmt.Fprintf(e.stdout, "%s: %d policies, %d tests, %d failures\n", name, len(eng.Policies()), len(cases), len(fails))
	if len(fails) > 0 {
		return fmt.Errorf("%d policy tests failed", len(fails))
	}
	return nil
}

type policyMutateCmd struct {
	policySource
}

func (c *policyMutateCmd) Run(e *env) error {
	fsys, name, err := c.fs()
	if err != nil {
		return err
	}
	rep, err := policytest.Mutate(fsys)
	if err != nil {
		return err
	}
	killed, equivalent := 0, 0
	var survivors []string
	for _, m := range rep.Mutants {
		switch {
		case m.Killed:
			killed++
		case m.Equivalent:
			equivalent++
			fmt.Fprintf(e.stdout, "equivalent  %-40s %s: %s\n", m.ID, m.Description, m.Why)
		default:
			survivors = append(survivors, fmt.Sprintf("%s (%s)", m.ID, m.Description))
		}
	}
	for _, s := range survivors {
		fmt.Fprintf(e.stdout, "SURVIVED    %s\n", s)
	}
	fmt.Fprintf(e.stdout, "%s: %d mutants, %d killed, %d equivalent, %d survived\n", name, len(rep.Mutants), killed, equivalent, len(survivors))
	if len(survivors) > 0 {
		return fmt.Errorf("%s: %d mutants survive its tests: %s", name, len(survivors), strings.Join(survivors, "; "))
	}
	return nil
}
