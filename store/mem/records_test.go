package mem_test

import (
	"testing"

	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/storetest"
)

func TestRecords(t *testing.T) {
	storetest.RunRecords(t, func(t *testing.T) state.Records { return mem.New(nil) }, nil)
}

func TestApprovalStore(t *testing.T) {
	storetest.RunEntries(t, func(t *testing.T) state.Entries { return mem.New(nil) }, nil)
}
