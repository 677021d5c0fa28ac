package normalize_test

import (
	"fmt"
	"math/big"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/normalize"
)

func TestIBAN(t *testing.T) {
	t.Parallel()
	run(t, normalize.KindIBAN, normalize.IBAN, []test{
		// Valid.
		{name: "DE electronic", in: "DE89370400440532013000", want: "DE89370400440532013000"},
		{name: "GB electronic", in: "GB29NWBK60161331926819", want: "GB29NWBK60161331926819"},
		{name: "CH electronic", in: "CH9300762011623852957", want: "CH9300762011623852957"},
		{name: "SE electronic", in: "SE3550000000054910000003", want: "SE3550000000054910000003"},
		{name: "FR with a letter in the BBAN", in: "FR1420041010050500013M02606", want: "FR1420041010050500013M02606"},
		{name: "NL", in: "NL91ABNA0417164300", want: "NL91ABNA0417164300"},
		{name: "BE shortest but one", in: "BE68539007547034", want: "BE68539007547034"},
		{name: "NO shortest", in: "NO9386011117947", want: "NO9386011117947"},
		{name: "AT", in: "AT611904300234573201", want: "AT611904300234573201"},
		{name: "ES", in: "ES9121000418450200051332", want: "ES9121000418450200051332"},
		{name: "IT", in: "IT60X0542811101000000123456", want: "IT60X0542811101000000123456"},
		{name: "print format", in: "DE89 3704 0044 0532 0130 00", want: "DE89370400440532013000"},
		{name: "odd spacing", in: "  D E89  37040044 0532013000 ", want: "DE89370400440532013000"},
		{name: "lower case", in: "gb29 nwbk 6016 1331 9268 19", want: "GB29NWBK60161331926819"},
		{name: "mixed case", in: "Gb29NwBk60161331926819", want: "GB29NWBK60161331926819"},
		{name: "IBAN prefix with space", in: "IBAN DE89 3704 0044 0532 0130 00", want: "DE89370400440532013000"},
		{name: "IBAN prefix with colon", in: "IBAN: DE89 3704 0044 0532 0130 00", want: "DE89370400440532013000"},
		{name: "IBAN prefix, colon, no space", in: "IBAN:DE89370400440532013000", want: "DE89370400440532013000"},
		{name: "iban prefix lower case", in: "iban ch93 0076 2011 6238 5295 7", want: "CH9300762011623852957"},
		{name: "IBAN prefix glued", in: "IBANDE89370400440532013000", want: "DE89370400440532013000"},

		// Characters.
		{name: "empty", in: "", reason: "is empty"},
		{name: "only spaces", in: "    ", reason: "is empty"},
		{name: "only the prefix", in: "IBAN:", reason: "is empty"},
		{name: "hyphen", in: "DE89-3704-0044-0532-0130-00", reason: "contains '-' at position 5; an IBAN has only the letters A-Z and the digits 0-9"},
		{name: "second colon", in: "IBAN::DE89370400440532013000", reason: "contains ':' at position 6"},
		{name: "colon without prefix", in: "DE:89370400440532013000", reason: "contains ':' at position 3"},
		{name: "dot", in: "DE89.370400440532013000", reason: "contains '.' at position 5"},
		{name: "tab", in: "DE89\t370400440532013000", reason: "contains the control character U+0009 (tab) at position 5"},
		{name: "newline", in: "DE89370400440532013000\n", reason: "contains the control character U+000A (line feed) at position 23"},
		{name: "NUL", in: "DE89370400440532013000\x00", reason: "U+0000 (NUL)"},
		{name: "DEL", in: "DE89370400440532013000\x7f", reason: "U+007F (delete)"},
		{name: "too long", in: strings.Repeat(" ", 120) + "DE89370400440532013000", reason: "is 142 bytes long; an IBAN has at most 34 characters"},

		// Look-alikes: refused, never folded or stripped.
		{name: "Cyrillic A", in: "\u0410T611904300234573201", reason: "contains the non-ASCII character U+0410 at position 1; look-alike characters are refused, type the IBAN in plain ASCII"},
		{name: "Cyrillic E in DE", in: "D\u0415" + "89370400440532013000", reason: "U+0415 at position 2"},
		{name: "Greek O in NO", in: "N\u039f9386011117947", reason: "U+039F at position 2"},
		{name: "Greek Omicron lower case", in: "n\u03bf9386011117947", reason: "U+03BF at position 2"},
		{name: "full-width digit", in: "DE\uff18\uff19370400440532013000", reason: "U+FF18 at position 3"},
		{name: "all full-width", in: "\uff24\uff25\uff18\uff19\uff13\uff17\uff10\uff14\uff10\uff10\uff14\uff14\uff10\uff15\uff13\uff12\uff10\uff11\uff13\uff10\uff10\uff10", reason: "U+FF24 at position 1"},
		{name: "NBSP", in: "DE89\u00a03704 0044 0532 0130 00", reason: "U+00A0 (no-break space) at position 5"},
		{name: "narrow NBSP", in: "DE89\u202f3704 0044 0532 0130 00", reason: "U+202F (narrow no-break space) at position 5"},
		{name: "zero-width space", in: "DE89\u200b370400440532013000", reason: "U+200B (zero-width space) at position 5"},
		{name: "byte order mark", in: "\ufeffDE89370400440532013000", reason: "U+FEFF (byte order mark) at position 1"},
		{name: "position counts characters", in: "DE\u00e9\u0410", reason: "U+00E9 at position 3"},
		{name: "invalid UTF-8", in: "DE89\xc3", reason: "contains the byte 0xC3, which is not valid UTF-8, at position 5"},
		{name: "Latin-1 byte", in: "DE89\xa0370400440532013000", reason: "byte 0xA0"},

		// Country.
		{name: "UK is not GB", in: "UK12345678901234567890", reason: "UK is not an IBAN country code; United Kingdom IBANs start with GB"},
		{name: "US has no IBAN", in: "US133000000121212121212", reason: "US is not a country of the IBAN registry (ISO 13616)"},
		{name: "CA has no IBAN", in: "CA133012400231215421872", reason: "CA is not a country of the IBAN registry"},
		{name: "digit country", in: "1E89370400440532013000", reason: "must start with a two-letter country code"},
		{name: "one letter", in: "D", reason: "must start with a two-letter country code"},
		{name: "prefix then nothing useful", in: "IBAN 7", reason: "must start with a two-letter country code"},

		// Length.
		{name: "GB one short", in: "GB29NWBK6016133192681", reason: "GB IBANs have 22 characters, got 21"},
		{name: "DE one long", in: "DE893704004405320130000", reason: "DE IBANs have 22 characters, got 23"},
		{name: "country only", in: "DE", reason: "DE IBANs have 22 characters, got 2"},
		{name: "CH 22", in: "CH93007620116238529570", reason: "CH IBANs have 21 characters, got 22"},

		// Check digits.
		{name: "check digits letters", in: "DEAB370400440532013000", reason: `check digits (characters 3 and 4) must be digits, got "AB"`},
		{name: "check digits 00", in: "DE00370400440532013000", reason: "check digits 00 are out of range 02 to 98"},
		{name: "check digits 01", in: "DE01370400440532013000", reason: "check digits 01 are out of range 02 to 98"},
		{name: "check digits 99", in: "DE99370400440532013000", reason: "check digits 99 are out of range 02 to 98"},
		{name: "mod-97 last digit", in: "DE89 3704 0044 0532 0130 01", reason: "check digits do not match (mod-97)"},
		{name: "mod-97 swapped digits", in: "DE89370400440532031000", reason: "check digits do not match (mod-97)"},
		{name: "mod-97 check digits", in: "DE88370400440532013000", reason: "check digits do not match (mod-97)"},
		{name: "mod-97 letter", in: "GB29NWBC60161331926819", reason: "check digits do not match (mod-97)"},
	})
}

