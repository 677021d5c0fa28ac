package receipt_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"slices"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// decodeV2 reads a version 2 or 3 encoding back into a receipt, written from
// Canonical's doc comment alone: the oracle that the encoding is
// unambiguous. If every encoding decodes to the receipt it encodes, two
// receipts with one encoding are one receipt. It refuses trailing bytes,
// unsorted or repeated keys, and anything Canonical would not write.
func decodeV2(b []byte) (receipt.Receipt, error) {
	d := &v2reader{b: b}
	var r receipt.Receipt
	r.Version = d.byte()
	if r.Version != receipt.Version2 && r.Version != receipt.Version3 {
		return r, errors.New("not version 2 or 3")
	}
	r.Seq = d.uvarint()
	r.Owner = intent.Owner(d.str())
	r.Time = d.time()
	copy(r.Prev[:], d.take(32))
	r.MandateID = d.str()
	r.Action = intent.Action(d.str())
	r.Sent = d.str()
	r.Args = d.values()
	for range d.count() {
		r.Resolved = append(r.Resolved, intent.Resolved{Param: d.str(), Sent: d.str(), Value: d.str(),
			Provenance: intent.Provenance{Source: d.str(), RecordID: d.str(), Version: d.str(), At: d.time()}})
	}
	r.Facts = d.values()
	v, err := intent.ParseVerdict(d.str())
	if err != nil && d.err == nil {
		d.err = err
	}
	r.Verdict = v
	r.Code = intent.Code(d.str())
	r.Message = d.str()
	for range d.count() {
		r.Policies = append(r.Policies, d.str())
	}
	r.Operation = d.str()
	for range d.count() {
		a := receipt.Evidence{ID: d.str(), Approver: d.str(), Level: d.str(), IssuedAt: d.time(), ExpiresAt: d.time()}
		if r.Version == receipt.Version3 {
			a.Channel, a.Run = d.str(), d.str()
			a.Passkey = intent.Assertion{CredentialID: d.bytes(), AuthenticatorData: d.bytes(), ClientDataJSON: d.bytes(), Signature: d.bytes()}
		}
		r.Approvals = append(r.Approvals, a)
	}
	r.Result = d.str()
	r.Output = d.str()
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("%d bytes after the receipt", len(d.b))
	}
	return r, d.err
}

type v2reader struct {
	b   []byte
	err error
}

func (d *v2reader) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
	d.b = nil
}

func (d *v2reader) take(n int) []byte {
	if n < 0 || n > len(d.b) {
		d.fail("truncated")
		return make([]byte, max(n, 0))
	}
	out := d.b[:n]
	d.b = d.b[n:]
	return out
}

func (d *v2reader) byte() byte { return d.take(1)[0] }

func (d *v2reader) uvarint() uint64 {
	n, k := binary.Uvarint(d.b)
	d.skip(k)
	return n
}

func (d *v2reader) varint() int64 {
	n, k := binary.Varint(d.b)
	d.skip(k)
	return n
}

// skip drops the k bytes of a varint, or fails if k is not positive.
func (d *v2reader) skip(k int) {
	if k <= 0 {
		d.fail("bad varint")
		return
	}
	d.b = d.b[k:]
}

func (d *v2reader) count() int {
	n := d.uvarint()
	if n > uint64(len(d.b)) { // every item takes a byte at least
		d.fail("count %d beyond the data", n)
		return 0
	}
	return int(n)
}

func (d *v2reader) str() string {
	s := string(d.take(d.count()))
	if !utf8.ValidString(s) {
		d.fail("string not UTF-8")
	}
	return s
}

// bytes reads a byte string, nil if empty.
func (d *v2reader) bytes() []byte {
	b := d.take(d.count())
	if len(b) == 0 {
		return nil
	}
	return slices.Clone(b)
}

func (d *v2reader) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		sec := d.varint()
		ns := d.uvarint()
		if ns >= 1e9 {
			d.fail("nanoseconds %d", ns)
		}
		t := time.Unix(sec, int64(ns)).UTC()
		if t.IsZero() {
			d.fail("the zero time written as a time")
		}
		return t
	}
	d.fail("bad time tag")
	return time.Time{}
}

