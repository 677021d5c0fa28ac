package receipt

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// The stored form of a receipt is what a store that keeps receipts as bytes
// keeps of each, so that a long chain is a few large byte slices, which the
// garbage collector never scans, rather than millions of maps and strings.
// For a receipt of version 2 it is the bytes its hash covers, the domain
// byte 0x00 and Canonical (which begins with 0x02), followed by the 32 bytes
// of Hash; for a receipt of version 1, its line of WriteJSONL (which begins
// with '{') without the newline. UnmarshalBinary reads either back.

// LinkAppend is Link that also appends the linked receipt's stored form
// to dst and returns it: for a receipt of version 2 the encoding hashed
// once serves both, so keeping a receipt as bytes costs no second encoding.
// It returns the errors of Link; dst is returned unchanged with them.
func LinkAppend(dst []byte, r Receipt, prev *Receipt) (Receipt, []byte, error) {
	err := r.prepare(prev)
	if err != nil {
		return Receipt{}, dst, err
	}
	switch r.Version {
	case Version2, Version3:
	case Version1:
		if r.Hash, err = r.ComputeHash(); err != nil {
			return Receipt{}, dst, err
		}
		out, err := r.appendJSON(dst, member{key: "hash", value: r.Hash.String()}, member{key: "type", value: typeReceipt})
		if err != nil {
			return Receipt{}, dst, err
		}
		return r, out, nil
	default:
		return Receipt{}, dst, fmt.Errorf("%w: %w %d", ErrInvalid, errVersion, r.Version)
	}
	start := len(dst)
	out, err := r.appendBinary(append(dst, receiptDomain), r.Version)
	if err != nil {
		return Receipt{}, dst, err
	}
	r.Hash = sha256.Sum256(out[start:])
	return r, append(out, r.Hash[:]...), nil
}

// errStored is wrapped by UnmarshalBinary's errors.
var errStored = errors.New("receipt: malformed stored receipt")

// UnmarshalBinary sets r to the receipt whose stored form (see LinkAppend)
// b is. Of a receipt of version 2, lists and maps left empty are nil and
// times are in UTC; its Hash is the one stored, not recomputed (Verify
// checks it). The strings of r share one copy of b's bytes, so b may be
// reused. It returns an error wrapping ErrInvalid for bytes that are not a
// stored form: truncated, trailing bytes, a string that is not UTF-8, keys
// out of order, an unknown kind, or anything Canonical would not write.
func (r *Receipt) UnmarshalBinary(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		got, err := decodeReceipt(b)
		if err != nil {
			return fmt.Errorf("%w: %w: %w", ErrInvalid, errStored, err)
		}
		*r = got
		return nil
	}
	if len(b) < 2+len(Hash{}) || b[0] != receiptDomain || (b[1] != Version2 && b[1] != Version3) {
		return fmt.Errorf("%w: %w: neither version 1, 2 nor 3", ErrInvalid, errStored)
	}
	body := b[2 : len(b)-len(Hash{})]
	d := binReader{s: string(body)}
	got := d.receipt(b[1])
	if d.err == nil && d.i != len(d.s) {
		d.fail("%d bytes after the receipt", len(d.s)-d.i)
	}
	if d.err != nil {
		return fmt.Errorf("%w: %w: %w", ErrInvalid, errStored, d.err)
	}
	copy(got.Hash[:], b[len(b)-len(Hash{}):])
	*r = got
	return nil
}

// binReader reads the items of the version 2 encoding from s, slicing
// its strings out of s, and keeps the first error; after one it reads
// zeros.
type binReader struct {
	s   string
	i   int // the next byte of s to read
	err error
}

// receipt reads a receipt of version (Version2 or Version3) after its
// version byte.
func (d *binReader) receipt(version uint8) Receipt {
	r := Receipt{Version: version}
	r.Seq = d.uvarint()
	r.Owner = intent.Owner(d.str())
	r.Time = d.time()
	copy(r.Prev[:], d.take(len(r.Prev)))
	r.MandateID = d.str()
	r.Action = intent.Action(d.str())
	r.Sent = d.str()
	r.Args = d.values()
	if n := d.count(); n > 0 {
		r.Resolved = make([]intent.Resolved, n)
		for i := range r.Resolved {
			res := &r.Resolved[i]
			res.Param, res.Sent, res.Value = d.str(), d.str(), d.str()
			res.Provenance.Source, res.Provenance.RecordID, res.Provenance.Version = d.str(), d.str(), d.str()
			res.Provenance.At = d.time()
		}
	}
	r.Facts = d.values()
	verdict, err := intent.ParseVerdict(d.str())
	if err != nil {
		d.fail("%v", err)
	}
	r.Verdict = verdict
	r.Code = intent.Code(d.str())
	r.Message = d.str()
	if n := d.count(); n > 0 {
		r.Policies = make([]string, n)
		for i := range r.Policies {
			r.Policies[i] = d.str()
		}
	}
	r.Operation = d.str()
	r.Approvals = d.approvals(version)
	r.Result = d.str()
	r.Output = d.str()
	if r.Seq > 1<<63-1 {
		d.fail("seq %d beyond 2^63-1", r.Seq)
	}
	return r
}