// registry is the SWIFT IBAN registry as this test knows it, written out
// again so that a change to the normalizer's table shows up here.
var registry = map[string]int{
	"AD": 24, "AE": 23, "AL": 28, "AT": 20, "AZ": 28, "BA": 20, "BE": 16, "BG": 22,
	"BH": 22, "BI": 27, "BR": 29, "BY": 28, "CH": 21, "CR": 22, "CY": 28, "CZ": 24,
	"DE": 22, "DJ": 27, "DK": 18, "DO": 28, "EE": 20, "EG": 29, "ES": 24, "FI": 18,
	"FK": 18, "FO": 18, "FR": 27, "GB": 22, "GE": 22, "GI": 23, "GL": 18, "GR": 27,
	"GT": 28, "HN": 28, "HR": 21, "HU": 28, "IE": 22, "IL": 23, "IQ": 23, "IS": 26,
	"IT": 27, "JO": 30, "KW": 30, "KZ": 20, "LB": 28, "LC": 32, "LI": 21, "LT": 20,
	"LU": 20, "LV": 21, "LY": 25, "MC": 27, "MD": 24, "ME": 22, "MK": 19, "MN": 20,
	"MR": 27, "MT": 31, "MU": 30, "NI": 28, "NL": 18, "NO": 15, "OM": 23, "PK": 24,
	"PL": 28, "PS": 29, "PT": 25, "QA": 29, "RO": 24, "RS": 22, "RU": 33, "SA": 24,
	"SC": 31, "SD": 18, "SE": 24, "SI": 19, "SK": 24, "SM": 27, "SO": 23, "ST": 25,
	"SV": 28, "TL": 23, "TN": 24, "TR": 26, "UA": 29, "VA": 22, "VG": 24, "XK": 20,
	"YE": 30,
}

