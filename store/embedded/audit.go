package embedded

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

var _ state.ReceiptIndex = (*Store)(nil)

// The index of receipts for state.ReceiptIndex (file version 2). Bucket
// audit maps each receipt's index key (indexKey: its state.ReceiptKey in
// an order-preserving encoding) to its entry (encodeEntry); the buckets
// by verdict, result, resolved value and owner hold the same index keys
// behind a prefix (the verdict's byte, or the first 16 bytes of the
// SHA-256 of the result, value or owner), with empty values. A scan seeks to the cursor in the
// narrowest of them and reads entries in key order.
var (
	bucketAudit     = []byte("audit")
	bucketByVerdict = []byte("audit_verdict")
	bucketByResult  = []byte("audit_result")
	bucketByValue   = []byte("audit_value")
	bucketByOwner   = []byte("audit_owner")
	auditBuckets    = [][]byte{bucketAudit, bucketByVerdict, bucketByResult, bucketByValue, bucketByOwner}
)

// indexKey encodes k so that bytes.Compare orders keys as k.Compare does:
// the time (Unix seconds with the sign bit flipped, then nanoseconds, big
// endian), the owner in 7-bit groups
// (each byte has its high bit set, so the 0 that ends it sorts first; at
// most 8/7 of the owner's length, so that a key of the longest owner
// stays under bbolt's 32 KiB), then Seq.
func indexKey(k state.ReceiptKey) []byte {
	b := make([]byte, 0, 12+len(k.Owner)*8/7+2+8)
	b = append(b, timeKey(k.Time)...)
	var acc uint32
	n := 0
	for i := 0; i < len(k.Owner); i++ {
		acc = acc<<8 | uint32(k.Owner[i])
		n += 8
		for n >= 7 {
			n -= 7
			b = append(b, 0x80|byte(acc>>n)&0x7f)
		}
	}
	if n > 0 {
		b = append(b, 0x80|byte(acc<<(7-n))&0x7f)
	}
	b = append(b, 0)
	return binary.BigEndian.AppendUint64(b, k.Seq)
}

// timeKey is the smallest index key of a receipt at time t.
func timeKey(t time.Time) []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 12), uint64(t.Unix())^1<<63)
	return binary.BigEndian.AppendUint32(b, uint32(t.Nanosecond()))
}

// decodeIndexKey is the inverse of indexKey.
func decodeIndexKey(b []byte) (state.ReceiptKey, error) {
	end := bytes.IndexByte(b[min(12, len(b)):], 0) + 12
	if len(b) < 21 || end < 12 || len(b) != end+9 {
		return state.ReceiptKey{}, fmt.Errorf("embedded: corrupt index key %x", b)
	}
	t := time.Unix(int64(binary.BigEndian.Uint64(b)^1<<63), int64(binary.BigEndian.Uint32(b[8:]))).UTC()
	k := state.ReceiptKey{Time: t, Seq: binary.BigEndian.Uint64(b[end+1:])}
	owner := make([]byte, 0, (end-12)*7/8)
	var acc uint32
	n := 0
	for _, c := range b[12:end] {
		acc = acc<<7 | uint32(c&0x7f)
		n += 7
		if n >= 8 {
			n -= 8
			owner = append(owner, byte(acc>>n))
		}
	}
	k.Owner = intent.Owner(owner)
	return k, nil
}

// prefix is the 16-byte prefix of s in the buckets by result and value.
func prefix(s string) []byte {
	h := sha256.Sum256([]byte(s))
	return h[:16]
}

// encodeEntry encodes what the index keeps of a receipt: its verdict
// byte, then its result and each resolved parameter and value, each
// length-prefixed.
func encodeEntry(e state.Entry) []byte {
	b := []byte{byte(e.Verdict)}
	str := func(s string) { b = append(binary.AppendUvarint(b, uint64(len(s))), s...) }
	str(e.Result)
	for _, r := range e.Resolved {
		str(r.Param)
		str(r.Value)
	}
	return b
}

var errCorruptEntry = errors.New("embedded: corrupt index entry")

