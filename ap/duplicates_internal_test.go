package ap

import (
	"math"
	"testing"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

// TestNearAmount (issue 24): totals one minor unit or at most 1% of the
// larger apart are nearly the same; nothing overflows at the limits.
func TestNearAmount(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b intent.Amount
		want bool
	}{
		{48000, 48000, true},
		{48000, 47999, true},
		{48000, 48480, true}, // 480 apart, 1% of 48480 is 484.8
		{48000, 48485, false},
		{48485, 48000, false},
		{0, 1, true},
		{0, 2, false},
		{99, 100, true},
		{98, 100, false},
		{math.MaxInt64, math.MaxInt64 - math.MaxInt64/100, true},
		{math.MaxInt64, 0, false},
		{-1, -1, true},
		{-1, 0, false},
	} {
		if got := nearAmount(tc.a, tc.b); got != tc.want {
			t.Errorf("nearAmount(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestNumbersThatLookAlike (issue 24): which pairs of references have
// numbers that look alike without one duplicate key, by kind.
func TestNumbersThatLookAlike(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b string
		want string // "number", "extended", "regrouped", "letter", or "" for none
	}{
		{"INV-2290", "2 290", "number"},
		{"INV-2290", "INV-2290 copy", "number"},
		{"INV-2290", "INV-2290A", "extended"},
		{"INV-2290", "INV-2290-R", "extended"},
		{"INV-2290", "INV-2290/2026", "extended"},
		{"INV-2290", "ACME-2290", "extended"},
		{"INV-2290", "INV-2290-1", "extended"},
		{"INV-2290", "INV-22-90", "regrouped"},
		{"INV-2290", "2-290", "regrouped"},
		{"INV-2290-1", "INV-22901", "regrouped"},
		{"INV-2290", "INV-2-290-A", "regrouped"},
		{"INV-2290", "INV-2290B", "letter"},
		{"INV-2290", "INV-22901", "letter"},
		{"INV-2290", "INV-12290", "letter"},
		{"INV-2290", "INV-22903", ""},
		{"INV-2290", "INV-2291", ""},
		{"INV-2290-1", "INV-2290-2", ""},
		{"2290/2025", "2290/2026", ""},
		{"INV-2290", "INV-229", "letter"}, // 2290 may be "INV-229O": 229 with a letter O added
	} {
		ka, err := normalize.DuplicateKey(tc.a)
		if err != nil {
			t.Fatal(err)
		}
		kb, err := normalize.DuplicateKey(tc.b)
		if err != nil {
			t.Fatal(err)
		}
		var p pairSignals
		p.compareKeys(kb, ka)
		got := ""
		switch {
		case p.number:
			got = "number"
		case p.extended:
			got = "extended"
		case p.regrouped:
			got = "regrouped"
		case p.letterAdded:
			got = "letter"
		}
		if got != tc.want {
			t.Errorf("%q (%s) and %q (%s): %q, want %q", tc.a, ka, tc.b, kb, got, tc.want)
		}
	}
}
