package mem_test

import (
	"testing"

	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) state.Store { return mem.New(nil) })
}

// FuzzKeys: any key round-trips (seeds in testdata/fuzz/FuzzKeys).
func FuzzKeys(f *testing.F) { storetest.Fuzz(f, mem.New(nil)) }
