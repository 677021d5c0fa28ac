package normalize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxName is the longest name, in characters, that Name accepts.
const maxName = 256

// Name normalizes a name (a vendor's, a person's, a bill's number) for an
// exact comparison: white space (tab, newline, no-break space and the other
// Unicode spaces) trimmed and collapsed to single ASCII spaces, and the
// ASCII letters A-Z lower-cased. Nothing else is changed: letters outside
// ASCII are kept as written and compared byte for byte, so "Müller GmbH"
// and "müller gmbh" have the same key, while "MÜLLER GMBH" does not match
// them ('Ü' is not folded). Name never folds compatibility or look-alike
// characters (NFKC, Unicode case folding, confusable skeletons): the Kelvin
// sign U+212A, which strings.EqualFold and strings.ToLower turn into 'k', is
// refused, not turned into a 'K'.
//
// Name refuses, with an error wrapping [ErrLookAlike], a name with a
// character that imitates another one:
//
//   - an invisible formatting character (category Cf: zero-width spaces and
//     joiners, bidirectional controls, the soft hyphen, the byte order mark);
//   - a combining mark (categories Mn, Mc, Me), since a decomposed "e" +
//     U+0301 looks like the precomposed "é" but differs from it: write
//     accented letters precomposed (NFC), as keyboards type them;
//   - a decimal digit other than 0-9 (Arabic-Indic, Devanagari, full-width
//     and mathematical digits);
//   - a compatibility form of an ASCII letter or digit: full-width and
//     half-width forms (U+FF00-U+FFEF), letter-like symbols (U+2100-U+214F,
//     among them the Kelvin sign and the Angstrom sign), number forms such as
//     Roman numerals (U+2150-U+218F), super- and subscripts, enclosed and
//     mathematical alphanumerics, small capitals and modifier letters, IPA
//     letters, the long s U+017F and the micro sign U+00B5;
//   - a letter of a script whose letters imitate Latin ones (Cyrillic,
//     Greek, Coptic, Armenian, Cherokee, Lisu) in a name that also has Latin
//     letters, such as "ACME" with a Cyrillic 'М';
//   - a name whose letters are all Cyrillic, Greek or Armenian look-alikes of
//     Latin letters, such as "АСМЕ" written in Cyrillic (a whole-script
//     look-alike), and any name in Cherokee or Lisu letters.
//
// Names in other scripts are accepted and compared exactly: "Société
// Générale", "ООО Ромашка", "Ελληνικά Πετρέλαια", "株式会社トヨタ",
// "ACME 株式会社". A name in Cyrillic or Greek capitals that all look Latin
// ("ООО ТЕХНО") is refused though legitimate: a person compares it.
//
// Name also refuses invalid UTF-8, control characters other than white
// space, an empty name and more than 256 characters, with an error wrapping
// [ErrInvalid] only. Every error is an [*Error] of Kind [KindName].
//
// The key serves an exact comparison: two names match when their keys are
// equal. Use [SameName] for that.
func Name(s string) (string, error) {
	const kind = KindName
	var (
		b       strings.Builder
		pos     int  // the position of r in s, in characters from 1
		space   bool // a space is due before the next character
		letters = nameLetters{allAlike: true}
	)
	b.Grow(len(s))
	for i, r := range s {
		pos++
		switch {
		case r == utf8.RuneError:
			return "", refuseRuneError(kind, s, i, pos, "")
		case unicode.IsSpace(r):
			space = b.Len() > 0
			continue
		case unicode.IsControl(r):
			return "", fail(kind, s, "contains the control character %s at position %d", describe(r), pos)
		}
		if why := lookAlike(r); why != "" {
			return "", failLookAlike(kind, s, "contains %s %s at position %d; look-alike characters are refused, never folded: type the name as on file", why, describe(r), pos)
		}
		if space {
			b.WriteByte(' ')
			space = false
		}
		if 'A' <= r && r <= 'Z' {
			r += 'a' - 'A'
		}
		if err := letters.add(s, r, pos); err != nil {
			return "", err
		}
		b.WriteRune(r)
	}
	n := utf8.RuneCountInString(b.String())
	switch {
	case n == 0:
		return "", fail(kind, s, "is empty")
	case n > maxName:
		return "", fail(kind, s, "has %d characters; a name has at most %d", n, maxName)
	}
	if err := letters.check(s); err != nil {
		return "", err
	}
	return b.String(), nil
}

// nameLetters records the scripts of the letters of a name, so that Name
// can refuse Latin mixed with a look-alike script and a name written
// wholly in look-alikes of Latin letters.
type nameLetters struct {
	latin    bool // a Latin letter, ASCII or not
	alien    rune // the first letter of a script with Latin look-alikes
	alienPos int  // alien's position in the name, in characters from 1
	allAlike bool // every letter is in latinLookAlikes; true before the first letter
}

