package receipt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// The versions of the encoding a receipt's hash covers (Receipt.Version).
const (
	// Version1 is the canonical JSON object (see Canonical): every receipt
	// written before version 2 existed. Its encoding begins with '{'.
	Version1 = 1
	// Version2 is a compact binary encoding (see Canonical), about half
	// the bytes of version 1 for a typical receipt, so that hashing it
	// costs half as much. Its encoding begins with the byte 0x02, which
	// no version 1 encoding does.
	Version2 = 2
	// Version3 is version 2 that also records, for each approval, the
	// channel the person confirmed on, a run's hash and a passkey's
	// assertion (see
	// Canonical). Its encoding begins with the byte 0x03.
	Version3 = 3
	// CurrentVersion is the version Link gives a receipt whose Version is
	// zero.
	CurrentVersion = Version3
)

// errVersion is returned (wrapped in ErrInvalid) for a Version that is
// neither zero, Version1, Version2 nor Version3.
var errVersion = errors.New("unknown receipt version")

// Tags of a value's kind in the version 2 encoding.
const (
	tagString = 1
	tagInt    = 2
	tagAmount = 3
	tagBool   = 4
)

// appendBinary appends the encoding of r of version (Version2 or
// Version3) to dst (see Canonical). It does not read r.Version.
func (r *Receipt) appendBinary(dst []byte, version uint8) ([]byte, error) {
	if r.Seq > math.MaxInt64 {
		return nil, fmt.Errorf("%w: seq %d exceeds 2^63-1", ErrInvalid, r.Seq)
	}
	if err := checkOld(version, r.Approvals); err != nil {
		return nil, err
	}
	w := binWriter{b: append(dst, version)}
	w.b = binary.AppendUvarint(w.b, r.Seq)
	w.str(string(r.Owner))
	w.time(r.Time)
	w.b = append(w.b, r.Prev[:]...)
	w.str(r.MandateID)
	w.str(string(r.Action))
	w.str(r.Sent)
	w.values(r.Args)
	w.count(len(r.Resolved))
	for i := range r.Resolved {
		res := &r.Resolved[i]
		w.str(res.Param)
		w.str(res.Sent)
		w.str(res.Value)
		w.str(res.Provenance.Source)
		w.str(res.Provenance.RecordID)
		w.str(res.Provenance.Version)
		w.time(res.Provenance.At)
	}
	w.values(r.Facts)
	w.str(r.Verdict.String())
	w.str(string(r.Code))
	w.str(r.Message)
	w.count(len(r.Policies))
	for _, p := range r.Policies {
		w.str(p)
	}
	w.str(r.Operation)
	w.count(len(r.Approvals))
	for i := range r.Approvals {
		a := &r.Approvals[i]
		w.str(a.ID)
		w.str(a.Approver)
		w.str(a.Level)
		w.time(a.IssuedAt)
		w.time(a.ExpiresAt)
		if version >= Version3 {
			w.str(a.Channel)
			w.str(a.Run)
			w.bytes(a.Passkey.CredentialID)
			w.bytes(a.Passkey.AuthenticatorData)
			w.bytes(a.Passkey.ClientDataJSON)
			w.bytes(a.Passkey.Signature)
		}
	}
	w.str(r.Result)
	w.str(r.Output)
	if w.err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, w.err)
	}
	return w.b, nil
}

// binWriter appends the items of the version 2 encoding, each
// self-delimiting, and keeps the first error.
type binWriter struct {
	b   []byte
	err error
}

func (w *binWriter) count(n int) { w.b = binary.AppendUvarint(w.b, uint64(n)) }

// str writes the length of s in bytes (uvarint) and s, which must be valid
// UTF-8.
func (w *binWriter) str(s string) {
	if !ascii(s) && !utf8.ValidString(s) && w.err == nil {
		w.err = errors.New("string is not valid UTF-8")
	}
	w.b = binary.AppendUvarint(w.b, uint64(len(s)))
	w.b = append(w.b, s...)
}

// bytes writes the length of b (uvarint) and b, any bytes.
func (w *binWriter) bytes(b []byte) {
	w.b = binary.AppendUvarint(w.b, uint64(len(b)))
	w.b = append(w.b, b...)
}

// ascii reports whether s is all ASCII, eight bytes at a time: most
// strings of a receipt are, and this costs a fraction of
// utf8.ValidString's call on short strings.
func ascii(s string) bool {
	for len(s) >= 8 {
		w := uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
			uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
		s = s[8:]
	}
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// time writes 0 for the zero time, else 1, the seconds since the Unix
// epoch (varint) and the nanoseconds (uvarint).
func (w *binWriter) time(t time.Time) {
	if t.IsZero() {
		w.b = append(w.b, 0)
		return
	}
	w.b = append(w.b, 1)
	w.b = binary.AppendVarint(w.b, t.Unix())
	w.b = binary.AppendUvarint(w.b, uint64(t.Nanosecond()))
}

// values writes the number of entries and each entry, by key in byte
// order: the key, the kind's tag and the value.
func (w *binWriter) values(vs map[string]intent.Value) {
	type entry struct {
		k string
		v intent.Value
	}
	var buf [16]entry
	es := buf[:0]
	for k, v := range vs {
		es = append(es, entry{k, v})
	}
	slices.SortFunc(es, func(a, b entry) int { return strings.Compare(a.k, b.k) })
	w.count(len(es))
	for i := range es {
		k, v := es[i].k, &es[i].v
		w.str(k)
		switch v.Kind {
		case intent.KindString:
			w.b = append(w.b, tagString)
			w.str(v.Str)
		case intent.KindInt:
			w.b = append(w.b, tagInt)
			w.b = binary.AppendVarint(w.b, v.Int)
		case intent.KindAmount:
			w.b = append(w.b, tagAmount)
			w.b = binary.AppendVarint(w.b, v.Int)
			w.b = append(w.b, v.Scale)
		case intent.KindBool:
			w.b = append(w.b, tagBool, b2u(v.Bool))
		default:
			if w.err == nil {
				w.err = fmt.Errorf("value %q has invalid kind %d", k, v.Kind)
			}
		}
	}
}

func b2u(b bool) byte {
	if b {
		return 1
	}
	return 0
}
