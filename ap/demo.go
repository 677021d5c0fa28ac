package ap

import (
	"context"
	"fmt"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// The demo data set's names and numbers (DemoERP). All fictional; the IBANs
// are the standard examples of their countries' formats.
const (
	// DemoCompany is the company whose AP assistant is attacked.
	DemoCompany = "northwind"
	// DemoOtherCompany is another company in the same ERP.
	DemoOtherCompany = "southwind"
	// DemoVendor is DemoCompany's vendor; DemoVendorPhone its phone on file.
	DemoVendor      = "ACME Supplies"
	DemoVendorPhone = "+49 30 1234567"
	// DemoIBAN is DemoVendor's bank account on file, trusted since 2025.
	DemoIBAN = "DE89370400440532013000"
	// DemoOldIBAN is DemoVendor's previous account, archived.
	DemoOldIBAN = "NL91ABNA0417164300"
	// DemoEmailIBAN is the account of the "we changed banks" email: on file
	// nowhere.
	DemoEmailIBAN = "LT121000011101001000"
	// DemoBill and DemoBill2 are DemoVendor's open bills, in EUR:
	// INV-2290 for 850.00 and INV-2291 for 2,400.00.
	DemoBill  = "INV-2290"
	DemoBill2 = "INV-2291"
	// DemoPaidBill is DemoVendor's bill of October, 612.00 EUR, paid on
	// 2026-10-30 by hand in the ERP: DemoVendor was paid before.
	DemoPaidBill = "INV-2187"
	// DemoOpenBill is the bill the demo leaves open, 1,180.00 EUR, for an
	// assistant to pay through intentplane-mcp afterwards; `intentplane
	// odoo setup` enters it (provision.DemoOpenBill), DemoERP does not.
	DemoOpenBill = "INV-2302"
	// DemoOtherVendor, DemoOtherIBAN and DemoOtherBill belong to
	// DemoOtherCompany: its vendor, that vendor's account and its bill
	// INV-7001 for 990.00 EUR.
	DemoOtherVendor = "Globex Parts"
	DemoOtherIBAN   = "FR1420041010050500013M02606"
	DemoOtherBill   = "INV-7001"
)

// DemoERP returns an in-memory ERP holding the demo data set:
//
//   - DemoCompany has the vendor DemoVendor (phone DemoVendorPhone) with
//     the trusted account DemoIBAN, set on 2025-03-03, and the archived
//     account DemoOldIBAN; its posted bills DemoBill (850.00 EUR, due
//     2026-12-01, naming DemoIBAN) and DemoBill2 (2,400.00 EUR, due
//     2026-12-15) are unpaid; its bill DemoPaidBill (612.00 EUR, invoice
//     date 2026-10-05) was paid by hand on 2026-10-30, so DemoVendor is
//     not paid for the first time; DemoVendor is in Germany (DE);
//   - DemoOtherCompany has the vendor DemoOtherVendor (FR) with the trusted
//     account DemoOtherIBAN and the unpaid bill DemoOtherBill (990.00 EUR).
//
// now stamps what the ERP records later (payments, bank changes); nil
// means time.Now. DemoERP panics only if its own data is invalid.
func DemoERP(now func() time.Time) *erp.Mem {
	ctx := context.Background()
	m := erp.NewMem(now)
	must := func(err error) {
		if err != nil {
			panic(fmt.Sprintf("ap: demo data: %v", err))
		}
	}
	set := time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)
	acme, err := m.AddVendor(ctx, DemoCompany, erp.Vendor{Name: DemoVendor, Phone: DemoVendorPhone, Active: true, Country: "DE"})
	must(err)
	_, err = m.AddBankAccount(ctx, DemoCompany, erp.BankAccount{Vendor: acme.ID, Number: "NL91 ABNA 0417 1643 00", Trusted: true, Active: false, SetAt: set.AddDate(-2, 0, 0)})
	must(err)
	onFile, err := m.AddBankAccount(ctx, DemoCompany, erp.BankAccount{Vendor: acme.ID, Number: "DE89 3704 0044 0532 0130 00", Trusted: true, Active: true, SetAt: set})
	must(err)
	_, err = m.AddBill(ctx, DemoCompany, erp.Bill{Name: "BILL/2026/11/0001", Ref: DemoBill, Vendor: acme.ID, Currency: "EUR", Total: 85000,
		Due: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), BankAccount: onFile.ID})
	must(err)
	_, err = m.AddBill(ctx, DemoCompany, erp.Bill{Name: "BILL/2026/11/0002", Ref: DemoBill2, Vendor: acme.ID, Currency: "EUR", Total: 240000,
		Due: time.Date(2026, 12, 15, 0, 0, 0, 0, time.UTC)})
	must(err)

	globex, err := m.AddVendor(ctx, DemoOtherCompany, erp.Vendor{Name: DemoOtherVendor, Phone: "+33 1 4000 0000", Active: true, Country: "FR"})
	must(err)
	_, err = m.AddBankAccount(ctx, DemoOtherCompany, erp.BankAccount{Vendor: globex.ID, Number: "FR14 2004 1010 0505 0001 3M02 606", Trusted: true, Active: true, SetAt: set})
	must(err)
	_, err = m.AddBill(ctx, DemoOtherCompany, erp.Bill{Name: "BILL/2026/11/0001", Ref: DemoOtherBill, Vendor: globex.ID, Currency: "EUR", Total: 99000,
		Due: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)})
	must(err)

	// Added last, so that the IDs above stay as they were: ACME was paid
	// before (by hand in the ERP), so paying it is not a first payment.
	paid, err := m.AddBill(ctx, DemoCompany, erp.Bill{Name: "BILL/2026/10/0004", Ref: DemoPaidBill, Vendor: acme.ID, Currency: "EUR", Total: 61200,
		Date: time.Date(2026, 10, 5, 0, 0, 0, 0, time.UTC), Due: time.Date(2026, 11, 4, 0, 0, 0, 0, time.UTC), BankAccount: onFile.ID})
	must(err)
	_, err = m.AddPayment(ctx, DemoCompany, erp.Payment{Bill: paid.ID, BankAccount: onFile.ID, Amount: intent.Money{Currency: "EUR", Amount: 61200},
		Date: time.Date(2026, 10, 30, 10, 0, 0, 0, time.UTC), Day: "2026-10-30"})
	must(err)
	return m
}
