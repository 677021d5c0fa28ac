package config

import (
	"fmt"
	"regexp"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/mcpproxy"
)

var totalNameRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

var windows = map[string]contract.Window{"ever": contract.Ever, "mandate": contract.Mandate, "day": contract.Day, "week": contract.Week}

// ToolTotals returns the running totals of [tools.key] (Tool.Totals) as
// the proxy declares them, their thresholds in minor units of the budget
// parameter's scale. It returns an *Error at the key at fault for a total
// on a tool without a budget, a malformed or repeated name, a By that is
// not a critical parameter of the tool, an unknown window or time zone,
// a threshold that is not an amount above zero, none at all, or one above
// the next; Load has already refused those.
func (c *Config) ToolTotals(key string) ([]mcpproxy.TotalSpec, error) {
	tc := c.Tools[key]
	var out []mcpproxy.TotalSpec
	seen := map[string]bool{}
	// The amount the totals add up: the budget parameter, or, when the
	// budget is missing, the first amount, whose missing budget
	// mcpproxy.ToolSpec.Contract explains.
	amount := tc.Budget
	for _, name := range Ordered(c, []string{"tools", key, "params"}, tc.Params) {
		if amount == "" && tc.Params[name].Type == "amount" {
			amount = name
		}
	}
	for i, t := range tc.Totals {
		at := []string{"tools", key, "totals", fmt.Sprint(i)}
		if amount == "" || tc.ReadOnly {
			return nil, c.ErrAt(at, "totals add up a tool's budget amount: tool %q needs budget = \"<its amount parameter>\"", key)
		}
		if !totalNameRE.MatchString(t.Name) || seen[t.Name] {
			return nil, c.ErrAt(append(at, "name"), "a total needs a name of lowercase letters, digits and _ (the fact the policy sees, like \"paid_payee_day\"), used once per tool")
		}
		seen[t.Name] = true
		spec, err := c.totalSpec(key, at, t)
		if err != nil {
			return nil, err
		}
		if err := c.totalThresholds(at, t, amount, tc.Params[amount].Scale, &spec); err != nil {
			return nil, err
		}
		out = append(out, spec)
	}
	return out, nil
}

// totalSpec reads a total's by, window and time zone (at is its key);
// ToolTotals documents the errors.
func (c *Config) totalSpec(key string, at []string, t Total) (mcpproxy.TotalSpec, error) {
	tc := c.Tools[key]
	if len(t.By) == 0 {
		return mcpproxy.TotalSpec{}, c.ErrAt(at, "total %q needs by: the critical parameters identifying what is added up (the payee), like by = [\"recipient_iban\"]", t.Name)
	}
	for _, p := range t.By {
		if pc, ok := tc.Params[p]; !ok || !pc.Critical {
			return mcpproxy.TotalSpec{}, c.ErrAt(append(at, "by"), "total %q: %q is not a critical parameter of tool %q: a total adds up by trusted values only (the payee on file), never by what the agent writes", t.Name, p, key)
		}
	}
	w, ok := windows[t.Window]
	if !ok {
		return mcpproxy.TotalSpec{}, c.ErrAt(append(at, "window"), "total %q: window %q is not one of day, week, mandate, ever", t.Name, t.Window)
	}
	spec := mcpproxy.TotalSpec{Name: t.Name, By: t.By, Window: w}
	if t.TimeZone == "" {
		return spec, nil
	}
	z, err := time.LoadLocation(t.TimeZone)
	if err != nil || t.TimeZone == "Local" {
		return spec, c.ErrAt(append(at, "time_zone"), "total %q: time_zone %q is not an IANA time zone (like \"Europe/Berlin\")", t.Name, t.TimeZone)
	}
	if w != contract.Day && w != contract.Week {
		return spec, c.ErrAt(append(at, "time_zone"), "total %q: time_zone applies to the day and week windows only", t.Name)
	}
	spec.Zone = z
	return spec, nil
}

// totalThresholds reads a total's thresholds into spec, in minor units of
// the amount parameter's scale: each above zero, none above the next, at
// least one.
func (c *Config) totalThresholds(at []string, t Total, amount string, scale int, spec *mcpproxy.TotalSpec) error {
	prev, prevKey := intent.Amount(0), ""
	for _, th := range []struct {
		key, text string
		to        *intent.Amount
	}{
		{"confirm_above", t.ConfirmAbove, &spec.ConfirmAbove},
		{"four_eyes_above", t.FourEyesAbove, &spec.FourEyesAbove},
		{"refuse_above", t.RefuseAbove, &spec.RefuseAbove},
	} {
		if th.text == "" {
			continue
		}
		v, err := intent.ParseAmount(th.text, scale)
		if err != nil || v <= 0 {
			return c.ErrAt(append(at, th.key), "total %q: %s %q is not an amount above zero: a plain decimal string with at most %d decimals (the scale of %q), like %q", t.Name, th.key, th.text, scale, amount, intent.FormatAmount(100000, uint8(max(0, min(scale, 18)))))
		}
		if prev > v {
			return c.ErrAt(append(at, th.key), "total %q: %s %s is below %s %s, which would then never apply", t.Name, th.key, th.text, prevKey, intent.FormatAmount(prev, uint8(scale)))
		}
		*th.to, prev, prevKey = v, v, th.key
	}
	if prev == 0 {
		return c.ErrAt(at, "total %q needs a threshold: confirm_above, four_eyes_above or refuse_above (the amount plus the total above which a person confirms, two approve, or the call is refused)", t.Name)
	}
	return nil
}

// checkToolTotals: the tool's totals are well formed (ToolTotals), and a
// payment tool (an amount and a critical parameter, the payee, not read
// only) has totals or says why not (no_totals), never both.
func (c *Config) checkToolTotals(key string) error {
	tc, at := c.Tools[key], []string{"tools", key}
	if _, err := c.ToolTotals(key); err != nil {
		return err
	}
	if len(tc.Totals) > 0 && strings.TrimSpace(tc.NoTotals) != "" {
		return c.ErrAt(append(at, "no_totals"), "tool %q has totals and no_totals: keep one", key)
	}
	if tc.NoTotals != "" && strings.TrimSpace(tc.NoTotals) == "" {
		return c.ErrAt(append(at, "no_totals"), "no_totals states why the tool needs no running totals; it must not be blank")
	}
	amount, payee := "", ""
	for _, name := range Ordered(c, append(at, "params"), tc.Params) {
		switch p := tc.Params[name]; {
		case p.Type == "amount" && amount == "":
			amount = name
		case p.Critical && payee == "":
			payee = name
		}
	}
	if tc.ReadOnly || amount == "" || payee == "" || len(tc.Totals) > 0 || tc.NoTotals != "" {
		return nil
	}
	return c.ErrAt(at, "tool %q pays (the amount %q to the %q on file) without running totals: two payments just under a threshold to one payee would each pass where one of their sum would not. "+
		"Declare [[tools.%s.totals]] (name = \"paid_payee_day\", by = [%q], window = \"day\", confirm_above = \"…\"), or state why the tool needs none with no_totals = \"…\"", key, amount, payee, key, payee)
}
