package mem

import (
	"bytes"
	"context"
	"slices"
	"sort"
	"time"

	"github.com/intentplane/intentplane/core/state"
)

// PutEntry keeps value under (space, key) until expires, replacing any
// entry there (the approval page's requests, sessions and call-backs:
// approvals.Store). Nothing survives the process.
func (s *Store) PutEntry(ctx context.Context, space, key string, value []byte, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := state.CheckKeys(space, key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = map[string]map[string]record{}
	}
	sp := s.entries[space]
	if sp == nil {
		sp = map[string]record{}
		s.entries[space] = sp
	}
	sp[key] = record{value: slices.Clone(value), expires: expires.UTC()}
	return nil
}

// Entry returns the unexpired entry under (space, key).
func (s *Store) Entry(ctx context.Context, space, key string) ([]byte, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[space][key]
	if !ok || !s.now().Before(r.expires) {
		return nil, false, nil
	}
	return slices.Clone(r.value), true, nil
}

// Entries calls fn with every unexpired entry of space in key order,
// outside the store's lock.
func (s *Store) Entries(ctx context.Context, space string, fn func(key string, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	type kv struct {
		k string
		v []byte
	}
	var all []kv
	s.mu.Lock()
	now := s.now()
	for k, r := range s.entries[space] {
		if now.Before(r.expires) {
			all = append(all, kv{k, slices.Clone(r.value)})
		}
	}
	s.mu.Unlock()
	sort.Slice(all, func(i, j int) bool { return all[i].k < all[j].k })
	for _, e := range all {
		if err := fn(e.k, e.v); err != nil {
			return err
		}
	}
	return nil
}

// DeleteEntry removes (space, key).
func (s *Store) DeleteEntry(ctx context.Context, space, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.entries[space], key)
	return nil
}

// SwapEntry replaces the unexpired entry under (space, key) with value,
// until expires, only if its value is old.
func (s *Store) SwapEntry(ctx context.Context, space, key string, old, value []byte, expires time.Time) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := state.CheckKeys(space, key); err != nil {
		return false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.entries[space][key]
	if !ok || !s.now().Before(r.expires) || !bytes.Equal(r.value, old) {
		return false, nil
	}
	s.entries[space][key] = record{value: slices.Clone(value), expires: expires.UTC()}
	return true, nil
}
