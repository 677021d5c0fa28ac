package main

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/internal/cli"
)

type receiptsCmd struct {
	Verify receiptsVerifyCmd `cmd:"" help:"Verify receipt chains offline, from an exported JSONL file or straight from a store; names the first receipt edited, removed, inserted or reordered."`
	Export receiptsExportCmd `cmd:"" help:"Export every receipt chain of a store, with its checkpoints, as JSONL."`
}

type receiptsVerifyCmd struct {
	File  string            `arg:"" optional:"" help:"JSONL file of receipts (and checkpoints)."`
	Store string            `help:"Verify the chains of this store instead of a file: postgres://... (PostgreSQL) or a file path, optionally embedded:PATH (the embedded store; the gateway using it must be stopped)."`
	Pub   map[string]string `help:"Trusted checkpoint signer public keys as keyid=FILE (repeatable). With them every chain must be covered up to its head by a checkpoint signed with one of them; without them checkpoints are reported unverified."`

	Passkeys string `help:"Passkeys registered outside the receipts checked, one JSON object per line as the approval page keeps them (approver, id, public_key, rp): every passkey approval must verify under a passkey its approver registered earlier in the receipts, or one of these."`

	AllowUnanchored bool `name:"allow-unanchored" help:"With --pub, accept chains that no trusted checkpoint covers up to their head (they are listed as a warning): such a chain may have been rewritten from its start, invented, or extended after its last checkpoint."`
}

func (c *receiptsVerifyCmd) Run(e *env) error {
	if (c.File == "") == (c.Store == "") {
		return &cli.ExitError{Code: 2, Msg: "receipts verify: give either FILE or --store"}
	}
	name := c.File
	var in io.Reader
	if c.Store != "" {
		name = redactDSN(c.Store)
		src, err := openReceiptStore(e.ctx, c.Store, busyRead)
		if err != nil {
			return err
		}
		defer src.Close()
		pr, pw := io.Pipe()
		go func() { pw.CloseWithError(exportChains(e.ctx, src, pw, nil)) }()
		defer pr.Close()
		in = pr
	} else {
		f, err := os.Open(c.File)
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	v, err := checkpointVerifier(c.Pub)
	if err != nil {
		return err
	}
	verify := receipt.Verify
	if v != nil && !c.AllowUnanchored {
		verify = receipt.VerifyAnchored
	}
	// The receipts are read again for their passkey assertions.
	var kept bytes.Buffer
	rep, err := verify(io.TeeReader(in, &kept), v)
	var ue *receipt.UnanchoredError
	if errors.As(err, &ue) {
		var b strings.Builder
		fmt.Fprintf(&b, "%s: %d of %d receipt chains are not anchored by a checkpoint signed with a --pub key, so nothing shows they are the ones the gateway wrote (rewritten from the start, invented, or extended after the last checkpoint):", name, len(ue.Chains), ue.Total)
		for _, u := range ue.Chains {
			b.WriteString("\n  " + u.String())
		}
		b.WriteString("\nsign a checkpoint of every head (receipts export --sign-key) or, to accept them, pass --allow-unanchored")
		return errors.New(b.String())
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	checked, err := c.checkPasskeys(name, &kept)
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "%s: OK: %d receipts in %d chains, %d checkpoints, %d passkey assertions\n", name, rep.Receipts, rep.Owners, rep.Checkpoints, checked)
	for _, id := range slices.Sorted(maps.Keys(rep.UnknownKeys)) {
		fmt.Fprintf(e.stdout, "note: %d checkpoints signed with key %q, not given with --pub, were ignored: they attest nothing (give --pub %s=KEY.pub to check them)\n", rep.UnknownKeys[id], id, id)
	}
	switch {
	case v != nil && len(rep.Unanchored) > 0:
		fmt.Fprintf(e.stdout, "warning: chains NOT anchored by a trusted checkpoint, accepted with --allow-unanchored (%d):\n", len(rep.Unanchored))
		for _, u := range rep.Unanchored {
			fmt.Fprintf(e.stdout, "  %s\n", u)
		}
	case rep.Checkpoints == 0:
		fmt.Fprintf(e.stdout, "warning: no signed checkpoint: the chains are consistent, but a chain rewritten from its start, or cut at its end, cannot be detected without one\n")
	case rep.Unverified > 0:
		fmt.Fprintf(e.stdout, "warning: %d checkpoints NOT verified (no --pub key given): their signatures were not checked\n", rep.Unverified)
	}
	return nil
}

// checkpointVerifier returns the verifier of the checkpoint keys pub
// names (key id to public key file), nil if none.
func checkpointVerifier(pub map[string]string) (receipt.Verifier, error) {
	if len(pub) == 0 {
		return nil, nil
	}
	keys := map[string]ed25519.PublicKey{}
	for id, file := range pub {
		raw, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		pk, err := mandate.ParsePublicKey(strings.TrimSpace(string(raw)))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
		keys[id] = pk
	}
	return receipt.NewEd25519Verifier(keys), nil
}

// checkPasskeys re-checks every passkey approval of the receipts in r
// (passkey.Check), with the credentials of --passkeys, and returns how
// many it checked, or an error naming each that fails.
func (c *receiptsVerifyCmd) checkPasskeys(name string, r io.Reader) (int, error) {
	var known []passkey.Credential
	if c.Passkeys != "" {
		f, err := os.Open(c.Passkeys)
		if err != nil {
			return 0, err
		}
		defer f.Close()
		if known, err = passkey.ReadCredentials(f); err != nil {
			return 0, fmt.Errorf("%s: %w", c.Passkeys, err)
		}
	}
	rs, _, err := receipt.ReadJSONL(r)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", name, err)
	}
	checked, problems := passkey.Check(rs, known)
	if len(problems) == 0 {
		return checked, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %d of %d passkey approvals do not verify: the receipt does not show that the approver's registered passkey approved that operation:", name, len(problems), checked)
	for _, p := range problems {
		b.WriteString("\n  " + p.Error())
	}
	return checked, errors.New(b.String())
}

type receiptsExportCmd struct {
	Store   string `required:"" help:"The store: postgres://... (PostgreSQL) or a file path, optionally embedded:PATH (the embedded store; the gateway using it must be stopped)."`
	Out     string `required:"" help:"JSONL file to write (receipts of each owner in seq order, then the owner's checkpoints)."`
	SignKey string `help:"Checkpoint private key file (from mandate keygen): sign a checkpoint of every chain's head now, store it and include it in the export."`
	KeyID   string `default:"export" help:"Key id recorded in the checkpoints signed with --sign-key."`
}

func (c *receiptsExportCmd) Run(e *env) error {
	var signer receipt.Signer
	if c.SignKey != "" {
		raw, err := os.ReadFile(c.SignKey)
		if err != nil {
			return err
		}
		priv, err := mandate.ParsePrivateKey(strings.TrimSpace(string(raw)))
		if err != nil {
			return fmt.Errorf("%s: %w", c.SignKey, err)
		}
		signer = receipt.NewEd25519Signer(c.KeyID, priv)
	}
	src, err := openReceiptStore(e.ctx, c.Store, busyRead)
	if err != nil {
		return err
	}
	defer src.Close()
	f, err := os.OpenFile(c.Out, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	cw := &countingWriter{w: f}
	err = exportChains(e.ctx, src, cw, signer)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("export to %s: %w", c.Out, err)
	}
	fmt.Fprintf(e.stdout, "%s: %d lines exported from %s\n", c.Out, cw.lines, redactDSN(c.Store))
	return nil
}
