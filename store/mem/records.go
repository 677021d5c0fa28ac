package mem

import (
	"context"
	"slices"
	"time"

	"github.com/intentplane/intentplane/core/state"
)

var _ state.Records = (*Store)(nil)

type record struct {
	value   []byte
	expires time.Time
}

// Keep implements state.Records. Nothing survives the process.
func (s *Store) Keep(ctx context.Context, key string, value []byte, expires time.Time) ([]byte, time.Time, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, err
	}
	if err := state.CheckKeys(key); err != nil {
		return nil, time.Time{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.records[key]; ok && s.now().Before(r.expires) {
		return slices.Clone(r.value), r.expires, nil
	}
	if s.records == nil {
		s.records = map[string]record{}
	}
	s.records[key] = record{value: slices.Clone(value), expires: expires.UTC()}
	return slices.Clone(value), expires.UTC(), nil
}

// Kept implements state.Records.
func (s *Store) Kept(ctx context.Context, key string) ([]byte, time.Time, bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, time.Time{}, false, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.records[key]
	if !ok || !s.now().Before(r.expires) {
		return nil, time.Time{}, false, nil
	}
	return slices.Clone(r.value), r.expires, true, nil
}
