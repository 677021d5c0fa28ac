package normalize

import (
	"strings"
	"unicode/utf8"
)

// AccountType is how a bank account is identified: by an IBAN, or by a
// national account number together with the bank's code.
type AccountType string

// The types of bank account that [ParseAccount] knows. Odoo keeps every one
// of them in res.partner.bank: the number in acc_number, the bank in bank_id
// (res.bank, with its bic), and computes acc_type 'iban' for an IBAN and
// 'bank' for the others (see [Account.OdooAccType]).
const (
	// AccountIBAN is an IBAN (ISO 13616), in the countries of the SWIFT
	// IBAN registry.
	AccountIBAN AccountType = "iban"
	// AccountABA is a US account: an ABA routing number (9 digits) and an
	// account number (4 to 17 digits).
	AccountABA AccountType = "us_aba"
	// AccountSortCode is a UK account: a sort code (6 digits) and an
	// account number (8 digits).
	AccountSortCode AccountType = "gb_sort_code"
	// AccountBIC is a national account number (4 to 34 letters and digits)
	// at the bank a BIC (ISO 9362) names, as paid by an international
	// transfer.
	AccountBIC AccountType = "bic"
)

// Account is a bank account in canonical form, as [ParseAccount] returns it.
// Its zero value is no account.
type Account struct {
	// Type is how the account is identified.
	Type AccountType
	// Country is the ISO 3166-1 alpha-2 code of the bank's country: the
	// IBAN's country, "US" for AccountABA, the country given for
	// AccountSortCode (GB, or GG, JE, IM that use UK sort codes), the BIC's
	// country (its characters 5 and 6) for AccountBIC.
	Country string
	// Bank is the bank's code in canonical form: the ABA routing number (9
	// digits), the sort code (6 digits without hyphens) or the BIC (see
	// [BIC]); "" for an IBAN, which names its bank itself.
	Bank string
	// Number is the IBAN in electronic format, or the account number: only
	// digits for AccountABA and AccountSortCode, letters A-Z and digits for
	// AccountBIC. Leading zeros are kept: they are part of the number.
	Number string
	// BIC is the bank's BIC given with an IBAN, an ABA or a sort code
	// account, or "" if none was; for AccountBIC, it is Bank. It is not
	// part of the account's key.
	BIC string
}

// Key returns the account's canonical string, suitable as a registry key:
// two spellings of one account have the same key, and accounts of different
// types never do. Keys are ASCII, at most 64 characters, made of the
// letters A-Z, digits and ':' (so each is also a valid [Identifier]):
//
//   - AccountIBAN: the IBAN in electronic format, "DE89370400440532013000",
//     the same string [IBAN] returns, so existing IBAN keys stay valid;
//   - AccountABA: "ABA:" routing number ":" account number,
//     "ABA:021000021:1234567890";
//   - AccountSortCode: "SORTCODE:" sort code ":" account number,
//     "SORTCODE:601613:31926819";
//   - AccountBIC: "BIC:" BIC ":" account number, "BIC:DEUTDEFF:0532013000"
//     (an 8-character BIC, or 11 characters when the branch is not the head
//     office "XXX").
//
// An IBAN key never has a ':'. The same account given once as an IBAN and
// once as sort code and number has two keys: the forms are not converted
// into each other (that needs the bank's directory), so such a pair never
// matches. The key of the zero Account is "".
func (a Account) Key() string {
	switch a.Type {
	case AccountIBAN:
		return a.Number
	case AccountABA:
		return "ABA:" + a.Bank + ":" + a.Number
	case AccountSortCode:
		return "SORTCODE:" + a.Bank + ":" + a.Number
	case AccountBIC:
		return "BIC:" + a.Bank + ":" + a.Number
	}
	return ""
}

// OdooAccType returns the acc_type Odoo computes for the account in
// res.partner.bank: "iban" for an IBAN, "bank" for every other type (and
// for the zero Account).
func (a Account) OdooAccType() string {
	if a.Type == AccountIBAN {
		return "iban"
	}
	return "bank"
}

