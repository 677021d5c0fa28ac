package normalize_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/normalize"
)

func TestName(t *testing.T) {
	t.Parallel()
	// lookAlike marks a reason that must also wrap ErrLookAlike.
	const lookAlike = "look-alike: "
	tests := []test{
		// Accepted: white space collapsed, ASCII letters lower-cased, the
		// rest kept as written.
		{name: "ASCII", in: "ACME Supplies", want: "acme supplies"},
		{name: "white space", in: "  ACME\t Supplies\n", want: "acme supplies"},
		{name: "no-break and thin spaces", in: "ACME\u00a0Supplies\u2009Ltd", want: "acme supplies ltd"},
		{name: "umlaut kept", in: "Müller GmbH", want: "müller gmbh"},
		{name: "capital umlaut not folded", in: "MÜLLER GMBH", want: "mÜller gmbh"},
		{name: "French", in: "Société Générale", want: "société générale"},
		{name: "sharp s", in: "Großhandel Weiß", want: "großhandel weiß"},
		{name: "Turkish dotless i", in: "Işık Tekstil", want: "işık tekstil"},
		{name: "Angstrom as a letter", in: "Ångström AB", want: "Ångström ab"},
		{name: "Russian", in: "ООО Ромашка", want: "ООО Ромашка"},
		{name: "Greek", in: "Ελληνικά Πετρέλαια", want: "Ελληνικά Πετρέλαια"},
		{name: "Japanese", in: "株式会社トヨタ", want: "株式会社トヨタ"},
		{name: "Latin with Han", in: "ACME 株式会社", want: "acme 株式会社"},
		{name: "digits and punctuation", in: "3M Co. (UK) & Sons, Ltd.", want: "3m co. (uk) & sons, ltd."},
		{name: "bill number", in: " BILL/2026/11/0001 ", want: "bill/2026/11/0001"},
		{name: "256 characters", in: strings.Repeat("é", 256), want: strings.Repeat("é", 256)},

		// Look-alikes: refused with ErrLookAlike, never folded.
		{name: "Kelvin sign", in: "\u212Awik Supplies", reason: lookAlike + "contains the compatibility character U+212A at position 1"},
		{name: "Kelvin sign inside", in: "ACME Ban\u212A", reason: lookAlike + "U+212A at position 9"},
		{name: "Angstrom sign", in: "\u212Bngstr\u00f6m AB", reason: lookAlike + "U+212B at position 1"},
		{name: "Cyrillic A among Latin", in: "\u0410CME Supplies", reason: lookAlike + "mixes Latin letters with the Cyrillic letter U+0410 at position 1"},
		{name: "Cyrillic i among Latin", in: "ACME Suppl\u0456es", reason: lookAlike + "Cyrillic letter U+0456 at position 11"},
		{name: "Cyrillic letter not alike among Latin", in: "ACME \u0416", reason: lookAlike + "Cyrillic letter U+0416"},
		{name: "Greek Omicron among Latin", in: "T\u039fTAL", reason: lookAlike + "mixes Latin letters with the Greek letter U+039F at position 2"},
		{name: "Armenian o among Latin", in: "Fo\u0585d Co", reason: lookAlike + "Armenian letter U+0585"},
		{name: "whole-script Cyrillic", in: "\u0410\u0421\u041c\u0415", reason: lookAlike + "is written in Cyrillic letters that all look like Latin ones"},
		{name: "whole-script Cyrillic lower case", in: "\u0430\u0440\u0440\u0435", reason: lookAlike + "Cyrillic letters that all look like Latin ones"},
		{name: "whole-script Greek", in: "\u039f\u03a4\u0395 S.A.", reason: lookAlike + "mixes Latin letters"},
		{name: "whole-script Greek alone", in: "\u039f\u03a4\u0395", reason: lookAlike + "Greek letters that all look like Latin ones"},
		{name: "Cherokee", in: "\u13aa\u13df\u13b7\u13ac", reason: lookAlike + "Cherokee letter U+13AA at position 1"},
		{name: "full-width letters", in: "\uff21\uff23\uff2d\uff25", reason: lookAlike + "U+FF21 at position 1"},
		{name: "full-width digit", in: "ACME \uff12", reason: lookAlike + "U+FF12 at position 6"},
		{name: "mathematical bold", in: "\U0001d400CME", reason: lookAlike + "U+1D400 at position 1"},
		{name: "Roman numeral", in: "Louis \u2164", reason: lookAlike + "U+2164 at position 7"},
		{name: "small capital", in: "\u1d00cme", reason: lookAlike + "U+1D00 at position 1"},
		{name: "IPA script a", in: "\u0251cme", reason: lookAlike + "U+0251 at position 1"},
		{name: "long s", in: "Gla\u017f", reason: lookAlike + "U+017F at position 4"},
		{name: "superscript", in: "ACME\u00b2", reason: lookAlike + "U+00B2 at position 5"},
		{name: "circled letter", in: "\u24b6CME", reason: lookAlike + "U+24B6 at position 1"},
		{name: "Arabic-Indic digit", in: "ACME \u0661", reason: lookAlike + "the non-ASCII digit U+0661 at position 6"},
		{name: "zero-width space", in: "AC\u200bME", reason: lookAlike + "the invisible character U+200B (zero-width space) at position 3"},
		{name: "soft hyphen", in: "AC\u00adME", reason: lookAlike + "invisible character U+00AD"},
		{name: "right-to-left override", in: "ACME\u202e", reason: lookAlike + "U+202E"},
		{name: "byte order mark", in: "\ufeffACME", reason: lookAlike + "U+FEFF (byte order mark) at position 1"},
		{name: "combining acute", in: "Soci\u0065\u0301t\u00e9", reason: lookAlike + "the combining mark U+0301 at position 6"},

		// Invalid.
		{name: "empty", in: "", reason: "is empty"},
		{name: "white space only", in: " \t\u00a0", reason: "is empty"},
		{name: "257 characters", in: strings.Repeat("a", 257), reason: "has 257 characters; a name has at most 256"},
		{name: "NUL", in: "ACME\x00", reason: "control character U+0000 (NUL) at position 5"},
		{name: "C1 control", in: "ACME\u0085x\u0090", reason: "control character U+0090 at position 7"},
		{name: "invalid UTF-8", in: "AC\xffME", reason: "contains the byte 0xFF, which is not valid UTF-8, at position 3"},
		{name: "replacement character", in: "M\ufffdller", reason: "replacement character U+FFFD at position 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			want, alike := strings.CutPrefix(tt.reason, lookAlike)
			row := tt
			row.reason = want
			run1(t, normalize.KindName, normalize.Name, row)
			_, err := normalize.Name(tt.in)
			if got := errors.Is(err, normalize.ErrLookAlike); got != alike {
				t.Errorf("Name(%q): errors.Is(err, ErrLookAlike) = %v, want %v (err %v)", tt.in, got, alike, err)
			}
		})
	}
}

