package normalize

import "strings"

// maxInput is the longest input, in bytes, that IBAN and AccountNumber read.
// The longest IBAN in print format with an "IBAN: " prefix is 6+34+8 = 48
// bytes; the rest is room for extra spaces.
const maxInput = 128

// IBAN normalizes an International Bank Account Number (ISO 13616) to its
// electronic format: no spaces, letters upper-cased, such as
// "DE89370400440532013000".
//
// IBAN removes ASCII spaces (U+0020 only) and an optional leading "IBAN"
// prefix (any case, optionally followed by ':'), upper-cases ASCII letters,
// and then checks that:
//
//   - only the letters A-Z and the digits 0-9 remain;
//   - the first two letters are a country of the SWIFT IBAN registry, so
//     "UK..." (the United Kingdom is GB) and "US..." (no IBAN) are refused;
//   - the length is the registry's length for that country;
//   - the check digits (characters 3 and 4) are 02 to 98 and the whole IBAN
//     is 1 modulo 97 (ISO 7064 MOD 97-10).
//
// The national part (BBAN) is not checked beyond its length and the mod-97
// check. Any other character is refused, never stripped: a tab or newline,
// and any non-ASCII character such as a full-width digit '１', a Cyrillic 'А'
// (U+0410), a Greek 'Ο', a no-break space or a zero-width space.
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindIBAN].
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

// compact appends s to dst without ASCII spaces and with ASCII letters
// upper-cased, then drops a leading "IBAN" or "IBAN:". It returns the result,
// how many non-space bytes were dropped in front (to map positions back to
// s), and whether there was a prefix. It refuses non-printable-ASCII input
// and input longer than maxInput bytes.
func compact(kind, s string, dst []byte) (b []byte, off int, prefixed bool, err error) {
	if err := checkASCII(kind, s); err != nil {
		return nil, 0, false, err
	}
	if len(s) > maxInput {
		return nil, 0, false, fail(kind, s, "is %d bytes long; an %s has at most 34 characters", len(s), noun(kind))
	}
	b = dst
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ':
			continue
		case isLower(c):
			c -= 'a' - 'A'
		}
		b = append(b, c)
	}
	if len(b) >= 4 && string(b[:4]) == "IBAN" {
		off, prefixed = 4, true
		if len(b) > 4 && b[4] == ':' {
			off = 5
		}
		b = b[off:]
	}
	return b, off, prefixed, nil
}

// position returns the 1-based position in s of the k-th (from 0) byte that
// is not a space: where compact's output byte k came from. s is ASCII.
func position(s string, k int) int {
	for i := 0; i < len(s); i++ {
		if s[i] == ' ' {
			continue
		}
		if k == 0 {
			return i + 1
		}
		k--
	}
	return len(s)
}

