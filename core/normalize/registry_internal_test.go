package normalize

import "testing"

// TestIBANRegistrySorted: the table is sorted by country code without
// repeats, lookupIBANCountry finds every entry, and every BBAN structure
// parses, expands, and adds up to its IBAN's length.
func TestIBANRegistrySorted(t *testing.T) {
	t.Parallel()
	for i, c := range ibanRegistry {
		if len(c.cc) != 2 || !isUpper(c.cc[0]) || !isUpper(c.cc[1]) {
			t.Errorf("entry %d: country %q is not two letters", i, c.cc)
		}
		if i > 0 && ibanRegistry[i-1].cc >= c.cc {
			t.Errorf("entry %d: %s after %s: not sorted", i, c.cc, ibanRegistry[i-1].cc)
		}
		if !isCountry(c.cc) {
			t.Errorf("%s is in the IBAN registry but not in ISO 3166", c.cc)
		}
		n := 0
		for f := c.bban; f != ""; {
			k := 0
			for f != "" && isDigit(f[0]) {
				k, f = k*10+int(f[0]-'0'), f[1:]
			}
			if k == 0 || len(f) < 2 || f[0] != '!' || (f[1] != 'n' && f[1] != 'a' && f[1] != 'c') {
				t.Fatalf("%s: BBAN structure %q does not parse", c.cc, c.bban)
			}
			n, f = n+k, f[2:]
		}
		if n+4 != c.length || len(ibanClasses[i]) != n {
			t.Errorf("%s: BBAN structure %s has %d characters (%d expanded), IBAN length %d", c.cc, c.bban, n, len(ibanClasses[i]), c.length)
		}
		if lookupIBANCountry([]byte(c.cc)) != i {
			t.Errorf("lookupIBANCountry(%s) = %d, want %d", c.cc, lookupIBANCountry([]byte(c.cc)), i)
		}
	}
}

// TestLookupIBANCountryBadBytes: any two bytes are looked up without a
// panic.
func TestLookupIBANCountryBadBytes(t *testing.T) {
	t.Parallel()
	for _, cc := range []string{"", "D", "DEU", "de", "12", "D1", "\xff\xff", "[[", "@@", "UK", "US"} {
		if k := lookupIBANCountry([]byte(cc)); k != -1 {
			t.Errorf("lookupIBANCountry(%q) = %d, want -1", cc, k)
		}
	}
}

// TestISO3166Sorted: isCountry bisects iso3166, which must be sorted pairs.
func TestISO3166Sorted(t *testing.T) {
	t.Parallel()
	if len(iso3166)%2 != 0 || len(iso3166)/2 != 250 {
		t.Fatalf("iso3166 has %d bytes, want 250 codes", len(iso3166))
	}
	for i := 2; i < len(iso3166); i += 2 {
		if iso3166[i-2:i] >= iso3166[i:i+2] {
			t.Errorf("%s after %s: not sorted", iso3166[i:i+2], iso3166[i-2:i])
		}
	}
	for _, cc := range []string{"DE", "US", "GB", "XK", "AD", "ZW"} {
		if !isCountry(cc) {
			t.Errorf("isCountry(%q) = false", cc)
		}
	}
	for _, cc := range []string{"UK", "ZZ", "XX", "EU", "", "D", "DEU"} {
		if isCountry(cc) {
			t.Errorf("isCountry(%q) = true", cc)
		}
	}
}
