package agentdojo

import (
	"math"
	"testing"
)

// TestWilson: the interval against values computed by hand from the
// formula (Wilson, 1927; Agresti and Coull, 1998), and its edges.
func TestWilson(t *testing.T) {
	for _, c := range []struct {
		k, n   int
		lo, hi float64
	}{
		{0, 560, 0, 0.006813},
		{560, 560, 0.993187, 1},
		{38, 40, 0.834961, 0.986179},
		{50, 100, 0.403832, 0.596168},
		{0, 0, 0, 1},
	} {
		lo, hi := Wilson(c.k, c.n)
		if math.Abs(lo-c.lo) > 1e-5 || math.Abs(hi-c.hi) > 1e-5 {
			t.Errorf("Wilson(%d, %d) = %.6f, %.6f; want %.6f, %.6f", c.k, c.n, lo, hi, c.lo, c.hi)
		}
	}
	if got, want := rate(0, 560), "0 of 560 (0.0%, 95% CI 0.0-0.7%)"; got != want {
		t.Errorf("rate(0, 560) = %q, want %q", got, want)
	}
}