// ParseAccount classifies and normalizes a bank account given as Odoo holds
// it: number is res.partner.bank's acc_number; bank is the bank's code on
// file: the BIC of its bank_id, or for a US account the ABA routing number
// (l10n_us's aba_routing, or a routing number typed in the bank's BIC
// field), or for a UK account the sort code ("" if the sort code is written
// in acc_number); country is the ISO 3166-1 alpha-2 code of the bank's
// country, or else of the account holder's ("" if unknown). Each part may
// have the separators [IBAN] takes: Unicode spaces (category Zs) and
// hyphens between letters or digits; a national account number may also
// have '/' and '.' between them, as Odoo's sanitized_acc_number drops them.
//
// The account is, in this order:
//
//   - an IBAN (AccountIBAN) if number has an "IBAN" prefix or starts with a
//     country of the IBAN registry: it must then be a valid IBAN (see
//     [IBAN]) and is never taken as a national number instead. A bank, if
//     given, must be a valid BIC and is kept in BIC; country is not
//     compared with the IBAN's (a vendor may bank abroad).
//   - a US account (AccountABA) if bank is 9 digits: country must be US;
//     bank must be a valid ABA routing number (see [RoutingNumber]) and
//     number 4 to 17 digits (the NACHA DFI account number field has 17).
//   - a UK account (AccountSortCode) if bank is 6 digits, or bank is empty
//     or a BIC and number is 14 digits, a sort code then an account number
//     ("60-16-13 31926819"): country must be GB, GG, JE or IM; the account
//     number has exactly 8 digits (banks give 7- and 10-digit numbers in
//     this standard form).
//   - a national account number at a BIC (AccountBIC) if bank is a BIC (see
//     [BIC]): number has 4 to 34 letters A-Z and digits (the account line
//     of a SWIFT payment has 34).
//
// Anything else is refused, for example a national number without a bank
// code (an error wrapping [ErrNoBank]), or a 9-digit bank code for a
// country other than the US.
// Look-alikes are refused as [IBAN] refuses them: any non-ASCII character
// other than a space separator (full-width digits, Cyrillic or Greek
// letters, zero-width spaces) is refused, never folded; digits are never
// read from letters (an 'O' in a US account number is refused, not read as
// a '0').
//
// The error, if any, wraps [ErrInvalid] and is an [*Error]: of Kind
// [KindIBAN], [KindBIC], [KindRoutingNumber] or [KindSortCode] for that
// part, or of Kind [KindBankAccount] for the account number or the country.
func ParseAccount(number, bank, country string) (Account, error) {
	cc, err := accountCountry(country)
	if err != nil {
		return Account{}, err
	}
	var buf [maxInput]byte
	b, _, prefixed, err := compact(KindIBAN, number, buf[:0])
	if err == nil && (prefixed || len(b) >= 2 && isIBANCountry(b[:2])) {
		return ibanAccount(number, bank)
	}
	n, err := compactPart(KindBankAccount, number, "-/.", 'c', "an account number has only the letters A-Z and the digits 0-9")
	if err != nil {
		return Account{}, err
	}
	if n == "" {
		return Account{}, fail(KindBankAccount, number, "is empty")
	}
	code, err := compactPart(KindBankAccount, bank, "-", 'c', "a bank code is a BIC, an ABA routing number or a sort code, in letters A-Z and digits")
	if err != nil {
		return Account{}, err
	}
	switch {
	case len(code) == 9:
		return abaAccount(number, bank, cc)
	case len(code) == 6:
		return sortCodeAccount(number, bank, "", cc)
	case code != "" && allDigits(code):
		return Account{}, fail(KindBankAccount, bank, "is a bank code of %d digits: neither an ABA routing number (9 digits, US) nor a sort code (6 digits, GB); give the bank's BIC", len(code))
	}
	return nationalAccount(number, bank, n, code, cc)
}

