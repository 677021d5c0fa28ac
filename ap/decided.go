package ap

import (
	"slices"
	"sync"
	"time"

	"github.com/intentplane/intentplane/erp"
)

// decidedTTL is how long what a decision read is kept for its execution.
// The gateway executes right after deciding, holding the vendor; an entry
// older than this is never used and the executor reads the ERP again.
const decidedTTL = time.Minute

// decided hands what a payment's decision read to its execution: the bank
// account the bank-accounts registry resolved and the bill (with its
// payments) the context provider read while the vendor was held, so that
// the ERP is not asked the same again between the decision and the write
// (erp.PaymentRequest.Decided). A read before the write is never atomic
// with it in the ERP, so reading again would narrow no race: the vendor is
// held by the gateway from the facts to the end of the execution, and the
// ERP's own checks and the read-back of the payment still apply. It also
// hands the vendor's name from the vendors registry to the context
// provider of the same decision (keepVendor). Entries are taken once (a
// vendor's name aside) and expire after decidedTTL. Safe for concurrent
// use.
type decided struct {
	now func() time.Time

	mu       sync.Mutex
	accounts map[string]keptAt[erp.BankAccount] // company and account ID
	bills    map[string]keptAt[erp.Bill]        // company and bill ID
	credits  map[string]keptAt[[]erp.Bill]      // company and bill ID: the credit notes to net (see creditsFor)
	vendors  map[string]keptAt[string]          // company and vendor ID: its name (see keepVendor)
	resolved map[string]keptAt[erp.Bill]        // company and bill ID: the bill as the bills registry read it (see keepResolved)
}

type keptAt[T any] struct {
	v  T
	at time.Time
}

func newDecided(now func() time.Time) *decided {
	return &decided{now: now, accounts: map[string]keptAt[erp.BankAccount]{}, bills: map[string]keptAt[erp.Bill]{},
		credits: map[string]keptAt[[]erp.Bill]{}, vendors: map[string]keptAt[string]{}, resolved: map[string]keptAt[erp.Bill]{}}
}

func (d *decided) keepAccount(company string, a erp.BankAccount) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	d.accounts[company+"\x00"+a.ID] = keptAt[erp.BankAccount]{a, d.now()}
}

func (d *decided) keepBill(company string, b erp.Bill) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	d.bills[company+"\x00"+b.ID] = keptAt[erp.Bill]{b, d.now()}
}

// take returns, and forgets, the bill kept for company and the account of
// the vendor's with the account key number (see keyOf); ok is false unless both are there,
// fresh, and of the same vendor.
func (d *decided) take(company, bill, vendor, number string) (erp.Bill, erp.BankAccount, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	b, ok := d.bills[company+"\x00"+bill]
	delete(d.bills, company+"\x00"+bill)
	if !ok || b.v.Vendor != vendor {
		return erp.Bill{}, erp.BankAccount{}, false
	}
	for k, a := range d.accounts {
		if key, ok := keyOf(a.v); ok && a.v.Vendor == vendor && key == number && k == company+"\x00"+a.v.ID {
			return b.v, a.v, true
		}
	}
	return erp.Bill{}, erp.BankAccount{}, false
}

// keepVendor keeps the name of a vendor the vendors registry resolved,
// for the facts of the same decision (vendor_name), which read the
// vendor's bills without names (erp.BillQuery.NoVendorName).
func (d *decided) keepVendor(company string, v erp.Vendor) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	d.vendors[company+"\x00"+v.ID] = keptAt[string]{v.Name, d.now()}
}

// vendorName returns the name kept for the vendor with this ID; ok is
// false unless it is there and fresh. It is not forgotten: decisions of
// one vendor at once each resolved it.
func (d *decided) vendorName(company, vendor string) (name string, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	v, ok := d.vendors[company+"\x00"+vendor]
	return v.v, ok
}

// keepResolved keeps a bill the bills registry resolved, as it read it,
// for the context provider of the same decision: its reference, total,
// currency and invoice date choose what the provider reads of the
// vendor's history (suspectsOf) before it reads the bill again.
func (d *decided) keepResolved(company string, b erp.Bill) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	d.resolved[company+"\x00"+b.ID] = keptAt[erp.Bill]{b, d.now()}
}

// resolvedBill returns the bill kept with keepResolved; ok is false
// unless it is there and fresh. It is not forgotten: decisions of one
// bill at once each resolved it.
func (d *decided) resolvedBill(company, bill string) (erp.Bill, bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	b, ok := d.resolved[company+"\x00"+bill]
	return b.v, ok
}

// keepCredits keeps the credit notes a decision found to concern the
// bill with this ID, to be netted with its payment.
func (d *decided) keepCredits(company, bill string, cs []erp.Bill) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	d.credits[company+"\x00"+bill] = keptAt[[]erp.Bill]{slices.Clone(cs), d.now()}
}

// takeCredits returns, and forgets, the credit notes kept for the bill;
// ok is false unless they are there and fresh.
func (d *decided) takeCredits(company, bill string) (cs []erp.Bill, ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.sweep()
	c, ok := d.credits[company+"\x00"+bill]
	delete(d.credits, company+"\x00"+bill)
	return c.v, ok
}

// sweep drops expired entries; d.mu is held.
func (d *decided) sweep() {
	now := d.now()
	for k, v := range d.credits {
		if now.Sub(v.at) > decidedTTL || v.at.After(now) {
			delete(d.credits, k)
		}
	}
	for k, v := range d.accounts {
		if now.Sub(v.at) > decidedTTL || v.at.After(now) {
			delete(d.accounts, k)
		}
	}
	for k, v := range d.bills {
		if now.Sub(v.at) > decidedTTL || v.at.After(now) {
			delete(d.bills, k)
		}
	}
	for k, v := range d.resolved {
		if now.Sub(v.at) > decidedTTL || v.at.After(now) {
			delete(d.resolved, k)
		}
	}
	for k, v := range d.vendors {
		if now.Sub(v.at) > decidedTTL || v.at.After(now) {
			delete(d.vendors, k)
		}
	}
}
