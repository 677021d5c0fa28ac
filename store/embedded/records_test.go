package embedded_test

import (
	"path/filepath"
	"testing"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/approvalstest"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/storetest"
)

func TestRecords(t *testing.T) {
	storetest.RunRecords(t, func(t *testing.T) state.Records {
		return open(t, filepath.Join(t.TempDir(), "state.db"))
	}, func(t *testing.T, s state.Records) state.Records {
		es := s.(*embedded.Store)
		path := es.Path()
		if err := es.Close(); err != nil {
			t.Fatal(err)
		}
		return open(t, path)
	})
}

func TestApprovalStore(t *testing.T) {
	approvalstest.Run(t, func(t *testing.T) approvals.Store {
		return open(t, filepath.Join(t.TempDir(), "state.db"))
	}, func(t *testing.T, s approvals.Store) approvals.Store {
		es := s.(*embedded.Store)
		path := es.Path()
		if err := es.Close(); err != nil {
			t.Fatal(err)
		}
		return open(t, path)
	})
}
