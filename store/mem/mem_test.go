package mem_test

import (
	"testing"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T) gateway.Store { return mem.New(nil) })
}
