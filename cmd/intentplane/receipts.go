package main

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"strings"

	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
)

type receiptsCmd struct {
	Verify receiptsVerifyCmd `cmd:"" help:"Verify an exported JSONL receipt file offline; names the first receipt edited, removed, inserted or reordered."`
}

type receiptsVerifyCmd struct {
	File string            `arg:"" help:"JSONL file of receipts (and checkpoints)."`
	Pub  map[string]string `help:"Checkpoint signer public keys as keyid=FILE (repeatable); without them checkpoints are reported unverified."`
}

func (c *receiptsVerifyCmd) Run(e *env) error {
	f, err := os.Open(c.File)
	if err != nil {
		return err
	}
	defer f.Close()
	var v receipt.Verifier
	if len(c.Pub) > 0 {
		keys := map[string]ed25519.PublicKey{}
		for id, file := range c.Pub {
			raw, err := os.ReadFile(file)
			if err != nil {
				return err
			}
			pk, err := mandate.ParsePublicKey(strings.TrimSpace(string(raw)))
			if err != nil {
				return fmt.Errorf("%s: %w", file, err)
			}
			keys[id] = pk
		}
		v = receipt.NewEd25519Verifier(keys)
	}
	rep, err := receipt.Verify(f, v)
	if err != nil {
		return fmt.Errorf("%s: %w", c.File, err)
	}
	fmt.Fprintf(e.stdout, "%s: OK: %d receipts in %d chains, %d checkpoints\n", c.File, rep.Receipts, rep.Owners, rep.Checkpoints)
	switch {
	case rep.Checkpoints == 0:
		fmt.Fprintf(e.stdout, "warning: no signed checkpoint: the chains are consistent, but a chain rewritten from its start, or cut at its end, cannot be detected without one\n")
	case rep.Unverified > 0:
		fmt.Fprintf(e.stdout, "warning: %d checkpoints NOT verified (no --pub key given): their signatures were not checked\n", rep.Unverified)
	}
	return nil
}