func TestSameName(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, a, b string
		want       bool
		lookAlike  bool
		invalid    bool
	}{
		{name: "same", a: "ACME Supplies", b: "ACME Supplies", want: true},
		{name: "ASCII case and spaces", a: "ACME  Supplies ", b: "acme supplies", want: true},
		{name: "tab and no-break space", a: "ACME\tSupplies", b: "ACME\u00a0Supplies", want: true},
		{name: "different", a: "ACME Supplies", b: "ACME Supply", want: false},
		{name: "inner space matters", a: "ACME Supplies", b: "ACMESupplies", want: false},
		{name: "umlaut exact", a: "Müller GmbH", b: "müller GMBH", want: true},
		{name: "umlaut case not folded", a: "Müller GmbH", b: "MÜLLER GMBH", want: false},
		{name: "umlaut not stripped", a: "Müller GmbH", b: "Muller GmbH", want: false},
		{name: "Russian exact", a: "ООО Ромашка", b: "ООО Ромашка", want: true},
		{name: "Russian case not folded", a: "ООО Ромашка", b: "ооо ромашка", want: false},
		{name: "sharp s not expanded", a: "Weiß", b: "Weiss", want: false},

		// The regression of issue 13: strings.EqualFold("\u212Awik", "Kwik")
		// is true.
		{name: "Kelvin sign is not a K", a: "Kwik Supplies", b: "\u212Awik Supplies", lookAlike: true},
		{name: "Kelvin sign first", a: "\u212Awik Supplies", b: "Kwik Supplies", lookAlike: true},
		{name: "long s is not an s", a: "ACME \u017fupplies", b: "ACME supplies", lookAlike: true},
		{name: "Cyrillic look-alike", a: "ACME Supplies", b: "\u0410CME Supplies", lookAlike: true},
		{name: "full-width", a: "ACME", b: "\uff21\uff23\uff2d\uff25", lookAlike: true},
		{name: "invisible", a: "ACME", b: "AC\u200bME", lookAlike: true},
		{name: "empty", a: "ACME", b: " ", invalid: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := normalize.SameName(tt.a, tt.b)
			switch {
			case tt.lookAlike || tt.invalid:
				if got || err == nil || errors.Is(err, normalize.ErrLookAlike) != tt.lookAlike || !errors.Is(err, normalize.ErrInvalid) {
					t.Fatalf("SameName(%q, %q) = %v, %v; want false and an error (look-alike %v)", tt.a, tt.b, got, err, tt.lookAlike)
				}
				var e *normalize.Error
				if !errors.As(err, &e) || e.Kind != normalize.KindName {
					t.Fatalf("SameName(%q, %q): error %#v is not an *Error of kind name", tt.a, tt.b, err)
				}
			case err != nil || got != tt.want:
				t.Fatalf("SameName(%q, %q) = %v, %v; want %v", tt.a, tt.b, got, err, tt.want)
			}
		})
	}
}

func ExampleSameName() {
	fmt.Println(normalize.SameName("ACME  Supplies", "acme supplies"))
	fmt.Println(normalize.SameName("Müller GmbH", "MÜLLER GMBH"))
	same, err := normalize.SameName("Kwik Supplies", "\u212Awik Supplies") // the Kelvin sign
	fmt.Println(same, errors.Is(err, normalize.ErrLookAlike))
	fmt.Println(err)
	// Output:
	// true <nil>
	// false <nil>
	// false true
	// name: "\u212awik Supplies": contains the compatibility character U+212A at position 1; look-alike characters are refused, never folded: type the name as on file
}

func BenchmarkSameName(b *testing.B) {
	b.ReportAllocs()
	for b.Loop() {
		if same, err := normalize.SameName("ACME  Supplies GmbH", "acme supplies gmbh"); !same || err != nil {
			b.Fatal(same, err)
		}
	}
}
