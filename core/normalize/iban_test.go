package normalize_test

import (
	"fmt"
	"math/big"
	"strconv"
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

		// Separators: spaces of category Zs, hyphens between groups.
		{name: "no-break spaces", in: "DE89\u00a03704\u00a00044\u00a00532\u00a00130\u00a000", want: "DE89370400440532013000"},
		{name: "narrow no-break spaces", in: "DE89\u202f3704\u202f0044\u202f0532\u202f0130\u202f00", want: "DE89370400440532013000"},
		{name: "thin spaces", in: "FR14\u20092004\u20091010\u20090505\u20090001\u20093M02\u2009606", want: "FR1420041010050500013M02606"},
		{name: "figure and ideographic spaces", in: "\u3000GB29\u2007NWBK\u20076016\u20071331\u20079268\u200719\u3000", want: "GB29NWBK60161331926819"},
		{name: "mixed separators", in: "IBAN:\u00a0DE89 3704\u20090044-0532\u202f0130-00", want: "DE89370400440532013000"},
		{name: "hyphens", in: "DE89-3704-0044-0532-0130-00", want: "DE89370400440532013000"},
		{name: "hyphens lower case", in: "gb29-nwbk-6016-1331-9268-19", want: "GB29NWBK60161331926819"},
		{name: "IBAN prefix glued", in: "IBANDE89370400440532013000", want: "DE89370400440532013000"},

		// Characters.
		{name: "empty", in: "", reason: "is empty"},
		{name: "only spaces", in: "    ", reason: "is empty"},
		{name: "only the prefix", in: "IBAN:", reason: "is empty"},
		{name: "leading hyphen", in: "-DE89-3704-0044-0532-0130-00", reason: "contains '-' at position 1; an IBAN has only the letters A-Z and the digits 0-9, with spaces or hyphens between groups"},
		{name: "trailing hyphen", in: "DE89370400440532013000-", reason: "contains '-' at position 23"},
		{name: "double hyphen", in: "DE89--3704-0044-0532-0130-00", reason: "contains '-' at position 5"},
		{name: "hyphen next to a space", in: "DE89 -3704 0044 0532 0130 00", reason: "contains '-' at position 6"},
		{name: "hyphen after the prefix", in: "IBAN-DE89-3704-0044-0532-0130-00", want: "DE89370400440532013000"},
		{name: "en dash", in: "DE89\u20133704\u20130044\u20130532\u20130130\u201300", reason: "contains the non-ASCII character U+2013 at position 5"},
		{name: "non-breaking hyphen", in: "DE89\u20113704", reason: "U+2011 at position 5"},
		{name: "hyphen U+2010", in: "DE89\u20103704", reason: "U+2010 at position 5"},
		{name: "minus sign", in: "DE89\u22123704", reason: "U+2212 at position 5"},
		{name: "soft hyphen", in: "DE89\u00ad3704", reason: "U+00AD at position 5"},
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
		{name: "zero-width space", in: "DE89\u200b370400440532013000", reason: "U+200B (zero-width space) at position 5"},
		{name: "zero-width space after a no-break space", in: "DE89\u00a0\u200b370400440532013000", reason: "U+200B (zero-width space) at position 6"},
		{name: "word joiner", in: "DE89\u2060370400440532013000", reason: "U+2060 (word joiner) at position 5"},
		{name: "line separator", in: "DE89\u2028370400440532013000", reason: "U+2028 at position 5"},
		{name: "look-alike after separators", in: "DE89\u00a03704\u2009\u0410044", reason: "U+0410 at position 11"},
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

		// BBAN structure, checked after mod-97. Each input has check digits
		// that match, so only the structure refuses it.
		{name: "DE O for 0", in: "DE59370400440532O13000", reason: "position 17 must be a digit, got 'O'; DE IBANs have the national part 8!n10!n after the check digits"},
		{name: "DE O for 0 print format", in: "DE59 3704 0044 0532 O130 00", reason: "position 21 must be a digit, got 'O'"},
		{name: "DE O for 0 lower case", in: "de59 3704 0044 0532 o130 00", reason: "position 21 must be a digit, got 'O'"},
		{name: "DE I for 1", in: "DE25I70400440532013000", reason: "position 5 must be a digit, got 'I'"},
		{name: "GB digit for a letter in the bank code", in: "GB83NW8K60161331926819", reason: "position 7 must be a letter A-Z, got '8'"},
		{name: "GB letter in the sort code", in: "GB97NWBK6O161331926819", reason: "position 10 must be a digit, got 'O'"},
		{name: "NL 0 for O in the bank code", in: "NL09ABN00417164300", reason: "position 8 must be a letter A-Z, got '0'"},
		{name: "IT letter CIN must be a letter", in: "IT2500542811101000000123456", reason: "position 5 must be a letter A-Z, got '0'"},
		{name: "FR letter outside the account number", in: "FR382004101005050001302606M", reason: "position 27 must be a digit, got 'M'"},
	})
}

