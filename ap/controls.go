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

// paidThroughGateway reports whether one of the vendor's bills (as read
// with erp.BillQuery.WithPayments, which gives the payments registered
// through intentplane) carries a posted payment: then the vendor was paid
// before, and firstPayment's read can be spared. False says nothing: the
// vendor may have been paid by hand.
func paidThroughGateway(bills []erp.Bill) bool {
	for _, b := range bills {
		for _, pm := range b.Payments {
			if pm.State == erp.PaymentPosted {
				return true
			}
		}
	}
	return false
}

// accountCountry returns the ISO 3166-1 alpha-2 code of the country of
// the bank holding a, as its number says (normalize.Account.Country): an
// IBAN's first two letters, US for an ABA routing number, the UK (or
// the Crown Dependency on file) for a sort code, the BIC's country for a
// national account at a BIC; "" when the account is not usable as typed.
// An account whose country is the one whose IBANs the holder's territory
// uses (ibanArea: a GB IBAN in Jersey, an FR IBAN in Réunion, an FI IBAN
// in Åland) is the holder's territory's: its banks have no IBAN prefix of
// their own.
func accountCountry(a erp.BankAccount) string {
	acc, err := normalize.ParseAccount(a.Number, a.BIC, a.Country)
	if err != nil {
		return ""
	}
	if a.Country != "" && ibanArea[a.Country] == acc.Country {
		return a.Country
	}
	return acc.Country
}

// ibanArea maps a territory whose banks have no IBAN country code of their
// own to the code its IBANs carry (SWIFT's IBAN registry): the Crown
// Dependencies use GB, the French overseas departments and collectivities
// FR, Åland FI.
var ibanArea = map[string]string{
	"JE": "GB", "GG": "GB", "IM": "GB",
	"GF": "FR", "GP": "FR", "MQ": "FR", "RE": "FR", "YT": "FR", "PM": "FR", "BL": "FR", "MF": "FR", "NC": "FR", "PF": "FR", "WF": "FR", "TF": "FR",
	"AX": "FI",
}
