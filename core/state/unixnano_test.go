package state_test

import (
	"math"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/state"
)

// TestUnixNano: inside the years int64 nanoseconds hold it is
// t.UnixNano(); outside, saturated, never wrapped into the other end.
func TestUnixNano(t *testing.T) {
	now := time.Date(2026, 12, 2, 9, 0, 0, 5, time.UTC)
	for _, tt := range []struct {
		t    time.Time
		want int64
	}{
		{now, now.UnixNano()},
		{time.Unix(0, math.MaxInt64), math.MaxInt64},
		{time.Unix(0, math.MinInt64), math.MinInt64},
		{time.Date(2262, 4, 12, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{time.Date(2311, 1, 1, 0, 0, 0, 0, time.UTC), math.MaxInt64},
		{time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC), math.MinInt64},
	} {
		if got := state.UnixNano(tt.t); got != tt.want {
			t.Errorf("UnixNano(%v) = %d, want %d", tt.t, got, tt.want)
		}
	}
}