// ibanAccount parses number as an IBAN and bank, when given, as the BIC
// of its bank: the AccountIBAN whose Country is the IBAN's first two
// letters. Errors are IBAN's and BIC's.
func ibanAccount(number, bank string) (Account, error) {
	iban, err := IBAN(number)
	if err != nil {
		return Account{}, err
	}
	a := Account{Type: AccountIBAN, Country: iban[:2], Number: iban}
	if strings.TrimSpace(bank) != "" {
		if a.BIC, err = BIC(bank); err != nil {
			return Account{}, err
		}
	}
	return a, nil
}

// nationalAccount is ParseAccount for a national account number that is
// neither an IBAN nor at an ABA routing number or sort code given as the
// bank: n and code are number and bank compacted, cc the country.
// A 14-digit number in a sort-code country is a sort code and account
// number written together; otherwise the account is an AccountBIC of 4
// to 34 letters and digits at the bank's BIC, which must be given.
func nationalAccount(number, bank, n, code, cc string) (Account, error) {
	var bic string
	if code != "" {
		var err error
		if bic, err = BIC(bank); err != nil {
			return Account{}, err
		}
	}
	if isSortCodeCountry(cc) && len(n) == 14 && allDigits(n) {
		return sortCodeAccount(number, n[:6], bic, cc)
	}
	if bic == "" {
		return Account{}, &Error{Kind: KindBankAccount, Input: clip(number), Err: ErrNoBank,
			Reason: "is a national account number without its bank: give the bank's BIC, or for a US account its ABA routing number, or for a UK account its sort code"}
	}
	if len(n) < 4 || len(n) > 34 {
		return Account{}, fail(KindBankAccount, number, "has %d letters and digits; an account number at a BIC has 4 to 34", len(n))
	}
	return Account{Type: AccountBIC, Country: bic[4:6], Bank: bic, Number: n, BIC: bic}, nil
}

// ParseAccountKey returns the account whose [Account.Key] is key. It refuses
// any other spelling, even of the same account: a key is compared as it is,
// never normalized. The BIC given with an IBAN, an ABA or a sort code
// account is not part of the key and is "" in the result; so is the
// country of a sort code account, which is GB. The error, if any, wraps
// [ErrInvalid] and is an [*Error] of Kind [KindBankAccount].
func ParseAccountKey(key string) (Account, error) {
	var a Account
	var err error
	switch typ, rest, _ := strings.Cut(key, ":"); typ {
	case "ABA":
		bank, number, _ := strings.Cut(rest, ":")
		a, err = ParseAccount(number, bank, "US")
	case "SORTCODE":
		bank, number, _ := strings.Cut(rest, ":")
		a, err = ParseAccount(number, bank, "GB")
	case "BIC":
		bank, number, _ := strings.Cut(rest, ":")
		a, err = ParseAccount(number, bank, "")
	default:
		a, err = ParseAccount(key, "", "")
		if a.Type != AccountIBAN {
			err = fail(KindBankAccount, key, "is not an account key: an IBAN, or ABA:, SORTCODE: or BIC: with the bank's code and the account number")
		}
	}
	if err != nil || a.Key() != key {
		return Account{}, fail(KindBankAccount, key, "is not an account key in canonical form, such as DE89370400440532013000 or ABA:021000021:1234567890")
	}
	return a, nil
}

// abaAccount returns the US account number at the routing number bank.
func abaAccount(number, bank, cc string) (Account, error) {
	if cc != "US" {
		return Account{}, fail(KindBankAccount, bank, "is a 9-digit bank code: an ABA routing number, used only for accounts in the US, but the country is %s; give the bank's BIC", countryOrUnknown(cc))
	}
	routing, err := RoutingNumber(bank)
	if err != nil {
		return Account{}, err
	}
	n, err := compactPart(KindBankAccount, number, "-", 'n', "a US account number has only digits")
	if err != nil {
		return Account{}, err
	}
	if len(n) < 4 || len(n) > 17 {
		return Account{}, fail(KindBankAccount, number, "has %d digits; a US account number has 4 to 17", len(n))
	}
	return Account{Type: AccountABA, Country: "US", Bank: routing, Number: n}, nil
}

