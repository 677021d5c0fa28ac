package normalize

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxReference is the longest vendor reference, in characters, that
// DuplicateKey reads.
const maxReference = 128

// DuplicateKey returns the duplicate key of a vendor's bill reference (in
// Odoo, account.move's ref: the number the vendor printed on its invoice):
// two references with the same key may be the same invoice entered twice,
// and a payment of the second deserves suspicion. "INV-2290", "Invoice No.
// 2290", "Rechnung Nr. 2290", "2290", "INV-229O" and "inv 02290" all have
// the key "2290"; "INV-2291" has "2291".
//
// The key serves suspicion only: it tells a control to look again, or to
// ask a person, never which bill a reference names. Resolution never
// matches by this key: a bill is found by its ID, its number, or its
// reference spelled the same.
//
// The key follows what accounts-payable audits look for when they test for
// duplicate payments (see docs/controls.md for the rules and their
// sources):
//
//  1. Letters are upper-cased. Spaces (ASCII and Unicode, category Zs),
//     punctuation, the Unicode dashes (category Pd: the en dash "–" and
//     the em dash a PDF or a word processor puts for '-') and the numero
//     marks '°', 'º' and '№' separate words and are dropped.
//  2. Letters that OCR and typing confuse with digits are read as those
//     digits, in every word: O as 0, I and l as 1, S as 5, B as 8, Z as 2.
//  3. Document words and prefixes at the start are dropped, in the
//     languages vendors write invoices in: English (invoice, inv, bill,
//     no, nr, number, num, ref, reference), German (Rechnung, Rechnungsnr,
//     Rechnungsnummer, Rg, RgNr, Re, ReNr, Nr, Nummer), French (facture,
//     fact, fac, n, no, num, numéro, réf, référence), Spanish (factura,
//     fra, núm, número), Italian (fattura, fatt, ft, n, nr, numero), Dutch
//     (factuur, factuurnummer, nr, nummer) and Portuguese (fatura, nº).
//     One may also be glued to the number that follows it ("INV2290",
//     "Nr.2290").
//  4. Leading zeros of every run of digits are dropped.
//  5. What remains is joined without separators, except that two runs of
//     digits that were apart stay apart with a '.' ("2290-1" is "2290.1",
//     not "22901", which is another invoice).
//
// The key is ASCII: the digits, the letters A-Z other than those of rule 2,
// and '.'. Any other character makes the reference impossible to compare,
// and DuplicateKey refuses it rather than fold it: a Cyrillic or full-width
// look-alike, Arabic-Indic digits, an invisible character (an error
// wrapping [ErrLookAlike]); a control character, invalid UTF-8, more than
// 128 characters, or nothing but document words and separators (an error
// wrapping [ErrInvalid] only). The accented letters of the document words
// (núm, numéro, réf) are read only as part of those words. Every error is
// an [*Error] of Kind [KindReference]; its reason says the reference
// cannot be compared, so that a control asks a person instead.
func DuplicateKey(ref string) (string, error) {
	const kind = KindReference
	if n := utf8.RuneCountInString(ref); n > maxReference {
		return "", fail(kind, ref, "has %d characters; a reference has at most %d", n, maxReference)
	}
	words, err := referenceWords(ref)
	if err != nil {
		return "", err
	}
	for len(words) > 0 && documentWord(words[0]) {
		words = words[1:]
	}
	if len(words) > 0 {
		words[0] = trimDocumentPrefix(words[0])
	}
	key := joinReferenceWords(words)
	switch {
	case key == "":
		return "", fail(kind, ref, "has no number or name besides document words and separators; the reference cannot be compared")
	case strings.ContainsAny(key, "ÉÚ"):
		return "", failLookAlike(kind, ref, "has an accented letter outside the document words (num, numero, ref and their accented spellings); the reference cannot be compared, a person compares it")
	}
	return key, nil
}

