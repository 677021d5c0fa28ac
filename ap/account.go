package ap

import (
	"context"
	"strings"

	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// AccountKey normalizes the bank account a payment names (the "iban"
// parameter of ap.pay_bill) to its canonical key (normalize.Account.Key):
//
//   - an IBAN, in any spelling normalize.IBAN takes ("DE89 3704 0044 0532
//     0130 00"), becomes its electronic format "DE89370400440532013000";
//   - a US account is "ABA:" routing number ":" account number
//     ("ABA:021000021:1234567890"), a UK account "SORTCODE:" sort code ":"
//     account number ("SORTCODE:60-16-13:31926819"), a national account
//     at a bank "BIC:" BIC ":" account number ("BIC:COBADEFF:0532013000");
//     each part takes the separators normalize.ParseAccount takes, and the
//     key is returned in canonical form ("SORTCODE:601613:31926819");
//     the prefixes are upper case.
//
// ap.get_vendor shows every account in this form. The parameter keeps its
// name "iban" so that existing clients and policies keep working; it is
// not widened to free text: anything else is refused. Look-alikes (any
// non-ASCII character) are refused as normalize.IBAN refuses them. The
// error wraps normalize.ErrInvalid.
func AccountKey(s string) (string, error) {
	typ, rest, _ := strings.Cut(s, ":")
	country := ""
	switch strings.TrimSpace(typ) {
	case "ABA":
		country = "US"
	case "SORTCODE":
		country = "GB"
	case "BIC":
	default:
		return normalize.IBAN(s) // with or without its "IBAN:" prefix
	}
	bank, number, ok := strings.Cut(rest, ":")
	if !ok {
		return "", &normalize.Error{Kind: normalize.KindBankAccount, Input: s,
			Reason: "is neither an IBAN nor an account key such as ABA:021000021:1234567890, SORTCODE:601613:31926819 or BIC:COBADEFF:0532013000"}
	}
	a, err := normalize.ParseAccount(number, bank, country)
	if err != nil {
		return "", err
	}
	if a.Type == normalize.AccountIBAN {
		return "", &normalize.Error{Kind: normalize.KindBankAccount, Input: s, Reason: "is an IBAN: give it without a prefix"}
	}
	return a.Key(), nil
}

// keyOf returns the key of an account as the ERP keeps it: its number as
// typed (acc_number, never Odoo's sanitized_acc_number, which folds
// look-alikes), its bank's code and its holder's country, under
// normalize.ParseAccount. ok is false when the account is not usable as
// typed: not a valid account, or an IBAN whose sanitized number differs.
func keyOf(a erp.BankAccount) (string, bool) {
	acc, err := normalize.ParseAccount(a.Number, a.BIC, a.Country)
	if err != nil {
		return "", false
	}
	if acc.Type == normalize.AccountIBAN && acc.Number != a.Sanitized {
		return "", false
	}
	return acc.Key(), true
}

// usable reports whether an account's number, as typed in the ERP, is an
// account under the pack's normalizer (see keyOf).
func usable(a erp.BankAccount) bool {
	_, ok := keyOf(a)
	return ok
}

// showAccount returns an account key for people: an IBAN in print format,
// any other key as it is.
func showAccount(key string) string {
	if strings.Contains(key, ":") {
		return key
	}
	return normalize.FormatIBAN(key)
}

// sanitizedNumbers returns the sanitized numbers (erp.Sanitize) under which
// the ERP may keep the account with key: the IBAN; the account number; and
// for a UK account also the sort code followed by the number, as typed in
// acc_number with no bank.
func sanitizedNumbers(key string) []string {
	a, err := normalize.ParseAccountKey(key)
	if err != nil {
		return nil
	}
	if a.Type == normalize.AccountSortCode {
		return []string{a.Number, a.Bank + a.Number}
	}
	return []string{a.Number}
}

// accountsWithKey reads the accounts of the company that may hold the
// account with key (see sanitizedNumbers), with q's other fields: one read
// per number, so one for all but UK accounts.
func accountsWithKey(ctx context.Context, src erp.Source, company, key string, q erp.BankAccountQuery) ([]erp.BankAccount, error) {
	var out []erp.BankAccount
	seen := map[string]bool{}
	for _, n := range sanitizedNumbers(key) {
		q.Number = n
		as, err := src.BankAccounts(ctx, company, q)
		if err != nil {
			return nil, err
		}
		for _, a := range as {
			if !seen[a.ID] {
				seen[a.ID] = true
				out = append(out, a)
			}
		}
	}
	return out, nil
}
