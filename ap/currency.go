package ap

import (
	"fmt"
	"strings"

	"github.com/intentplane/intentplane/erp"
)

// The pack pays only in currencies whose minor unit is one hundredth (two
// decimal places, as for EUR and USD). Amounts are read as decimals with two
// fraction digits (contract.Amount(2)), compared with the ERP's amounts in
// minor units, and shown with two decimals: for a currency with another
// minor unit that would be off by a factor of 10 or more (¥1,000,000 read as
// "10000.00 JPY"). Per-currency scales are not supported: a bill in another
// currency is refused and shown without amounts, and the accounting team
// pays it in the ERP.

// twoDecimals lists the active ISO 4217 currencies whose minor unit is two
// decimal places (ISO 4217 list one, 2025), funds codes included. It is
// explicit, not derived from the ERP, so that a currency configured with
// other decimals in one ERP is never paid at the wrong scale.
var twoDecimals = setOf(
	"AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BOV BRL BSD BTN BWP BYN BZD " +
		"CAD CDF CHE CHF CHW CNY COP COU CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS " +
		"GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR LRD LSL " +
		"MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MXV MYR MZN NAD NGN NIO NOK NPR NZD PAB PEN PGK " +
		"PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN SVC SYP SZL THB TJS " +
		"TMT TOP TRY TTD TWD TZS UAH USD USN UYU UZS VED VES WST XCD XCG YER ZAR ZMW ZWG")

func setOf(codes string) map[string]bool {
	m := map[string]bool{}
	for _, c := range strings.Fields(codes) {
		m[c] = true
	}
	return m
}

// supportedCurrency reports whether the pack pays and shows amounts in
// currency, an upper-case ISO 4217 code: whether its minor unit is two
// decimal places.
func supportedCurrency(currency string) bool { return twoDecimals[currency] }

// unsupportedText says, for the agent, why currency is not paid.
func unsupportedText(currency string) string {
	why := "is not an ISO 4217 currency with 2 decimal places"
	switch d := erp.Decimals(currency); {
	case d == 0:
		why = "has no decimal places (whole units)"
	case d != 2:
		why = fmt.Sprintf("has %d decimal places", d)
	}
	return currency + " " + why + "; the assistant pays and shows only currencies with 2 decimal places (cents), " +
		"such as EUR or USD. Bills in " + currency + " are paid by the accounting team in the ERP"
}
