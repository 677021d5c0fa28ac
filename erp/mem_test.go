package erp_test

import (
	"testing"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/erp/erptest"
)

// TestMemConformance runs the conformance suite against erp.Mem.
func TestMemConformance(t *testing.T) {
	t.Parallel()
	erptest.Run(t, func(t *testing.T) erptest.Env {
		m := erp.NewMem(nil)
		return erptest.Env{Source: m, Seeder: m, Company: "northwind", Other: "southwind"}
	})
}

func TestSanitize(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"fr76-3000.6000/0112 ab", "FR76300060000112AB"},
		{"DE89 3704 0044 0532 0130 00", "DE89370400440532013000"},
		{"", ""},
		{"\u0410BC", "BC"},
	}
	for _, tt := range tests {
		if got := erp.Sanitize(tt.in); got != tt.want {
			t.Errorf("Sanitize(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCompareIDs(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"9", "10", -1},
		{"10", "9", 1},
		{"12", "12", 0},
		{"12", "13", -1},
		{"7", "a", -1},
		{"a", "7", 1},
		{"007", "7", 1},
		{"b", "a", 1},
	}
	for _, tt := range tests {
		if got := erp.CompareIDs(tt.a, tt.b); got != tt.want {
			t.Errorf("CompareIDs(%q, %q) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}