func (d *v2reader) values() map[string]intent.Value {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make(map[string]intent.Value, n)
	last := ""
	for i := range n {
		k := d.str()
		if i > 0 && k <= last {
			d.fail("key %q not after %q", k, last)
		}
		last = k
		switch d.byte() {
		case 1:
			out[k] = intent.Str(d.str())
		case 2:
			out[k] = intent.Int(d.varint())
		case 3:
			a := d.varint()
			out[k] = intent.AmountValue(intent.Amount(a), d.byte())
		case 4:
			switch d.byte() {
			case 0:
				out[k] = intent.Bool(false)
			case 1:
				out[k] = intent.Bool(true)
			default:
				d.fail("bad bool")
			}
		default:
			d.fail("bad kind")
		}
	}
	return out
}

// normalV2 is r as decodeV2 returns it: empty lists and maps nil, times
// in UTC, Version 2 or 3 (for zero), Hash zero.
func normalV2(r receipt.Receipt) receipt.Receipt {
	if r.Version == 0 {
		r.Version = receipt.CurrentVersion
	}
	r.Hash = receipt.Hash{}
	r.Args, r.Facts = normalValues(r.Args), normalValues(r.Facts)
	if len(r.Resolved) == 0 {
		r.Resolved = nil
	}
	if len(r.Policies) == 0 {
		r.Policies = nil
	}
	if len(r.Approvals) == 0 {
		r.Approvals = nil
	}
	return r
}

// normalValues returns vs with only the fields of each value's kind set,
// nil if empty.
func normalValues[M ~map[string]intent.Value](vs M) M {
	if len(vs) == 0 {
		return nil
	}
	out := make(M, len(vs))
	for k, v := range vs {
		switch v.Kind {
		case intent.KindString:
			v = intent.Str(v.Str)
		case intent.KindInt:
			v = intent.Int(v.Int)
		case intent.KindAmount:
			v = intent.AmountValue(intent.Amount(v.Int), v.Scale)
		case intent.KindBool:
			v = intent.Bool(v.Bool)
		}
		out[k] = v
	}
	return out
}

// checkV2 checks that r's version 2 or 3 encoding (as r.Version says,
// zero for 3) decodes to r, or that both the encoder and the reader refuse
// it.
func checkV2(t *testing.T, r receipt.Receipt) {
	t.Helper()
	b, err := r.Canonical()
	if err != nil {
		if !errors.Is(err, receipt.ErrInvalid) {
			t.Fatalf("Canonical() error = %v, want ErrInvalid", err)
		}
		return
	}
	got, err := decodeV2(b)
	if err != nil {
		t.Fatalf("decodeV2(Canonical()) error = %v", err)
	}
	if diff := cmp.Diff(normalV2(r), got, cmpopts.EquateEmpty()); diff != "" {
		t.Fatalf("decodeV2(Canonical()) mismatch (-want, +got):\n%s", diff)
	}
	again, err := got.Canonical()
	if err != nil || !bytes.Equal(again, b) {
		t.Fatalf("Canonical(decodeV2(b)) = %x, %v; want b = %x", again, err, b)
	}
	// The production reader of the stored form reads what the oracle reads.
	got.Hash = receipt.Hash{0xab, 0xcd}
	var stored receipt.Receipt
	if err := stored.UnmarshalBinary(storedForm(b, got.Hash)); err != nil {
		t.Fatalf("UnmarshalBinary(stored form) error = %v", err)
	}
	if diff := cmp.Diff(got, stored); diff != "" {
		t.Fatalf("UnmarshalBinary(stored form) mismatch with the oracle (-oracle, +got):\n%s", diff)
	}
}

// seeds are receipts of version 2 and 3 whose encodings seed the fuzz
// tests of the binary encodings.
func seeds() []receipt.Receipt {
	v2 := fixed()
	v2.Version = receipt.Version2
	return []receipt.Receipt{v2, fixed(), fixedPasskey(), sample("emma", 2), {}}
}

// storedForm is the stored form of a receipt of version 2 whose Canonical
// is b and whose Hash is h (see receipt.LinkAppend).
func storedForm(b []byte, h receipt.Hash) []byte {
	return append(append([]byte{0}, b...), h[:]...)
}

