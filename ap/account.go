package ap

import (
	"context"
	"errors"
	"slices"
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
		k, err := normalize.IBAN(s) // with or without its "IBAN:" prefix
		if _, perr := normalize.ParseAccount(s, "", ""); err != nil && errors.Is(perr, normalize.ErrNoBank) {
			return "", &normalize.Error{Kind: normalize.KindBankAccount, Input: s, Err: normalize.ErrNoBank, Reason: noBankReason}
		}
		return k, err
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

// noBankReason is what an agent is told when it names a bank account by
// a national account number alone.
const noBankReason = "is not an IBAN but a national account number, which names no account without its bank's code: " +
	"give the account as ap.get_vendor shows it: ABA:<routing number>:<account number> for a US account, " +
	"SORTCODE:<sort code>:<account number> for a UK account, or BIC:<bank's BIC>:<account number> at any other bank " +
	"(for example BIC:COBADEFF:0532013000)"

// accountProblem says why the account a, as the ERP keeps it, cannot be
// paid, in words for the person who must correct it there; "" when it can
// (see keyOf).
func accountProblem(a erp.BankAccount) string {
	_, err := normalize.ParseAccount(a.Number, a.BIC, a.Country)
	switch {
	case errors.Is(err, normalize.ErrNoBank):
		return "the account number typed in the ERP is a national account number without its bank's code: " +
			"the accounting team adds the bank on the account in the ERP (its BIC; for a US account the ABA routing number, " +
			"for a UK account the sort code); no payment goes to it until then"
	case err != nil:
		return "the number typed in the ERP, with its bank's code, is not a valid account in plain ASCII; no payment goes to it until the accounting team corrects it"
	case !usable(a):
		return "the number the ERP keeps for searches differs from the number typed (a character the ERP folds); no payment goes to it until the accounting team corrects it"
	}
	return ""
}

// keyOf returns the key of an account as the ERP keeps it: its number as
// typed (acc_number, never Odoo's sanitized_acc_number, which folds
// look-alikes), its bank's code and its holder's country, under
// normalize.ParseAccount. ok is false when the account is not usable as
// typed: not a valid account, or an IBAN whose sanitized number differs
// from the IBAN, with or without the "IBAN" prefix people paste (Odoo
// sanitizes "IBAN DE89 3704…" to "IBANDE893704…").
func keyOf(a erp.BankAccount) (string, bool) {
	acc, err := normalize.ParseAccount(a.Number, a.BIC, a.Country)
	if err != nil {
		return "", false
	}
	if acc.Type == normalize.AccountIBAN && acc.Number != a.Sanitized && ibanPrefix+acc.Number != a.Sanitized {
		return "", false
	}
	return acc.Key(), true
}

// ibanPrefix is the prefix that an IBAN typed "IBAN DE89…" or "IBAN:
// DE89…" keeps in the ERP's sanitized number.
const ibanPrefix = "IBAN"

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
// the ERP may keep the account with key: the IBAN, and the IBAN with the
// "IBAN" prefix people paste with it; the account number; and for a UK
// account also the sort code followed by the number, as typed in
// acc_number with no bank.
func sanitizedNumbers(key string) []string {
	a, err := normalize.ParseAccountKey(key)
	if err != nil {
		return nil
	}
	switch a.Type {
	case normalize.AccountSortCode:
		return []string{a.Number, a.Bank + a.Number}
	case normalize.AccountIBAN:
		return []string{a.Number, ibanPrefix + a.Number}
	}
	return []string{a.Number}
}

// accountsWithKey reads the accounts of the company that may hold the
// account with key (see sanitizedNumbers), with q's other fields: one read
// per number the source does not select already (an IBAN's number selects
// its "IBAN"-prefixed spelling too, erp.QueryNumbers), so one for all but
// UK accounts.
func accountsWithKey(ctx context.Context, src erp.Source, company, key string, q erp.BankAccountQuery) ([]erp.BankAccount, error) {
	var out []erp.BankAccount
	seen := map[string]bool{}
	numbers := sanitizedNumbers(key)
	for i, n := range numbers {
		if slices.ContainsFunc(numbers[:i], func(m string) bool { return erp.SameNumber(n, m) }) {
			continue // selected with m
		}
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
