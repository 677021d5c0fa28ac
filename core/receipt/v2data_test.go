package receipt_test

import (
	"bytes"
	"encoding/hex"
	"os"
	"testing"

	"github.com/intentplane/intentplane/core/receipt"
)

// TestVersion2Testdata verifies receipts and checkpoints written by the
// version 2 code (testdata/v2.jsonl, made before version 3 existed, with
// checkpoints signed by key 1) and the stored forms a store kept of a
// version 2 chain (testdata/v2.stored, one hex line each): both must
// verify, byte for byte as written, for as long as stores hold them.
func TestVersion2Testdata(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/v2.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := receipt.VerifyAnchored(bytes.NewReader(data), verifier)
	if err != nil {
		t.Fatalf("VerifyAnchored(v2.jsonl) error = %v", err)
	}
	if rep.Receipts != 8 || rep.Checkpoints != 3 || rep.Owners != 2 {
		t.Errorf("VerifyAnchored(v2.jsonl) = %+v, want 8 receipts, 3 checkpoints, 2 owners", rep)
	}
	rs, cs, err := receipt.ReadJSONL(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, r := range rs {
		if r.Version != receipt.Version2 {
			t.Errorf("receipt %s/%d: Version = %d, want 2", r.Owner, r.Seq, r.Version)
		}
	}
	if err := receipt.WriteJSONL(&out, rs); err != nil {
		t.Fatal(err)
	}
	var want bytes.Buffer
	for _, l := range bytes.SplitAfter(data, []byte("\n")) {
		if bytes.Contains(l, []byte(`"type":"receipt"`)) {
			want.Write(l)
		}
	}
	if !bytes.Equal(out.Bytes(), want.Bytes()) {
		t.Errorf("WriteJSONL(ReadJSONL(v2.jsonl)) differs from the file's receipt lines")
	}
	_ = cs

	stored, err := os.ReadFile("testdata/v2.stored")
	if err != nil {
		t.Fatal(err)
	}
	var prev receipt.Hash
	for i, line := range bytes.Fields(stored) {
		b, err := hex.DecodeString(string(line))
		if err != nil {
			t.Fatal(err)
		}
		var r receipt.Receipt
		if err := r.UnmarshalBinary(b); err != nil {
			t.Fatalf("stored receipt %d: UnmarshalBinary error = %v", i+1, err)
		}
		h, err := r.ComputeHash()
		if err != nil || h != r.Hash || r.Prev != prev || r.Version != receipt.Version2 {
			t.Fatalf("stored receipt %d: hash %v, %v; want %v after %v, version 2 (is %d)", i+1, h, err, r.Hash, prev, r.Version)
		}
		prev = r.Hash
	}
}
