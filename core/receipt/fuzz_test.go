package receipt_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/intentplane/intentplane/core/receipt"
)

func FuzzVerify(f *testing.F) {
	e := chainOf(f, "emma", 4)
	n := chainOf(f, "noah", 2)
	f.Add(jsonl(f, e[0], n[0], e[1], e[2], checkpoint(f, signer, e[2]), n[1], e[3]))
	f.Add(jsonl(f, e[0], e[2], e[1], e[3]))
	f.Add(jsonl(f, e[0], e[1], e[1], checkpoint(f, signer, e[3])))
	f.Add(jsonl(f, rehash(f, fixed())))
	f.Add([]byte(`{"type":"checkpoint","seq":1,"head":"00","sig":"!"}` + "\n\n" + `{"type":"receipt","seq":18446744073709551615}`))
	f.Add([]byte("null\n[]\n\"x\"\n{\"type\":\"receipt\",\"args\":{\"a\":{\"amount\":1}}}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, v := range []receipt.Verifier{nil, verifier} {
			rep, err := receipt.Verify(bytes.NewReader(data), v)
			if err != nil {
				var ce *receipt.ChainError
				if !errors.As(err, &ce) {
					t.Fatalf("Verify() error = %v, want a *ChainError", err)
				}
				_ = ce.Error()
			}
			if rep.Heads == nil {
				t.Fatal("Verify() returned nil Heads")
			}
		}
		rs, cs, err := receipt.ReadJSONL(bytes.NewReader(data))
		if err != nil {
			return
		}
		// What reads without error writes back and reads the same.
		var b bytes.Buffer
		if err := receipt.WriteJSONL(&b, rs); err != nil {
			t.Fatalf("WriteJSONL(ReadJSONL()) error = %v", err)
		}
		if err := receipt.WriteCheckpoints(&b, cs); err != nil {
			t.Fatalf("WriteCheckpoints(ReadJSONL()) error = %v", err)
		}
		rs2, cs2, err := receipt.ReadJSONL(&b)
		if err != nil || len(rs2) != len(rs) || len(cs2) != len(cs) {
			t.Fatalf("ReadJSONL(WriteJSONL(ReadJSONL())) = %d, %d, %v; want %d, %d, nil", len(rs2), len(cs2), err, len(rs), len(cs))
		}
		for i := range rs {
			h1, err1 := rs[i].ComputeHash()
			h2, err2 := rs2[i].ComputeHash()
			if h1 != h2 || (err1 == nil) != (err2 == nil) {
				t.Fatalf("receipt %d hashes differently after a round trip", i)
			}
		}
	})
}

func BenchmarkLink(b *testing.B) {
	prev := chainOf(b, "emma", 1)[0]
	r := sample("emma", 2) // a step-up with an approval: the larger kind
	b.ReportAllocs()
	for b.Loop() {
		if _, err := receipt.Link(r, &prev); err != nil {
			b.Fatal(err)
		}
	}
	c, _ := r.Canonical()
	b.ReportMetric(float64(len(c)), "bytes/receipt")
}

func BenchmarkVerify(b *testing.B) {
	rs := chainOf(b, "emma", 1000)
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := receipt.Verify(bytes.NewReader(data), nil); err != nil {
			b.Fatal(err)
		}
	}
}