// FuzzUnmarshalBinary checks the production reader of the stored form
// against the oracle: it never panics, and whatever it accepts, the
// oracle accepts and reads as the same receipt.
func FuzzUnmarshalBinary(f *testing.F) {
	for _, r := range seeds() {
		b, err := r.Canonical()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(storedForm(b, receipt.Hash{1}))
	}
	f.Add([]byte(`{"type":"receipt"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var got receipt.Receipt
		if err := got.UnmarshalBinary(b); err != nil {
			if !errors.Is(err, receipt.ErrInvalid) {
				t.Fatalf("UnmarshalBinary error %v does not wrap ErrInvalid", err)
			}
			return
		}
		if b[0] == '{' {
			return // a line of WriteJSONL: ReadJSONL's tests cover it
		}
		want, err := decodeV2(b[1 : len(b)-32])
		if err != nil {
			t.Fatalf("UnmarshalBinary accepted %x, which the oracle refuses: %v", b, err)
		}
		copy(want.Hash[:], b[len(b)-32:])
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("UnmarshalBinary(%x) mismatch with the oracle (-oracle, +got):\n%s", b, diff)
		}
	})
}

// TestLinkAppend checks that LinkAppend links as Link does and appends a
// stored form that reads back as the linked receipt, in both versions,
// after whatever dst held; and that it refuses what Link refuses, leaving
// dst as it was.
func TestLinkAppend(t *testing.T) {
	for _, version := range []uint8{0, receipt.Version1, receipt.Version2, receipt.Version3} {
		t.Run(fmt.Sprint("version ", version), func(t *testing.T) {
			first, second := sample("emma", 1), sample("emma", 2)
			first.Version, second.Version = version, version
			head, err := receipt.Link(first, nil)
			if err != nil {
				t.Fatal(err)
			}
			want, err := receipt.Link(second, &head)
			if err != nil {
				t.Fatal(err)
			}
			dst := []byte("earlier bytes")
			got, out, err := receipt.LinkAppend(dst, second, &head)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("LinkAppend's receipt differs from Link's (-Link, +LinkAppend):\n%s", diff)
			}
			if !bytes.HasPrefix(out, dst) {
				t.Fatalf("LinkAppend did not append to dst: %q", out)
			}
			var read receipt.Receipt
			if err := read.UnmarshalBinary(out[len(dst):]); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, read, cmpopts.EquateEmpty()); diff != "" {
				t.Fatalf("the stored form reads back otherwise (-linked, +read):\n%s", diff)
			}
			if h, err := read.ComputeHash(); err != nil || h != read.Hash || read.Prev != head.Hash {
				t.Fatalf("the receipt read back hashes to %v, %v; want its Hash %v after %v", h, err, read.Hash, head.Hash)
			}
			bad := second
			bad.Args = intent.Args{"x": {}}
			if _, out, err := receipt.LinkAppend(dst, bad, &head); !errors.Is(err, receipt.ErrInvalid) || !bytes.Equal(out, dst) {
				t.Fatalf("LinkAppend(invalid kind) = %q, %v; want dst unchanged and ErrInvalid", out, err)
			}
		})
	}
	bad := sample("emma", 1)
	bad.Version = 9
	if _, _, err := receipt.LinkAppend(nil, bad, nil); !errors.Is(err, receipt.ErrInvalid) {
		t.Fatalf("LinkAppend(version 9) error = %v, want ErrInvalid", err)
	}
}

// FuzzDecodeV2 checks the other direction: any bytes the reader accepts
// are the encoding of the receipt it read, so no receipt has two
// encodings.
func FuzzDecodeV2(f *testing.F) {
	for _, r := range seeds() {
		b, err := r.Canonical()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeV2(b)
		if err != nil {
			return
		}
		got, err := r.Canonical()
		if err != nil {
			t.Fatalf("Canonical(decodeV2(b)) error = %v", err)
		}
		if !bytes.Equal(got, b) {
			t.Fatalf("Canonical(decodeV2(%x)) = %x", b, got)
		}
	})
}

// TestVersion1Testdata verifies receipts and checkpoints written by the
// version 1 code (testdata/v1.jsonl, made before version 2 existed, with
// checkpoints signed by key 1): they must verify for as long as stores
// hold such receipts. Rewritten by WriteJSONL they stay byte for byte the
// same.
func TestVersion1Testdata(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/v1.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := receipt.VerifyAnchored(bytes.NewReader(data), verifier)
	if err != nil {
		t.Fatalf("VerifyAnchored(v1.jsonl) error = %v", err)
	}
	if rep.Receipts != 8 || rep.Checkpoints != 3 || rep.Owners != 2 {
		t.Errorf("VerifyAnchored(v1.jsonl) = %+v, want 8 receipts, 3 checkpoints, 2 owners", rep)
	}
	rs, cs, err := receipt.ReadJSONL(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, r := range rs {
		if r.Version != receipt.Version1 {
			t.Errorf("receipt %s/%d: Version = %d, want 1", r.Owner, r.Seq, r.Version)
		}
	}
	// The file's lines in their order: receipts and checkpoints interleaved.
	lines := bytes.SplitAfter(data, []byte("\n"))
	ri, ci := 0, 0
	for _, l := range lines {
		if len(l) == 0 {
			continue
		}
		var err error
		if bytes.Contains(l, []byte(`"type":"checkpoint"`)) {
			err = receipt.WriteCheckpoints(&out, cs[ci:ci+1])
			ci++
		} else {
			err = receipt.WriteJSONL(&out, rs[ri:ri+1])
			ri++
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if !bytes.Equal(out.Bytes(), data) {
		t.Errorf("WriteJSONL(ReadJSONL(v1.jsonl)) differs from the file")
	}
	// A version 1 chain continues with version 2 receipts.
	next, err := receipt.Link(sample("emma", 6), &rs[len(rs)-1])
	if err != nil {
		t.Fatal(err)
	}
	if next.Version != receipt.CurrentVersion || next.Prev != rs[len(rs)-1].Hash {
		t.Errorf("Link after a version 1 receipt: Version %d, Prev %s", next.Version, next.Prev)
	}
	if _, err := receipt.Verify(bytes.NewReader(append(slices.Clone(data), jsonl(t, next)...)), verifier); err != nil {
		t.Errorf("Verify(v1 chain + a version 2 receipt) error = %v", err)
	}
}

// TestVersionEdited checks that the version a JSON line states is covered
// by the hash: a receipt whose version is changed reads as edited (or
// malformed, for a version this reader does not know).
func TestVersionEdited(t *testing.T) {
	t.Parallel()
	r := chainOf(t, "emma", 1)[0]
	r.Version = receipt.Version2
	r = rehash(t, r)
	v2 := jsonl(t, r)
	r.Version = receipt.Version1
	r = rehash(t, r)
	v1 := jsonl(t, r)
	if !bytes.HasSuffix(v2, []byte(`,"version":2}`+"\n")) || bytes.Contains(v1, []byte(`"type":"receipt","version"`)) {
		t.Fatalf("version 2 line %s\nversion 1 line %s", v2, v1)
	}
	tests := []struct {
		name string
		line []byte
		kind receipt.Kind
	}{
		{"version 2 read as 1", bytes.Replace(v2, []byte(`,"version":2}`), []byte(`}`), 1), receipt.KindEdited},
		{"version 1 read as 2", bytes.Replace(v1, []byte(`"type":"receipt"}`), []byte(`"type":"receipt","version":2}`), 1), receipt.KindEdited},
		{"a channel in version 2", bytes.Replace(v2, []byte(`"decision"`), []byte(`"approvals":[{"channel":"page","id":"a"}],"decision"`), 1), receipt.KindMalformed},
		{"version 2 read as 3", bytes.Replace(v2, []byte(`,"version":2}`), []byte(`,"version":3}`), 1), receipt.KindEdited},
		{"version 9", bytes.Replace(v2, []byte(`"version":2}`), []byte(`"version":9}`), 1), receipt.KindMalformed},
		{"version 1 written out", bytes.Replace(v1, []byte(`"type":"receipt"}`), []byte(`"type":"receipt","version":1}`), 1), receipt.KindMalformed},
		{"version as text", bytes.Replace(v2, []byte(`"version":2}`), []byte(`"version":"2"}`), 1), receipt.KindMalformed},
	}
	for _, tt := range tests {
		_, err := receipt.Verify(bytes.NewReader(tt.line), nil)
		var ce *receipt.ChainError
		if !errors.As(err, &ce) || ce.Line != 1 || ce.Kind != tt.kind {
			t.Errorf("%s: Verify() error = %v, want line 1 %s", tt.name, err, tt.kind)
		}
	}
}
