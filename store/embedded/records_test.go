package embedded_test

import (
	"path/filepath"
	"testing"

	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/storetest"
)

func openTemp(t *testing.T) *embedded.Store { return open(t, filepath.Join(t.TempDir(), "state.db")) }

// reopen closes s and opens its file again, as a restart would.
func reopen(t *testing.T, s *embedded.Store) *embedded.Store {
	path := s.Path()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return open(t, path)
}

func TestRecords(t *testing.T) {
	storetest.RunRecords(t, func(t *testing.T) state.Records { return openTemp(t) },
		func(t *testing.T, s state.Records) state.Records { return reopen(t, s.(*embedded.Store)) })
}

func TestApprovalStore(t *testing.T) {
	storetest.RunEntries(t, func(t *testing.T) state.Entries { return openTemp(t) },
		func(t *testing.T, s state.Entries) state.Entries { return reopen(t, s.(*embedded.Store)) })
}