// sortCodeAccount returns the UK account number at the sort code bank.
func sortCodeAccount(number, bank, bic, cc string) (Account, error) {
	if !isSortCodeCountry(cc) {
		return Account{}, fail(KindBankAccount, bank, "is a 6-digit bank code: a sort code, used only for accounts in the UK (GB, GG, JE, IM), but the country is %s; give the bank's BIC", countryOrUnknown(cc))
	}
	sort, err := SortCode(bank)
	if err != nil {
		return Account{}, err
	}
	n, err := compactPart(KindBankAccount, number, "-", 'n', "a UK account number has only digits")
	if err != nil {
		return Account{}, err
	}
	if len(n) == 14 && n[:6] == sort {
		n = n[6:]
	}
	if len(n) != 8 {
		return Account{}, fail(KindBankAccount, number, "has %d digits; a UK account number has 8 (ask for the 8-digit form the bank gives)", len(n))
	}
	return Account{Type: AccountSortCode, Country: cc, Bank: sort, Number: n, BIC: bic}, nil
}

// BIC normalizes a Business Identifier Code (ISO 9362, also called a SWIFT
// code) to upper case without separators, and to its 8-character form when
// its branch code is "XXX" (the head office, which the 8-character form
// means), such as "DEUTDEFF" or "DEUTDEFF500".
//
// A BIC has 8 or 11 characters: 4 letters A-Z for the bank (ISO 9362:2014
// allows digits there, but no BIC issued has one, so a digit is refused
// rather than read as a look-alike), 2 letters for a country of ISO 3166-1
// (or XK, Kosovo), 2 letters or digits for the location, and an optional
// branch code of 3 letters or digits. ASCII letters are upper-cased and
// space separators (category Zs) are removed; any other character, and any
// non-ASCII character, is refused.
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindBIC].
func BIC(s string) (string, error) {
	const kind = KindBIC
	b, err := compactPart(kind, s, "", 'c', "a BIC has only the letters A-Z and the digits 0-9")
	if err != nil {
		return "", err
	}
	if len(b) != 8 && len(b) != 11 {
		return "", fail(kind, s, "has %d letters and digits; a BIC has 8 or 11, such as DEUTDEFF or DEUTDEFF500", len(b))
	}
	for j := 0; j < 6; j++ {
		if !isUpper(b[j]) {
			return "", fail(kind, s, "position %d must be a letter A-Z, got %s; a BIC starts with 4 letters for the bank and 2 for the country", position(s, j, ""), char(b[j]))
		}
	}
	if !isCountry(b[4:6]) {
		return "", fail(kind, s, "%s (characters 5 and 6) is not an ISO 3166 country code", b[4:6])
	}
	if len(b) == 11 && b[8:] == "XXX" {
		b = b[:8]
	}
	return b, nil
}

