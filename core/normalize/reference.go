package normalize

import (
	"errors"
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
// 2290", "Rechnung Nr. 2290", "2290", "INV-229O", "inv 02290", "2 290",
// "2,290", "COPY 2290" and "INV-2290-DUP" all have the key "2290";
// "INV-2291" has "2291", "INV-2290-1" has "2290.1".
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
//     the em dash a PDF or a word processor puts for '-'), the
//     typographic apostrophe '’' and the numero marks '°', 'º' and '№'
//     separate words and are dropped.
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
//  4. Copy marks before or after the number are dropped: the words that
//     mark an invoice sent or printed again (copy, dup, duplicate,
//     reprint, reissue, resent, resubmitted, reminder; Kopie, Duplikat,
//     Zweitschrift, Mahnung; copie, duplicata, rappel; copia, duplicado,
//     duplicato, sollecito; duplicaat, herinnering and others, copyMarks),
//     glued or not ("2290DUP", "COPY2290"), a first one with the small
//     words that join it to the document ("copy of invoice 2290").
//  5. A number written with thousands grouping is one number: words of
//     digits, the first of one to three digits and every other of exactly
//     three, each apart from the next by one space (any Zs), comma, dot or
//     apostrophe, the same throughout ("2 290", "2.290", "1'234'567").
//  6. Leading zeros of every run of digits are dropped.
//  7. What remains is joined without separators, except that two runs of
//     digits that were apart stay apart with a '.' ("2290-1" is "2290.1",
//     not "22901", which is another invoice).
//
// The key is ASCII: the digits, the letters A-Z other than those of rule 2,
// and '.'. Any other character makes the reference impossible to compare,
// and DuplicateKey refuses it rather than fold it: a Cyrillic or full-width
// look-alike, Arabic-Indic digits, an invisible character (an error
// wrapping [ErrLookAlike]); a control character, invalid UTF-8, more than
// 128 characters, or nothing but document words, copy marks and
// separators (an error wrapping [ErrInvalid] only). The accented letters
// of the document words (núm, numéro, réf) are read only as part of those
// words. Every error is an [*Error] of Kind [KindReference]; its reason
// says the reference cannot be compared, so that a control asks a person
// instead.
//
// What two references with one key share, for a reader that preselects
// candidates by their text: the key's digits (its characters 0-9, '.' and
// letters left out), in order. Every reference whose key is K holds them
// in its text in that order, each written as itself or as a letter read as
// it (rule 2: 0 as O or o; 1 as I, i, L or l; 2 as Z or z; 5 as S or s; 8
// as B or b), with anything between any two of them: leading zeros,
// separators of every kind (grouping too: "2 290"), letters. Nothing
// coarser holds: "INV-229O", "2,290", "Z29O" and "0022-90" all have a key
// whose digits are 2290, and only the first three have the key "2290"; a
// preselection that compares the reference's own digits in the ERP
// ("ref contains 2290") misses all three.
func DuplicateKey(ref string) (string, error) {
	const kind = KindReference
	if n := utf8.RuneCountInString(ref); n > maxReference {
		return "", fail(kind, ref, "has %d characters; a reference has at most %d", n, maxReference)
	}
	words, err := referenceWords(ref)
	if err != nil {
		return "", err
	}
	key := joinReferenceWords(joinGroups(trimReferenceWords(words)))
	switch {
	case key == "":
		return "", fail(kind, ref, "has no number or name besides document words, copy marks and separators; the reference cannot be compared")
	case strings.ContainsAny(key, "ÉÚ"):
		return "", failLookAlike(kind, ref, "has an accented letter outside the document words (num, numero, ref and their accented spellings); the reference cannot be compared, a person compares it")
	}
	return key, nil
}

// referenceWords splits ref into its words of capital letters and digits:
// letters are upper-cased and folded by confusable, é and ú kept as É and
// Ú (for the document words), and every other ASCII character, a degree
// or ordinal sign, '№', a space separator, a dash and the typographic
// apostrophe '’' end a word. Words of digits written as one number with
// thousands grouping can be joined (joinGroups: the words' seps record
// the separators between them). A control character, invalid UTF-8 or
// any other non-ASCII character is refused with an *Error of
// KindReference.
func referenceWords(ref string) (refWords, error) {
	const kind = KindReference
	var (
		words []string
		seps  []byte // seps[i]: the grouping separator between words[i] and words[i+1] (groupSeparator), 0 if none
		word  []byte
		sep   byte // the one grouping separator since the last word, 0 if none or several characters
		gap   int  // characters since the last word
		pos   int
	)
	for i, r := range ref {
		pos++
		switch {
		case r == utf8.RuneError:
			return refWords{}, refuseRuneError(kind, ref, i, pos, "; the reference cannot be compared")
		case r < 0x20 || r == 0x7f || unicode.IsControl(r):
			return refWords{}, fail(kind, ref, "contains the control character %s at position %d; the reference cannot be compared", describe(r), pos)
		}
		before := len(word)
		var end, ok bool
		if word, end, ok = appendReferenceRune(word, r); !ok {
			return refWords{}, failLookAlike(kind, ref, "contains the non-ASCII character %s at position %d; the reference cannot be compared: look-alike characters are never folded, a person compares it", describe(r), pos)
		}
		switch {
		case end && before > 0:
			words = append(words, string(word))
			word, sep, gap = word[:0], groupSeparator(r), 1
		case end:
			sep, gap = 0, gap+1
		case before == 0 && len(words) > 0:
			if gap != 1 {
				sep = 0
			}
			seps = append(seps, sep)
		}
	}
	if len(word) > 0 {
		words = append(words, string(word))
	}
	return refWords{words, seps}, nil
}

// refWords are the words of a reference (referenceWords) and, between
// words[i] and words[i+1], seps[i]: the one grouping separator that
// stands between them (groupSeparator), 0 if none or several characters.
type refWords struct {
	words []string
	seps  []byte
}

// drop returns w without its first word (first) or its last.
func (w refWords) drop(first bool) refWords {
	if first {
		return refWords{w.words[1:], w.seps[min(1, len(w.seps)):]}
	}
	return refWords{w.words[:len(w.words)-1], w.seps[:max(len(w.seps)-1, 0)]}
}

// groupSeparator returns the class of r as a thousands separator inside a
// number ("2 290", "2,290", "2.290", "2'290", "2’290"): ' ' for every
// space separator (the no-break and thin spaces of typeset numbers), a
// comma, a dot, or an apostrophe for the ASCII and the typographic
// apostrophes of Swiss numbers; 0 for any other character.
func groupSeparator(r rune) byte {
	switch {
	case r == ',' || r == '.' || r == '\'':
		return byte(r)
	case r == '’':
		return '\''
	case unicode.Is(unicode.Zs, r):
		return ' '
	}
	return 0
}

// joinGroups joins the words of one number written with thousands
// grouping: a maximal run of at least two words of digits, each separated
// from the next by one grouping separator of one class (seps, as
// referenceWords records them), the first of one to three digits and
// every other of exactly three ("2 290", "1.234.567"). Any other run is
// left apart: "2290 1", "2024 001" and "2 29" are not grouped numbers.
func joinGroups(w refWords) []string {
	words, seps := w.words, w.seps
	out := words[:0:0]
	for i := 0; i < len(words); {
		j := i + 1
		for j < len(words) && seps[j-1] != 0 && seps[j-1] == seps[i] && allDigits(words[j-1]) && allDigits(words[j]) {
			j++
		}
		if j-i >= 2 && grouped(words[i:j]) {
			out = append(out, strings.Join(words[i:j], ""))
		} else {
			out = append(out, words[i:j]...)
		}
		i = j
	}
	return out
}

// grouped reports whether the words of digits ws are the groups of one
// number: the first of one to three digits, the others of three.
func grouped(ws []string) bool {
	if len(ws[0]) > 3 {
		return false
	}
	for _, w := range ws[1:] {
		if len(w) != 3 {
			return false
		}
	}
	return true
}

// appendReferenceRune appends r, a printable character of a reference,
// to word as referenceWords keeps it (upper-cased, folded by confusable;
// é and ú as É and Ú), or reports that it ends the word (end), or that it
// is refused (not ok).
func appendReferenceRune(word []byte, r rune) (_ []byte, end, ok bool) {
	switch {
	case 'a' <= r && r <= 'z':
		return append(word, ConfusableDigit(byte(r)-('a'-'A'))), false, true
	case 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return append(word, ConfusableDigit(byte(r))), false, true
	case r < utf8.RuneSelf, r == '°', r == 'º', r == '№', r == '’', unicode.Is(unicode.Zs, r), unicode.Is(unicode.Pd, r):
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

// ConfusableDigit returns the digit that OCR and typing confuse with the
// upper-case letter c (O 0, I and L 1, S 5, B 8, Z 2), or c itself. The
// duplicate key of a reference and the banking pack's look-alike accounts
// read letters as digits with it.
func ConfusableDigit(c byte) byte {
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
		b[i] = ConfusableDigit(c)
	}
	return string(b)
}

// copyMarks are the words that mark an invoice sent or printed again,
// written before or after its number ("COPY 2290", "2290-DUP", "Invoice
// 2290 (reminder)"), as documentWords are kept: a copy, a duplicate, a
// reprint, a reissue or a reminder of an invoice is that invoice. Words
// that name a new document (a revision, a credit note, an instalment)
// are not marks: those are other invoices, or the same only maybe, which
// the duplicate control asks a person about (extends, in package ap).
var copyMarks = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
		COPY DUP DUPL DUPLICATE REPRINT REPRINTED RESENT RESEND RESUBMITTED RESUBMISSION REISSUE REISSUED REMINDER
		KOPIE DUPLIKAT ZWEITSCHRIFT ABSCHRIFT MAHNUNG ERINNERUNG ZAHLUNGSERINNERUNG
		COPIE DUPLICATA RAPPEL RELANCE
		COPIA DUPLICADO RECORDATORIO
		DUPLICATO SOLLECITO
		DUPLICAAT HERINNERING AANMANING
		LEMBRETE`) {
		m[confusableWord(w)] = true
	}
	return m
}()

// copyFillers are the small words that join a copy mark written first to
// the document it marks: "copy of invoice 2290", "copie de la facture
// 2290". They are dropped only after a copy mark.
var copyFillers = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`OF THE DE LA DU DER DES VON DI DEL DELLA VAN HET DA DO`) {
		m[confusableWord(w)] = true
	}
	return m
}()

// trimReferenceWords drops the document words and copy marks in front of
// a reference's number, the copy marks after it, and a document word or
// copy mark glued to it ("INV2290", "COPY2290", "2290DUP"); a copy mark
// first may be followed by a filler word ("copy of invoice 2290").
func trimReferenceWords(w refWords) refWords {
	marked := false
	for len(w.words) > 0 {
		first := w.words[0]
		if !documentWords[first] && !copyMarks[first] && !(marked && copyFillers[first]) {
			break
		}
		marked = marked || copyMarks[first]
		w = w.drop(true)
	}
	for len(w.words) > 0 && copyMarks[w.words[len(w.words)-1]] {
		w = w.drop(false)
	}
	if n := len(w.words); n > 0 {
		w.words[0] = trimDocumentPrefix(w.words[0])
		w.words[n-1] = trimCopySuffix(w.words[n-1])
	}
	return w
}

// trimCopySuffix drops from w the longest copy mark that follows a digit:
// "2290C0PY" (2290COPY) becomes "2290".
func trimCopySuffix(w string) string {
	for n := 1; n < len(w); n++ {
		if isDigit(w[n-1]) && copyMarks[w[n:]] {
			return w[:n]
		}
	}
	return w
}

// trimDocumentPrefix drops from w the longest document word or copy mark
// that is followed by a digit: "1NV2290" (INV2290) and "C0PY2290"
// (COPY2290) become "2290".
func trimDocumentPrefix(w string) string {
	for n := len(w) - 1; n > 0; n-- {
		if isDigit(w[n]) && (documentWords[w[:n]] || copyMarks[w[:n]]) {
			return w[n:]
		}
	}
	return w
}

// LookAlikeKey returns the key a reference that DuplicateKey refuses for
// look-alike characters would have if each of them were the ASCII
// character it imitates: a Cyrillic, Greek or Armenian letter that looks
// like a Latin one (after the Unicode confusables data, UTS #39), a
// full-width form, or a decimal digit of another script, with the
// invisible format characters (zero-width spaces and joiners, soft
// hyphens: category Cf) left out. "ІNV-2290" (a Cyrillic І),
// "INV-２２９０" and "INV-22\u200b90" have the look-alike key "2290". ok
// is false when ref has a key of its own (DuplicateKey), or has no key
// even so (another character, a control character, invalid UTF-8).
//
// The look-alike key serves one purpose: telling a control that a
// reference it cannot compare may be another bill's number, so that a
// person compares the two. It is never a bill's key: it never finds a
// bill and never makes two bills the same invoice.
func LookAlikeKey(ref string) (key string, ok bool) {
	if _, err := DuplicateKey(ref); err == nil || !errors.Is(err, ErrLookAlike) {
		return "", false
	}
	var b strings.Builder
	for _, r := range ref {
		switch {
		case r < utf8.RuneSelf:
			b.WriteRune(r)
		case unicode.Is(unicode.Cf, r):
			// invisible: left out
		case 0xff01 <= r && r <= 0xff5e: // full-width ASCII
			b.WriteRune(r - 0xfee0)
		case unicode.Is(unicode.Nd, r):
			b.WriteByte('0' + digitValue(r))
		default:
			if l, found := latinOf[r]; found {
				b.WriteByte(l)
			} else {
				b.WriteRune(r)
			}
		}
	}
	key, err := DuplicateKey(b.String())
	return key, err == nil
}

// latinOf maps the letters that look like a Latin letter in common fonts
// (latinLookAlikes, and the Kelvin sign) to that letter.
var latinOf = func() map[rune]byte {
	const pairs = "" +
		"АA ВB ЕE ЅS ІI ЈJ КK МM НH ОO РP СC ТT УY ХX ҮY ҺH ӀI ԀD ԌG ԚQ ԜW " +
		"аA еE ѕS іI јJ оO рP сC уY хX үY һH ӏI ԁD ԛQ ԝW " +
		"ΑA ΒB ΕE ΖZ ΗH ΙI ΚK ΜM ΝN ΟO ΡP ΤT ΥY ΧX ϜF ϲC ϳJ " +
		"ιI νV οO ρP υU " +
		"ՕO ՍU օO սU հH ոN զQ ցG \u212aK"
	m := map[rune]byte{}
	for _, p := range strings.Fields(pairs) {
		r, n := utf8.DecodeRuneInString(p)
		m[r] = p[n]
	}
	return m
}()

// digitValue returns the value of the decimal digit r (category Nd): its
// distance from the zero that starts its run of consecutive digits,
// modulo 10 (the mathematical digits run 0-9 five times).
func digitValue(r rune) byte {
	start := r
	for unicode.Is(unicode.Nd, start-1) {
		start--
	}
	return byte((r - start) % 10)
}
