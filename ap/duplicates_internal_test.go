package ap

import (
	"math"
	"os"
	"strconv"
	"strings"
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
		// What suspectDuplicates promises a reader that preselects: the
		// digits of one key are an unbroken run of the other's.
		if da, db := keyDigits(ka), keyDigits(kb); got != "" && !strings.Contains(da, db) && !strings.Contains(db, da) {
			t.Errorf("%q and %q look alike, but neither key's digits (%s, %s) are a run of the other's", tc.a, tc.b, da, db)
		}
	}
}

// keyDigits returns the digits of a duplicate key, in order.
func keyDigits(k string) string {
	return strings.Map(func(r rune) rune {
		if '0' <= r && r <= '9' {
			return r
		}
		return -1
	}, k)
}

// TestLookAlikeDigits checks suspectDuplicates' promise to a reader that
// preselects candidates on every two references of the labelled set
// (testdata/duplicates.tsv, issue 24): whenever two keys have the same
// number or numbers that look alike, the digits of one are an unbroken
// run of the other's.
func TestLookAlikeDigits(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/duplicates.tsv")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	var keys []string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n")[1:] {
		for _, col := range strings.Split(line, "\t")[4:6] {
			ref, err := strconv.Unquote(col)
			if err != nil {
				t.Fatal(err)
			}
			if k, err := normalize.DuplicateKey(ref); err == nil && !seen[k] {
				seen[k] = true
				keys = append(keys, k)
			}
		}
	}
	pairs := 0
	for i, a := range keys {
		for _, b := range keys[i+1:] {
			var p pairSignals
			if p.compareKeys(a, b); !p.number && !p.extended && !p.regrouped && !p.letterAdded {
				continue
			}
			pairs++
			if da, db := keyDigits(a), keyDigits(b); !strings.Contains(da, db) && !strings.Contains(db, da) {
				t.Errorf("keys %s and %s look alike, but neither's digits are a run of the other's", a, b)
			}
		}
	}
	if pairs < 100 {
		t.Errorf("only %d pairs of keys that look alike among %d keys; the check is too weak", pairs, len(keys))
	}
}
