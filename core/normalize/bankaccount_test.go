package normalize_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/normalize"
)

func TestBIC(t *testing.T) {
	t.Parallel()
	run(t, normalize.KindBIC, normalize.BIC, []test{
		{name: "8", in: "DEUTDEFF", want: "DEUTDEFF"},
		{name: "11", in: "DEUTDEFF500", want: "DEUTDEFF500"},
		{name: "head office XXX", in: "BNPAFRPPXXX", want: "BNPAFRPP"},
		{name: "lower case", in: "nwbkgb2l", want: "NWBKGB2L"},
		{name: "spaces", in: " CHAS US 33 ", want: "CHASUS33"},
		{name: "no-break space", in: "DEUT\u00a0DE\u00a0FF", want: "DEUTDEFF"},
		{name: "digit location", in: "BOTKJPJT", want: "BOTKJPJT"},
		{name: "Kosovo", in: "RBKOXKPR", want: "RBKOXKPR"},

		{name: "empty", in: "", reason: "has 0 letters and digits; a BIC has 8 or 11"},
		{name: "7", in: "DEUTDEF", reason: "has 7 letters and digits; a BIC has 8 or 11"},
		{name: "9", in: "DEUTDEFF5", reason: "has 9 letters and digits"},
		{name: "digit in the bank code", in: "DEU1DEFF", reason: "position 4 must be a letter A-Z, got '1'"},
		{name: "zero for O in the bank code", in: "B0TKJPJT", reason: "position 2 must be a letter A-Z, got '0'"},
		{name: "digit in the country", in: "DEUTD3FF", reason: "position 6 must be a letter A-Z, got '3'"},
		{name: "not a country", in: "DEUTZZFF", reason: "ZZ (characters 5 and 6) is not an ISO 3166 country code"},
		{name: "UK is not a country", in: "NWBKUK2L", reason: "UK (characters 5 and 6) is not an ISO 3166 country code"},
		{name: "hyphen", in: "DEUT-DE-FF", reason: "contains '-' at position 5; a BIC has only the letters A-Z and the digits 0-9"},
		{name: "Cyrillic E", in: "D\u0415UTDEFF", reason: "contains the non-ASCII character U+0415 at position 2; look-alike characters are refused, type the BIC in plain ASCII"},
		{name: "full-width", in: "\uff24EUTDEFF", reason: "U+FF24 at position 1"},
		{name: "zero-width space", in: "DEUT\u200bDEFF", reason: "U+200B (zero-width space) at position 5"},
		{name: "tab", in: "DEUT\tDEFF", reason: "U+0009 (tab) at position 5"},
	})
}

func TestRoutingNumber(t *testing.T) {
	t.Parallel()
	run(t, normalize.KindRoutingNumber, normalize.RoutingNumber, []test{
		{name: "JPMorgan Chase NY", in: "021000021", want: "021000021"},
		{name: "Federal Reserve Boston", in: "011000015", want: "011000015"},
		{name: "thrift range", in: "322271627", want: "322271627"},
		{name: "spaced", in: " 0210 0002 1 ", want: "021000021"},
		{name: "hyphens", in: "0210-0002-1", want: "021000021"},
		{name: "electronic range", in: "121000358", want: "121000358"},

		{name: "empty", in: "", reason: "has 0 digits; an ABA routing number has 9"},
		{name: "8 digits", in: "21000021", reason: "has 8 digits; an ABA routing number has 9"},
		{name: "10 digits", in: "0210000210", reason: "has 10 digits"},
		{name: "check digit", in: "021000022", reason: "check digit does not match (ABA checksum 3-7-1)"},
		{name: "swapped digits", in: "012000021", reason: "check digit does not match"},
		{name: "prefix 13", in: "131000021", reason: "starts with 13; ABA routing numbers start with 00 to 12, 21 to 32, 61 to 72 or 80"},
		{name: "prefix 20", in: "201000029", reason: "starts with 20"},
		{name: "prefix 33", in: "331000025", reason: "starts with 33"},
		{name: "prefix 81", in: "811000024", reason: "starts with 81"},
		{name: "O for 0", in: "O21000021", reason: "position 1 must be a digit, got 'O'; letters are never read as digits"},
		{name: "l for 1", in: "02l000021", reason: "position 3 must be a digit, got 'L'"},
		{name: "slash", in: "021/000021", reason: "contains '/' at position 4; a routing number has only digits"},
		{name: "full-width digits", in: "\uff10\uff12\uff11000021", reason: "U+FF10 at position 1"},
		{name: "Arabic-Indic digit", in: "02100002\u0661", reason: "U+0661 at position 9"},
	})
}