// add records r, the character at position pos of the name s (after
// ASCII capitals are lowered). It refuses a Cherokee or Lisu letter at
// once, with a look-alike *Error of KindName; other characters are
// recorded and accepted.
func (l *nameLetters) add(s string, r rune, pos int) error {
	switch {
	case 'a' <= r && r <= 'z':
		l.latin, l.allAlike = true, false
	case r < utf8.RuneSelf || !unicode.IsLetter(r):
	case unicode.Is(unicode.Latin, r):
		l.latin, l.allAlike = true, false
	case imitatesLatin(r):
		if unicode.In(r, unicode.Cherokee, unicode.Lisu) {
			return failLookAlike(KindName, s, "contains the %s letter %s at position %d; the letters of this script imitate Latin ones: a person compares the name", scriptName(r), describe(r), pos)
		}
		if l.alien == 0 {
			l.alien, l.alienPos = r, pos
		}
		if !strings.ContainsRune(latinLookAlikes, r) {
			l.allAlike = false
		}
	default:
		l.allAlike = false
	}
	return nil
}

// check refuses the name s, once all its letters are added, when it
// mixes Latin letters with a script that imitates them or when all its
// letters are look-alikes of Latin ones; the error is a look-alike *Error
// of KindName naming the first such letter.
func (l *nameLetters) check(s string) error {
	switch {
	case l.alien != 0 && l.latin:
		return failLookAlike(KindName, s, "mixes Latin letters with the %s letter %s at position %d; look-alike characters are refused, never folded: type the name as on file", scriptName(l.alien), describe(l.alien), l.alienPos)
	case l.alien != 0 && l.allAlike:
		return failLookAlike(KindName, s, "is written in %s letters that all look like Latin ones, such as %s at position %d; look-alike characters are refused, never folded: a person compares the name", scriptName(l.alien), describe(l.alien), l.alienPos)
	}
	return nil
}

// SameName reports whether the names a and b are the same under [Name]:
// equal after white space is collapsed and ASCII letters are lower-cased,
// with no other folding. If either name is refused, SameName returns false
// and the error of a, or else of b; it wraps [ErrLookAlike] if the name has a
// look-alike character. "ACME  Supplies" and "acme supplies" are the same
// name; "\u212Awik" (with the Kelvin sign) and "Kwik" are not, and the first
// is refused.
func SameName(a, b string) (bool, error) {
	ka, err := Name(a)
	if err != nil {
		return false, err
	}
	kb, err := Name(b)
	if err != nil {
		return false, err
	}
	return ka == kb, nil
}

// lookAlike says why r, a character that is not white space nor a control
// character, imitates another character, or returns "" if it does not.
func lookAlike(r rune) string {
	switch {
	case r < utf8.RuneSelf:
		return ""
	case unicode.Is(unicode.Cf, r):
		return "the invisible character"
	case unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return "the combining mark"
	case unicode.Is(unicode.Nd, r):
		return "the non-ASCII digit"
	case r == 0xb5, // micro sign
		r == 0xaa, r == 0xba, // ordinal indicators
		r == 0xb2, r == 0xb3, r == 0xb9, // superscript digits
		r == 0x17f,                   // long s
		0x1c0 <= r && r <= 0x1c3,     // click letters, like l and !
		0x250 <= r && r <= 0x2ff,     // IPA extensions, modifier letters
		0x1d00 <= r && r <= 0x1dbf,   // small capitals, phonetic extensions
		0x2070 <= r && r <= 0x209f,   // super- and subscripts
		0x2100 <= r && r <= 0x218f,   // letter-like symbols, number forms
		0x2460 <= r && r <= 0x24ff,   // enclosed alphanumerics
		0xff00 <= r && r <= 0xffef,   // full-width and half-width forms
		0x1d400 <= r && r <= 0x1d7ff, // mathematical alphanumerics
		0x1f100 <= r && r <= 0x1f1ff: // enclosed alphanumeric supplement
		return "the compatibility character"
	}
	return ""
}

// imitatesLatin reports whether the letter r belongs to a script whose
// letters include look-alikes of Latin ones.
func imitatesLatin(r rune) bool {
	return unicode.In(r, unicode.Cyrillic, unicode.Greek, unicode.Coptic, unicode.Armenian, unicode.Cherokee, unicode.Lisu)
}

// latinLookAlikes are the Cyrillic, Greek and Armenian letters that look
// like a Latin letter in common fonts, after the Unicode confusables data
// (UTS #39, confusables.txt): "АСМЕ" in Cyrillic looks like "ACME".
const latinLookAlikes = "" +
	"АВЕЅІЈКМНОРСТУХҮҺӀԀԌԚԜ" + // Cyrillic capitals
	"аеѕіјорсухүһӏԁԛԝ" + // Cyrillic small letters
	"ΑΒΕΖΗΙΚΜΝΟΡΤΥΧϜϲϳ" + // Greek capitals and look-alike letters
	"ινορυ" + // Greek small letters
	"ՕՍօսհոզց" // Armenian

// scriptName names the script of a letter for a reason.
func scriptName(r rune) string {
	for _, s := range []struct {
		name  string
		table *unicode.RangeTable
	}{
		{"Cyrillic", unicode.Cyrillic}, {"Greek", unicode.Greek}, {"Coptic", unicode.Coptic},
		{"Armenian", unicode.Armenian}, {"Cherokee", unicode.Cherokee}, {"Lisu", unicode.Lisu},
	} {
		if unicode.Is(s.table, r) {
			return s.name
		}
	}
	return "non-Latin"
}
