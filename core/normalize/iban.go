package normalize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxInput is the longest input, in bytes, that IBAN and AccountNumber read.
// The longest IBAN in print format with an "IBAN: " prefix is 6+34+8 = 48
// bytes; the rest is room for extra spaces.
const maxInput = 128

// IBAN normalizes an International Bank Account Number (ISO 13616) to its
// electronic format: no separators, letters upper-cased, such as
// "DE89370400440532013000".
//
// IBAN removes separators and an optional leading "IBAN" prefix (any case,
// optionally followed by ':'), upper-cases ASCII letters, and then checks
// that:
//
//   - only the letters A-Z and the digits 0-9 remain;
//   - the first two letters are a country of the SWIFT IBAN registry, so
//     "UK..." (the United Kingdom is GB) and "US..." (no IBAN) are refused;
//   - the length is the registry's length for that country;
//   - the check digits (characters 3 and 4) are 02 to 98 and the whole IBAN
//     is 1 modulo 97 (ISO 7064 MOD 97-10);
//   - every character of the national part (BBAN) is of the class the
//     registry's BBAN structure gives for its position: a digit, a letter,
//     or either ("8!n10!n" for Germany: 18 digits). A German IBAN with an 'O'
//     for a '0' is refused even when its check digits happen to match.
//
// Separators are the characters people and documents put between the
// groups of an IBAN: spaces of the Unicode category Zs (the ASCII space,
// the no-break space U+00A0, the thin space U+2009, the narrow no-break
// space U+202F, ...), which PDFs and locale-formatted pages produce, and an
// ASCII hyphen '-' with a letter or digit on each side ("DE89-3704-...").
// Any other character is refused, never stripped or folded: a tab or
// newline, a zero-width space, a dash other than the ASCII hyphen, and any
// other non-ASCII character such as a full-width digit '１', a Cyrillic 'А'
// (U+0410) or a Greek 'Ο'.
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindIBAN]. Its reason names what is wrong and where, counting characters
// of the input from 1, as in "position 9 must be a digit, got 'O'".
func IBAN(s string) (string, error) {
	var buf [maxInput]byte
	b, off, _, err := compact(KindIBAN, s, buf[:0])
	if err != nil {
		return "", err
	}
	if err := checkIBAN(KindIBAN, s, b, off); err != nil {
		return "", err
	}
	return string(b), nil
}

// FormatIBAN returns s in the IBAN print format, for display: the electronic
// format in groups of 4 characters separated by one space, such as
// "DE89 3704 0044 0532 0130 00". It normalizes s with [IBAN] first; if s is
// not a valid IBAN, FormatIBAN returns s unchanged, so an invalid value is
// never dressed up as a valid one.
func FormatIBAN(s string) string {
	e, err := IBAN(s)
	if err != nil {
		return s
	}
	var b strings.Builder
	b.Grow(len(e) + len(e)/4)
	for i := 0; i < len(e); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(e[i:min(i+4, len(e))])
	}
	return b.String()
}

// compact appends s to dst without separators (see [IBAN]) and with ASCII
// letters upper-cased, then drops a leading "IBAN" or "IBAN:". It returns
// the result, how many compacted bytes the dropped prefix had (so that byte
// j of the result is byte off+j of the compacted s, whose position in s
// position gives), and whether there was a prefix. It refuses
// control characters, non-ASCII characters other than separators, and input
// longer than maxInput bytes.
func compact(kind, s string, dst []byte) (b []byte, off int, prefixed bool, err error) {
	if len(s) > maxInput {
		return nil, 0, false, fail(kind, s, "is %d bytes long; an %s has at most 34 characters", len(s), noun(kind))
	}
	b = dst
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case isUpper(c) || isDigit(c):
		case isLower(c):
			c -= 'a' - 'A'
		case c == ' ':
			continue
		case c >= utf8.RuneSelf || c == '-':
			if n := separator(s, i, "-"); n > 0 {
				i += n - 1
				continue
			}
			if c != '-' {
				return nil, 0, false, refuseAt(kind, s, i)
			}
		case c < 0x20 || c == 0x7f:
			return nil, 0, false, refuseAt(kind, s, i)
		}
		b = append(b, c)
	}
	off = ibanPrefix(b)
	return b[off:], off, off > 0, nil
}

// ibanPrefix is the length of a leading "IBAN" or "IBAN:" of the
// compacted b, or 0.
func ibanPrefix(b []byte) int {
	if len(b) < 4 || string(b[:4]) != "IBAN" {
		return 0
	}
	if len(b) > 4 && b[4] == ':' {
		return 5
	}
	return 4
}