func TestSortCode(t *testing.T) {
	t.Parallel()
	run(t, normalize.KindSortCode, normalize.SortCode, []test{
		{name: "hyphens", in: "60-16-13", want: "601613"},
		{name: "plain", in: "601613", want: "601613"},
		{name: "spaces", in: "60 16 13", want: "601613"},
		{name: "empty", in: "", reason: "has 0 digits; a sort code has 6"},
		{name: "5 digits", in: "60-16-1", reason: "has 5 digits"},
		{name: "7 digits", in: "60-16-133", reason: "has 7 digits"},
		{name: "letter", in: "6O-16-13", reason: "position 2 must be a digit, got 'O'"},
		{name: "double hyphen", in: "60--16-13", reason: "contains '-' at position 3; a sort code has only digits, as in 60-16-13"},
		{name: "en dash", in: "60\u201316\u201313", reason: "U+2013 at position 3"},
		{name: "full-width", in: "\uff16\uff10-16-13", reason: "U+FF16 at position 1"},
	})
}

func TestParseAccount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name                  string
		number, bank, country string
		want                  normalize.Account
		key                   string
		kind, reason          string
	}{
		// IBAN.
		{name: "IBAN", number: "DE89 3704 0044 0532 0130 00", want: normalize.Account{Type: normalize.AccountIBAN, Country: "DE", Number: "DE89370400440532013000"}, key: "DE89370400440532013000"},
		{name: "IBAN with BIC", number: "de89370400440532013000", bank: "COBADEFFXXX", country: "de", want: normalize.Account{Type: normalize.AccountIBAN, Country: "DE", Number: "DE89370400440532013000", BIC: "COBADEFF"}, key: "DE89370400440532013000"},
		{name: "IBAN of another country than the vendor's", number: "GB29NWBK60161331926819", country: "US", want: normalize.Account{Type: normalize.AccountIBAN, Country: "GB", Number: "GB29NWBK60161331926819"}, key: "GB29NWBK60161331926819"},
		{name: "IBAN with no-break spaces", number: "GB29\u00a0NWBK\u00a06016\u00a01331\u00a09268\u00a019", want: normalize.Account{Type: normalize.AccountIBAN, Country: "GB", Number: "GB29NWBK60161331926819"}, key: "GB29NWBK60161331926819"},
		{name: "invalid IBAN is never a national number", number: "DE89370400440532013001", bank: "COBADEFF", kind: normalize.KindIBAN, reason: "check digits do not match"},
		{name: "IBAN structure", number: "DE59370400440532O13000", kind: normalize.KindIBAN, reason: "position 17 must be a digit, got 'O'"},
		{name: "IBAN with a bad BIC", number: "DE89370400440532013000", bank: "COBA", kind: normalize.KindBIC, reason: "has 4 letters and digits"},

		// US.
		{name: "US", number: "1234567890", bank: "021000021", country: "US", want: normalize.Account{Type: normalize.AccountABA, Country: "US", Bank: "021000021", Number: "1234567890"}, key: "ABA:021000021:1234567890"},
		{name: "US lower-case country, spaced", number: " 1234 5678 90 ", bank: "0210-0002-1", country: "us", want: normalize.Account{Type: normalize.AccountABA, Country: "US", Bank: "021000021", Number: "1234567890"}, key: "ABA:021000021:1234567890"},
		{name: "US leading zeros kept", number: "000123456789", bank: "011000015", country: "US", want: normalize.Account{Type: normalize.AccountABA, Country: "US", Bank: "011000015", Number: "000123456789"}, key: "ABA:011000015:000123456789"},
		{name: "US 17 digits", number: "12345678901234567", bank: "021000021", country: "US", want: normalize.Account{Type: normalize.AccountABA, Country: "US", Bank: "021000021", Number: "12345678901234567"}, key: "ABA:021000021:12345678901234567"},
		{name: "US with a BIC is an international transfer", number: "1234567890", bank: "CHASUS33", country: "US", want: normalize.Account{Type: normalize.AccountBIC, Country: "US", Bank: "CHASUS33", Number: "1234567890", BIC: "CHASUS33"}, key: "BIC:CHASUS33:1234567890"},
		{name: "US routing check digit", number: "1234567890", bank: "021000022", country: "US", kind: normalize.KindRoutingNumber, reason: "check digit does not match"},
		{name: "US routing with an O", number: "1234567890", bank: "O21000021", country: "US", kind: normalize.KindRoutingNumber, reason: "position 1 must be a digit, got 'O'"},
		{name: "US account with an O", number: "12345O7890", bank: "021000021", country: "US", kind: normalize.KindBankAccount, reason: "position 6 must be a digit, got 'O'; letters are never read as digits"},
		{name: "US account too short", number: "123", bank: "021000021", country: "US", kind: normalize.KindBankAccount, reason: "has 3 digits; a US account number has 4 to 17"},
		{name: "US account too long", number: "123456789012345678", bank: "021000021", country: "US", kind: normalize.KindBankAccount, reason: "has 18 digits"},
		{name: "routing number outside the US", number: "1234567890", bank: "021000021", country: "CA", kind: normalize.KindBankAccount, reason: "is a 9-digit bank code: an ABA routing number, used only for accounts in the US, but the country is CA"},
		{name: "routing number without a country", number: "1234567890", bank: "021000021", kind: normalize.KindBankAccount, reason: "but the country is not given"},
		{name: "US account Cyrillic digit look-alike", number: "1234567\u0417", bank: "021000021", country: "US", kind: normalize.KindBankAccount, reason: "U+0417 at position 8"},
		{name: "US account full-width", number: "\uff11234567890", bank: "021000021", country: "US", kind: normalize.KindBankAccount, reason: "U+FF11 at position 1"},

		// UK.
		{name: "UK", number: "31926819", bank: "60-16-13", country: "GB", want: normalize.Account{Type: normalize.AccountSortCode, Country: "GB", Bank: "601613", Number: "31926819"}, key: "SORTCODE:601613:31926819"},
		{name: "UK sort code in the number", number: "60-16-13 31926819", country: "GB", want: normalize.Account{Type: normalize.AccountSortCode, Country: "GB", Bank: "601613", Number: "31926819"}, key: "SORTCODE:601613:31926819"},
		{name: "UK sort code in the number, with a BIC", number: "601613 3192 6819", bank: "NWBKGB2L", country: "GB", want: normalize.Account{Type: normalize.AccountSortCode, Country: "GB", Bank: "601613", Number: "31926819", BIC: "NWBKGB2L"}, key: "SORTCODE:601613:31926819"},
		{name: "UK sort code in both", number: "601613 31926819", bank: "601613", country: "GB", want: normalize.Account{Type: normalize.AccountSortCode, Country: "GB", Bank: "601613", Number: "31926819"}, key: "SORTCODE:601613:31926819"},
		{name: "Jersey", number: "31926819", bank: "601613", country: "JE", want: normalize.Account{Type: normalize.AccountSortCode, Country: "JE", Bank: "601613", Number: "31926819"}, key: "SORTCODE:601613:31926819"},
		{name: "UK 7-digit account", number: "3192681", bank: "60-16-13", country: "GB", kind: normalize.KindBankAccount, reason: "has 7 digits; a UK account number has 8"},
		{name: "UK account with an O", number: "3192681O", bank: "60-16-13", country: "GB", kind: normalize.KindBankAccount, reason: "position 8 must be a digit, got 'O'"},
		{name: "UK sort code with an O", number: "31926819", bank: "6O-16-13", country: "GB", kind: normalize.KindSortCode, reason: "position 2 must be a digit, got 'O'"},
		{name: "sort code outside the UK", number: "31926819", bank: "60-16-13", country: "IE", kind: normalize.KindBankAccount, reason: "is a 6-digit bank code: a sort code, used only for accounts in the UK (GB, GG, JE, IM), but the country is IE"},
		{name: "UK 14 digits without the country", number: "60161331926819", kind: normalize.KindBankAccount, reason: "is a national account number without its bank"},

		// National number at a BIC.
		{name: "national with BIC", number: "0532013000", bank: "COBADEFF", country: "DE", want: normalize.Account{Type: normalize.AccountBIC, Country: "DE", Bank: "COBADEFF", Number: "0532013000", BIC: "COBADEFF"}, key: "BIC:COBADEFF:0532013000"},
		{name: "Japan", number: "1234567", bank: "BOTKJPJTXXX", country: "JP", want: normalize.Account{Type: normalize.AccountBIC, Country: "JP", Bank: "BOTKJPJT", Number: "1234567", BIC: "BOTKJPJT"}, key: "BIC:BOTKJPJT:1234567"},
		{name: "Canada, groups", number: "00012-003 1234567", bank: "ROYCCAT2", country: "CA", want: normalize.Account{Type: normalize.AccountBIC, Country: "CA", Bank: "ROYCCAT2", Number: "000120031234567", BIC: "ROYCCAT2"}, key: "BIC:ROYCCAT2:000120031234567"},
		{name: "Czech prefix and bank code", number: "19-2000145399/0800", bank: "GIBACZPX", want: normalize.Account{Type: normalize.AccountBIC, Country: "CZ", Bank: "GIBACZPX", Number: "1920001453990800", BIC: "GIBACZPX"}, key: "BIC:GIBACZPX:1920001453990800"},
		{name: "letters in the number", number: "ab12cd34", bank: "BOTKJPJT500", want: normalize.Account{Type: normalize.AccountBIC, Country: "JP", Bank: "BOTKJPJT500", Number: "AB12CD34", BIC: "BOTKJPJT500"}, key: "BIC:BOTKJPJT500:AB12CD34"},
		{name: "national without a bank", number: "0532013000", country: "DE", kind: normalize.KindBankAccount, reason: "is a national account number without its bank: give the bank's BIC"},
		{name: "national, bank code of 8 digits", number: "0532013000", bank: "37040044", country: "DE", kind: normalize.KindBankAccount, reason: "is a bank code of 8 digits: neither an ABA routing number (9 digits, US) nor a sort code (6 digits, GB)"},
		{name: "national, malformed BIC", number: "0532013000", bank: "COBADEF", kind: normalize.KindBIC, reason: "has 7 letters and digits"},
		{name: "national, BIC with a Cyrillic letter", number: "0532013000", bank: "C\u041eBADEFF", kind: normalize.KindBankAccount, reason: "U+041E at position 2"},
		{name: "national too short", number: "123", bank: "COBADEFF", kind: normalize.KindBankAccount, reason: "has 3 letters and digits; an account number at a BIC has 4 to 34"},
		{name: "national too long", number: strings.Repeat("1", 35), bank: "COBADEFF", kind: normalize.KindBankAccount, reason: "has 35 letters and digits"},
		{name: "national with a colon", number: "0532:013000", bank: "COBADEFF", kind: normalize.KindBankAccount, reason: "contains ':' at position 5; an account number has only the letters A-Z and the digits 0-9"},
		{name: "national look-alike", number: "053201300\u039f", bank: "COBADEFF", kind: normalize.KindBankAccount, reason: "U+039F at position 10"},
		{name: "national zero-width space", number: "0532\u200b013000", bank: "COBADEFF", kind: normalize.KindBankAccount, reason: "U+200B (zero-width space) at position 5"},

		// Arguments.
		{name: "empty", kind: normalize.KindBankAccount, reason: "is empty"},
		{name: "unknown country", number: "0532013000", bank: "COBADEFF", country: "XX", kind: normalize.KindBankAccount, reason: `country "XX" is not an ISO 3166-1 alpha-2 code`},
		{name: "UK is not a country", number: "31926819", bank: "601613", country: "UK", kind: normalize.KindBankAccount, reason: `country "UK" is not an ISO 3166-1 alpha-2 code`},
		{name: "Cyrillic country", number: "31926819", bank: "601613", country: "G\u0412", kind: normalize.KindBankAccount, reason: "U+0412 at position 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := normalize.ParseAccount(tt.number, tt.bank, tt.country)
			if tt.reason != "" {
				if err == nil {
					t.Fatalf("ParseAccount(%q, %q, %q) = %+v, want an error with reason %q", tt.number, tt.bank, tt.country, got, tt.reason)
				}
				if got != (normalize.Account{}) {
					t.Errorf("ParseAccount returned %+v with its error, want the zero Account", got)
				}
				var e *normalize.Error
				if !errors.As(err, &e) || e.Kind != tt.kind || !strings.Contains(e.Reason, tt.reason) || !errors.Is(err, normalize.ErrInvalid) {
					t.Fatalf("ParseAccount(%q, %q, %q): error %v, want an *Error of kind %q with reason %q", tt.number, tt.bank, tt.country, err, tt.kind, tt.reason)
				}
				return
			}
			if err != nil {
				t.Fatalf("ParseAccount(%q, %q, %q): %v", tt.number, tt.bank, tt.country, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseAccount(%q, %q, %q) mismatch (-want, +got):\n%s", tt.number, tt.bank, tt.country, diff)
			}
			if k := got.Key(); k != tt.key {
				t.Errorf("Key() = %q, want %q", k, tt.key)
			}
			if id, err := normalize.Identifier(got.Key()); err != nil || id != got.Key() {
				t.Errorf("Key() %q is not an Identifier: %v", got.Key(), err)
			}
			// The canonical parts parse to the same account.
			bank := got.Bank
			if got.Type == normalize.AccountIBAN {
				bank = got.BIC
			}
			again, err := normalize.ParseAccount(got.Number, bank, got.Country)
			if err != nil || again.Key() != got.Key() || again.Type != got.Type || again.Country != got.Country {
				t.Errorf("ParseAccount of the canonical parts = %+v, %v; want %+v", again, err, got)
			}
			fromKey, err := normalize.ParseAccountKey(got.Key())
			if err != nil || fromKey.Key() != got.Key() || fromKey.Type != got.Type || fromKey.Number != got.Number || fromKey.Bank != got.Bank {
				t.Errorf("ParseAccountKey(%q) = %+v, %v; want the account %+v", got.Key(), fromKey, err, got)
			}
			wantAccType := "bank"
			if got.Type == normalize.AccountIBAN {
				wantAccType = "iban"
			}
			if got.OdooAccType() != wantAccType {
				t.Errorf("OdooAccType() = %q, want %q", got.OdooAccType(), wantAccType)
			}
		})
	}
}

