package ap

import "github.com/intentplane/intentplane/core/intent"

// The pack pays in every active ISO 4217 currency, each at its own minor
// unit (intent.CurrencyExponent, the vocabulary's one table): the agent's
// amount is read with the exponent of the currency it names (2 decimals
// for EUR, none for JPY, 3 for KWD; contract.AmountIn), which must be the
// bill's, and the ERP's amounts are in minor units of the bill's currency.
// A currency that is not an active ISO 4217 code (a testing code, gold, a
// code configured only in one ERP) has no minor unit the pack can trust:
// a bill in it is refused and shown without amounts, and the accounting
// team pays it in the ERP.

// supportedCurrency reports whether the pack pays and shows amounts in
// currency: whether it is an active ISO 4217 code.
func supportedCurrency(currency string) bool { return intent.ISOCurrency(currency) }

// unsupportedText says, for the agent, why currency is not paid.
func unsupportedText(currency string) string {
	return currency + " is not an active ISO 4217 currency, so its minor unit is unknown; the assistant pays and shows " +
		"amounts only in ISO 4217 currencies (EUR, USD, JPY, KWD...). Bills in " + currency + " are paid by the accounting team in the ERP"
}

// money writes an amount in minor units of currency for people, with the
// currency's exponent: "1250.00", "100" (JPY), "1.250" (KWD).
func money(a intent.Amount, currency string) string {
	return intent.Money{Currency: currency, Amount: a}.Decimal()
}
