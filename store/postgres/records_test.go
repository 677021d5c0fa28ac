package postgres_test

import (
	"context"
	"testing"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/approvalstest"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/storetest"
)

func TestRecords(t *testing.T) {
	t.Parallel()
	dsns := map[state.Records]string{}
	storetest.RunRecords(t, func(t *testing.T) state.Records {
		s, dsn := open(t, postgres.Config{})
		dsns[s] = dsn
		return s
	}, func(t *testing.T, s state.Records) state.Records {
		s.(*postgres.Store).Close()
		s2, err := postgres.Open(context.Background(), dsns[s], postgres.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s2.Close)
		return s2
	})
}

func TestApprovalStore(t *testing.T) {
	t.Parallel()
	dsns := map[approvals.Store]string{}
	approvalstest.Run(t, func(t *testing.T) approvals.Store {
		s, dsn := open(t, postgres.Config{})
		dsns[s] = dsn
		return s
	}, func(t *testing.T, s approvals.Store) approvals.Store {
		s.(*postgres.Store).Close()
		s2, err := postgres.Open(context.Background(), dsns[s], postgres.Config{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(s2.Close)
		return s2
	})
}
