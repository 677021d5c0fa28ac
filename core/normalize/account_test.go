package normalize_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/normalize"
)

func TestAccountNumber(t *testing.T) {
	t.Parallel()
	run(t, normalize.KindAccountNumber, normalize.AccountNumber, []test{
		// IBANs are normalized as IBAN does.
		{name: "IBAN", in: "DE89370400440532013000", want: "DE89370400440532013000"},
		{name: "IBAN print format", in: "GB29 NWBK 6016 1331 9268 19", want: "GB29NWBK60161331926819"},
		{name: "IBAN lower case with prefix", in: "iban: ch93 0076 2011 6238 5295 7", want: "CH9300762011623852957"},

		// Plain account numbers (AgentDojo banking).
		{name: "US plain", in: "US122000000121212121212", want: "US122000000121212121212"},
		{name: "US other", in: "US133000000121212121212", want: "US133000000121212121212"},
		{name: "CA plain", in: "CA133012400231215421872", want: "CA133012400231215421872"},
		{name: "UK plain", in: "UK12345678901234567890", want: "UK12345678901234567890"},
		{name: "plain lower case spaced", in: " us12 2000 0001 2121 2121 212 ", want: "US122000000121212121212"},
		{name: "plain with letters", in: "AUabc12345", want: "AUABC12345"},
		{name: "plain shortest", in: "US12345678", want: "US12345678"},
		{name: "plain longest", in: "US" + strings.Repeat("9", 32), want: "US" + strings.Repeat("9", 32)},

		// An IBAN country or prefix never falls back to plain.
		{name: "registry country bad mod-97", in: "DE89370400440532013001", reason: "check digits do not match (mod-97)"},
		{name: "registry country wrong length", in: "DE1234567890", reason: "DE IBANs have 22 characters, got 12"},
		{name: "registry country check digits 00", in: "GB00NWBK60161331926819", reason: "check digits 00 are out of range"},
		{name: "prefix forces IBAN", in: "IBAN US122000000121212121212", reason: "US is not a country of the IBAN registry"},
		{name: "prefix glued forces IBAN", in: "IBAN12345678", reason: "must start with a two-letter country code"},
		{name: "split prefix forces IBAN", in: "IB AN12345678", reason: "must start with a two-letter country code"},

		// Plain refusals.
		{name: "empty", in: "", reason: "is empty"},
		{name: "spaces", in: "   ", reason: "is empty"},
		{name: "digits first", in: "1234567890", reason: "must start with a two-letter country code"},
		{name: "one letter", in: "U1234567890", reason: "must start with a two-letter country code"},
		{name: "too short", in: "US1234567", reason: "has 7 characters after the country code US; an account number has 8 to 32"},
		{name: "too long", in: "US" + strings.Repeat("9", 33), reason: "has 33 characters after the country code US"},
		{name: "hyphens between groups", in: "US12-2000-0001-2121-2121-212", want: "US122000000121212121212"},
		{name: "no-break and thin spaces", in: "US12\u00a02000\u20090001 2121\u202f2121 212", want: "US122000000121212121212"},
		{name: "hyphen at the end", in: "US122000000121212121212-", reason: "contains '-' at position 24; an account number has only the letters A-Z and the digits 0-9"},
		{name: "en dash", in: "US12\u20132000000121212121212", reason: "U+2013 at position 5"},
		{name: "slash", in: "US 122/000", reason: "contains '/' at position 7"},
		{name: "input too long", in: "US" + strings.Repeat(" 1", 70), reason: "is 142 bytes long; an account number has at most 34 characters"},

		// Look-alikes are refused on both paths.
		{name: "Cyrillic A in plain", in: "C\u0410133012400231215421872", reason: "contains the non-ASCII character U+0410 at position 2; look-alike characters are refused, type the account number in plain ASCII"},
		{name: "Cyrillic C in plain", in: "\u0421A133012400231215421872", reason: "U+0421 at position 1"},
		{name: "Greek O in IBAN", in: "N\u039f9386011117947", reason: "U+039F at position 2"},
		{name: "full-width digit", in: "US\uff11\uff12" + "2000000121212121212", reason: "U+FF11 at position 3"},
		{name: "BBAN structure on the IBAN path", in: "DE59370400440532O13000", reason: "position 17 must be a digit, got 'O'"},
		{name: "zero-width space", in: "US122000000121212\u200b121212", reason: "U+200B (zero-width space) at position 18"},
		{name: "tab", in: "US12\t2000000121212121212", reason: "U+0009 (tab) at position 5"},
		{name: "invalid UTF-8", in: "US12\xff", reason: "byte 0xFF"},
	})
}
