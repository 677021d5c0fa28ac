package normalize_test

import (
	"errors"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/normalize"
)

// seeds are inputs every fuzz target starts from.
var seeds = []string{
	"", " ", "IBAN", "IBAN:", "iban: de89 3704 0044 0532 0130 00",
	"DE89370400440532013000", "DE89 3704 0044 0532 0130 01", "GB29NWBK60161331926819",
	"CH9300762011623852957", "SE3550000000054910000003", "UK12345678901234567890",
	"US122000000121212121212", "CA133012400231215421872", "IB AN12345678",
	"\u0410T611904300234573201", "DE\uff18\uff19370400440532013000", "DE89\u00a03704",
	"DE89\u200b3704", "DE89\t3704", "\xff",
	"ap@acme.example", "Mark.Black@Gmail.COM", "Bob <bob@example.com>", `"a b"@x.com`,
	"p\u0430yments@acme.example", "a@192.0.2.1", "a@xn--pple-43d.com", "a..b@c.d",
	"INV-2290", "P-1001", "7", "../x", "res.partner:42", "INV\u20132290",
	"DE89\u00a03704\u20090044\u202f0532 0130 00", "DE89-3704-0044-0532-0130-00", "DE59370400440532O13000",
	"-DE89", "DE89--3704", "\u3000", "US12-2000\u00a00001",
}

// fuzz checks the properties every normalizer has: it does not panic; it
// returns either a value or an *Error wrapping ErrInvalid, never both; its
// output is printable ASCII and normalizes to itself; and any input with a
// non-ASCII character is refused, unless separators is true and the
// character is a space separator (Unicode category Zs).
func fuzz(f *testing.F, kind string, norm func(string) (string, error), separators bool, check func(t *testing.T, in, out string)) {
	for _, s := range seeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := norm(in)
		if err != nil {
			if out != "" {
				t.Fatalf("%s(%q) = %q with error %v", kind, in, out, err)
			}
			var e *normalize.Error
			if !errors.Is(err, normalize.ErrInvalid) || !errors.As(err, &e) || e.Kind != kind || e.Reason == "" {
				t.Fatalf("%s(%q): error %#v is not an *Error of kind %q wrapping ErrInvalid", kind, in, err, kind)
			}
			for _, c := range []byte(err.Error()) {
				if c >= 0x80 {
					t.Fatalf("%s(%q): error message %q is not ASCII", kind, in, err.Error())
				}
			}
			return
		}
		for i, r := range in {
			if r >= 0x80 && !(separators && unicode.Is(unicode.Zs, r)) {
				t.Fatalf("%s(%q) = %q, want an error: %U at byte %d is not ASCII", kind, in, out, r, i)
			}
		}
		if out == "" {
			t.Fatalf("%s(%q) = \"\" without an error", kind, in)
		}
		for i := 0; i < len(out); i++ {
			if c := out[i]; c < 0x20 || c >= 0x7f {
				t.Fatalf("%s(%q) = %q: byte 0x%02X is not printable ASCII", kind, in, out, c)
			}
		}
		again, err := norm(out)
		if err != nil || again != out {
			t.Fatalf("%s(%q) = %q, but %s(%q) = %q, %v: not idempotent", kind, in, out, kind, out, again, err)
		}
		if check != nil {
			check(t, in, out)
		}
	})
}

func FuzzIBAN(f *testing.F) {
	fuzz(f, normalize.KindIBAN, normalize.IBAN, true, func(t *testing.T, in, out string) {
		if r := bigMod97(out); r != 1 {
			t.Fatalf("IBAN(%q) = %q, whose mod-97 is %d, want 1", in, out, r)
		}
		if n, ok := registry[out[:2]]; !ok || len(out) != n {
			t.Fatalf("IBAN(%q) = %q: not a registry country and length", in, out)
		}
		for i, class := range bbanClasses(t, bbanFormats[out[:2]]) {
			if c := out[4+i]; class == 'n' && (c < '0' || c > '9') || class == 'a' && (c < 'A' || c > 'Z') {
				t.Fatalf("IBAN(%q) = %q: character %d is %q, not of class %c", in, out, 5+i, c, class)
			}
		}
		if got, err := normalize.AccountNumber(in); err != nil || got != out {
			t.Fatalf("AccountNumber(%q) = %q, %v; want the IBAN %q", in, got, err, out)
		}
	})
}