// separator returns the length in bytes of the separator that starts at
// s[i], or 0 if none does: an ASCII space, a Unicode space separator
// (category Zs), or one of the ASCII characters between (such as "-") with
// an ASCII letter or digit on each side.
func separator(s string, i int, between string) int {
	switch c := s[i]; {
	case c == ' ':
		return 1
	case c < utf8.RuneSelf:
		if strings.IndexByte(between, c) >= 0 && i > 0 && i+1 < len(s) && isAlnum(s[i-1]) && isAlnum(s[i+1]) {
			return 1
		}
		return 0
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	if r != utf8.RuneError && unicode.Is(unicode.Zs, r) {
		return n
	}
	return 0
}

// position returns the 1-based position, in characters, in s of the k-th
// (from 0) byte that is not part of a separator (as separator finds them
// with between): where compact's output byte k came from. Every byte of s
// but its separators is ASCII.
func position(s string, k int, between string) int {
	p := 1
	for i := 0; i < len(s); p++ {
		if n := separator(s, i, between); n > 0 {
			i += n
			continue
		}
		if k == 0 {
			return p
		}
		k--
		i++
	}
	return p - 1
}

// registryCountry returns the index in ibanRegistry of the country of the
// compacted IBAN b (at least two capital letters long), or an error when
// the country is not in the registry or b's length is not its IBANs'.
func registryCountry(kind, s string, b []byte) (int, error) {
	// The error paths convert b again, so that b never escapes and the
	// caller's buffer stays on the stack.
	k := lookupIBANCountry(b[:2])
	if k < 0 {
		cc := string(b[:2])
		if cc == "UK" {
			return k, fail(kind, s, "UK is not an IBAN country code; United Kingdom IBANs start with GB")
		}
		return k, fail(kind, s, "%s is not a country of the IBAN registry (ISO 13616)", cc)
	}
	if country := ibanRegistry[k]; len(b) != country.length {
		return k, fail(kind, s, "%s IBANs have %d characters, got %d", string(b[:2]), country.length, len(b))
	}
	return k, nil
}

// checkIBAN checks the compacted IBAN b of input s; off is compact's offset.
func checkIBAN(kind, s string, b []byte, off int) error {
	for j, c := range b {
		if !isUpper(c) && !isDigit(c) {
			return fail(kind, s, "contains %s at position %d; an IBAN has only the letters A-Z and the digits 0-9, with spaces or hyphens between groups", char(c), position(s, off+j, "-"))
		}
	}
	if len(b) == 0 {
		return fail(kind, s, "is empty; an IBAN starts with a country code, such as DE89 3704 0044 0532 0130 00")
	}
	if len(b) < 2 || !isUpper(b[0]) || !isUpper(b[1]) {
		return fail(kind, s, "must start with a two-letter country code, such as DE or GB")
	}
	k, err := registryCountry(kind, s, b)
	if err != nil {
		return err
	}
	if !isDigit(b[2]) || !isDigit(b[3]) {
		return fail(kind, s, "check digits (characters 3 and 4) must be digits, got %q", string(b[2:4]))
	}
	if cd := (b[2]-'0')*10 + b[3] - '0'; cd < 2 || cd > 98 {
		return fail(kind, s, "check digits %s are out of range 02 to 98", string(b[2:4]))
	}
	if mod97(b) != 1 {
		return fail(kind, s, "check digits do not match (mod-97); the IBAN has a typo or was altered")
	}
	return checkBBAN(kind, s, b, off, k)
}

// checkBBAN checks each character of the national part b[4:] of the IBAN b
// (compacted from s, with compact's offset off) against the BBAN structure
// of ibanRegistry[k], such as "8!n10!n". The caller has checked that b has
// the registry's length and only the characters A-Z and 0-9, so only the
// classes n and a can fail.
func checkBBAN(kind, s string, b []byte, off, k int) error {
	for j, class := range []byte(ibanClasses[k]) {
		c := b[4+j]
		var want string
		switch {
		case class == 'n' && !isDigit(c):
			want = "a digit"
		case class == 'a' && !isUpper(c):
			want = "a letter A-Z"
		default:
			continue
		}
		return fail(kind, s, "position %d must be %s, got %s; %s IBANs have the national part %s after the check digits (n: digit, a: letter, c: letter or digit)",
			position(s, off+4+j, "-"), want, char(c), string(b[:2]), ibanRegistry[k].bban)
	}
	return nil
}

// mod97 returns the ISO 7064 MOD 97-10 remainder of the IBAN b (upper-case
// letters and digits only): b with its first four characters moved to the
// end, letters replaced by 10 to 35, read as a decimal number, modulo 97. It
// needs no big integers: it reads the number into a uint64 and reduces it
// modulo 97 only when the next digits could overflow (at most twice for an
// IBAN of 34 characters), since (a·10^k + d) mod 97 = ((a mod 97)·10^k + d)
// mod 97.
func mod97(b []byte) uint32 {
	var r uint64
	step := func(c byte) {
		if r >= 1<<56 { // r·100 + 35 must stay below 2^64
			r %= 97
		}
		if isDigit(c) {
			r = r*10 + uint64(c-'0')
		} else {
			r = r*100 + uint64(c-'A'+10)
		}
	}
	for _, c := range b[4:] {
		step(c)
	}
	for _, c := range b[:4] {
		step(c)
	}
	return uint32(r % 97)
}
