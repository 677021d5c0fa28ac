package state_test

import (
	"errors"
	"strings"
	"testing"
	"time"

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

func TestParseTotalAccount(t *testing.T) {
	t.Parallel()
	a := state.TotalAccount("emma", "banking", "paid_today", "EUR", "2026-11-30", "GB29", "x\x00y")
	parts, ok := state.ParseTotalAccount(a)
	if want := []string{"emma", "banking", "paid_today", "EUR", "2026-11-30", "GB29", "x", "y"}; !ok || strings.Join(parts, "|") != strings.Join(want, "|") {
		t.Errorf("ParseTotalAccount(%q) = %q, %v", a, parts, ok)
	}
	long := state.TotalAccount("o", "p", "n", "EUR", "", strings.Repeat("x", state.MaxKeyLen))
	if parts, ok := state.ParseTotalAccount(long); !ok || len(parts) != 1 || !strings.HasPrefix(parts[0], "sha256:") {
		t.Errorf("ParseTotalAccount of a digest = %q, %v", parts, ok)
	}
	for _, bad := range []string{"m-emma", "m-emma\x00USD", "total:a\x00b", "lock:a\x00b\x00c\x00d\x00e"} {
		if _, ok := state.ParseTotalAccount(bad); ok {
			t.Errorf("ParseTotalAccount(%q) accepted", bad)
		}
	}
}

func TestSettleKey(t *testing.T) {
	t.Parallel()
	r := state.Reservation{ID: state.ReservationID(strings.Repeat("ab", 32), "pay.send", "emma"), Since: time.Unix(1, 5)}
	if got, want := state.SettleKey(r), "settle:1000000005 "+r.ID; got != want {
		t.Errorf("SettleKey = %q, want %q", got, want)
	}
	later := r
	later.Since = r.Since.Add(time.Microsecond)
	if state.SettleKey(later) == state.SettleKey(r) {
		t.Error("two reservations under one id share a settlement key")
	}
	r.ID = strings.Repeat("o", state.MaxKeyLen)
	if k := state.SettleKey(r); len(k) > state.MaxKeyLen || !strings.HasPrefix(k, "settle:sha256:") {
		t.Errorf("SettleKey of a long id = %.80q", k)
	}
	var h intent.OperationHash
	if got := state.NotExecutedKey(h); got != "notexec:"+h.String() {
		t.Errorf("NotExecutedKey = %q", got)
	}
}

func TestHeldError(t *testing.T) {
	t.Parallel()
	until := time.Date(2026, 12, 1, 23, 10, 0, 0, time.UTC)
	var err error = &state.HeldError{Until: until}
	if !errors.Is(err, state.ErrHeld) || !strings.Contains(err.Error(), "2026-12-01T23:10:00Z") {
		t.Errorf("HeldError = %v", err)
	}
	if err := (&state.HeldError{}); err.Error() != state.ErrHeld.Error() {
		t.Errorf("HeldError without expiry = %v", err)
	}
}
