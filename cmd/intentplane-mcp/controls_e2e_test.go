package main_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestPackControls: [servers.erp.controls] changes the mounted ap pack's
// controls (issue 17). With confirm_above raised to 3,000.00, the
// 2,400.00 bill that asks for a confirmation by default (TestPackMount)
// executes without one; with max_amount lowered to 2,000.00 it is refused,
// and the refusal names the setting to change.
func TestPackControls(t *testing.T) {
	t.Parallel()
	pay := fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2291","iban":%q,"amount":"2400.00","currency":"EUR"}`, ibanOnFile)
	for _, tc := range []struct {
		name, controls string
		refused        bool
	}{
		{"confirm_above raised", `confirm_above = "3000.00"`, false},
		{"max_amount lowered", `max_amount = "2000.00"`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := readFile(t, e.config)
			const mount = "[servers.erp]\npack = \"ap\"\nerp = \"demo\"\nprefix = \"ap_\"\n"
			if !strings.Contains(cfg, mount) {
				t.Fatal("the example's [servers.erp] changed; update this test")
			}
			writeFile(t, e.config, strings.Replace(cfg, mount, mount+"\n[servers.erp.controls]\n"+tc.controls+"\n", 1))
			el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
			c := e.start(mcp.ProtocolVersion20251125, el)
			r := call(t, c, "ap_pay_bill", pay)
			if tc.refused {
				wantError(t, r, "limit for the assistant", "[servers.NAME.controls] max_amount")
				wantReason(t, r, "policy.denied", "deny")
			} else {
				wantOK(t, r)
			}
			if el.count() != 0 {
				t.Errorf("2,400.00 asked for %d confirmation(s): %q", el.count(), el.messages)
			}
		})
	}
}

// TestOdooControlsTimeZone: on Odoo, the controls' time_zone is also the
// zone Odoo dates a payment in when the company's contact has none (the
// fake Odoo's demo company has none): the payment is dated today in
// Kiritimati (UTC+14), not in UTC.
func TestOdooControlsTimeZone(t *testing.T) {
	t.Parallel()
	e := newOdooEnv(t)
	writeFile(t, e.config, e.template+"\n[servers.books.controls]\ntime_zone = \"Pacific/Kiritimati\"\n")
	e.vars = e.passEnv
	c := e.start(mcp.ProtocolVersion20251125, nil)
	zone, err := time.LoadLocation("Pacific/Kiritimati")
	if err != nil {
		t.Fatal(err)
	}
	before := time.Now().In(zone).Format(time.DateOnly)
	r := call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanOnFile))
	after := time.Now().In(zone).Format(time.DateOnly)
	wantOK(t, r)
	if !strings.Contains(text(r), `"date":"`+before+`"`) && !strings.Contains(text(r), `"date":"`+after+`"`) {
		t.Errorf("payment %q is not dated today in Kiritimati (%s)", text(r), before)
	}
}
