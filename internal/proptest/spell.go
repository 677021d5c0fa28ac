package proptest

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/intentplane/intentplane/core/mandate"
)

// Countries are the IBAN countries MakeIBAN knows.
var Countries = []string{"DE", "NL", "BE", "AT", "ES", "GB", "LT", "FR"}

// MakeIBAN returns a random valid IBAN of country cc (one of Countries;
// any other gets France's length), computing the check digits itself.
func MakeIBAN(r *rand.Rand, cc string) string {
	digits := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('0' + r.IntN(10))
		}
		return string(b)
	}
	letters := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte('A' + r.IntN(26))
		}
		return string(b)
	}
	var bban string
	switch cc {
	case "DE":
		bban = digits(18)
	case "NL":
		bban = letters(4) + digits(10)
	case "BE":
		bban = digits(12)
	case "AT":
		bban = digits(16)
	case "ES":
		bban = digits(20)
	case "GB":
		bban = letters(4) + digits(14)
	case "LT":
		bban = digits(16)
	default: // FR
		bban = digits(23)
	}
	return WithCheck(cc, bban)
}

// WithCheck returns the IBAN of country cc and account bban, computing
// the check digits (ISO 7064 MOD 97-10).
func WithCheck(cc, bban string) string {
	rem := 0
	for _, c := range bban + cc + "00" {
		if c >= 'A' && c <= 'Z' {
			rem = (rem*100 + int(c-'A') + 10) % 97
			continue
		}
		rem = (rem*10 + int(c-'0')) % 97
	}
	return fmt.Sprintf("%s%02d%s", cc, 98-rem, bban)
}

// LookAlike changes two digits of iban's account number and fixes the
// check digits: a valid IBAN that reads almost like the original.
func LookAlike(iban string) string {
	b := []byte(iban[4:])
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] >= '0' && b[i] <= '9' {
			b[i] = '0' + (b[i]-'0'+1)%10
			break
		}
	}
	for i := range b {
		if b[i] >= '0' && b[i] <= '9' {
			b[i] = '0' + (b[i]-'0'+9)%10
			break
		}
	}
	return WithCheck(iban[:2], string(b))
}

// Groups writes s in groups of four, as IBANs are printed.
func Groups(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i += 4 {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(s[i:min(i+4, len(s))])
	}
	return b.String()
}

// SpellIBAN returns an honest spelling of iban: as is, in lower or mixed
// case, padded, or grouped (with an "IBAN " prefix if withPrefix).
func SpellIBAN(r *rand.Rand, iban string, withPrefix bool) string {
	switch r.IntN(7) {
	case 0:
		return iban
	case 1:
		return strings.ToLower(iban)
	case 2:
		return " " + iban + " "
	case 3:
		if withPrefix {
			return "IBAN " + Groups(iban)
		}
		return Groups(iban)
	case 4:
		b := []byte(iban)
		for i := range b {
			if r.IntN(2) == 0 && b[i] >= 'A' && b[i] <= 'Z' {
				b[i] += 'a' - 'A'
			}
		}
		return string(b)
	}
	return Groups(iban)
}

// Mangle makes a look-alike of iban: homoglyphs, full-width digits,
// zero-width characters, one character changed, cut or extended.
func Mangle(r *rand.Rand, iban string) string {
	i := 2 + r.IntN(len(iban)-2)
	c := iban[i]
	swap := map[byte]string{'0': "O", '1': "l", '5': "S", '8': "B", '2': "Z", '6': "G", 'O': "0", 'I': "1", 'B': "8", 'S': "5"}
	switch r.IntN(9) {
	case 0:
		if s, ok := swap[c]; ok {
			return iban[:i] + s + iban[i+1:]
		}
		return iban[:i] + "0" + iban[i+1:]
	case 1:
		if c >= '0' && c <= '9' {
			return iban[:i] + string(rune(0xff10+int(c-'0'))) + iban[i+1:] // full-width digit
		}
		return iban[:i] + "\uff21" + iban[i+1:]
	case 2:
		return iban[:i] + "\u200b" + iban[i:] // zero-width space
	case 3:
		return strings.Replace(iban, "E", "\u0415", 1) // Cyrillic Е
	case 4:
		return iban[:len(iban)-1]
	case 5:
		return iban + "0"
	case 6:
		d := byte('0' + (int(c-'0')+1)%10)
		if c < '0' || c > '9' {
			d = 'X'
		}
		return iban[:i] + string(d) + iban[i+1:]
	case 7:
		return iban[:i] + "\u0301" + iban[i:] // combining accent
	}
	return "IBAN: " + iban[:i] + "\ufeff" + iban[i:]
}

// Flip changes one character of a mandate token after its prefix.
func Flip(r *rand.Rand, tok string) string {
	b := []byte(tok)
	i := len(mandate.Prefix) + r.IntN(len(b)-len(mandate.Prefix))
	const alpha = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	for {
		if c := alpha[r.IntN(len(alpha))]; c != b[i] {
			b[i] = c
			return string(b)
		}
	}
}

// Member is one member of a JSON object, both parts raw JSON.
type Member struct{ Key, Val string }

// Object writes the members as a JSON object, in their order (duplicates
// kept).
func Object(ms []Member) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, m := range ms {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(m.Key + ":" + m.Val)
	}
	b.WriteByte('}')
	return b.String()
}

// JSON quotes s as a JSON string.
func JSON(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// Key spells key k, one time in ten with every byte \u-escaped (the same
// key to a JSON decoder).
func Key(r *rand.Rand, k string) string {
	if r.IntN(10) != 0 {
		return JSON(k)
	}
	return Escape(k)
}

// Escape quotes s as a JSON string with every byte \u-escaped.
func Escape(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, c := range []byte(s) {
		fmt.Fprintf(&b, `\u%04x`, c)
	}
	b.WriteByte('"')
	return b.String()
}
