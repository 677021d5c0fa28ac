package agentdojo

import (
	"fmt"
	"math"
)

// z95 is the standard normal quantile of 0.975: a two-sided 95% interval.
const z95 = 1.959963984540054

// Wilson returns the Wilson score interval, at 95%, of a proportion of k
// successes in n trials, as fractions in [0, 1]; for n = 0 it returns
// 0, 1. The replays are deterministic: the interval is over the sample of
// tasks (each pair, or each user task, one trial), the uncertainty of
// generalising from AgentDojo's tasks to others like them, not over
// repeated runs. Unlike the normal approximation it stays inside [0, 1]
// and is not empty at k = 0 or k = n (0 of 560 gives 0 to 0.68%).
func Wilson(k, n int) (lo, hi float64) {
	if n <= 0 {
		return 0, 1
	}
	p, nn := float64(k)/float64(n), float64(n)
	z2 := z95 * z95
	d := 1 + z2/nn
	center := (p + z2/(2*nn)) / d
	half := z95 * math.Sqrt(p*(1-p)/nn+z2/(4*nn*nn)) / d
	return math.Max(0, center-half), math.Min(1, center+half)
}

// rate formats k of n with its Wilson 95% interval in percent:
// "0 of 560 (0.0%, 95% CI 0.0-0.7%)".
func rate(k, n int) string {
	lo, hi := Wilson(k, n)
	pct := 0.0
	if n > 0 {
		pct = 100 * float64(k) / float64(n)
	}
	return fmt.Sprintf("%d of %d (%.1f%%, 95%% CI %.1f-%.1f%%)", k, n, pct, 100*lo, 100*hi)
}
