package ap

import (
	"context"

	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
)

// The controls of issue 13 that look at the vendor and its bank account
// rather than at the bill: the first payment to a vendor, and a bank in
// another country than the vendor's. Each is a fact (payFacts, the
// registries) and an approval guard in policies/ap/policy.cedar; see
// docs/controls.md for what triggers them and the practice they follow.

// firstPayment reports whether the ERP holds no posted payment to vendor
// (of company): none registered by hand, none through intentplane. One
// read of at most one payment (erp.PaymentQuery Vendor, Posted, Limit 1).
func firstPayment(ctx context.Context, src erp.Reader, company, vendor string) (bool, error) {
	ps, err := src.Payments(ctx, company, erp.PaymentQuery{Vendor: vendor, Posted: true, Limit: 1})
	if err != nil {
		return false, err
	}
	return len(ps) == 0, nil
}

// accountCountry returns the ISO 3166-1 alpha-2 code of the country of
// the bank holding a, as its number says (normalize.Account.Country): an
// IBAN's first two letters, US for an ABA routing number, the UK (or
// the Crown Dependency on file) for a sort code, the BIC's country for a
// national account at a BIC; "" when the account is not usable as typed.
func accountCountry(a erp.BankAccount) string {
	acc, err := normalize.ParseAccount(a.Number, a.BIC, a.Country)
	if err != nil {
		return ""
	}
	return acc.Country
}
