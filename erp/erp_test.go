package erp_test

import (
	"testing"

	"github.com/intentplane/intentplane/erp"
)

// TestSameNumber: a query number selects its own sanitized spelling and,
// for an IBAN's shape, the one Odoo keeps of an account typed with an
// "IBAN " prefix; nothing else.
func TestSameNumber(t *testing.T) {
	for _, c := range []struct {
		sanitized, number string
		want              bool
	}{
		{"DE89370400440532013000", "DE89370400440532013000", true},
		{"IBANDE89370400440532013000", "DE89370400440532013000", true},
		{"DE89370400440532013000", "IBANDE89370400440532013000", false},
		{"IBAN12345678", "12345678", false}, // not an IBAN's shape
		{"IBANDE89370400440532013001", "DE89370400440532013000", false},
		{"XIBANDE89370400440532013000", "DE89370400440532013000", false},
	} {
		if got := erp.SameNumber(c.sanitized, c.number); got != c.want {
			t.Errorf("SameNumber(%q, %q) = %v, want %v", c.sanitized, c.number, got, c.want)
		}
	}
	if got := erp.QueryNumbers("DE89370400440532013000"); len(got) != 2 || got[1] != "IBANDE89370400440532013000" {
		t.Errorf("QueryNumbers = %v", got)
	}
	if got := erp.QueryNumbers("12345678"); len(got) != 1 {
		t.Errorf("QueryNumbers of a national number = %v", got)
	}
}
