package odoo

import (
	"errors"
	"testing"

	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// TestCurrencyDecimalsISO (issue 24): a currency Odoo keeps with other
// decimal places than ISO 4217's (JPY with 2, KWD with 2) is a bad
// answer: its amounts would be read and written at another scale than
// the gateway's, a hundred times off for JPY. ISO's own decimals, and a
// code ISO 4217 does not list, are stored.
func TestCurrencyDecimalsISO(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		code string
		dec  int64
		ok   bool
	}{
		{"JPY", 0, true}, {"KWD", 3, true}, {"EUR", 2, true}, {"XTS", 2, true},
		{"JPY", 2, false}, {"KWD", 2, false}, {"EUR", 3, false}, {"CLF", 2, false},
	} {
		cl := &Client{currencies: map[int64]currency{}}
		err := cl.storeCurrencies([]rpc.Record{{"id": int64(9), "name": c.code, "decimal_places": c.dec}})
		if c.ok != (err == nil) || err != nil && !errors.Is(err, ErrBadAnswer) {
			t.Errorf("%s with %d decimals: %v; want ok %v", c.code, c.dec, err, c.ok)
		}
		if cur, stored := cl.currencies[9]; stored != c.ok || stored && cur.decimals != int(c.dec) {
			t.Errorf("%s with %d decimals: stored %v %+v", c.code, c.dec, stored, cur)
		}
	}
}
