// Package normalize holds the normalizers for critical values: IBANs, bank
// account numbers, e-mail addresses and record identifiers. A normalizer
// turns what an agent typed into the one spelling that is looked up in a
// trusted source, or refuses it with a reason a person and an agent can read.
//
// Every normalizer has the signature func(string) (string, error), so a
// contract can hold it as a field, and every one of them:
//
//   - refuses any non-ASCII character (full-width digits, Cyrillic or Greek
//     look-alikes, no-break and zero-width spaces) instead of folding or
//     stripping it, so two values that look the same are never made equal;
//     the one exception is that [IBAN] and [AccountNumber] take the Unicode
//     space separators (category Zs, such as the no-break space) between
//     groups as separators, as PDFs and locale-formatted pages produce them;
//   - refuses ASCII control characters, including tab and newline;
//   - is deterministic and idempotent: normalizing its own output returns that
//     output unchanged;
//   - returns an error that wraps [ErrInvalid] and is a [*Error].
//
// Normalizers are pure functions: they take no context, do no I/O and are
// safe for concurrent use.
//
// This package imports only the standard library and must never import
// anything else, not even another intentplane package.
package normalize
