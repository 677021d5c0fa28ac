package embedded

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
)

// FuzzIndexKey: index keys sort as the receipt keys they encode, and
// decode back to them, whatever bytes the owners hold.
func FuzzIndexKey(f *testing.F) {
	f.Add("a", "a\x00", int64(0), int64(0), uint64(1), uint64(1))
	f.Add("", "\x00", int64(-1), int64(1), uint64(0), uint64(math.MaxUint64))
	f.Add("ab\xff", "ab", int64(math.MinInt64), int64(math.MaxInt64), uint64(7), uint64(256))
	f.Add("\x7f\x80", "\x7f\x7f\xff", int64(5), int64(5), uint64(2), uint64(2))
	f.Fuzz(func(t *testing.T, o1, o2 string, at1, at2 int64, s1, s2 uint64) {
		// Times from year 1 to 9999, as receipts can hold.
		t1 := time.Unix(at1%(253402300799+62135596800)-62135596800, at1&0x3fffffff%1e9).UTC()
		t2 := time.Unix(at2%(253402300799+62135596800)-62135596800, at2&0x3fffffff%1e9).UTC()
		a := state.ReceiptKey{Time: t1, Owner: intent.Owner(o1), Seq: s1}
		b := state.ReceiptKey{Time: t2, Owner: intent.Owner(o2), Seq: s2}
		ka, kb := indexKey(a), indexKey(b)
		if got, want := bytes.Compare(ka, kb), a.Compare(b); got != want {
			t.Fatalf("keys of %+v and %+v compare %d, want %d", a, b, got, want)
		}
		if d, err := decodeIndexKey(ka); err != nil || d.Compare(a) != 0 || d.Owner != a.Owner {
			t.Fatalf("decode(indexKey(%+v)) = %+v, %v", a, d, err)
		}
	})
}
