package receipt_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

func ExampleVerify() {
	pub, priv := key(7)
	signer := receipt.NewEd25519Signer("gw-1", priv)
	now := time.Date(2026, 3, 14, 9, 0, 0, 0, time.UTC)

	// Three decisions for emma, each linked after the previous one (a store
	// does this in Log.Append), and a checkpoint of the head.
	var chain []receipt.Receipt
	for i, d := range []intent.Verdict{intent.Allow, intent.Deny, intent.Allow} {
		r := receipt.Receipt{Owner: "emma", Time: now.Add(time.Duration(i) * time.Minute), Action: "banking.send_money", Verdict: d}
		if d == intent.Deny {
			r.Code = intent.CodeNotTrusted
		}
		var prev *receipt.Receipt
		if len(chain) > 0 {
			prev = &chain[len(chain)-1]
		}
		linked, err := receipt.Link(r, prev)
		if err != nil {
			panic(err)
		}
		chain = append(chain, linked)
	}
	cp, err := receipt.SignCheckpoint(signer, chain[2], now.Add(time.Hour))
	if err != nil {
		panic(err)
	}

	// Someone deletes the refusal from the export.
	var file bytes.Buffer
	_ = receipt.WriteJSONL(&file, []receipt.Receipt{chain[0], chain[2]})
	_ = receipt.WriteCheckpoints(&file, []receipt.Checkpoint{cp})

	v := receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{"gw-1": pub})
	_, err = receipt.Verify(&file, v)
	var ce *receipt.ChainError
	if errors.As(err, &ce) {
		fmt.Println(ce.Kind, ce.Seq, ce.Line)
	}
	fmt.Println(err)
	// Output:
	// removed 3 2
	// receipt chain of owner "emma": line 2 (seq 3): receipts were removed: expected seq 2, got 3: receipt 2 is missing
}