// registry is the SWIFT IBAN registry as this test knows it, written out
// again so that a change to the normalizer's table shows up here: each
// country's IBAN length.
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

// bbanFormats is each registry country's BBAN structure, from the same
// registry: the classes of the characters after the check digits.
var bbanFormats = map[string]string{
	"AD": "4!n4!n12!c",
	"AE": "3!n16!n",
	"AL": "8!n16!c",
	"AT": "5!n11!n",
	"AZ": "4!a20!c",
	"BA": "3!n3!n8!n2!n",
	"BE": "3!n7!n2!n",
	"BG": "4!a4!n2!n8!c",
	"BH": "4!a14!c",
	"BI": "5!n5!n11!n2!n",
	"BR": "8!n5!n10!n1!a1!c",
	"BY": "4!c4!n16!c",
	"CH": "5!n12!c",
	"CR": "4!n14!n",
	"CY": "3!n5!n16!c",
	"CZ": "4!n6!n10!n",
	"DE": "8!n10!n",
	"DJ": "5!n5!n11!n2!n",
	"DK": "4!n9!n1!n",
	"DO": "4!c20!n",
	"EE": "2!n14!n",
	"EG": "4!n4!n17!n",
	"ES": "4!n4!n1!n1!n10!n",
	"FI": "3!n11!n",
	"FK": "2!a12!n",
	"FO": "4!n9!n1!n",
	"FR": "5!n5!n11!c2!n",
	"GB": "4!a6!n8!n",
	"GE": "2!a16!n",
	"GI": "4!a15!c",
	"GL": "4!n9!n1!n",
	"GR": "3!n4!n16!c",
	"GT": "4!c20!c",
	"HN": "4!a20!n",
	"HR": "7!n10!n",
	"HU": "3!n4!n1!n15!n1!n",
	"IE": "4!a6!n8!n",
	"IL": "3!n3!n13!n",
	"IQ": "4!a3!n12!n",
	"IS": "4!n2!n6!n10!n",
	"IT": "1!a5!n5!n12!c",
	"JO": "4!a4!n18!c",
	"KW": "4!a22!c",
	"KZ": "3!n13!c",
	"LB": "4!n20!c",
	"LC": "4!a24!c",
	"LI": "5!n12!c",
	"LT": "5!n11!n",
	"LU": "3!n13!c",
	"LV": "4!a13!c",
	"LY": "3!n3!n15!n",
	"MC": "5!n5!n11!c2!n",
	"MD": "2!c18!c",
	"ME": "3!n13!n2!n",
	"MK": "3!n10!c2!n",
	"MN": "4!n12!n",
	"MR": "5!n5!n11!n2!n",
	"MT": "4!a5!n18!c",
	"MU": "4!a2!n2!n12!n3!n3!a",
	"NI": "4!a20!n",
	"NL": "4!a10!n",
	"NO": "4!n6!n1!n",
	"OM": "3!n16!c",
	"PK": "4!a16!c",
	"PL": "8!n16!n",
	"PS": "4!a21!c",
	"PT": "4!n4!n11!n2!n",
	"QA": "4!a21!c",
	"RO": "4!a16!c",
	"RS": "3!n13!n2!n",
	"RU": "9!n5!n15!c",
	"SA": "2!n18!c",
	"SC": "4!a2!n2!n16!n3!a",
	"SD": "2!n12!n",
	"SE": "3!n16!n1!n",
	"SI": "5!n8!n2!n",
	"SK": "4!n6!n10!n",
	"SM": "1!a5!n5!n12!c",
	"SO": "4!n3!n12!n",
	"ST": "8!n11!n2!n",
	"SV": "4!a20!n",
	"TL": "3!n14!n2!n",
	"TN": "2!n3!n13!n2!n",
	"TR": "5!n1!n16!c",
	"UA": "6!n19!c",
	"VA": "3!n15!n",
	"VG": "4!a16!n",
	"XK": "4!n10!n2!n",
	"YE": "4!a4!n18!c",
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

// bbanClasses expands a BBAN structure such as "8!n10!n" into one class
// letter per character: "nnnnnnnnnnnnnnnnnn".
func bbanClasses(t testing.TB, format string) string {
	t.Helper()
	var out strings.Builder
	for rest := format; rest != ""; {
		i := strings.IndexAny(rest, "nac")
		if i < 1 {
			t.Fatalf("BBAN format %q: no count before a class", format)
		}
		n, err := strconv.Atoi(strings.TrimSuffix(rest[:i], "!"))
		if err != nil {
			t.Fatalf("BBAN format %q: %v", format, err)
		}
		out.WriteString(strings.Repeat(rest[i:i+1], n))
		rest = rest[i+1:]
	}
	return out.String()
}

// withCheckDigits returns cc, the check digits that make mod-97 match, and
// bban.
func withCheckDigits(cc, bban string) string {
	return fmt.Sprintf("%s%02d%s", cc, 98-bigMod97(cc+"00"+bban), bban)
}

// makeIBAN returns a valid IBAN of country cc whose BBAN has the classes
// given, one per character (see bbanClasses): digits taken in turn from
// digits, letters from letters, and for class c from both, alternately.
func makeIBAN(cc, classes, digits, letters string) string {
	var bban strings.Builder
	for i, class := range classes {
		switch {
		case class == 'n', class == 'c' && i%2 == 0:
			bban.WriteByte(digits[i%len(digits)])
		default:
			bban.WriteByte(letters[i%len(letters)])
		}
	}
	return withCheckDigits(cc, bban.String())
}

func TestIBANRegistry(t *testing.T) {
	t.Parallel()
	if len(registry) < 89 || len(bbanFormats) != len(registry) {
		t.Fatalf("registry has %d countries and %d BBAN formats, want at least 89 of each", len(registry), len(bbanFormats))
	}
	for a := 'A'; a <= 'Z'; a++ {
		for b := 'A'; b <= 'Z'; b++ {
			cc := string([]rune{a, b})
			n, ok := registry[cc]
			t.Run(cc, func(t *testing.T) {
				t.Parallel()
				if !ok {
					in := withCheckDigits(cc, "012345678901234567")
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
				format := bbanFormats[cc]
				classes := bbanClasses(t, format)
				if len(classes) != n-4 {
					t.Fatalf("%s: BBAN format %s has %d characters, want %d (IBAN length %d)", cc, format, len(classes), n-4, n)
				}
				for _, seed := range [][2]string{{"0123456789", "ABCDEFGHIJKLMNOPQRSTUVWXYZ"}, {"9876543210", "ZYXWVUTSRQPONMLKJIHGFEDCBA"}, {"0", "O"}, {"1", "I"}} {
					in := makeIBAN(cc, classes, seed[0], seed[1])
					got, err := normalize.IBAN(strings.ToLower(in))
					if err != nil || got != in {
						t.Fatalf("IBAN(%q) = %q, %v; want %q", strings.ToLower(in), got, err, in)
					}
					for _, bad := range []string{in + "0", in[:len(in)-1]} {
						_, err := normalize.IBAN(bad)
						checkError(t, err, normalize.KindIBAN, bad, fmt.Sprintf("%s IBANs have %d characters, got %d", cc, n, len(bad)))
					}
					// Changing any one character for another of its kind
					// breaks mod-97 (ISO 7064 detects every such change;
					// a letter for a digit may happen to pass).
					for i := 4; i < len(in); i++ {
						c := byte('7')
						if in[i] >= 'A' {
							c = 'Q'
						}
						if in[i] == c {
							c++
						}
						bad := in[:i] + string(c) + in[i+1:]
						_, err := normalize.IBAN(bad)
						if err == nil {
							t.Fatalf("IBAN(%q) succeeded after changing character %d", bad, i+1)
						}
					}
					// A character of the wrong class is refused, naming its
					// position, even with check digits that match.
					for i, class := range classes {
						var c byte
						var want string
						switch class {
						case 'n':
							c, want = "OIZSB"[i%5], "must be a digit, got '"
						case 'a':
							c, want = "01258"[i%5], "must be a letter A-Z, got '"
						default:
							continue
						}
						bad := withCheckDigits(cc, in[4:4+i]+string(c)+in[5+i:])
						if bigMod97(bad) != 1 {
							t.Fatalf("test bug: %s does not pass mod-97", bad)
						}
						_, err := normalize.IBAN(bad)
						checkError(t, err, normalize.KindIBAN, bad, fmt.Sprintf("position %d %s%c'; %s IBANs have the national part %s", 5+i, want, c, cc, format))
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
