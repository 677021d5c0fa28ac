package odoo

import (
	"cmp"
	"context"
	"slices"

	"github.com/intentplane/intentplane/erp"
)

// dialect holds what differs between the Odoo major versions the
// connector speaks (Supported): the names of fields, the values of
// states and what the server accepts. Everything else in the package
// asks it; nothing version-specific leaves the package (packs see
// erp.Source only). The differences are measured in
// ../shared/odoo18-19-api.md §5 and read in each version's source.
//
// Differences the connector does not meet, and so does not model:
// name_get (removed in 18; never called), res.partner mobile (gone in 19;
// never read), account.move status_in_payment (new in 18, "posted" for an
// unpaid bill on 19 and "not_paid" on 18; never read: payment_state and
// amount_residual are), the fault texts of a missing required field, a
// foreign key or an unknown field (changed in 19; the connector branches
// on fault codes and on texts that did not change: "Record does not exist
// or has been deleted", "Object … doesn't exist", "cannot marshal None"),
// and the group labels of an access fault (shown, never parsed). The one
// difference only provisioning meets, res.users' field of a user's groups
// (groups_id until 18, group_ids from 19), is package provision's.
type dialect struct {
	// major is the Odoo major version: 17, 18 or 19.
	major int
	// paymentMemo is account.payment's memo field: ref (delegated to its
	// journal entry through _inherits) in 17, memo from 18. The journal
	// entry of a payment carries the memo in its ref on every version.
	paymentMemo string
	// movePayment is account.move's link to the payment it is the journal
	// entry of: payment_id in 17, origin_payment_id from 18.
	movePayment string
	// paymentStates maps account.payment's state to erp's: 17 has draft,
	// posted and cancel; 18 and 19 draft, in_process (posted, not yet
	// matched), paid, canceled and rejected.
	paymentStates map[string]erp.PaymentStatus
	// draftBillPayable reports whether Odoo's payment wizard pays a bill
	// that is not posted (18 and 19 do; 17 refuses: "You can only register
	// payment for posted journal entries."): the connector then reads the
	// bill's state itself in the call that opens the wizard (openWizard).
	draftBillPayable bool
	// duplicateHolders is res.partner.bank's computed field of the other
	// partners holding an active account of the same acc_number
	// (duplicate_bank_partner_ids, 19); "" before 19, where the connector
	// computes the same fact itself (see otherHolders).
	duplicateHolders string
}

var dialects = map[int]*dialect{
	17: {
		major: 17, paymentMemo: "ref", movePayment: "payment_id",
		paymentStates: map[string]erp.PaymentStatus{"draft": erp.PaymentDraft, "posted": erp.PaymentPosted, "cancel": erp.PaymentCancelled},
	},
	18: {
		major: 18, paymentMemo: "memo", movePayment: "origin_payment_id",
		paymentStates: states18, draftBillPayable: true,
	},
	19: {
		major: 19, paymentMemo: "memo", movePayment: "origin_payment_id",
		paymentStates: states18, draftBillPayable: true, duplicateHolders: "duplicate_bank_partner_ids",
	},
}

// states18 are account.payment's states from Odoo 18 on: a payment the
// wizard made is paid (reconciled with its bill) or in_process (posted,
// not matched); rejected is a payment the bank refused.
var states18 = map[string]erp.PaymentStatus{
	"draft": erp.PaymentDraft, "in_process": erp.PaymentPosted, "paid": erp.PaymentPosted,
	"canceled": erp.PaymentCancelled, "rejected": erp.PaymentCancelled,
}

// dialectOf returns the dialect of an Odoo major version the connector
// supports (parseVersion refuses the others); 17's for any other.
func dialectOf(major int) *dialect {
	if d, ok := dialects[major]; ok {
		return d
	}
	return dialects[17]
}

// dialect returns the dialect of the server's version, reading the
// version first if no call has yet (common.version, one call, no login).
func (c *Client) dialect(ctx context.Context) (*dialect, error) {
	v, err := c.t.Version(ctx)
	if err != nil {
		return nil, err
	}
	return dialectOf(v.Major), nil
}

// paymentState maps account.payment's state to erp's; ok is false for a
// state the version does not have.
func (d *dialect) paymentState(s string) (erp.PaymentStatus, bool) {
	p, ok := d.paymentStates[s]
	return p, ok
}

// postedStates are the account.payment states that erp.PaymentPosted
// stands for, for a domain.
func (d *dialect) postedStates() []any {
	var out []any
	for s, p := range d.paymentStates {
		if p == erp.PaymentPosted {
			out = append(out, s)
		}
	}
	slices.SortFunc(out, func(a, b any) int { return cmp.Compare(a.(string), b.(string)) })
	return out
}

// billFields are the account.move fields a read of bills asks for: those
// of a bill and those of a payment's journal entry, read together.
func (d *dialect) billFields() []string {
	return []string{"name", "ref", "partner_id", "commercial_partner_id", "move_type", "currency_id", "amount_total", "amount_residual",
		"invoice_date_due", "partner_bank_id", "state", "payment_state", "reversed_entry_id", "company_id", d.movePayment, "date", "create_date",
		"invoice_date"}
}

// paymentFields are the account.payment fields of a payment.
func (d *dialect) paymentFields() []string {
	return []string{"partner_id", "partner_bank_id", "amount", "currency_id", "state", d.paymentMemo, "date", "create_date",
		"reconciled_bill_ids", "is_reconciled", "company_id", "payment_type", "partner_type"}
}

// keyedFields are those of a payment looked up by its key
// (paymentByKey), which belongs to the bill its memo names: all but
// reconciled_bill_ids, which Odoo computes at each read (queries over
// the payment's reconciled lines: 8 of the 22 ms of the read-back of a
// payment on Odoo 17). is_reconciled, stored, still says whether Odoo
// matched all of the payment.
func (d *dialect) keyedFields() []string {
	return slices.DeleteFunc(d.paymentFields(), func(f string) bool { return f == "reconciled_bill_ids" })
}

// accountFields are the res.partner.bank fields of an account; with
// holders, also the other partners holding its number where the version
// computes them.
func (d *dialect) accountFields(holders bool) []string {
	fs := []string{"partner_id", "acc_number", "sanitized_acc_number", "bank_bic", "allow_out_payment", "active", "sequence", "write_date", "company_id"}
	if holders && d.duplicateHolders != "" {
		fs = append(fs, d.duplicateHolders)
	}
	return fs
}
