package testclock_test

import (
	"testing"
	"time"

	"github.com/intentplane/intentplane/internal/testclock"
)

func TestClock(t *testing.T) {
	t0 := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	c := testclock.New(t0)
	if !c.Now().Equal(t0) {
		t.Fatalf("Now = %v, want %v", c.Now(), t0)
	}
	c.Advance(time.Hour)
	c.AdvanceTo(t0) // earlier: ignored
	if want := t0.Add(time.Hour); !c.Now().Equal(want) {
		t.Fatalf("after Advance and an earlier AdvanceTo: %v, want %v", c.Now(), want)
	}
	c.AdvanceTo(t0.Add(2 * time.Hour))
	if want := t0.Add(2 * time.Hour); !c.Now().Equal(want) {
		t.Fatalf("after AdvanceTo: %v, want %v", c.Now(), want)
	}
}