// decodeEntry is the inverse of encodeEntry, for the receipt of key k.
func decodeEntry(k state.ReceiptKey, b []byte) (state.Entry, error) {
	if len(b) == 0 {
		return state.Entry{}, errCorruptEntry
	}
	e := state.Entry{Key: k, Verdict: intent.Verdict(b[0])}
	b = b[1:]
	str := func() (string, bool) {
		n, w := binary.Uvarint(b)
		if w <= 0 || uint64(len(b)-w) < n {
			return "", false
		}
		s := string(b[w : w+int(n)])
		b = b[w+int(n):]
		return s, true
	}
	var ok bool
	if e.Result, ok = str(); !ok {
		return e, errCorruptEntry
	}
	for len(b) > 0 {
		p, ok1 := str()
		v, ok2 := str()
		if !ok1 || !ok2 {
			return e, errCorruptEntry
		}
		e.Resolved = append(e.Resolved, state.Resolved{Param: p, Value: v})
	}
	return e, nil
}

// indexReceipt adds the stored receipt r to the index.
func indexReceipt(tx *bolt.Tx, r receipt.Receipt) error {
	e := state.EntryOf(r)
	k := indexKey(e.Key)
	if err := tx.Bucket(bucketAudit).Put(k, encodeEntry(e)); err != nil {
		return err
	}
	if err := tx.Bucket(bucketByVerdict).Put(append([]byte{byte(e.Verdict)}, k...), nil); err != nil {
		return err
	}
	if err := tx.Bucket(bucketByResult).Put(append(prefix(e.Result), k...), nil); err != nil {
		return err
	}
	for _, res := range e.Resolved {
		if err := tx.Bucket(bucketByValue).Put(append(prefix(res.Value), k...), nil); err != nil {
			return err
		}
	}
	return tx.Bucket(bucketByOwner).Put(append(prefix(string(e.Key.Owner)), k...), nil)
}

// reindexBatch is how many receipts one transaction of reindex indexes.
const reindexBatch = 20000

