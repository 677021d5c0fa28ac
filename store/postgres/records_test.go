package postgres_test

import (
	"context"
	"testing"

	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/storetest"
)

// restartable opens stores on fresh schemas and reopens them on the same
// schema, as a restart would.
type restartable map[*postgres.Store]string

func (r restartable) open(t *testing.T) *postgres.Store {
	s, dsn := open(t, postgres.Config{})
	r[s] = dsn
	return s
}

func (r restartable) reopen(t *testing.T, s *postgres.Store) *postgres.Store {
	s.Close()
	s2, err := postgres.Open(context.Background(), r[s], postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s2.Close)
	return s2
}

func TestRecords(t *testing.T) {
	t.Parallel()
	r := restartable{}
	storetest.RunRecords(t, func(t *testing.T) state.Records { return r.open(t) },
		func(t *testing.T, s state.Records) state.Records { return r.reopen(t, s.(*postgres.Store)) })
}

func TestApprovalStore(t *testing.T) {
	t.Parallel()
	r := restartable{}
	storetest.RunEntries(t, func(t *testing.T) state.Entries { return r.open(t) },
		func(t *testing.T, s state.Entries) state.Entries { return r.reopen(t, s.(*postgres.Store)) })
}
