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

func TestTotalKeys(t *testing.T) {
	t.Parallel()
	res := state.ReservationID(strings.Repeat("ab", 32), "pay.send", "emma")
	id := state.TotalReservationID(res, 2)
	if got, ok := state.ParseTotalReservationID(id); !ok || got != res {
		t.Errorf("ParseTotalReservationID(%q) = %q, %v", id, got, ok)
	}
	for _, bad := range []string{res, "total:" + res, "total-1:" + res, "totalx:" + res, "total2" + res} {
		if _, ok := state.ParseTotalReservationID(bad); ok {
			t.Errorf("ParseTotalReservationID(%q) accepted", bad)
		}
	}
	long := state.TotalReservationID(strings.Repeat("ab", 32)+" "+strings.Repeat("o", state.MaxKeyLen), 0)
	if len(long) > state.MaxKeyLen || long != "total0:"+strings.Repeat("ab", 32) {
		t.Errorf("TotalReservationID of a long id = %.80q", long)
	}
	a := state.TotalAccount("emma", "banking", "paid_today", "EUR", "2026-11-30", "GB29")
	if a != "total:emma\x00banking\x00paid_today\x00EUR\x002026-11-30\x00GB29" {
		t.Errorf("TotalAccount = %q", a)
	}
	if l := state.TotalAccount("o", "p", "n", "EUR", "", strings.Repeat("x", state.MaxKeyLen)); len(l) > state.MaxKeyLen || !strings.HasPrefix(l, "total:sha256:") {
		t.Errorf("TotalAccount of a long value = %.80q", l)
	}
}
