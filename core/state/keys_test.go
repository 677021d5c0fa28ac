package state_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
)

func TestKeys(t *testing.T) {
	t.Parallel()
	var h intent.OperationHash
	for i := range h {
		h[i] = byte(i * 7)
	}
	if got, want := state.NonceKey(h), "op:"+h.String(); got != want {
		t.Errorf("NonceKey = %q, want %q", got, want)
	}
	if got, want := state.LockKey("cfo@northwind", "ap.pay_bill", "res.partner:7"), "lock:cfo@northwind\x00ap.pay_bill\x00res.partner:7"; got != want {
		t.Errorf("LockKey = %q, want %q", got, want)
	}
	long := state.LockKey("o", "a", strings.Repeat("x", state.MaxKeyLen))
	if len(long) > state.MaxKeyLen || !strings.HasPrefix(long, "lock:sha256:") {
		t.Errorf("LockKey of a long value = %q, want a digest key", long)
	}
	if long == state.LockKey("o", "a", strings.Repeat("x", state.MaxKeyLen+1)) {
		t.Error("two long keys share a digest")
	}
}