func TestParseAccountKey(t *testing.T) {
	t.Parallel()
	for _, key := range []string{
		"", "de89370400440532013000", "DE89 3704 0044 0532 0130 00", "DE89370400440532013001",
		"ABA:021000021", "ABA:021000021:", "ABA:021000022:1234567890", "ABA:21000021:1234567890",
		"ABA:0210-00021:1234567890", "aba:021000021:1234567890", "SORTCODE:60-16-13:31926819",
		"SORTCODE:601613:601613 31926819", "BIC:COBADEFFXXX:0532013000", "BIC:COBADEFF:0532-013000",
		"BIC:COBADEFF:0532013000:x", "IBAN:DE89370400440532013000", "US122000000121212121212",
	} {
		if a, err := normalize.ParseAccountKey(key); err == nil {
			t.Errorf("ParseAccountKey(%q) = %+v, want an error: not a key in canonical form", key, a)
		} else if !errors.Is(err, normalize.ErrInvalid) {
			t.Errorf("ParseAccountKey(%q): error %v does not wrap ErrInvalid", key, err)
		}
	}
}

func TestAccountKeysDiffer(t *testing.T) {
	t.Parallel()
	// One set of digits, read as each type, gives distinct keys.
	accounts := []normalize.Account{}
	for _, in := range [][3]string{
		{"GB29NWBK60161331926819", "", ""},
		{"31926819", "601613", "GB"},
		{"31926819", "021000021", "US"},
		{"31926819", "NWBKGB2L", "GB"},
		{"31926819", "NWBKGB2L500", "GB"},
		{"31926819", "011000015", "US"},
	} {
		a, err := normalize.ParseAccount(in[0], in[1], in[2])
		if err != nil {
			t.Fatal(err)
		}
		accounts = append(accounts, a)
	}
	seen := map[string]bool{}
	for _, a := range accounts {
		if seen[a.Key()] {
			t.Errorf("two accounts have the key %q", a.Key())
		}
		seen[a.Key()] = true
	}
	if (normalize.Account{}).Key() != "" || (normalize.Account{}).OdooAccType() != "bank" {
		t.Errorf("the zero Account has key %q and acc_type %q", (normalize.Account{}).Key(), (normalize.Account{}).OdooAccType())
	}
}

func ExampleParseAccount() {
	for _, in := range [][3]string{
		{"DE89 3704 0044 0532 0130 00", "COBADEFFXXX", "DE"},
		{"1234567890", "021000021", "US"},
		{"60-16-13 31926819", "", "GB"},
		{"0532013000", "COBADEFF", "DE"},
		{"12345O7890", "021000021", "US"},
	} {
		a, err := normalize.ParseAccount(in[0], in[1], in[2])
		fmt.Println(a.Key(), a.OdooAccType(), err)
	}
	// Output:
	// DE89370400440532013000 iban <nil>
	// ABA:021000021:1234567890 bank <nil>
	// SORTCODE:601613:31926819 bank <nil>
	// BIC:COBADEFF:0532013000 bank <nil>
	//  bank bank account: "12345O7890": position 6 must be a digit, got 'O'; letters are never read as digits
}

func BenchmarkParseAccount(b *testing.B) {
	for _, in := range [][3]string{
		{"DE89 3704 0044 0532 0130 00", "COBADEFFXXX", "DE"},
		{"1234567890", "021000021", "US"},
		{"60-16-13 31926819", "", "GB"},
	} {
		b.Run(in[0], func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := normalize.ParseAccount(in[0], in[1], in[2]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