// approvals reads a receipt's approvals: nil if it has none.
func (d *binReader) approvals(version uint8) []Evidence {
	n := d.count()
	if n == 0 {
		return nil
	}
	as := make([]Evidence, n)
	for i := range as {
		a := &as[i]
		a.ID, a.Approver, a.Level = d.str(), d.str(), d.str()
		a.IssuedAt, a.ExpiresAt = d.time(), d.time()
		if version >= Version3 {
			a.Channel, a.Run = d.str(), d.str()
			p := &a.Passkey
			p.CredentialID, p.AuthenticatorData, p.ClientDataJSON, p.Signature = d.bytes(), d.bytes(), d.bytes(), d.bytes()
		}
	}
	return as
}

// bytes reads a byte string: nil if empty, else a copy.
func (d *binReader) bytes() []byte {
	s := d.take(d.count())
	if s == "" {
		return nil
	}
	return []byte(s)
}

func (d *binReader) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf(format, args...)
	}
	d.i = len(d.s)
}

// take returns the next n bytes, or "" if fewer are left.
func (d *binReader) take(n int) string {
	if n < 0 || n > len(d.s)-d.i {
		d.fail("truncated")
		return ""
	}
	out := d.s[d.i : d.i+n]
	d.i += n
	return out
}

func (d *binReader) byte() byte {
	if d.i >= len(d.s) {
		d.fail("truncated")
		return 0
	}
	d.i++
	return d.s[d.i-1]
}

// uvarint reads an unsigned varint in its shortest form, as
// binary.AppendUvarint writes it.
func (d *binReader) uvarint() uint64 {
	var x uint64
	for shift := 0; shift < 64; shift += 7 {
		c := d.byte()
		if d.err != nil {
			return 0
		}
		if shift == 63 && c > 1 {
			break
		}
		x |= uint64(c&0x7f) << shift
		if c < 0x80 {
			if c == 0 && shift > 0 {
				d.fail("varint not in its shortest form")
				return 0
			}
			return x
		}
	}
	d.fail("varint overflows 64 bits")
	return 0
}

// varint reads a signed varint (zig-zag), as binary.AppendVarint writes it.
func (d *binReader) varint() int64 {
	u := d.uvarint()
	x := int64(u >> 1)
	if u&1 != 0 {
		x = ^x
	}
	return x
}

// count reads a length, which cannot exceed the bytes left: every item
// takes one at least.
func (d *binReader) count() int {
	n := d.uvarint()
	if n > uint64(len(d.s)-d.i) {
		d.fail("length %d beyond the data", n)
		return 0
	}
	return int(n)
}

func (d *binReader) str() string {
	s := d.take(d.count())
	if !ascii(s) && !utf8.ValidString(s) {
		d.fail("string is not valid UTF-8")
		return ""
	}
	return s
}

func (d *binReader) time() time.Time {
	switch d.byte() {
	case 0:
		return time.Time{}
	case 1:
		sec, ns := d.varint(), d.uvarint()
		if ns >= 1e9 {
			d.fail("nanoseconds %d out of range", ns)
			return time.Time{}
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

// values reads a map of arguments or facts: nil if it has no entry. Keys
// must be in strictly increasing byte order, as appendBinary writes them.
func (d *binReader) values() map[string]intent.Value {
	n := d.count()
	if n == 0 {
		return nil
	}
	out := make(map[string]intent.Value, n)
	last := ""
	for i := 0; i < n && d.err == nil; i++ {
		k := d.str()
		if i > 0 && k <= last {
			d.fail("key %q not after %q", k, last)
		}
		last = k
		switch d.byte() {
		case tagString:
			out[k] = intent.Str(d.str())
		case tagInt:
			out[k] = intent.Int(d.varint())
		case tagAmount:
			a := d.varint()
			out[k] = intent.AmountValue(intent.Amount(a), d.byte())
		case tagBool:
			switch d.byte() {
			case 0:
				out[k] = intent.Bool(false)
			case 1:
				out[k] = intent.Bool(true)
			default:
				d.fail("bool of %q is neither 0 nor 1", k)
			}
		default:
			d.fail("unknown kind of %q", k)
		}
	}
	return out
}
