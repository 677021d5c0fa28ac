package ap

import (
	"fmt"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

// Phraser says how the pack's payments and bank-detail changes read for
// the person asked to approve them (approval.Phraser): one sentence with
// the values that execute ("Pay 2,400.00 EUR to ACME Supplies for bill
// INV-2291 (BILL/2026/11/0002, due 15 Dec 2026), to DE89 3704 0044 0532
// 0130 00, the account on file since 3 Mar 2025"), why a person is asked
// in words from the approval guards that asked (the policy's @id), and
// the facts that matter, labelled: the bill, what was paid already, the
// bank account and its country, the call-back. It reads only the request:
// the facts payFacts and the registries gave when the operation was
// decided.
func Phraser() approval.Phraser { return approval.PhraserFunc(phrase) }

func phrase(r approval.Request) (approval.Phrase, bool) {
	switch r.Operation.Action {
	case ActionPayBill:
		return phrasePayment(r), true
	case ActionChangeVendorBank:
		return phraseChange(r), true
	}
	return approval.Phrase{}, false
}

// phraseFacts reads a request's facts and arguments for phrasing: a
// missing or mistyped one reads as its zero value.
type phraseFacts struct{ r approval.Request }

func (f phraseFacts) str(name string) string {
	if v, ok := f.r.Facts[name]; ok && v.Kind == intent.KindString {
		return v.Str
	}
	return ""
}

func (f phraseFacts) long(name string) (int64, bool) {
	v, ok := f.r.Facts[name]
	if !ok || v.Kind != intent.KindInt {
		return 0, false
	}
	return v.Int, true
}

func (f phraseFacts) flag(name string) bool {
	v, ok := f.r.Facts[name]
	return ok && v.Kind == intent.KindBool && v.Bool
}

func (f phraseFacts) arg(name string) string {
	if v, ok := f.r.Operation.Args[name]; ok && v.Kind == intent.KindString {
		return v.Str
	}
	return ""
}

// resolved returns the provenance of critical parameter param.
func (f phraseFacts) resolved(param string) intent.Provenance {
	for _, res := range f.r.Resolved {
		if res.Param == param {
			return res.Provenance
		}
	}
	return intent.Provenance{}
}

// money formats fact name, minor units of the company's currency.
func (f phraseFacts) money(name string) (string, bool) {
	v, ok := f.long(name)
	if !ok {
		return "", false
	}
	return companyMoney(f, v), true
}

func companyMoney(f phraseFacts, v int64) string {
	cur := f.str("company_currency")
	scale := 2
	if e, ok := intent.CurrencyExponent(cur); ok {
		scale = e
	}
	return approval.FormatAmount(intent.Amount(v), uint8(scale), cur)
}

// billMoney formats fact name, minor units of the bill's currency.
func (f phraseFacts) billMoney(name string) (string, bool) {
	v, ok := f.long(name)
	if !ok {
		return "", false
	}
	cur := f.arg("currency")
	return approval.FormatAmount(intent.Amount(v), uint8(intent.Money{Currency: cur}.Exponent()), cur), true
}

// vendor names the vendor: its name on file, or its id.
func (f phraseFacts) vendor() string {
	if n := f.str("vendor_name"); n != "" {
		return n
	}
	return "vendor " + f.arg("vendor")
}

// day formats a fact holding a day as 2006-01-02 ("15 Dec 2026"); "" if
// it holds none.
func (f phraseFacts) day(name string) string {
	t, err := time.Parse(time.DateOnly, f.str(name))
	if err != nil {
		return ""
	}
	return approval.FormatDate(t)
}

// account formats an account key for people: an IBAN in groups of four,
// a national account as its key.
func account(key string) string { return normalize.FormatIBAN(key) }

// ibanCountry returns the country code an IBAN carries, or "".
func ibanCountry(key string) string {
	e, err := normalize.IBAN(key)
	if err != nil {
		return ""
	}
	return e[:2]
}

var labels = map[string]string{
	"vendor": "Vendor", "bill": "Bill", "iban": "Bank account", "amount": "Amount",
	"currency": "Currency", "residual": "Owed before this payment",
}

func phrasePayment(r approval.Request) approval.Phrase {
	f := phraseFacts{r}
	p := approval.Phrase{Labels: labels, Currency: f.arg("currency"),
		Names: map[string][]string{"vendor": nonEmpty(f.str("vendor_name")), "bill": nonEmpty(f.str("bill_ref"), f.str("bill_number"))}}
	p.Summary = paymentSummary(f)
	p.Why = paymentWhy(f)
	p.Sections = append(p.Sections,
		approval.Section{Title: "The bill", Facts: present(billFacts(f))},
		approval.Section{Title: "Already paid to " + f.vendor() + ", before this payment", Facts: paidFacts(f)},
		approval.Section{Title: "Bank account", Facts: present(accountFacts(f))})
	if rate := f.str("rate"); rate != "" {
		conv := []approval.Fact{{Label: "Rate", Value: rate}}
		if v, ok := f.money("amount_company"); ok {
			conv = append(conv, approval.Fact{Label: "This payment in " + f.str("company_currency"), Value: v})
		}
		p.Sections = append(p.Sections, approval.Section{Title: "Exchange rate", Facts: conv})
	}
	return p
}

// paymentSummary is the payment's one sentence: amount, vendor, bill (the
// vendor's reference first, the ERP's number beside it), due date and the
// account with the date it was put on file.
func paymentSummary(f phraseFacts) string {
	amount := ""
	if v, ok := f.r.Operation.Args["amount"]; ok && v.Kind == intent.KindAmount {
		amount = approval.FormatAmount(intent.Amount(v.Int), v.Scale, f.arg("currency")) + " "
	}
	bill, number := f.str("bill_ref"), f.str("bill_number")
	if bill == "" {
		bill, number = number, ""
	}
	if bill == "" {
		bill = f.arg("bill")
	}
	var about []string
	if number != "" && number != bill {
		about = append(about, number)
	}
	if due := f.day("bill_due"); due != "" {
		about = append(about, "due "+due)
	}
	s := fmt.Sprintf("Pay %sto %s for bill %s", amount, f.vendor(), bill)
	if len(about) > 0 {
		s += " (" + strings.Join(about, ", ") + ")"
	}
	s += ", to " + account(f.arg("iban"))
	if since := approval.FormatDate(f.resolved("iban").At); since != "" {
		s += ", the account on file since " + since
	}
	return s
}

// billFacts are the bill's facts as resolved: references, totals, a netted
// credit note, due date and a possible duplicate.
func billFacts(f phraseFacts) []approval.Fact {
	facts := []approval.Fact{{Label: "Vendor's reference", Value: f.str("bill_ref")}, {Label: "Number in the ERP", Value: f.str("bill_number")}}
	if t, ok := f.billMoney("bill_total"); ok {
		facts = append(facts, approval.Fact{Label: "Total", Value: t})
	}
	if t, ok := f.billMoney("bill_residual"); ok {
		facts = append(facts, approval.Fact{Label: "Still owed", Value: t})
	}
	if c, ok := f.long("bill_credit"); ok && c > 0 {
		t, _ := f.billMoney("bill_credit")
		n, _ := f.billMoney("bill_net_due")
		facts = append(facts, approval.Fact{Label: "Credit note netted", Value: t + ", leaving " + n + " to pay", Warn: true})
	}
	if c, ok := f.long("bill_free_credit"); ok && c > 0 {
		t, _ := f.billMoney("bill_free_credit")
		facts = append(facts, approval.Fact{Label: "Vendor's credit not used", Value: t + ": " + f.str("bill_free_credit_notes"), Warn: true})
	}
	if o := f.str("bill_other_credit_notes"); o != "" {
		facts = append(facts, approval.Fact{Label: "Vendor's credit in another currency", Value: o, Warn: true})
	}
	facts = append(facts, approval.Fact{Label: "Due", Value: f.day("bill_due")})
	if d := f.str("duplicate_of"); d != "" {
		facts = append(facts, approval.Fact{Label: "May be the same invoice as", Value: d, Warn: true})
	}
	return facts
}

// paidFacts are the running totals paid to the vendor before this payment,
// one per window that holds something, or "nothing".
func paidFacts(f phraseFacts) []approval.Fact {
	var paid []approval.Fact
	for _, w := range []struct{ fact, label string }{
		{TotalBill, "Of this bill"}, {TotalDay, "Today"}, {TotalWeek, "This week"}, {TotalMandate, "Under this mandate"},
	} {
		if v, ok := f.long(w.fact); ok && v != 0 {
			paid = append(paid, approval.Fact{Label: w.label, Value: companyMoney(f, v)})
		}
	}
	if len(paid) == 0 {
		paid = append(paid, approval.Fact{Label: "So far", Value: "nothing"})
	}
	return paid
}

// accountFacts are the paid account's facts: the number, since when it is
// on file, the bank's and the vendor's countries, a first payment.
func accountFacts(f phraseFacts) []approval.Fact {
	acct := []approval.Fact{{Label: "Account", Value: account(f.arg("iban"))}}
	if at := f.resolved("iban").At; !at.IsZero() {
		v := approval.FormatDate(at)
		if days, ok := f.long("iban_age_days"); ok {
			v += " (" + daysText(days) + ")"
		}
		acct = append(acct, approval.Fact{Label: "On file since", Value: v, Warn: f.flag("iban_cooling_off")})
	}
	bank, home := f.str("iban_country"), f.str("vendor_country")
	acct = append(acct,
		approval.Fact{Label: "Bank's country", Value: countryName(bank), Warn: bank != "" && home != "" && bank != home},
		approval.Fact{Label: "Vendor's country", Value: countryName(home)})
	if f.flag("vendor_first_payment") {
		acct = append(acct, approval.Fact{Label: "Earlier payments to the vendor", Value: "none: this is the first", Warn: true})
	}
	return acct
}

// paymentWhy says why a person is asked about a payment, one entry per
// approval guard of the policy that asked (Request.Policies), in the
// policy's order; a guard it does not know says nothing.
func paymentWhy(f phraseFacts) []string {
	amount, _ := f.long("amount_company")
	threshold, _ := f.money("confirm_above")
	total := func(fact string) (string, string) {
		v, _ := f.long(fact)
		paid, _ := f.money(fact)
		return paid, companyMoney(f, amount+v)
	}
	var why []string
	for _, id := range f.r.Policies {
		switch id {
		case "confirm-above-threshold":
			if v, _ := f.long(TotalBill); v > 0 {
				paid, sum := total(TotalBill)
				why = append(why, fmt.Sprintf("With %s already paid of this bill, it comes to %s: above the %s confirmation threshold.", paid, sum, threshold))
			} else {
				why = append(why, fmt.Sprintf("The payment is above the %s confirmation threshold.", threshold))
			}
		case "confirm-above-threshold-today":
			why = append(why, f.windowWhy(TotalDay, "today", amount, threshold))
		case "confirm-above-threshold-week":
			why = append(why, f.windowWhy(TotalWeek, "this week", amount, threshold))
		case "confirm-above-threshold-mandate":
			why = append(why, f.windowWhy(TotalMandate, "under this mandate", amount, threshold))
		case "four-eyes-daily-total":
			limit, _ := f.money("four_eyes_daily_above")
			_, sum := total(TotalDay)
			why = append(why, fmt.Sprintf("Paid to %s today, this payment included: %s, above the %s that one person may confirm: two people must approve.", f.vendor(), sum, limit))
		case "confirm-possible-duplicate":
			why = append(why, "This bill may be the same invoice as another bill of the vendor: "+f.str("duplicate_of")+". Check that it is not the same invoice twice.")
		case "confirm-ref-unclear":
			why = append(why, "The bill's vendor reference cannot be compared with the vendor's other bills, and a paid bill of the same or nearly the same amount may be the same invoice: "+f.str("duplicate_of")+".")
		case "confirm-paid-ref-unclear":
			why = append(why, "A paid bill of the same or nearly the same amount has a vendor reference that cannot be compared: "+f.str("duplicate_of")+". Check that it is not this invoice.")
		case "confirm-open-credit":
			c, _ := f.billMoney("bill_credit")
			why = append(why, fmt.Sprintf("A credit note of %s is netted with this payment: confirm the net amount.", c))
		case "confirm-credit-kept":
			c, _ := f.billMoney("bill_free_credit")
			why = append(why, fmt.Sprintf("The vendor holds %s of credit not tied to this bill (%s) that this payment does not use: it stays on the vendor's account for a later invoice. Confirm paying without it, or pay the net amount to use it.", c, f.str("bill_free_credit_notes")))
		case "confirm-credit-other-currency":
			why = append(why, "The vendor holds credit in another currency ("+f.str("bill_other_credit_notes")+"), never netted with this payment: confirm paying without it; the accounting team can apply it in the ERP.")
		case "confirm-instalment-without-residual":
			why = append(why, "A payment of this same amount of this bill was already made: check that this is a further instalment, not the same payment again.")
		case "confirm-first-payment":
			why = append(why, fmt.Sprintf("This is the first payment to %s: check that the vendor and its bank account are genuine.", f.vendor()))
		case "confirm-bank-country":
			why = append(why, fmt.Sprintf("The bank account is in %s, but %s is in %s: check with the vendor, at its phone number on file, that the account is its own.",
				country(f.str("iban_country")), f.vendor(), country(f.str("vendor_country"))))
		case "four-eyes-cooling-off":
			changed := "recently"
			if days, ok := f.long("iban_age_days"); ok {
				changed = daysText(days)
			}
			why = append(why, fmt.Sprintf("The vendor's bank account changed %s: payments to a new account need two people.", changed))
		}
	}
	return why
}

// windowWhy says that what was paid to the vendor in a window (the total
// fact, "today") and this payment (amount, minor units of the company's
// currency) are above the confirmation threshold.
func (f phraseFacts) windowWhy(fact, when string, amount int64, threshold string) string {
	v, _ := f.long(fact)
	paid, _ := f.money(fact)
	return fmt.Sprintf("With %s already paid to %s %s, this payment brings it to %s: above the %s confirmation threshold.",
		paid, f.vendor(), when, companyMoney(f, amount+v), threshold)
}

func phraseChange(r approval.Request) approval.Phrase {
	f := phraseFacts{r}
	p := approval.Phrase{
		Labels: map[string]string{"vendor": "Vendor", "iban": "New bank account"},
		Names:  map[string][]string{"vendor": nonEmpty(f.str("vendor_name"))},
	}
	to, home := f.arg("iban"), f.str("vendor_country")
	toCountry := ibanCountry(to)
	p.Summary = changeSummary(f)
	for _, id := range r.Policies {
		if id == "four-eyes-bank-change" {
			p.Why = append(p.Why, "A vendor's bank account is changed only with the approval of two people.")
		}
	}
	if toCountry != "" && home != "" && toCountry != home {
		p.Why = append(p.Why, fmt.Sprintf("The new account is in %s, but %s is in %s.", country(toCountry), f.vendor(), country(home)))
	}
	p.Sections = append(p.Sections,
		approval.Section{Title: "Bank account", Facts: present(changeFacts(f))},
		approval.Section{Title: "Call-back", Facts: present(callbackFacts(f))})
	return p
}

// changeSummary is a bank-detail change's one sentence: from which account
// (its country, on file since) to which.
func changeSummary(f phraseFacts) string {
	to, from := f.arg("iban"), f.str("current_iban")
	s := fmt.Sprintf("Change %s bank account", possessive(f.vendor()))
	if from != "" {
		s += " from " + account(from)
		var about []string
		if c := f.str("current_iban_country"); c != "" {
			about = append(about, country(c))
		}
		if since := f.day("current_iban_since"); since != "" {
			about = append(about, "on file since "+since)
		}
		if len(about) > 0 {
			s += " (" + strings.Join(about, ", ") + ")"
		}
	}
	s += " to " + account(to)
	if c := ibanCountry(to); c != "" {
		s += " (" + country(c) + ")"
	}
	return s
}

// changeFacts are the accounts a change replaces and puts on file, with
// their countries and the vendor's.
func changeFacts(f phraseFacts) []approval.Fact {
	to, from := f.arg("iban"), f.str("current_iban")
	toCountry, fromCountry, home := ibanCountry(to), f.str("current_iban_country"), f.str("vendor_country")
	var change []approval.Fact
	if from != "" {
		v := account(from)
		if fromCountry != "" {
			v += ", " + countryName(fromCountry)
		}
		change = append(change, approval.Fact{Label: "From", Value: v})
		if since := f.day("current_iban_since"); since != "" {
			change = append(change, approval.Fact{Label: "On file since", Value: since})
		}
	} else {
		change = append(change, approval.Fact{Label: "From", Value: "no account on file"})
	}
	if note := f.str("current_iban_note"); note != "" {
		change = append(change, approval.Fact{Label: "Note", Value: note, Warn: true})
	}
	v := account(to)
	if toCountry != "" {
		v += ", " + countryName(toCountry)
	}
	return append(change,
		approval.Fact{Label: "To", Value: v, Warn: toCountry != "" && home != "" && toCountry != home},
		approval.Fact{Label: "Vendor's country", Value: countryName(home)})
}

// callbackFacts are the call-back's evidence: who called, the number
// dialled (on file or not) and when.
func callbackFacts(f phraseFacts) []approval.Fact {
	dialled, onFile := f.str("iban_phone_dialled"), f.str("vendor_phone")
	number := dialled
	switch {
	case f.flag("iban_phone_on_file"):
		number += " (the vendor's number on file)"
	case dialled != "":
		number += " (NOT the vendor's number on file: " + onFile + ")"
	}
	when := f.str("iban_called_at")
	if t, err := time.Parse(time.RFC3339, when); err == nil {
		when = approval.FormatTime(t)
	}
	return []approval.Fact{
		{Label: "Called by", Value: f.str(FactCalledBy)},
		{Label: "Number dialled", Value: number, Warn: dialled != "" && !f.flag("iban_phone_on_file")},
		{Label: "When", Value: when},
	}
}

// present returns the facts that have a value.
func present(fs []approval.Fact) []approval.Fact {
	out := fs[:0:0]
	for _, f := range fs {
		if f.Value != "" {
			out = append(out, f)
		}
	}
	return out
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// daysText says how long ago a number of whole days was.
func daysText(days int64) string {
	switch days {
	case 0:
		return "today"
	case 1:
		return "1 day ago"
	}
	return fmt.Sprintf("%d days ago", days)
}

// possessive returns name's English possessive: "Globex's", "ACME
// Supplies'".
func possessive(name string) string {
	if strings.HasSuffix(name, "s") {
		return name + "'"
	}
	return name + "'s"
}

// country names an ISO 3166-1 country in a sentence ("Germany"), or gives
// its code when it does not know it.
func country(code string) string {
	if n, ok := countryNames[code]; ok {
		return n
	}
	return code
}

// countryName names an ISO 3166-1 country for people, with its code
// ("Germany (DE)"); the code alone for one it does not know; "" for "".
func countryName(code string) string {
	if code == "" {
		return ""
	}
	if n, ok := countryNames[code]; ok {
		return n + " (" + code + ")"
	}
	return code
}

var countryNames = map[string]string{
	"AD": "Andorra", "AE": "United Arab Emirates", "AT": "Austria", "AU": "Australia", "BE": "Belgium", "BG": "Bulgaria",
	"CA": "Canada", "CH": "Switzerland", "CN": "China", "CY": "Cyprus", "CZ": "Czechia", "DE": "Germany", "DK": "Denmark",
	"EE": "Estonia", "ES": "Spain", "FI": "Finland", "FR": "France", "GB": "United Kingdom", "GR": "Greece", "HK": "Hong Kong",
	"HR": "Croatia", "HU": "Hungary", "IE": "Ireland", "IN": "India", "IS": "Iceland", "IT": "Italy", "JP": "Japan",
	"LI": "Liechtenstein", "LT": "Lithuania", "LU": "Luxembourg", "LV": "Latvia", "MC": "Monaco", "MT": "Malta",
	"NL": "Netherlands", "NO": "Norway", "PL": "Poland", "PT": "Portugal", "RO": "Romania", "SE": "Sweden", "SG": "Singapore",
	"SI": "Slovenia", "SK": "Slovakia", "SM": "San Marino", "TR": "Türkiye", "UA": "Ukraine", "US": "United States",
}