// referenceWords splits ref into its words of capital letters and digits:
// letters are upper-cased and folded by confusable, é and ú kept as É and
// Ú (for the document words), and every other ASCII character, a degree
// or ordinal sign, '№', a space separator and a dash end a word. A control
// character, invalid UTF-8 or any other non-ASCII character is refused
// with an *Error of KindReference.
func referenceWords(ref string) ([]string, error) {
	const kind = KindReference
	var (
		words []string
		word  []byte
		pos   int
	)
	flush := func() {
		if len(word) > 0 {
			words = append(words, string(word))
			word = word[:0]
		}
	}
	for i, r := range ref {
		pos++
		switch {
		case r == utf8.RuneError:
			return nil, refuseRuneError(kind, ref, i, pos, "; the reference cannot be compared")
		case r < 0x20 || r == 0x7f || unicode.IsControl(r):
			return nil, fail(kind, ref, "contains the control character %s at position %d; the reference cannot be compared", describe(r), pos)
		}
		var end, ok bool
		if word, end, ok = appendReferenceRune(word, r); !ok {
			return nil, failLookAlike(kind, ref, "contains the non-ASCII character %s at position %d; the reference cannot be compared: look-alike characters are never folded, a person compares it", describe(r), pos)
		}
		if end {
			flush()
		}
	}
	flush()
	return words, nil
}

// appendReferenceRune appends r, a printable character of a reference,
// to word as referenceWords keeps it (upper-cased, folded by confusable;
// é and ú as É and Ú), or reports that it ends the word (end), or that it
// is refused (not ok).
func appendReferenceRune(word []byte, r rune) (_ []byte, end, ok bool) {
	switch {
	case 'a' <= r && r <= 'z':
		return append(word, confusable(byte(r)-('a'-'A'))), false, true
	case 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return append(word, confusable(byte(r))), false, true
	case r < utf8.RuneSelf, r == '°', r == 'º', r == '№', unicode.Is(unicode.Zs, r), unicode.Is(unicode.Pd, r):
		return word, true, true
	case r == 'é' || r == 'É':
		return append(word, "É"...), false, true
	case r == 'ú' || r == 'Ú':
		return append(word, "Ú"...), false, true
	}
	return word, false, false
}

// joinReferenceWords concatenates the words of a reference into its key:
// leading zeros of every run of digits are dropped (a run of zeros keeps
// its last), and a '.' separates two words when the first ends and the
// second starts with a digit, so "12 3" and "1 23" stay apart.
func joinReferenceWords(words []string) string {
	var b strings.Builder
	for i, w := range words {
		if i > 0 && isDigit(words[i-1][len(words[i-1])-1]) && isDigit(w[0]) {
			b.WriteByte('.')
		}
		lead := true // at the start of a run of digits
		for j := 0; j < len(w); j++ {
			c := w[j]
			switch {
			case !isDigit(c):
				lead = true
			case c == '0' && lead && j+1 < len(w) && isDigit(w[j+1]):
				continue // a leading zero, not the run's last digit
			default:
				lead = false
			}
			b.WriteByte(c)
		}
	}
	return b.String()
}

// confusable returns the digit that OCR and typing confuse with the
// upper-case letter c, or c itself.
func confusable(c byte) byte {
	switch c {
	case 'O':
		return '0'
	case 'I', 'L':
		return '1'
	case 'S':
		return '5'
	case 'B':
		return '8'
	case 'Z':
		return '2'
	}
	return c
}

// documentWords are the words and abbreviations that name a document or a
// number in front of an invoice number, upper-cased and with the letters
// of rule 2 of DuplicateKey read as digits (INVOICE is 1NV01CE, NO is N0).
// Write a new word as vendors print it; confusableWord maps it.
var documentWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		INVOICE INV BILL NO NR NUMBER NUM REF REFERENCE
		RECHNUNG RECHNUNGSNR RECHNUNGSNUMMER RG RGNR RE RENR NUMMER
		FACTURE FACT FAC N NUMERO NUMÉRO RÉF RÉFÉRENCE
		FACTURA FRA NÚM NÚMERO
		FATTURA FATT FT
		FACTUUR FACTUURNUMMER
		FATURA`) {
		m[confusableWord(w)] = true
	}
	return m
}()

// confusableWord maps every letter of the upper-case word w with
// confusable.
func confusableWord(w string) string {
	b := []byte(w)
	for i, c := range b {
		b[i] = confusable(c)
	}
	return string(b)
}

// documentWord reports whether w, upper-cased and mapped, is a document
// word.
func documentWord(w string) bool { return documentWords[w] }

// trimDocumentPrefix drops from w the longest document word that is
// followed by a digit: "1NV2290" (INV2290) becomes "2290".
func trimDocumentPrefix(w string) string {
	for n := len(w) - 1; n > 0; n-- {
		if isDigit(w[n]) && documentWords[w[:n]] {
			return w[n:]
		}
	}
	return w
}
