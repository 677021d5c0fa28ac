package erp_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
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

// TestMemChangeRestartsSetAt: a bank change sets SetAt to now for every
// account that becomes the vendor's current one, including a trusted,
// active account that was not current (later in sequence, or equal in
// sequence with a higher ID), so that its cooling-off period starts; only
// confirming the current account keeps SetAt (found by ap's TestProperty).
func TestMemChangeRestartsSetAt(t *testing.T) {
	t.Parallel()
	old := time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)
	now := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	for _, seq := range []int{20, 10} {
		ctx := context.Background()
		m := erp.NewMem(func() time.Time { return now })
		v, err := m.AddVendor(ctx, "northwind", erp.Vendor{Name: "ACME", Active: true})
		if err != nil {
			t.Fatal(err)
		}
		cur, err := m.AddBankAccount(ctx, "northwind", erp.BankAccount{Vendor: v.ID, Number: "DE89370400440532013000", Trusted: true, Active: true, Sequence: 10, SetAt: old})
		if err != nil {
			t.Fatal(err)
		}
		second, err := m.AddBankAccount(ctx, "northwind", erp.BankAccount{Vendor: v.ID, Number: "BE68539007547034", Trusted: true, Active: true, Sequence: seq, SetAt: old})
		if err != nil {
			t.Fatal(err)
		}
		same, err := m.ChangeBankAccount(ctx, "northwind", erp.BankChange{Vendor: v.ID, Number: cur.Number, Key: "k0"})
		if err != nil || same.ID != cur.ID || !same.SetAt.Equal(old) {
			t.Errorf("sequence %d: confirming the current account = %+v, %v; want SetAt kept", seq, same, err)
		}
		got, err := m.ChangeBankAccount(ctx, "northwind", erp.BankChange{Vendor: v.ID, Number: second.Number, Key: "k1"})
		if err != nil || got.ID != second.ID || !got.SetAt.Equal(now) {
			t.Errorf("sequence %d: promoting the second account = %+v, %v; want SetAt %s", seq, got, err, now)
		}
		all, _ := m.BankAccounts(ctx, "northwind", erp.BankAccountQuery{Vendor: v.ID})
		if c, ok := erp.Current(all, v.ID); !ok || c.ID != second.ID || !c.SetAt.Equal(now) {
			t.Errorf("sequence %d: current account after the change = %+v", seq, c)
		}
	}
}

// TestMemOpenCredit: a posted credit note keeps as its residual what is not
// applied to a bill (all of it when it reverses none, the excess over its
// bill's residual otherwise), which the ap pack reads as the vendor's open
// credit; a draft one applies nothing (security review, open credit).
func TestMemOpenCredit(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	m := erp.NewMem(nil)
	v, err := m.AddVendor(ctx, "northwind", erp.Vendor{Name: "ACME", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	bill, err := m.AddBill(ctx, "northwind", erp.Bill{Ref: "INV-1", Vendor: v.ID, Currency: "EUR", Total: 85000})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name             string
		cn               erp.Bill
		residual, billed intent.Amount // the credit note's residual, the bill's after it
	}{
		{"unapplied", erp.Bill{Ref: "CN-1", Total: 10000}, 10000, 85000},
		{"draft, reversing the bill", erp.Bill{Ref: "CN-2", Total: 10000, State: erp.StateDraft, Reverses: bill.ID}, 10000, 85000},
		{"larger than its bill", erp.Bill{Ref: "CN-3", Total: 90000, Reverses: bill.ID}, 5000, 0},
	} {
		tc.cn.Vendor, tc.cn.Kind, tc.cn.Currency = v.ID, erp.KindCreditNote, "EUR"
		cn, err := m.AddBill(ctx, "northwind", tc.cn)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, _ := m.Bills(ctx, "northwind", erp.BillQuery{ID: cn.ID})
		b, _ := m.Bills(ctx, "northwind", erp.BillQuery{ID: bill.ID})
		if len(got) != 1 || got[0].Residual != tc.residual || b[0].Residual != tc.billed {
			t.Errorf("%s: credit note %+v, bill residual %d; want residuals %d and %d", tc.name, got, b[0].Residual, tc.residual, tc.billed)
		}
	}
}

// TestMemVendorCountry: the in-memory ERP refuses a vendor's country that
// Odoo would never give (lower case, three letters, not letters), so an
// approver is never told that "DE" and "de" are two countries.
func TestMemVendorCountry(t *testing.T) {
	ctx := context.Background()
	m := erp.NewMem(nil)
	for _, c := range []string{"", "DE", "GB"} {
		if _, err := m.AddVendor(ctx, "northwind", erp.Vendor{Name: "Vendor " + c, Country: c}); err != nil {
			t.Errorf("country %q: %v", c, err)
		}
	}
	for _, c := range []string{"de", "DEU", "D", "D1", "ÄB"} {
		if _, err := m.AddVendor(ctx, "northwind", erp.Vendor{Name: "Vendor " + c, Country: c}); !errors.Is(err, erp.ErrRefused) {
			t.Errorf("country %q: %v, want ErrRefused", c, err)
		}
	}
}