func FuzzAccountNumber(f *testing.F) {
	fuzz(f, normalize.KindAccountNumber, normalize.AccountNumber, true, func(t *testing.T, in, out string) {
		if _, ok := registry[out[:2]]; ok {
			if r := bigMod97(out); r != 1 {
				t.Fatalf("AccountNumber(%q) = %q, a registry country whose mod-97 is %d, want 1", in, out, r)
			}
		}
	})
}

func FuzzEmail(f *testing.F) {
	fuzz(f, normalize.KindEmail, normalize.Email, false, nil)
}

func FuzzIdentifier(f *testing.F) {
	fuzz(f, normalize.KindIdentifier, normalize.Identifier, false, nil)
}

func FuzzName(f *testing.F) {
	for _, s := range append(seeds, "Müller GmbH", "\u212Awik Supplies", "ООО Ромашка", "\u0410CME", "Soci\u0065\u0301t\u00e9", "ACME 株式会社", "  a \t b ") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out, err := normalize.Name(in)
		if err != nil {
			var e *normalize.Error
			if out != "" || !errors.Is(err, normalize.ErrInvalid) || !errors.As(err, &e) || e.Kind != normalize.KindName || e.Reason == "" {
				t.Fatalf("Name(%q) = %q, %#v: want \"\" and an *Error of kind name wrapping ErrInvalid", in, out, err)
			}
			for _, c := range []byte(err.Error()) {
				if c >= 0x80 {
					t.Fatalf("Name(%q): error message %q is not ASCII", in, err.Error())
				}
			}
			return
		}
		if strings.ContainsRune(in, '\u212A') || strings.ContainsRune(in, '\u017F') {
			t.Fatalf("Name(%q) = %q: the Kelvin sign and the long s must be refused", in, out)
		}
		if out == "" || out[0] == ' ' || out[len(out)-1] == ' ' || strings.Contains(out, "  ") {
			t.Fatalf("Name(%q) = %q: white space not collapsed", in, out)
		}
		for _, r := range out {
			if 'A' <= r && r <= 'Z' || r != ' ' && unicode.IsSpace(r) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.Is(unicode.Mn, r) {
				t.Fatalf("Name(%q) = %q: has %U", in, out, r)
			}
		}
		if strings.ToLower(strings.Join(strings.Fields(in), " ")) != out && !strings.ContainsFunc(in, func(r rune) bool { return r >= 0x80 }) {
			t.Fatalf("Name(%q) = %q: an ASCII name must be collapsed and lower-cased only", in, out)
		}
		if again, err := normalize.Name(out); err != nil || again != out {
			t.Fatalf("Name(%q) = %q, but Name(%q) = %q, %v: not idempotent", in, out, out, again, err)
		}
		if same, err := normalize.SameName(in, out); !same || err != nil {
			t.Fatalf("SameName(%q, %q) = %v, %v; want true", in, out, same, err)
		}
	})
}

func FuzzBIC(f *testing.F) {
	fuzz(f, normalize.KindBIC, normalize.BIC, true, func(t *testing.T, in, out string) {
		if len(out) != 8 && len(out) != 11 || strings.HasSuffix(out, "XXX") {
			t.Fatalf("BIC(%q) = %q: not 8 or 11 characters in canonical form", in, out)
		}
	})
}

func FuzzRoutingNumber(f *testing.F) {
	fuzz(f, normalize.KindRoutingNumber, normalize.RoutingNumber, true, func(t *testing.T, in, out string) {
		sum := 0
		for i, c := range []byte(out) {
			sum += int(c-'0') * []int{3, 7, 1}[i%3]
		}
		if len(out) != 9 || sum%10 != 0 {
			t.Fatalf("RoutingNumber(%q) = %q: not 9 digits with the 3-7-1 checksum", in, out)
		}
	})
}

func FuzzSortCode(f *testing.F) {
	fuzz(f, normalize.KindSortCode, normalize.SortCode, true, nil)
}

