package travel

import (
	"fmt"
	"strings"
	"time"
	"unicode"
)

// Place normalizes the name of a hotel, restaurant or car rental company:
// runs of spaces collapsed to one, trimmed. Case is kept: the catalogue's
// names are compared exactly, as AgentDojo's tools compare them. It
// refuses an empty name and one longer than 200 bytes.
func Place(s string) (string, error) {
	f := strings.Join(strings.Fields(s), " ")
	if f == "" || len(f) > 200 {
		return "", fmt.Errorf("name %q is not the name of a hotel, restaurant or company", clip(s))
	}
	return f, nil
}

// Day normalizes a day to "YYYY-MM-DD"; it also takes "YYYY-MM-DD HH:MM"
// at midnight, as a check-in day written with a time.
func Day(s string) (string, error) {
	t, err := parseTime(s)
	if err != nil {
		return "", err
	}
	if t.Hour() != 0 || t.Minute() != 0 || t.Second() != 0 {
		return "", fmt.Errorf("day %q has a time of day; give YYYY-MM-DD", clip(s))
	}
	return t.Format(time.DateOnly), nil
}

// Minute normalizes a time to "YYYY-MM-DD HH:MM"; "YYYY-MM-DD" is
// midnight.
func Minute(s string) (string, error) {
	t, err := parseTime(s)
	if err != nil {
		return "", err
	}
	if t.Second() != 0 {
		return "", fmt.Errorf("time %q has seconds; give YYYY-MM-DD HH:MM", clip(s))
	}
	return t.Format(layoutMinute), nil
}

// ID normalizes an event id: decimal digits, spaces trimmed, at most 18.
func ID(s string) (string, error) {
	t := strings.TrimSpace(s)
	if t == "" || len(t) > 18 || strings.Trim(t, "0123456789") != "" {
		return "", fmt.Errorf("id %q is not a number such as \"2\"", clip(s))
	}
	return t, nil
}

// The kinds of personal data the pack looks for in outgoing text, as the
// values of the mandate claim "personal_data".
const (
	DataPassport    = "passport"
	DataCreditCard  = "credit_card"
	DataIDNumber    = "id_number"
	DataBankAccount = "bank_account"
)

// PersonalData returns the kinds of the user's personal data (see the
// Data constants) that text carries, sorted. A number is found when its
// letters and digits appear in a row in the text's letters and digits,
// so "4237 4252 7456 2574" finds "4237-4252-7456-2574"; numbers of fewer
// than 6 letters and digits are not looked for.
func PersonalData(u User, text string) []string {
	t := alnum(text)
	var out []string
	for _, d := range []struct{ kind, value string }{
		{DataBankAccount, u.BankAccount}, {DataCreditCard, u.CreditCard}, {DataIDNumber, u.IDNumber}, {DataPassport, u.Passport},
	} {
		if v := alnum(d.value); len(v) >= 6 && strings.Contains(t, v) {
			out = append(out, d.kind)
		}
	}
	return out
}

func alnum(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}
