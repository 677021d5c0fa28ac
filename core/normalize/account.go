package normalize

// AccountNumber normalizes a bank account identifier that is either an IBAN
// or a plain account number, for suites whose counterparties do not all have
// IBANs (the AgentDojo banking suite pays to "US122000000121212121212" and
// "CA133012400231215421872"). Use [IBAN] wherever every account is an IBAN.
//
// AccountNumber removes separators (spaces of the Unicode category Zs, and
// hyphens between letters or digits) and upper-cases ASCII letters, as IBAN
// does. Then:
//
//   - if the value has an "IBAN" prefix or starts with a country of the IBAN
//     registry, it must be a valid IBAN and is normalized as [IBAN] does; a
//     value such as "DE00..." that fails the IBAN checks is refused, never
//     taken as a plain account number instead;
//   - otherwise it is a plain account number: two letters A-Z followed by 8
//     to 32 letters A-Z or digits 0-9 (10 to 34 characters in all), returned
//     without separators and upper-cased, such as "US122000000121212121212".
//
// Like IBAN, AccountNumber refuses look-alikes: any non-ASCII character
// (full-width digits, Cyrillic or Greek letters, zero-width spaces, dashes
// other than the ASCII hyphen) and any control character is refused, never
// folded or stripped.
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindAccountNumber].
func AccountNumber(s string) (string, error) {
	const kind = KindAccountNumber
	var buf [maxInput]byte
	b, off, prefixed, err := compact(kind, s, buf[:0])
	if err != nil {
		return "", err
	}
	if prefixed || (len(b) >= 2 && isIBANCountry(b[:2])) {
		if err := checkIBAN(kind, s, b, off); err != nil {
			return "", err
		}
		return string(b), nil
	}
	for j, c := range b {
		if !isUpper(c) && !isDigit(c) {
			return "", fail(kind, s, "contains %s at position %d; an account number has only the letters A-Z and the digits 0-9, with spaces or hyphens between groups", char(c), position(s, off+j, "-"))
		}
	}
	if len(b) == 0 {
		return "", fail(kind, s, "is empty")
	}
	if len(b) < 2 || !isUpper(b[0]) || !isUpper(b[1]) {
		return "", fail(kind, s, "must start with a two-letter country code, such as DE or US")
	}
	if n := len(b) - 2; n < 8 || n > 32 {
		return "", fail(kind, s, "has %d characters after the country code %s; an account number has 8 to 32", n, string(b[:2]))
	}
	return string(b), nil
}
