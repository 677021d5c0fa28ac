package odoo

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// rateFields are read of a res.currency.rate.
var rateFields = []string{"name", "company_rate", "company_id"}

// Rate implements erp.Rates with Odoo's res.currency.rate, as the reader.
// The company's currency (res.company currency_id) is read once per
// company and cached, as are the currencies' decimal places: Odoo refuses
// to change a company's currency once it has journal entries. The rate is
// read on every call for another currency, in one call, never cached:
// the currency's latest rate dated (name) on or before day among those of
// the company and those of no company, the company's first whatever their
// dates (the order of Odoo 17's res.currency._get_rates, which Odoo's own
// conversion uses). Its value is the record's company_rate, the rate as
// Odoo's rates list shows it ("USD per EUR": the technical rate divided by
// the latest rate of the company's currency, 1 when it has none); Odoo's
// conversion divides by the company currency's rate at the date instead,
// which is the same unless the company's own currency was given rates
// that changed. Without such a record Odoo's conversion would use 1:
// Rate returns an error wrapping erp.ErrNoRate instead, saying where the
// rate is set in Odoo. A currency Odoo does not know wraps
// erp.ErrNotFound.
func (c *Client) Rate(ctx context.Context, company, code, day string) (erp.Rate, error) {
	if err := erp.CheckDay(day); err != nil {
		return erp.Rate{}, err
	}
	cid, ok := c.company(company)
	if !ok {
		return erp.Rate{}, fmt.Errorf("%w: company %q", erp.ErrNotFound, company)
	}
	own, err := c.companyCurrency(ctx, cid)
	if err != nil {
		return erp.Rate{}, err
	}
	if code == own.code {
		return erp.CompanyRate(own.code, own.decimals, day), nil
	}
	id, cur, err := c.loadCurrencyID(ctx, c.reader, code)
	if err != nil {
		return erp.Rate{}, err
	}
	rs, err := c.reader.SearchRead(ctx, "res.currency.rate",
		all(term("currency_id", "=", id), term("name", "<=", day), shared("company_id", cid)), rateFields,
		map[string]any{"order": "company_id, name desc", "limit": 1, "context": rpc.Scope(cid, false)})
	if err != nil {
		return erp.Rate{}, err
	}
	if len(rs) == 0 {
		return erp.Rate{Currency: cur.code, Decimals: cur.decimals, Company: own.code, CompanyDecimals: own.decimals},
			fmt.Errorf("%w: Odoo holds no rate of %s for the company dated on or before %s: set one in Odoo "+
				"(Accounting > Configuration > Currencies, %s, Rates)", erp.ErrNoRate, code, day, code)
	}
	return decodeRate(rs[0], cur, own)
}

// decodeRate reads a res.currency.rate of cur read with rateFields.
func decodeRate(r rpc.Record, cur, own currency) (erp.Rate, error) {
	rid, err := r.ID()
	if err != nil {
		return erp.Rate{}, fmt.Errorf("odoo: res.currency.rate: %w", err)
	}
	d, err := r.Date("name")
	if err != nil {
		return erp.Rate{}, fmt.Errorf("odoo: res.currency.rate %d: %w", rid, err)
	}
	v, ok := r["company_rate"].(float64)
	if !ok || !(v > 0) {
		return erp.Rate{}, fmt.Errorf("odoo: res.currency.rate %d: %w: company_rate %v", rid, ErrBadAnswer, r["company_rate"])
	}
	return erp.Rate{Currency: cur.code, Decimals: cur.decimals, Company: own.code, CompanyDecimals: own.decimals,
		// The shortest decimal that reads back as v: the digits Python
		// sent (repr), which are those stored in PostgreSQL's numeric.
		Value: strconv.FormatFloat(v, 'f', -1, 64), Day: d.Format("2006-01-02"),
		Source: fmt.Sprintf("Odoo res.currency.rate %d", rid)}, nil
}

// companyCurrency returns the currency of company cid, reading it (as the
// reader, one call, and its decimals if no read brought them yet) once.
func (c *Client) companyCurrency(ctx context.Context, cid int64) (currency, error) {
	c.mu.Lock()
	id, ok := c.ownCurrency[cid]
	c.mu.Unlock()
	if !ok {
		v, err := c.reader.Execute(ctx, "res.company", "read", []any{[]any{cid}},
			map[string]any{"fields": rpc.Strs([]string{"currency_id"}), "context": rpc.Scope(cid, false)})
		if err != nil {
			return currency{}, err
		}
		rs, err := rpc.Records(v)
		if err != nil || len(rs) != 1 {
			return currency{}, fmt.Errorf("odoo: res.company %d: %w", cid, errors.Join(err, ErrBadAnswer))
		}
		if err := c.loadCurrencies(ctx, c.reader, rs); err != nil {
			return currency{}, err
		}
		if id, _, err = rs[0].Many2one("currency_id"); err != nil || id == 0 {
			return currency{}, fmt.Errorf("odoo: res.company %d: %w: no currency", cid, errors.Join(err, ErrBadAnswer))
		}
		c.mu.Lock()
		if c.ownCurrency == nil {
			c.ownCurrency = map[int64]int64{}
		}
		c.ownCurrency[cid] = id
		c.mu.Unlock()
	}
	cur, ok := c.currency(id)
	if !ok {
		return currency{}, fmt.Errorf("odoo: res.company %d: %w: unknown currency %d", cid, ErrBadAnswer, id)
	}
	return cur, nil
}