// checkIBAN checks the compacted IBAN b of input s; off is compact's offset.
func checkIBAN(kind, s string, b []byte, off int) error {
	for j, c := range b {
		if !isUpper(c) && !isDigit(c) {
			return fail(kind, s, "contains %s at position %d; an IBAN has only the letters A-Z and the digits 0-9", char(c), position(s, off+j))
		}
	}
	if len(b) == 0 {
		return fail(kind, s, "is empty; an IBAN starts with a country code, such as DE89 3704 0044 0532 0130 00")
	}
	if len(b) < 2 || !isUpper(b[0]) || !isUpper(b[1]) {
		return fail(kind, s, "must start with a two-letter country code, such as DE or GB")
	}
	// The error paths convert b again, so that b never escapes and the
	// caller's buffer stays on the stack.
	want := registryLength(string(b[:2]))
	if want == 0 {
		cc := string(b[:2])
		if cc == "UK" {
			return fail(kind, s, "UK is not an IBAN country code; United Kingdom IBANs start with GB")
		}
		return fail(kind, s, "%s is not a country of the IBAN registry (ISO 13616)", cc)
	}
	if len(b) != want {
		return fail(kind, s, "%s IBANs have %d characters, got %d", string(b[:2]), want, len(b))
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
	return nil
}

// mod97 returns the ISO 7064 MOD 97-10 remainder of the IBAN b (upper-case
// letters and digits only): b with its first four characters moved to the
// end, letters replaced by 10 to 35, read as a decimal number, modulo 97. It
// folds the remainder in digit by digit, so it needs no big integers: the
// running value stays below 97*100+35.
func mod97(b []byte) uint32 {
	var r uint32
	step := func(c byte) {
		if isDigit(c) {
			r = (r*10 + uint32(c-'0')) % 97
		} else {
			r = (r*100 + uint32(c-'A'+10)) % 97
		}
	}
	for _, c := range b[4:] {
		step(c)
	}
	for _, c := range b[:4] {
		step(c)
	}
	return r
}

// registryLength returns the IBAN length, in characters, of the country cc in
// the SWIFT IBAN registry (ISO 13616), or 0 if cc is not in the registry.
// Territories that use another country's IBAN (Åland with FI, Guernsey with
// GB, French overseas departments with FR, ...) are not listed on their own.
func registryLength(cc string) int {
	switch cc {
	case "AD": // Andorra
		return 24
	case "AE": // United Arab Emirates
		return 23
	case "AL": // Albania
		return 28
	case "AT": // Austria
		return 20
	case "AZ": // Azerbaijan
		return 28
	case "BA": // Bosnia and Herzegovina
		return 20
	case "BE": // Belgium
		return 16
	case "BG": // Bulgaria
		return 22
	case "BH": // Bahrain
		return 22
	case "BI": // Burundi
		return 27
	case "BR": // Brazil
		return 29
	case "BY": // Belarus
		return 28
	case "CH": // Switzerland
		return 21
	case "CR": // Costa Rica
		return 22
	case "CY": // Cyprus
		return 28
	case "CZ": // Czechia
		return 24
	case "DE": // Germany
		return 22
	case "DJ": // Djibouti
		return 27
	case "DK": // Denmark
		return 18
	case "DO": // Dominican Republic
		return 28
	case "EE": // Estonia
		return 20
	case "EG": // Egypt
		return 29
	case "ES": // Spain
		return 24
	case "FI": // Finland
		return 18
	case "FK": // Falkland Islands
		return 18
	case "FO": // Faroe Islands
		return 18
	case "FR": // France
		return 27
	case "GB": // United Kingdom
		return 22
	case "GE": // Georgia
		return 22
	case "GI": // Gibraltar
		return 23
	case "GL": // Greenland
		return 18
	case "GR": // Greece
		return 27
	case "GT": // Guatemala
		return 28
	case "HN": // Honduras
		return 28
	case "HR": // Croatia
		return 21
	case "HU": // Hungary
		return 28
	case "IE": // Ireland
		return 22
	case "IL": // Israel
		return 23
	case "IQ": // Iraq
		return 23
	case "IS": // Iceland
		return 26
	case "IT": // Italy
		return 27
	case "JO": // Jordan
		return 30
	case "KW": // Kuwait
		return 30
	case "KZ": // Kazakhstan
		return 20
	case "LB": // Lebanon
		return 28
	case "LC": // Saint Lucia
		return 32
	case "LI": // Liechtenstein
		return 21
	case "LT": // Lithuania
		return 20
	case "LU": // Luxembourg
		return 20
	case "LV": // Latvia
		return 21
	case "LY": // Libya
		return 25
	case "MC": // Monaco
		return 27
	case "MD": // Moldova
		return 24
	case "ME": // Montenegro
		return 22
	case "MK": // North Macedonia
		return 19
	case "MN": // Mongolia
		return 20
	case "MR": // Mauritania
		return 27
	case "MT": // Malta
		return 31
	case "MU": // Mauritius
		return 30
	case "NI": // Nicaragua
		return 28
	case "NL": // Netherlands
		return 18
	case "NO": // Norway
		return 15
	case "OM": // Oman
		return 23
	case "PK": // Pakistan
		return 24
	case "PL": // Poland
		return 28
	case "PS": // Palestine
		return 29
	case "PT": // Portugal
		return 25
	case "QA": // Qatar
		return 29
	case "RO": // Romania
		return 24
	case "RS": // Serbia
		return 22
	case "RU": // Russia
		return 33
	case "SA": // Saudi Arabia
		return 24
	case "SC": // Seychelles
		return 31
	case "SD": // Sudan
		return 18
	case "SE": // Sweden
		return 24
	case "SI": // Slovenia
		return 19
	case "SK": // Slovakia
		return 24
	case "SM": // San Marino
		return 27
	case "SO": // Somalia
		return 23
	case "ST": // São Tomé and Príncipe
		return 25
	case "SV": // El Salvador
		return 28
	case "TL": // Timor-Leste
		return 23
	case "TN": // Tunisia
		return 24
	case "TR": // Türkiye
		return 26
	case "UA": // Ukraine
		return 29
	case "VA": // Vatican City
		return 22
	case "VG": // British Virgin Islands
		return 24
	case "XK": // Kosovo
		return 20
	case "YE": // Yemen
		return 30
	}
	return 0
}
