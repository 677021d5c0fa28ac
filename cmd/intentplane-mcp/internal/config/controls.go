package config

import (
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/intent"
)

// Controls is [servers.NAME.controls]: the settings of a mounted ap pack's
// controls (ap.Config, docs/controls.md "Settings"). Every key is
// optional; an unset key keeps the pack's default, stated on it.
//
// Amounts are plain decimals in money, as strings with at most 2 decimals
// ("10000.00", intent.ParseAmount), in the company's currency (a bill in
// another is compared converted at the ERP's rate, see ap.Config); they
// must be above zero. Durations are Go durations ("120h", "72h").
type Controls struct {
	// ConfirmAbove: above it a payment (cumulative: with what was already
	// paid of the bill, or to the vendor today, this week or under the
	// mandate) needs a person's confirmation; default "1000.00". Set, it
	// must not be above MaxAmount (the default applies whatever the limit).
	ConfirmAbove string `toml:"confirm_above"`
	// FourEyesDailyAbove: above it what is paid to one vendor in one day
	// needs two people; default "5000.00". Set, it must not be above
	// MaxVendorTotal.
	FourEyesDailyAbove string `toml:"four_eyes_daily_above"`
	// MaxAmount: above it a payment (cumulative, as ConfirmAbove) never
	// executes through the assistant; default "10000.00".
	MaxAmount string `toml:"max_amount"`
	// MaxVendorTotal: above it what is paid to one vendor in a day, a week
	// or under a mandate never executes through the assistant; default
	// MaxAmount, and never below it.
	MaxVendorTotal string `toml:"max_vendor_total"`
	// TimeZone is the company's time zone, an IANA name ("Europe/Berlin"):
	// the calendar of the day and week totals; empty means UTC. With
	// erp = "odoo" set it to the company's time zone in Odoo (the
	// Timezone of the company's contact), where Odoo dates payments; it is
	// also the zone Odoo dates them in when that contact has none
	// (odoo.Config.TimeZone).
	TimeZone string `toml:"time_zone"`
	// CoolingOff is how long after it was set a vendor's bank account
	// needs four eyes for every payment; empty means 120h (5 days).
	CoolingOff Duration `toml:"cooling_off"`
	// CallbackValidity is how long a recorded call-back supports a
	// bank-detail change; empty means 72h.
	CallbackValidity Duration `toml:"callback_validity"`
	// DuplicateWindow is how far apart, at most, the invoice dates of two
	// bills of a vendor count as close for the duplicate control; empty
	// means 168h (7 days).
	DuplicateWindow Duration `toml:"duplicate_window"`
}

// amountScale is the number of decimals of the controls' amounts: ap.Config
// holds them in hundredths of a unit of the company's currency, and the
// pack scales them to that currency's exponent at each decision (¥1,000.00
// is ¥1,000; 100.00 KWD is 100.000 KWD).
const amountScale = 2

// APConfig returns the ap.Config of the pack mounted as [servers.name]:
// the settings of its controls table (the pack's defaults where a key is
// unset, and for a server without one), without Callbacks and Now, which
// wiring sets. It returns an *Error at the key at fault for a malformed
// or non-positive amount, an unknown time zone, max_vendor_total below
// max_amount, or a confirm_above set above max_amount or a
// four_eyes_daily_above set above max_vendor_total; Load has already
// refused those.
func (c *Config) APConfig(name string) (ap.Config, error) {
	sc := c.Servers[name]
	if sc.Controls == nil {
		return ap.Config{}, nil
	}
	at := []string{"servers", name, "controls"}
	ct := sc.Controls
	var cfg ap.Config
	for _, a := range []struct {
		key  string
		text string
		to   *intent.Amount
	}{
		{"confirm_above", ct.ConfirmAbove, &cfg.ConfirmAbove},
		{"four_eyes_daily_above", ct.FourEyesDailyAbove, &cfg.FourEyesDailyAbove},
		{"max_amount", ct.MaxAmount, &cfg.MaxAmount},
		{"max_vendor_total", ct.MaxVendorTotal, &cfg.MaxVendorTotal},
	} {
		if a.text == "" {
			continue
		}
		v, err := intent.ParseAmount(a.text, amountScale)
		if err != nil || v == 0 {
			return ap.Config{}, c.ErrAt(append(at, a.key), "%s %q is not an amount above zero: a plain decimal string in money with at most %d decimals, like \"10000.00\"", a.key, a.text, amountScale)
		}
		*a.to = v
	}
	if ct.TimeZone != "" {
		z, err := time.LoadLocation(ct.TimeZone)
		if err != nil || ct.TimeZone == "Local" {
			return ap.Config{}, c.ErrAt(append(at, "time_zone"), "time_zone %q is not an IANA time zone (like \"Europe/Berlin\")", ct.TimeZone)
		}
		cfg.Zone = z
	}
	cfg.CoolingOff = ct.CoolingOff.Duration
	cfg.CallbackValidity = ct.CallbackValidity.Duration
	cfg.DuplicateWindow = ct.DuplicateWindow.Duration
	if err := c.checkLimits(at, cfg); err != nil {
		return ap.Config{}, err
	}
	return cfg, nil
}

// checkLimits refuses limits that contradict each other, with the
// pack's defaults for the unset ones: a vendor's total below one
// payment's limit (the pack refuses it), and a step-up threshold set in
// the file above the limit it steps up to (it would never apply: what is
// above the limit is refused anyway, so the file would not say what the
// company gets). A default threshold above a lowered limit is accepted:
// lowering max_amount alone must not need the other keys.
func (c *Config) checkLimits(at []string, cfg ap.Config) error {
	maxAmount := or(cfg.MaxAmount, ap.DefaultMaxAmount)
	vendor := or(cfg.MaxVendorTotal, maxAmount)
	money := func(a intent.Amount) string { return intent.FormatAmount(a, amountScale) }
	switch {
	case vendor < maxAmount:
		return c.ErrAt(append(at, "max_vendor_total"), "max_vendor_total %s is below max_amount %s: one payment is a vendor's day too", money(vendor), money(maxAmount))
	case cfg.ConfirmAbove > maxAmount:
		return c.ErrAt(append(at, "confirm_above"), "confirm_above %s is above max_amount %s, so it would never apply: set it to at most max_amount (to ask for no confirmation below the limit, set it equal to max_amount)", money(cfg.ConfirmAbove), money(maxAmount))
	case cfg.FourEyesDailyAbove > vendor:
		return c.ErrAt(append(at, "four_eyes_daily_above"), "four_eyes_daily_above %s is above max_vendor_total %s, so it would never apply: set it to at most max_vendor_total", money(cfg.FourEyesDailyAbove), money(vendor))
	}
	return nil
}

func or(v, def intent.Amount) intent.Amount {
	if v == 0 {
		return def
	}
	return v
}

// checkControls: a controls table goes with a pack, and its settings
// convert to an ap.Config.
func (c *Config) checkControls(name string) error {
	sc := c.Servers[name]
	if sc.Controls == nil {
		return nil
	}
	if sc.Pack == "" {
		return c.ErrAt([]string{"servers", name, "controls"}, "a [servers.%s.controls] table configures a mounted pack's controls and needs pack = \"ap\"", name)
	}
	_, err := c.APConfig(name)
	return err
}