// bigMod97 is the ISO 7064 MOD 97-10 remainder computed the obvious way,
// with a big integer, to cross-check the normalizer's piecewise computation.
func bigMod97(iban string) int64 {
	var digits strings.Builder
	for _, c := range iban[4:] + iban[:4] {
		if c >= 'A' && c <= 'Z' {
			fmt.Fprintf(&digits, "%d", c-'A'+10)
		} else {
			digits.WriteRune(c)
		}
	}
	n, ok := new(big.Int).SetString(digits.String(), 10)
	if !ok {
		panic("bigMod97: not a number: " + digits.String())
	}
	return new(big.Int).Mod(n, big.NewInt(97)).Int64()
}

// makeIBAN returns a valid IBAN of country cc with n characters in all, its
// BBAN made of letters and digits taken from seed.
func makeIBAN(cc string, n int, seed string) string {
	var bban strings.Builder
	for i := 0; bban.Len() < n-4; i++ {
		bban.WriteByte(seed[i%len(seed)])
	}
	check := 98 - bigMod97(cc+"00"+bban.String())
	return fmt.Sprintf("%s%02d%s", cc, check, bban.String())
}

func TestIBANRegistry(t *testing.T) {
	t.Parallel()
	if len(registry) < 89 {
		t.Fatalf("registry has %d countries, want at least 89", len(registry))
	}
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			cc := string([]rune{a, b})
			n, ok := registry[cc]
			t.Run(cc, func(t *testing.T) {
				t.Parallel()
				if !ok {
					in := makeIBAN(cc, 22, "0123456789")
					_, err := normalize.IBAN(in)
					reason := cc + " is not a country of the IBAN registry"
					if cc == "UK" {
						reason = "UK is not an IBAN country code"
					}
					if err == nil {
						t.Fatalf("IBAN(%q) succeeded; %s", in, reason)
					}
					checkError(t, err, normalize.KindIBAN, in, reason)
					return
				}
				for _, seed := range []string{"0123456789", "9876543210ABCDEFGHIJKLMNOPQRSTUVWXYZ", "Z"} {
					in := makeIBAN(cc, n, seed)
					got, err := normalize.IBAN(strings.ToLower(in))
					if err != nil || got != in {
						t.Fatalf("IBAN(%q) = %q, %v; want %q", strings.ToLower(in), got, err, in)
					}
					for _, bad := range []string{in + "0", in[:len(in)-1]} {
						_, err := normalize.IBAN(bad)
						checkError(t, err, normalize.KindIBAN, bad, fmt.Sprintf("%s IBANs have %d characters, got %d", cc, n, len(bad)))
					}
					// Changing any one character breaks mod-97.
					for i := 4; i < len(in); i++ {
						c := byte('7')
						if in[i] == c {
							c = '8'
						}
						bad := in[:i] + string(c) + in[i+1:]
						_, err := normalize.IBAN(bad)
						if err == nil {
							t.Fatalf("IBAN(%q) succeeded after changing character %d", bad, i+1)
						}
					}
				}
			})
		}
	}
}

func TestMod97MatchesBigInt(t *testing.T) {
	t.Parallel()
	for _, in := range []string{
		"DE89370400440532013000", "GB29NWBK60161331926819", "CH9300762011623852957",
		"SE3550000000054910000003", "LC55HEMM000100010012001200023015", "RU0304452522540817810538091310419",
	} {
		t.Run(in, func(t *testing.T) {
			t.Parallel()
			if r := bigMod97(in); r != 1 {
				t.Fatalf("big mod 97 of %s = %d, want 1", in, r)
			}
			if _, err := normalize.IBAN(in); err != nil {
				t.Fatalf("IBAN(%q): %v", in, err)
			}
		})
	}
}

func TestFormatIBAN(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, in, want string
	}{
		{name: "DE", in: "DE89370400440532013000", want: "DE89 3704 0044 0532 0130 00"},
		{name: "CH odd group", in: "CH9300762011623852957", want: "CH93 0076 2011 6238 5295 7"},
		{name: "NO", in: "NO9386011117947", want: "NO93 8601 1117 947"},
		{name: "BE exact groups", in: "BE68539007547034", want: "BE68 5390 0754 7034"},
		{name: "normalizes first", in: "iban: gb29nwbk 60161331926819", want: "GB29 NWBK 6016 1331 9268 19"},
		{name: "already formatted", in: "DE89 3704 0044 0532 0130 00", want: "DE89 3704 0044 0532 0130 00"},
		{name: "invalid unchanged", in: "DE89370400440532013001", want: "DE89370400440532013001"},
		{name: "look-alike unchanged", in: "\u0410T611904300234573201", want: "\u0410T611904300234573201"},
		{name: "empty", in: "", want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := normalize.FormatIBAN(tt.in); got != tt.want {
				t.Errorf("FormatIBAN(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func BenchmarkIBAN(b *testing.B) {
	for _, in := range []string{
		"DE89370400440532013000",
		"IBAN: DE89 3704 0044 0532 0130 00",
		"LC55HEMM000100010012001200023015",
	} {
		b.Run(in, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := normalize.IBAN(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkFormatIBAN(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		_ = normalize.FormatIBAN("DE89370400440532013000")
	}
}
