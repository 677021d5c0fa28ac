package main

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/intentplane/intentplane/core/policy"
	"github.com/intentplane/intentplane/core/policy/policytest"
	"github.com/intentplane/intentplane/policies"
)

type policyCmd struct {
	Test   policyTestCmd   `cmd:"" help:"Load a pack's policy (parse + schema validation) and run its tests/*.json."`
	Mutate policyMutateCmd `cmd:"" help:"Neutralise each forbid, remove each guard and each condition, one at a time; fail if a mutant survives the pack's tests."`
}

type policyTestCmd struct {
	Pack string `required:"" help:"Pack name (directory under policies/)."`
}

// packFS returns the embedded policy of pack, or an error listing the packs.
func packFS(pack string) (fs.FS, error) {
	fsys, err := policies.Pack(pack)
	if err != nil {
		return nil, fmt.Errorf("no policy pack %q; the packs are: %s", pack, strings.Join(policies.Packs(), ", "))
	}
	return fsys, nil
}

func (c *policyTestCmd) Run(e *env) error {
	fsys, err := packFS(c.Pack)
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
	fails := policytest.Run(eng, cases)
	for _, f := range fails {
		fmt.Fprintln(e.stdout, "FAIL", f.String())
	}
	fmt.Fprintf(e.stdout, "pack %s: %d policies, %d tests, %d failures\n", c.Pack, len(eng.Policies()), len(cases), len(fails))
	if len(fails) > 0 {
		return fmt.Errorf("%d policy tests failed", len(fails))
	}
	return nil
}

type policyMutateCmd struct {
	Pack string `required:"" help:"Pack name (directory under policies/)."`
}

func (c *policyMutateCmd) Run(e *env) error {
	fsys, err := packFS(c.Pack)
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
	fmt.Fprintf(e.stdout, "pack %s: %d mutants, %d killed, %d equivalent, %d survived\n", c.Pack, len(rep.Mutants), killed, equivalent, len(survivors))
	if len(survivors) > 0 {
		return fmt.Errorf("pack %s: %d mutants survive its tests: %s", c.Pack, len(survivors), strings.Join(survivors, "; "))
	}
	return nil
}
