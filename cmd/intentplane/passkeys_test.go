package main

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/approvals/passkey/passkeytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// TestReceiptsVerifyPasskeys: `receipts verify` re-checks every passkey
// assertion of the file against the passkey registered earlier in it (or
// in --passkeys), and names each approval whose assertion was tampered
// with or drawn for another operation, even in a chain relinked so that
// its hashes hold.
func TestReceiptsVerifyPasskeys(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 12, 8, 9, 0, 0, 0, time.UTC)
	rp := passkey.RP{ID: "approve.example.com", Origin: "https://approve.example.com"}
	auth := passkeytest.New(rp, "lena-phone")
	op := intent.OperationHash{0x89, 0xda}
	pay := func(a intent.Assertion) receipt.Receipt {
		return receipt.Receipt{Owner: "emma", Time: at.Add(time.Hour), Action: "ap.pay_bill", Verdict: intent.Allow, Result: receipt.ResultExecuted,
			Operation: op.String(), Approvals: []receipt.Evidence{{ID: "a1", Approver: "lena", Level: "confirm", Channel: receipt.ChannelPasskey, Passkey: a}}}
	}
	file := func(name string, rs ...receipt.Receipt) string {
		var linked []receipt.Receipt
		heads := map[intent.Owner]*receipt.Receipt{}
		for _, r := range rs {
			l, err := receipt.Link(r, heads[r.Owner])
			if err != nil {
				t.Fatal(err)
			}
			linked = append(linked, l)
			heads[r.Owner] = &linked[len(linked)-1]
		}
		path := filepath.Join(t.TempDir(), name)
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if err := receipt.WriteJSONL(f, linked); err != nil {
			t.Fatal(err)
		}
		return path
	}
	reg := passkey.RegistrationReceipt(auth.Credential("lena", at))
	good := auth.Assert(passkey.Challenge(op, "a1"))
	out, err := runCLI(t, "receipts", "verify", file("good.jsonl", reg, pay(good)))
	if err != nil || !strings.Contains(out, "OK: 2 receipts in 2 chains, 0 checkpoints, 1 passkey assertions") {
		t.Fatalf("verify(good) = %q, %v", out, err)
	}
	tampered := good
	tampered.Signature = append([]byte{}, good.Signature...)
	tampered.Signature[10] ^= 1
	for _, tt := range []struct {
		name, want string
		a          intent.Assertion
	}{
		{"tampered", "assertion does not verify", tampered},
		{"another operation", "assertion for another operation or approval", auth.Assert(passkey.Challenge(intent.OperationHash{0x01}, "a1"))},
	} {
		_, err := runCLI(t, "receipts", "verify", file(tt.name+".jsonl", reg, pay(tt.a)))
		if err == nil || !strings.Contains(err.Error(), "1 of 1 passkey approvals do not verify") || !strings.Contains(err.Error(), "receipt emma/1: approval a1 by lena: passkey: "+tt.want) {
			t.Errorf("verify(%s) error = %v, want it named", tt.name, err)
		}
	}
	// Without its registration, only a key file given makes it verify.
	alone := file("alone.jsonl", pay(good))
	if _, err := runCLI(t, "receipts", "verify", alone); err == nil || !strings.Contains(err.Error(), "not registered") {
		t.Fatalf("verify(no registration) error = %v", err)
	}
	keys := filepath.Join(t.TempDir(), "passkeys.jsonl")
	line := `{"approver":"lena","id":"` + b64(auth.ID) + `","public_key":"` + b64(auth.PublicKey()) + `","rp":{"rp_id":"approve.example.com","origin":"https://approve.example.com"}}`
	if err := os.WriteFile(keys, []byte(line+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out, err := runCLI(t, "receipts", "verify", alone, "--passkeys", keys); err != nil || !strings.Contains(out, "1 passkey assertions") {
		t.Fatalf("verify(--passkeys) = %q, %v", out, err)
	}
}

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }
