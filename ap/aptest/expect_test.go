package aptest

import (
	"fmt"
	"testing"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// TestExpect checks the practice the workload expects under the company's
// limits, on amounts at each boundary.
func TestExpect(t *testing.T) {
	def, whole := limitsOf(ap.Config{}), limitsOf(WholeVendorRuns)
	plain := payment{vendor: "V", bill: "B"}
	changed := payment{vendor: "V", bill: "B", expect: "four_eyes", why: "changed"}
	tests := []struct {
		name                 string
		l                    limits
		p                    payment
		amount, vendor, bill intent.Amount
		first                bool
		limit, level         string
	}{
		{"small", def, plain, 100_000, 0, 0, false, "", ""},
		{"above confirm_above", def, plain, 100_001, 0, 0, false, "", "confirm"},
		{"the vendor's day above confirm_above", def, plain, 50_000, 50_001, 0, false, "", "confirm"},
		{"the vendor's day above four_eyes_daily_above", def, plain, 100, 500_000, 0, false, "", "four_eyes"},
		{"first payment", def, plain, 100, 0, 0, true, "", "confirm"},
		{"a changed account stays four eyes", def, changed, 100, 0, 0, false, "", "four_eyes"},
		{"at max_amount", def, plain, 1_000_000, 0, 0, false, "", "four_eyes"},
		{"above max_amount", def, plain, 1_000_001, 0, 0, false, "max_amount", ""},
		{"the bill above max_amount", def, plain, 600_000, 0, 400_001, false, "max_amount", ""},
		{"the vendor's day above max_vendor_total", def, plain, 100, 999_901, 0, false, "max_vendor_total", ""},
		{"the vendor's day raised", whole, plain, 100, 999_901, 0, false, "", "four_eyes"},
		{"above max_amount, raised day", whole, plain, 1_000_001, 0, 0, false, "max_amount", ""},
		{"the raised day's limit", whole, plain, 100, 9_999_901, 0, false, "max_vendor_total", ""},
	}
	for _, tt := range tests {
		e := tt.l.expect(tt.p, tt.amount, tt.vendor, tt.bill, tt.first)
		if e.limit != tt.limit || e.level != tt.level {
			t.Errorf("%s: %+v; want limit %q, level %q", tt.name, e, tt.limit, tt.level)
		}
	}
}

// recorder is a testing.TB that records what Errorf reports.
type recorder struct {
	testing.TB
	errs []string
}

func (r *recorder) Helper() {}
func (r *recorder) Errorf(format string, args ...any) {
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

// TestCheckLimited: a payment practice expects a limit to refuse counts as
// refused by that limit only when the refusal names the setting; paid, or
// refused without saying which setting refuses it, it fails the test.
func TestCheckLimited(t *testing.T) {
	named := &intent.Refusal{Code: intent.CodePolicyDenied, Message: "above the company's limit ([servers.NAME.controls] max_amount in intentplane-mcp's configuration)"}
	unnamed := &intent.Refusal{Code: intent.CodePolicyDenied, Message: "above the company's limit"}
	tests := []struct {
		name          string
		dec           gateway.Decision
		limited, errs int
		paid, falseN  int
	}{
		{"refused naming the setting", gateway.Decision{Refusal: named}, 1, 0, 0, 0},
		{"refused without the setting", gateway.Decision{Refusal: unnamed}, 0, 1, 0, 1},
		{"executed", gateway.Decision{Executed: true}, 0, 1, 1, 0},
	}
	for _, tt := range tests {
		r := &recorder{}
		f := Figures{Limited: map[string]int{}}
		f.checkLimited(r, expected{limit: "max_amount"}, "V B 10000.01 EUR", tt.dec)
		if f.Limited["max_amount"] != tt.limited || len(r.errs) != tt.errs || f.Paid != tt.paid || f.FalseRefusals != tt.falseN {
			t.Errorf("%s: %+v, errors %q", tt.name, f, r.errs)
		}
	}
}
