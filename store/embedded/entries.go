package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"slices"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intentplane/intentplane/core/state"
)

// bucketEntries holds approvals.Store's entries: the key is the space,
// length-prefixed (so that one space never prefixes another's keys),
// followed by the entry's key; the value is its expiry (Unix nanoseconds,
// big-endian) followed by the value. Made by the first PutEntry.
var bucketEntries = []byte("entries")

func spacePrefix(space string) []byte {
	return append(binary.AppendUvarint(nil, uint64(len(space))), space...)
}

func entryKey(space, key string) ([]byte, error) {
	if err := state.CheckKeys(space, key); err != nil {
		return nil, err
	}
	return append(spacePrefix(space), key...), nil
}

// PutEntry keeps value under (space, key) until expires, replacing any
// entry there (the approval page's requests, sessions and call-backs:
// approvals.Store), durably.
func (s *Store) PutEntry(ctx context.Context, space, key string, value []byte, expires time.Time) error {
	ek, err := entryKey(space, key)
	if err != nil {
		return err
	}
	v := append(binary.BigEndian.AppendUint64(nil, recordNanos(expires)), value...)
	return s.update(ctx, func(tx *bolt.Tx) error {
		b, err := tx.CreateBucketIfNotExists(bucketEntries)
		if err != nil {
			return err
		}
		return b.Put(ek, v)
	})
}

// Entry returns the unexpired entry under (space, key).
func (s *Store) Entry(ctx context.Context, space, key string) ([]byte, bool, error) {
	ek, err := entryKey(space, key)
	if err != nil {
		return nil, false, err
	}
	var out []byte
	found := false
	err = s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		if b == nil {
			return nil
		}
		if v, exp, ok := decodeRecord(b.Get(ek)); ok && s.now().Before(exp) {
			out, found = slices.Clone(v), true
		}
		return nil
	})
	return out, found, err
}

// Entries calls fn with every unexpired entry of space in key order. fn
// runs after the read transaction ends, so it may call the store.
func (s *Store) Entries(ctx context.Context, space string, fn func(key string, value []byte) error) error {
	type kv struct {
		k string
		v []byte
	}
	var all []kv
	p := spacePrefix(space)
	err := s.view(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		if b == nil {
			return nil
		}
		now := s.now()
		c := b.Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p); k, v = c.Next() {
			if val, exp, ok := decodeRecord(v); ok && now.Before(exp) {
				all = append(all, kv{string(k[len(p):]), slices.Clone(val)})
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, e := range all {
		if err := fn(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

// DeleteEntry removes (space, key).
func (s *Store) DeleteEntry(ctx context.Context, space, key string) error {
	ek, err := entryKey(space, key)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketEntries)
		if b == nil {
			return nil
		}
		return b.Delete(ek)
	})
}

// SwapEntry replaces the unexpired entry under (space, key) with value,
// until expires, only if its value is old, in one write transaction.
func (s *Store) SwapEntry(ctx context.Context, space, key string, old, value []byte, expires time.Time) (bool, error) {
	ek, err := entryKey(space, key)
	if err != nil {
		return false, err
	}
	v := append(binary.BigEndian.AppendUint64(nil, recordNanos(expires)), value...)
	swapped := false
	err = s.update(ctx, func(tx *bolt.Tx) error {
		swapped = false // a batch may run fn again
		b := tx.Bucket(bucketEntries)
		if b == nil {
			return nil
		}
		cur, exp, ok := decodeRecord(b.Get(ek))
		if !ok || !s.now().Before(exp) || !bytes.Equal(cur, old) {
			return nil
		}
		if err := b.Put(ek, v); err != nil {
			return err
		}
		swapped = true
		return nil
	})
	return swapped && err == nil, err
}
