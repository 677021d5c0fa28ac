package ap

import (
	"context"
	"errors"
	"math"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// conversion converts the amounts of one decision of ap.pay_bill into the
// company's currency, in which the thresholds (Config) and the running
// totals apply, with the ERP's own rates of the payment's date (today in
// Config.Zone; erp.Rates). A rate is read once per currency and decision
// and never kept across decisions: a rate entered in the ERP counts from
// the next decision on. For a bill in the company's currency no rate is
// read (erp.Rates reads nothing for it).
type conversion struct {
	src     erp.Rates
	company string
	day     string              // YYYY-MM-DD: the payment's date in the company's calendar
	bill    erp.Rate            // the rate of the bill's currency
	rates   map[string]erp.Rate // currency → its rate; Value "" when the ERP holds none
	missing string              // the first currency without a rate, "" if none
}

// convert reads the rate of the bill's currency for the decision q.
func (p payFacts) convert(ctx context.Context, q gateway.FactQuery, currency string) (*conversion, error) {
	c := &conversion{src: p.src, company: string(q.Owner), day: q.Now.In(p.cfg.Zone).Format(time.DateOnly), rates: map[string]erp.Rate{}}
	if err := c.need(ctx, currency); err != nil {
		return nil, err
	}
	c.bill = c.rates[currency]
	return c, nil
}

// need reads the rate of currency unless the decision has it. A missing
// rate is no error: it is recorded (missing), amounts in the currency
// convert to zero, and the policy refuses (forbid-rate-missing).
func (c *conversion) need(ctx context.Context, currency string) error {
	if _, ok := c.rates[currency]; ok {
		return nil
	}
	r, err := c.src.Rate(ctx, c.company, currency, c.day)
	switch {
	case errors.Is(err, erp.ErrNoRate):
		r.Value = ""
		if c.missing == "" {
			c.missing = currency
		}
	case err != nil:
		return err
	}
	c.rates[currency] = r
	return nil
}

// amount returns m in minor units of the company's currency (erp.Rate's
// Convert: exact, rounded half up); zero when its currency has no rate.
func (c *conversion) amount(m intent.Money) (intent.Amount, error) {
	r, ok := c.rates[m.Currency]
	if !ok || r.Value == "" {
		return 0, nil
	}
	return r.Convert(m.Amount)
}

// threshold returns a, one of Config's thresholds (hundredths of a unit
// of the company's currency), in minor units of the company's currency
// with the exponent the ERP gives it (erp.Rate.CompanyDecimals, the unit
// of amount_company and the totals): 100000 is 1000 for JPY (no
// decimals), 100000 for EUR, 1000000 for KWD (three). Scaling down
// truncates, which no "above" comparison with whole minor units can tell
// from the exact value; scaling up saturates at MaxInt64.
func (c *conversion) threshold(a intent.Amount) intent.Amount {
	for d := c.bill.CompanyDecimals; d < 2; d++ {
		a /= 10
	}
	for d := c.bill.CompanyDecimals; d > 2; d-- {
		if a > math.MaxInt64/10 {
			return math.MaxInt64
		}
		a *= 10
	}
	return a
}

// facts are the facts of the conversion (see payFacts): amountCompany is
// the payment's amount in the company's currency.
func (c *conversion) facts(amountCompany intent.Amount) map[string]intent.Value {
	b := c.bill
	day := b.Day
	if day == "" || c.missing != "" { // the day a rate was missing for
		day = c.day
	}
	return map[string]intent.Value{
		"company_currency": intent.Str(b.Company),
		"amount_company":   intent.Int(int64(amountCompany)),
		"rate_missing":     intent.Str(c.missing),
		"rate_date":        intent.Str(day),
		"rate_value":       intent.Str(b.Value),
		"rate_source":      intent.Str(b.Source),
		"rate":             intent.Str(b.Text()),
	}
}