// reindex builds the index of a file of version 1 from its receipts, in
// transactions of reindexBatch receipts, then marks the file version 2.
// It runs in Open, before any write.
func reindex(db *bolt.DB) error {
	var after []byte
	for {
		var lines [][]byte
		err := db.View(func(tx *bolt.Tx) error {
			c := tx.Bucket(bucketReceipts).Cursor()
			k, v := c.First()
			if after != nil {
				if k, v = c.Seek(after); k != nil && bytes.Equal(k, after) {
					k, v = c.Next()
				}
			}
			for ; k != nil && len(lines) < reindexBatch; k, v = c.Next() {
				lines = append(lines, slices.Clone(v))
				after = slices.Clone(k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(lines) == 0 {
			return db.Update(func(tx *bolt.Tx) error {
				return tx.Bucket(bucketMeta).Put(keyVersion, binary.BigEndian.AppendUint64(nil, fileVersion))
			})
		}
		rs, _, err := receipt.ReadJSONL(bytes.NewReader(bytes.Join(lines, nil)))
		if err != nil {
			return fmt.Errorf("embedded: indexing stored receipts: %w", err)
		}
		err = db.Update(func(tx *bolt.Tx) error {
			for _, r := range rs {
				if err := indexReceipt(tx, r); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
}

// Page implements state.ReceiptIndex, once the deferred receipts queued
// before the call are stored.
func (s *Store) Page(ctx context.Context, q state.ReceiptQuery) (state.ReceiptPage, error) {
	p, err := state.PlanOf(q)
	if err != nil {
		return state.ReceiptPage{}, err
	}
	if err := s.settled(ctx); err != nil {
		return state.ReceiptPage{}, err
	}
	var lines bytes.Buffer
	err = s.view(ctx, func(tx *bolt.Tx) error {
		if p.Owners != nil && len(p.Owners) == 0 {
			return nil
		}
		keys, err := scan(tx, p)
		if err != nil {
			return err
		}
		for _, k := range keys {
			ok, err := ownerKey(k.Owner)
			if err != nil {
				return err
			}
			v := tx.Bucket(bucketReceipts).Get(seqKey(ok, k.Seq))
			if v == nil {
				return fmt.Errorf("embedded: indexed receipt %q #%d is not stored", k.Owner, k.Seq)
			}
			lines.Write(v)
		}
		return nil
	})
	if err != nil {
		return state.ReceiptPage{}, err
	}
	rs, _, err := receipt.ReadJSONL(&lines)
	if err != nil {
		return state.ReceiptPage{}, fmt.Errorf("embedded: stored receipts: %w", err)
	}
	return p.Finish(rs), nil
}

// scan returns the keys of up to p.Limit+1 receipts p keeps, from its
// cursor in its direction, read from the narrowest index bucket.
func scan(tx *bolt.Tx, p state.Plan) ([]state.ReceiptKey, error) {
	b, pre := tx.Bucket(bucketAudit), []byte(nil)
	switch {
	case p.Payee != "":
		b, pre = tx.Bucket(bucketByValue), prefix(p.Payee)
	case len(p.Owners) == 1:
		b, pre = tx.Bucket(bucketByOwner), prefix(string(p.Owners[0]))
	case p.Verdict != "":
		v, _ := intent.ParseVerdict(p.Verdict)
		b, pre = tx.Bucket(bucketByVerdict), []byte{byte(v)}
	case p.Result != "":
		b, pre = tx.Bucket(bucketByResult), prefix(p.Result)
	}
	entries := tx.Bucket(bucketAudit)
	c := b.Cursor()
	k, next := start(c, pre, p)
	var out []state.ReceiptKey
	for ; k != nil && bytes.HasPrefix(k, pre) && len(out) <= p.Limit; k, _ = next() {
		ik := k[len(pre):]
		key, err := decodeIndexKey(ik)
		if err != nil {
			return nil, err
		}
		if p.Back && !p.To.IsZero() && !key.Time.Before(p.To) || !p.Back && !p.From.IsZero() && key.Time.Before(p.From) {
			break
		}
		if p.Owners != nil && !slices.Contains(p.Owners, key.Owner) {
			continue
		}
		e, err := decodeEntry(key, entries.Get(ik))
		if err != nil {
			return nil, err
		}
		if p.Keeps(e) {
			out = append(out, key)
		}
	}
	return out, nil
}

// start positions c on the first key of p's page (under pre) and returns
// it with the step to the next one: towards older keys, or newer ones
// when p.Back.
func start(c *bolt.Cursor, pre []byte, p state.Plan) ([]byte, func() ([]byte, []byte)) {
	if p.Back {
		from := append(slices.Clip(pre), indexKey(p.After)...)
		if !p.From.IsZero() {
			if t := append(slices.Clip(pre), timeKey(p.From)...); bytes.Compare(t, from) > 0 {
				from = t
			}
		}
		k, _ := c.Seek(from)
		if k != nil && bytes.Equal(k, append(slices.Clip(pre), indexKey(p.After)...)) {
			k, _ = c.Next()
		}
		return k, c.Next
	}
	// The first key older than both the cursor and To: seek to the
	// smaller, then step back.
	var below []byte
	if p.Start {
		below = append(slices.Clip(pre), indexKey(p.After)...)
	}
	if !p.To.IsZero() {
		if t := append(slices.Clip(pre), timeKey(p.To)...); below == nil || bytes.Compare(t, below) < 0 {
			below = t
		}
	}
	if below == nil {
		// Past every key under pre.
		below = successor(pre)
	}
	var k []byte
	if below != nil {
		k, _ = c.Seek(below)
	}
	if k == nil {
		k, _ = c.Last()
	} else {
		k, _ = c.Prev()
	}
	return k, c.Prev
}

// successor returns the smallest key above every key starting with pre;
// nil (none: seek past the end) for an empty or all-0xff pre.
func successor(pre []byte) []byte {
	s := slices.Clone(pre)
	for i := len(s) - 1; i >= 0; i-- {
		if s[i] != 0xff {
			s[i]++
			return s[:i+1]
		}
	}
	return nil
}