// RoutingNumber normalizes an ABA routing transit number, the 9-digit code
// of a US bank (its "routing number" on checks and ACH transfers), such as
// "021000021". Space separators and hyphens between digits are removed.
//
// RoutingNumber checks that the number has 9 digits, that its first two
// are in a range the Federal Reserve assigns (00 to 12, 21 to 32, 61 to 72,
// or 80), and its check digit: 3×(d1+d4+d7) + 7×(d2+d5+d8) + (d3+d6+d9)
// is a multiple of 10. Letters are refused, never read as digits (an 'O'
// for a '0'), and so is any non-ASCII character.
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindRoutingNumber].
func RoutingNumber(s string) (string, error) {
	const kind = KindRoutingNumber
	b, err := compactPart(kind, s, "-", 'n', "a routing number has only digits")
	if err != nil {
		return "", err
	}
	if len(b) != 9 {
		return "", fail(kind, s, "has %d digits; an ABA routing number has 9", len(b))
	}
	switch p := (b[0]-'0')*10 + b[1] - '0'; {
	case p <= 12, 21 <= p && p <= 32, 61 <= p && p <= 72, p == 80:
	default:
		return "", fail(kind, s, "starts with %s; ABA routing numbers start with 00 to 12, 21 to 32, 61 to 72 or 80", b[:2])
	}
	sum := 0
	for j := range 9 {
		sum += int(b[j]-'0') * [3]int{3, 7, 1}[j%3]
	}
	if sum%10 != 0 {
		return "", fail(kind, s, "check digit does not match (ABA checksum 3-7-1); the routing number has a typo or was altered")
	}
	return b, nil
}

// SortCode normalizes a UK sort code, the 6-digit code of a bank branch, to
// its 6 digits, such as "601613" for "60-16-13". Space separators and
// hyphens between digits are removed; anything else, letters included, is
// refused. Whether a sort code exists is not checked (that needs the
// banks' directory).
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindSortCode].
func SortCode(s string) (string, error) {
	const kind = KindSortCode
	b, err := compactPart(kind, s, "-", 'n', "a sort code has only digits, as in 60-16-13")
	if err != nil {
		return "", err
	}
	if len(b) != 6 {
		return "", fail(kind, s, "has %d digits; a sort code has 6, as in 60-16-13", len(b))
	}
	return b, nil
}

// compactPart returns s without separators (see separator, with between)
// and with ASCII letters upper-cased. class is 'n' if only digits are
// allowed, 'c' if letters and digits are. what ends the reason for any other
// character. It refuses control characters, non-ASCII characters other than
// separators, and input longer than maxInput bytes; it returns "" for an
// empty s.
func compactPart(kind, s, between string, class byte, what string) (string, error) {
	if len(s) > maxInput {
		return "", fail(kind, s, "is %d bytes long; at most %d are read", len(s), maxInput)
	}
	var buf [maxInput]byte
	b := buf[:0]
	for i := 0; i < len(s); {
		if n := separator(s, i, between); n > 0 {
			i += n
			continue
		}
		c := s[i]
		switch {
		case c >= utf8.RuneSelf || c < 0x20 || c == 0x7f:
			return "", refuseAt(kind, s, i)
		case isLower(c):
			c -= 'a' - 'A'
		}
		pos := utf8.RuneCountInString(s[:i]) + 1
		switch {
		case isDigit(c):
		case isUpper(c) && class == 'n':
			return "", fail(kind, s, "position %d must be a digit, got %s; letters are never read as digits", pos, char(c))
		case !isUpper(c):
			return "", fail(kind, s, "contains %s at position %d; %s", char(c), pos, what)
		}
		b = append(b, c)
		i++
	}
	return string(b), nil
}

// accountCountry normalizes the country argument of ParseAccount: "" or
// an ISO 3166-1 alpha-2 code in any case.
func accountCountry(s string) (string, error) {
	if err := checkASCII(KindBankAccount, s); err != nil {
		return "", err
	}
	cc, _ := trimSpaces(s)
	cc = strings.ToUpper(cc)
	if cc != "" && !isCountry(cc) {
		return "", fail(KindBankAccount, s, "country %q is not an ISO 3166-1 alpha-2 code such as DE, GB or US", cc)
	}
	return cc, nil
}

// isSortCodeCountry reports whether accounts in country cc are identified
// by UK sort codes: the United Kingdom and the Crown Dependencies.
func isSortCodeCountry(cc string) bool {
	return cc == "GB" || cc == "GG" || cc == "JE" || cc == "IM"
}

// countryOrUnknown names cc in a reason.
func countryOrUnknown(cc string) string {
	if cc == "" {
		return "not given"
	}
	return cc
}