func FuzzParseAccount(f *testing.F) {
	for _, in := range [][3]string{
		{"DE89 3704 0044 0532 0130 00", "COBADEFFXXX", "DE"}, {"1234567890", "021000021", "US"},
		{"60-16-13 31926819", "", "GB"}, {"0532013000", "COBADEFF", "DE"}, {"12345O7890", "021000021", "US"},
		{"19-2000145399/0800", "GIBACZPX", ""}, {"31926819", "60-16-13", "je"}, {"", "", ""},
		{"1234\u00a05678", "0210\u20090002\u20091", "US"}, {"\u0410T611904300234573201", "", ""},
	} {
		f.Add(in[0], in[1], in[2])
	}
	f.Fuzz(func(t *testing.T, number, bank, country string) {
		a, err := normalize.ParseAccount(number, bank, country)
		if err != nil {
			var e *normalize.Error
			if a != (normalize.Account{}) || !errors.Is(err, normalize.ErrInvalid) || !errors.As(err, &e) || e.Reason == "" {
				t.Fatalf("ParseAccount(%q, %q, %q) = %+v, %#v", number, bank, country, a, err)
			}
			for _, c := range []byte(err.Error()) {
				if c >= 0x80 {
					t.Fatalf("ParseAccount(%q, %q, %q): error message %q is not ASCII", number, bank, country, err.Error())
				}
			}
			return
		}
		for _, r := range number + bank + country {
			if r >= 0x80 && !unicode.Is(unicode.Zs, r) {
				t.Fatalf("ParseAccount(%q, %q, %q) = %+v: %U must be refused", number, bank, country, a, r)
			}
		}
		key := a.Key()
		if key == "" || len(key) > 64 || strings.Trim(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789:") != "" {
			t.Fatalf("ParseAccount(%q, %q, %q) = %+v: key %q is not canonical", number, bank, country, a, key)
		}
		b, err := normalize.ParseAccountKey(key)
		if err != nil || b.Key() != key || b.Type != a.Type {
			t.Fatalf("ParseAccountKey(%q) = %+v, %v: does not round-trip", key, b, err)
		}
		if a.Type == normalize.AccountIBAN {
			if iban, err := normalize.IBAN(number); err != nil || iban != key {
				t.Fatalf("ParseAccount(%q, ...) = IBAN %q, but IBAN(%q) = %q, %v", number, key, number, iban, err)
			}
		}
	})
}

func FuzzDuplicateKey(f *testing.F) {
	for _, s := range append(seeds, "Invoice No. 2290", "Rechnung Nr. 2290", "INV-229O", "inv 02290", "Facture n\u00b0 2290",
		"Factura n\u00fam. 2290", "2290-1", "No2290", "R\u00e9f. \u00c9-2290", "ZZ9O", "2024/INV/12", "2 290", "1.234.567", "COPY 2290", "2290-DUP", "copy of invoice 2290") {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ref string) {
		key, err := normalize.DuplicateKey(ref)
		if err != nil {
			var e *normalize.Error
			if key != "" || !errors.Is(err, normalize.ErrInvalid) || !errors.As(err, &e) || e.Kind != normalize.KindReference || !strings.Contains(e.Reason, "cannot be compared") && !strings.Contains(e.Reason, "at most") {
				t.Fatalf("DuplicateKey(%q) = %q, %#v", ref, key, err)
			}
			for _, c := range []byte(err.Error()) {
				if c >= 0x80 {
					t.Fatalf("DuplicateKey(%q): error message %q is not ASCII", ref, err.Error())
				}
			}
			return
		}
		if key == "" || key[0] == '.' || key[len(key)-1] == '.' || strings.Contains(key, "..") || strings.Trim(key, "0123456789ACDEFGHJKMNPQRTUVWXY.ÉÚ") != "" || strings.ContainsAny(key, "ÉÚ") {
			t.Fatalf("DuplicateKey(%q) = %q: not a key of digits, letters other than OILSBZ, and '.'", ref, key)
		}
		// Spellings of the same reference have the same key.
		lower := []byte(ref)
		for i, c := range lower {
			if 'A' <= c && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		for _, variant := range []string{
			string(lower),
			"Invoice No. " + ref,
			"INV-" + ref,
			strings.ReplaceAll(ref, " ", "\u00a0"),
			strings.NewReplacer("0", "O", "1", "I", "5", "S", "8", "B", "2", "Z").Replace(ref),
			ref + " (copy)", // a copy mark after the number (issue 24)
		} {
			if utf8.RuneCountInString(variant) > 128 {
				continue
			}
			if got, err := normalize.DuplicateKey(variant); err != nil || got != key {
				t.Fatalf("DuplicateKey(%q) = %q, but DuplicateKey(%q) = %q, %v", ref, key, variant, got, err)
			}
		}
	})
}
