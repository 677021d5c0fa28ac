// Package normalize holds the normalizers for critical values: IBANs and
// other bank accounts, e-mail addresses, record identifiers and names, and
// the duplicate key of a vendor's bill reference. A normalizer turns what an
// agent typed into the one spelling that is looked up in a trusted source,
// or refuses it with a reason a person and an agent can read.
//
// Every normalizer of a single value has the signature
// func(string) (string, error), so a contract can hold it as a field, and
// every one of them:
//
//   - refuses any non-ASCII character (full-width digits, Cyrillic or Greek
//     look-alikes, no-break and zero-width spaces) instead of folding or
//     stripping it, so two values that look the same are never made equal;
//     two exceptions: the bank account normalizers ([IBAN],
//     [AccountNumber], [ParseAccount], [BIC], [RoutingNumber], [SortCode])
//     take the Unicode space separators (category Zs, such as the no-break
//     space) between groups as separators, as PDFs and locale-formatted
//     pages produce them; and [Name] keeps letters of every script as they
//     are, compares them exactly and refuses look-alikes with
//     [ErrLookAlike];
//   - refuses ASCII control characters, including tab and newline (Name
//     takes white space as a separator);
//   - is deterministic and idempotent: normalizing its own output returns that
//     output unchanged;
//   - returns an error that wraps [ErrInvalid] and is a [*Error].
//
// Normalizers are pure functions: they take no context, do no I/O and are
// safe for concurrent use.
//
// # Bank accounts
//
// [ParseAccount] classifies an account as Odoo 17 keeps it in
// res.partner.bank (acc_number, the BIC of bank_id, and the routing number
// of l10n_us's aba_routing) into an IBAN, a US account (ABA routing number
// and account number), a UK account (sort code and account number) or a
// national account number at a BIC, and gives each a canonical key
// ([Account.Key]) for registries. The rules come from:
//
//   - IBAN: ISO 13616 and the IBAN Registry that SWIFT publishes as its
//     registration authority, for each country's length and BBAN structure
//     (https://www.swift.com/standards/data-standards/iban-international-bank-account-number);
//     check digits: ISO/IEC 7064, MOD 97-10.
//   - BIC: ISO 9362 (business identifier code), whose registration
//     authority is SWIFT
//     (https://www.swift.com/standards/data-standards/bic-business-identifier-code);
//     country codes: ISO 3166-1 alpha-2 (https://www.iso.org/iso-3166-country-codes.html),
//     as listed in the tz database's iso3166.tab, plus XK (Kosovo), which
//     SWIFT uses.
//   - ABA routing number: the American Bankers Association's routing number
//     policy (https://www.aba.com/about-us/routing-number), the 3-7-1
//     check digit it defines, and the prefixes of Federal Reserve Regulation
//     CC, 12 CFR part 229, appendix A
//     (https://www.ecfr.gov/current/title-12/chapter-II/subchapter-A/part-229/appendix-Appendix%20A%20to%20Part%20229);
//     account number length: the 17-position DFI account number field of
//     the Nacha Operating Rules (https://www.nacha.org/rules).
//   - UK sort code and account number: the standard 6-digit sort code and
//     8-digit account number of Vocalink's "Validating account numbers"
//     (https://www.vocalink.com/tools/modulus-checking/); the modulus checks
//     it describes need its data files and are not made.
//   - Odoo: res.partner.bank's acc_number, bank_id and acc_type ('iban' or
//     'bank'), and l10n_us's aba_routing field
//     (https://github.com/odoo/odoo/tree/17.0/addons/l10n_us/models).
//
// This package imports only the standard library and must never import
// anything else, not even another intentplane package.
package normalize
