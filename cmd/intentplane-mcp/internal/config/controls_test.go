package config_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
)

// apServer is a configuration mounting the ap pack on demo data as
// [servers.ap]; a test appends its controls table.
const apServer = `[mandate]
owner = "northwind"
budget = "EUR 50000.00"

[servers.ap]
pack = "ap"
erp = "demo"
`

func TestControls(t *testing.T) {
	t.Parallel()
	c, _, err := load(t, apServer+`
[servers.ap.controls]
confirm_above = "2500.00"
four_eyes_daily_above = "8000"
max_amount = "15000.5"
max_vendor_total = "40000.00"
time_zone = "Europe/Berlin"
cooling_off = "48h"
callback_validity = "24h"
duplicate_window = "240h"
`)
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.APConfig("ap")
	if err != nil {
		t.Fatal(err)
	}
	if got.ConfirmAbove != 250000 || got.FourEyesDailyAbove != 800000 || got.MaxAmount != 1500050 || got.MaxVendorTotal != 4000000 {
		t.Errorf("amounts (cents) = confirm %d, four eyes %d, max %d, vendor %d", got.ConfirmAbove, got.FourEyesDailyAbove, got.MaxAmount, got.MaxVendorTotal)
	}
	if got.Zone == nil || got.Zone.String() != "Europe/Berlin" {
		t.Errorf("Zone = %v, want Europe/Berlin", got.Zone)
	}
	if got.CoolingOff != 48*time.Hour || got.CallbackValidity != 24*time.Hour || got.DuplicateWindow != 240*time.Hour {
		t.Errorf("durations = %v, %v, %v", got.CoolingOff, got.CallbackValidity, got.DuplicateWindow)
	}
	if _, err := ap.NewPack(ap.DemoERP(time.Now), got); err != nil {
		t.Errorf("the pack refuses the settings Load accepted: %v", err)
	}
}

// Without a controls table, or with an empty one, the pack keeps every
// default: the zero ap.Config.
func TestControlsDefaults(t *testing.T) {
	t.Parallel()
	for _, text := range []string{apServer, apServer + "\n[servers.ap.controls]\n"} {
		c, _, err := load(t, text)
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.APConfig("ap")
		if err != nil {
			t.Fatal(err)
		}
		if got.ConfirmAbove != 0 || got.FourEyesDailyAbove != 0 || got.MaxAmount != 0 || got.MaxVendorTotal != 0 ||
			got.Zone != nil || got.CoolingOff != 0 || got.CallbackValidity != 0 || got.DuplicateWindow != 0 {
			t.Errorf("defaults: got %+v, want the zero ap.Config", got)
		}
	}
	// Raising only max_amount raises the vendor's total with it (its
	// default); lowering it below the default thresholds needs no other
	// key (they then never apply).
	for _, controls := range []string{"max_amount = \"20000.00\"\nconfirm_above = \"20000.00\"\nfour_eyes_daily_above = \"20000.00\"", "max_amount = \"500.00\""} {
		c, _, err := load(t, apServer+"\n[servers.ap.controls]\n"+controls+"\n")
		if err != nil {
			t.Fatal(err)
		}
		got, err := c.APConfig("ap")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := ap.NewPack(ap.DemoERP(time.Now), got); err != nil {
			t.Errorf("%s: the pack refuses the settings Load accepted: %v", controls, err)
		}
	}
}

// Each refusal names the file and the line of the key at fault.
func TestControlsErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, controls, key, want string
	}{
		{"negative amount", `max_amount = "-5.00"`, "max_amount", "not an amount above zero"},
		{"malformed amount", `confirm_above = "1,000.00"`, "confirm_above", "not an amount above zero"},
		{"three decimals", `four_eyes_daily_above = "5000.001"`, "four_eyes_daily_above", "at most 2 decimals"},
		{"zero amount", `max_vendor_total = "0"`, "max_vendor_total", "not an amount above zero"},
		{"number not string", `max_amount = 10000`, "max_amount", "cannot decode TOML integer"},
		{"vendor total below max", "max_amount = \"10000.00\"\nmax_vendor_total = \"9000.00\"", "max_vendor_total", "max_vendor_total 9000.00 is below max_amount 10000.00"},
		{"vendor total below default max", `max_vendor_total = "9000.00"`, "max_vendor_total", "below max_amount 10000.00"},
		{"confirm above max", "confirm_above = \"12000.00\"", "confirm_above", "confirm_above 12000.00 is above max_amount 10000.00"},
		{"four eyes above vendor total", "max_amount = \"3000.00\"\nfour_eyes_daily_above = \"4000.00\"", "four_eyes_daily_above", "above max_vendor_total 3000.00"},
		{"unknown time zone", `time_zone = "Europe/Atlantis"`, "time_zone", "not an IANA time zone"},
		{"local time zone", `time_zone = "Local"`, "time_zone", "not an IANA time zone"},
		{"negative duration", `cooling_off = "-1h"`, "cooling_off", "must not be negative"},
		{"malformed duration", `duplicate_window = "7 days"`, "duplicate_window", "unknown unit"},
		{"unknown key", `max_amoutn = "1.00"`, "max_amoutn", `unknown key "servers.ap.controls.max_amoutn"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			text := apServer + "\n[servers.ap.controls]\n" + tc.controls + "\n"
			_, path, err := load(t, text)
			if err == nil {
				t.Fatal("loaded")
			}
			line := lineOf(text, tc.key+" =")
			if !strings.Contains(err.Error(), path+":"+strconv.Itoa(line)+":") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q, want %s:%d: …%s…", err, path, line, tc.want)
			}
		})
	}
}

// A controls table needs a mounted pack.
func TestControlsWithoutPack(t *testing.T) {
	t.Parallel()
	text := "[mandate]\nowner = \"emma\"\n\n[servers.bank]\ncommand = \"./bank\"\n\n[servers.bank.controls]\nmax_amount = \"1.00\"\n"
	_, path, err := load(t, text)
	var ce *config.Error
	if !errors.As(err, &ce) || ce.File != path || ce.Line != lineOf(text, "[servers.bank.controls]") || !strings.Contains(ce.Msg, `needs pack = "ap"`) {
		t.Errorf("error %v, want %s:%d: …needs pack…", err, path, lineOf(text, "[servers.bank.controls]"))
	}
}
