package approvals

import (
	"sync"
	"time"
)

// Backoff bounds failed logins: after the n-th consecutive failure from a
// client IP address, or for an approver from that address, further
// attempts from it are refused, without checking the passcode, for
// Base × 2^(n-1), at most Max. Failures are never counted for an approver
// alone, so that one process failing sign-ins cannot lock an approver out
// from everywhere. A successful login clears the address's failures.
type Backoff struct {
	// Base is the lock-out after the first failure; zero means 1s.
	Base time.Duration
	// Max caps the lock-out; zero means 15 minutes.
	Max time.Duration
}

// limiter counts failed logins by key ("ip:10.0.0.1",
// "approver:alice@10.0.0.1").
// It is safe for concurrent use.
type limiter struct {
	base, max time.Duration

	mu      sync.Mutex
	strikes map[string]*strike
}

type strike struct {
	fails int
	until time.Time // attempts are refused before until
}

// maxStrikes bounds the limiter's memory; past it, entries whose lock-out
// ended are forgotten.
const maxStrikes = 10000

func newLimiter(b Backoff) *limiter {
	if b.Base <= 0 {
		b.Base = time.Second
	}
	if b.Max <= 0 {
		b.Max = 15 * time.Minute
	}
	return &limiter{base: b.Base, max: b.Max, strikes: map[string]*strike{}}
}

// wait returns how long attempts for any of keys are still refused at now;
// zero means an attempt may go ahead.
func (l *limiter) wait(now time.Time, keys ...string) time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d time.Duration
	for _, k := range keys {
		if s := l.strikes[k]; s != nil && now.Before(s.until) {
			d = max(d, s.until.Sub(now))
		}
	}
	return d
}

// fail records a failed attempt for each of keys at now.
func (l *limiter) fail(now time.Time, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.strikes) >= maxStrikes {
		for k, s := range l.strikes {
			if now.After(s.until.Add(l.max)) {
				delete(l.strikes, k)
			}
		}
	}
	for _, k := range keys {
		s := l.strikes[k]
		if s == nil {
			if len(l.strikes) >= 2*maxStrikes {
				continue // under a flood, the other keys still hold
			}
			s = &strike{}
			l.strikes[k] = s
		}
		s.fails++
		d := l.base
		for i := 1; i < s.fails && d < l.max; i++ {
			d *= 2
		}
		s.until = now.Add(min(d, l.max))
	}
}

// reset clears the failures of keys.
func (l *limiter) reset(keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, k := range keys {
		delete(l.strikes, k)
	}
}
