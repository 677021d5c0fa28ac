// Package testclock is the one test clock of the module: it stands still
// until a test moves it, so that a test fixing a date gives the code under
// test that date as "now" (see clock_test.go at the module's root: no
// test may depend on the day it runs). For tests and test helpers only.
package testclock

import (
	"sync"
	"time"
)

// Clock is a settable clock, safe for concurrent use. Its Now method is
// the func() time.Time the module's components take as their clock.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// New returns a clock standing at now.
func New(now time.Time) *Clock { return &Clock{now: now} }

// Now returns the clock's time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d (backward when d is negative).
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// AdvanceTo moves the clock to at if at is later; it never goes back.
func (c *Clock) AdvanceTo(at time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if at.After(c.now) {
		c.now = at
	}
}
