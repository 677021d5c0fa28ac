// Package aptest is the legitimate workload of the accounts-payable pack,
// run on every erp.Source: erp.Mem (package ap's tests), the Odoo
// connector against its fake XML-RPC server, and a real Odoo 17 (package
// odoo's tests). It generates an AP book (seeded), enters it into the ERP
// through a Builder as the ERP's own users would, pays it through the AP
// tools as a careful assistant would, under the company's controls, and
// returns the figures: payments, paid, refused by a configured limit,
// false refusals, confirmations and four-eyes step-ups with their reasons,
// median time per payment.
//
// It stands beside the attack tests: those say what must never be paid,
// this says what must be paid. See Pay for the expected outcomes, written
// from AP practice, not from the pack's code.
//
// It imports ap, erp and core, as a pack does: never a connector or a
// store (the caller gives the gateway's store, Env.NewStore).
package aptest

import (
	"context"

	"github.com/intentplane/intentplane/erp"
)

// Vendor is a vendor of the book, as the ERP's UI creates it.
type Vendor struct {
	// Name, Phone and Country are the vendor's; Active is true.
	erp.Vendor
	// Individual makes it a person (Odoo: is_company False), not a
	// company.
	Individual bool
	// Shared leaves it without a company (Odoo: company_id unset, the
	// default in a single-company database).
	Shared bool
	// Contact, if not "", is the name of a contact person of the vendor
	// (Odoo: a res.partner with parent_id the vendor) to whom its bills
	// are addressed.
	Contact string
}

// Builder enters a company's book into the ERP under test, as the ERP's
// own users would (erp.Mem's Add methods; for Odoo, an administrator's
// calls). Each method returns the record as stored, with its ID.
type Builder interface {
	// AddVendor enters v and returns it with its ID, and the ID of its
	// contact person when v.Contact is set and the ERP keeps contact
	// persons ("" otherwise: bills are then addressed to the vendor).
	AddVendor(ctx context.Context, company string, v Vendor) (erp.Vendor, string, error)
	// AddBankAccount enters a's account; an ERP that cannot choose SetAt
	// (Odoo stamps write_date) returns the SetAt it keeps.
	AddBankAccount(ctx context.Context, company string, a erp.BankAccount) (erp.BankAccount, error)
	// AddBill enters a posted bill or credit note; an ERP that gives
	// numbers itself (Odoo) ignores b.Name and returns its own.
	AddBill(ctx context.Context, company string, b erp.Bill) (erp.Bill, error)
	// AddPayment registers a payment by hand (no idempotency key), dated
	// p.Date (p.Day in the ERP's calendar where the ERP takes a day).
	AddPayment(ctx context.Context, company string, p erp.Payment) (erp.Payment, error)
	// SetRate enters an exchange rate: value units of currency per unit
	// of the company's currency (EUR) from day (YYYY-MM-DD) on, as
	// erptest.RateSetter (erp.Mem and provision.Admin have it).
	SetRate(ctx context.Context, company, currency, day, value string) error
}

// MemBuilder is the Builder of erp.Mem: Mem keeps no contact persons and
// no company-less vendors, so every vendor is the company's own and every
// bill is addressed to the vendor.
type MemBuilder struct{ *erp.Mem }

// AddVendor enters v.Vendor; the contact person's ID is "".
func (m MemBuilder) AddVendor(ctx context.Context, company string, v Vendor) (erp.Vendor, string, error) {
	got, err := m.Mem.AddVendor(ctx, company, v.Vendor)
	return got, "", err
}
