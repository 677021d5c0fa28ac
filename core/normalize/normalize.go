package normalize

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf8"
)

// ErrInvalid is wrapped by every error a normalizer returns: the value cannot
// be normalized and must not be looked up. Check it with errors.Is; use
// errors.As with a [*Error] for the details.
var ErrInvalid = errors.New("normalize: invalid value")

// ErrLookAlike is wrapped by the error of [Name] and [SameName] when a name
// has a character that imitates another one (a Cyrillic 'А' among Latin
// letters, the Kelvin sign U+212A, a full-width letter, a zero-width space):
// the name is neither folded into a match nor simply unknown, and a caller
// sends it to a person or refuses it saying why. It wraps [ErrInvalid].
var ErrLookAlike = fmt.Errorf("%w: look-alike character", ErrInvalid)

// ErrNoBank is wrapped by the error of [ParseAccount] (and [ParseAccountKey])
// for a national account number given without its bank's code (no BIC, ABA
// routing number or sort code): the number alone names no account, and a
// caller says which forms are accepted and what is missing. It wraps
// [ErrInvalid].
var ErrNoBank = fmt.Errorf("%w: national account number without its bank", ErrInvalid)

// Kinds of value, as reported in [Error.Kind]. Each is the name of the
// normalizer that refused the value.
const (
	KindIBAN          = "iban"
	KindAccountNumber = "account number"
	KindEmail         = "email"
	KindIdentifier    = "identifier"
	KindName          = "name"
	KindBankAccount   = "bank account"
	KindBIC           = "bic"
	KindRoutingNumber = "routing number"
	KindSortCode      = "sort code"
	KindReference     = "reference"
)

// maxInputRunes is how many runes of the input an [Error] keeps.
const maxInputRunes = 64

// Error is a value a normalizer refused. It wraps [ErrInvalid].
type Error struct {
	// Kind is the kind of value: one of the Kind constants, such as KindIBAN.
	Kind string
	// Input is the refused input as given, cut to its first 64 runes; a cut
	// input ends with "...".
	Input string
	// Reason says what is wrong, in words a person and an agent can act on,
	// for example "check digits do not match (mod-97)".
	Reason string
	// Err is what the error wraps: ErrLookAlike for a look-alike character
	// in a name, ErrNoBank for a national account number without its bank,
	// nil (meaning ErrInvalid) otherwise.
	Err error
}

// Error returns the kind, the input quoted and the reason, as in
// `iban: "DE89 3704 0044 0532 0130 01": check digits do not match (mod-97); the IBAN has a typo or was altered`.
// The input is quoted in ASCII (strconv.QuoteToASCII, that is %+q), so a
// look-alike character shows as an escape such as \u0410 and never passes for
// the letter it imitates.
func (e *Error) Error() string {
	return e.Kind + ": " + strconv.QuoteToASCII(e.Input) + ": " + e.Reason
}

// Unwrap returns e.Err, or [ErrInvalid] if it is nil.
func (e *Error) Unwrap() error {
	if e.Err != nil {
		return e.Err
	}
	return ErrInvalid
}

// fail returns an *Error for input s.
func fail(kind, s, format string, args ...any) error {
	return &Error{Kind: kind, Input: clip(s), Reason: fmt.Sprintf(format, args...)}
}

// failLookAlike returns an *Error for input s that wraps ErrLookAlike.
func failLookAlike(kind, s, format string, args ...any) error {
	return &Error{Kind: kind, Input: clip(s), Reason: fmt.Sprintf(format, args...), Err: ErrLookAlike}
}

// clip cuts s to its first maxInputRunes runes, keeping invalid bytes as
// they are, and marks a cut with "...".
func clip(s string) string {
	n := 0
	for i := range s {
		if n == maxInputRunes {
			return s[:i] + "..."
		}
		n++
	}
	return s
}

// noun names a kind of value in a sentence.
func noun(kind string) string {
	switch kind {
	case KindIBAN:
		return "IBAN"
	case KindEmail:
		return "address"
	case KindBIC:
		return "BIC"
	default:
		return kind
	}
}

// checkASCII refuses any byte outside printable ASCII (0x20..0x7E). Positions
// in reasons count runes from 1, as a person counts characters.
func checkASCII(kind, s string) error {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f {
			return refuseAt(kind, s, i)
		}
	}
	return nil
}

// refuseAt returns the error for the character that starts at s[i], which is
// not printable ASCII: a control character, an invalid byte, or a non-ASCII
// character.
func refuseAt(kind, s string, i int) error {
	c := s[i]
	pos := utf8.RuneCountInString(s[:i]) + 1
	if c < utf8.RuneSelf {
		return fail(kind, s, "contains the control character %s at position %d; only printable ASCII is allowed", describe(rune(c)), pos)
	}
	r, size := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && size == 1 {
		return fail(kind, s, "contains the byte 0x%02X, which is not valid UTF-8, at position %d; type the %s in plain ASCII", c, pos, noun(kind))
	}
	return fail(kind, s, "contains the non-ASCII character %s at position %d; look-alike characters are refused, type the %s in plain ASCII", describe(r), pos, noun(kind))
}

// refuseRuneError returns the error for the utf8.RuneError that a range loop
// over s read at byte i, the pos-th character: an invalid byte, or the
// replacement character U+FFFD itself, the mark of text damaged by a wrong
// encoding. more ends the reason.
func refuseRuneError(kind, s string, i, pos int, more string) error {
	if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
		return fail(kind, s, "contains the byte 0x%02X, which is not valid UTF-8, at position %d%s", s[i], pos, more)
	}
	return fail(kind, s, "contains the replacement character U+FFFD at position %d: the text was damaged by a wrong encoding%s", pos, more)
}

// describe names a rune as U+XXXX, with a name for the invisible ones that
// are hard to spot.
func describe(r rune) string {
	var name string
	switch r {
	case '\t':
		name = "tab"
	case '\n':
		name = "line feed"
	case '\r':
		name = "carriage return"
	case 0:
		name = "NUL"
	case 0x7f:
		name = "delete"
	case 0xa0:
		name = "no-break space"
	case 0x200b:
		name = "zero-width space"
	case 0x200c:
		name = "zero-width non-joiner"
	case 0x200d:
		name = "zero-width joiner"
	case 0x2007:
		name = "figure space"
	case 0x202f:
		name = "narrow no-break space"
	case 0x2060:
		name = "word joiner"
	case 0xfeff:
		name = "byte order mark"
	}
	if name == "" {
		return fmt.Sprintf("U+%04X", r)
	}
	return fmt.Sprintf("U+%04X (%s)", r, name)
}

// char shows one printable ASCII byte in a reason.
func char(c byte) string {
	if c == ' ' {
		return "a space"
	}
	return "'" + string(rune(c)) + "'"
}

// trimSpaces removes leading and trailing ASCII spaces (U+0020 only) and
// returns the rest and the number of bytes removed in front.
func trimSpaces(s string) (string, int) {
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	j := len(s)
	for j > i && s[j-1] == ' ' {
		j--
	}
	return s[i:j], i
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }
func isLower(c byte) bool { return 'a' <= c && c <= 'z' }
func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isAlnum(c byte) bool { return isUpper(c) || isLower(c) || isDigit(c) }
