package ap

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/erp"
)

var (
	_ resolve.Registry = vendors{}
	_ resolve.Registry = bills{}
	_ resolve.Registry = bankAccounts{}
	_ resolve.Registry = callbacks{}
)

// vendors resolves a vendor's ID or name (as VendorName normalizes it) to
// one of the company's vendors. A name shared by two vendors of the company
// matches neither: the agent must then use the ID. Record value: the
// vendor's ID. Attributes: active.
type vendors struct{ src erp.Source }

func (r vendors) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	v, err := findVendor(ctx, r.src, string(owner), value)
	if err != nil {
		return resolve.Record{}, err
	}
	return resolve.Record{ID: v.ID, Value: v.ID, Attrs: map[string]intent.Value{"active": intent.Bool(v.Active)}}, nil
}

// FindVendor returns the company's vendor whose ID is value or, failing
// that, the only one whose name, as VendorName normalizes it, is value (the
// caller normalizes value with VendorName first). It returns
// resolve.ErrNoMatch when no vendor, or several, match; any other error
// means the ERP could not be read. It is how the pack resolves a vendor,
// for a channel that records call-backs to name the vendor the same way.
func FindVendor(ctx context.Context, src erp.Reader, company, value string) (erp.Vendor, error) {
	return findVendor(ctx, src, company, value)
}

func findVendor(ctx context.Context, src erp.Reader, company, value string) (erp.Vendor, error) {
	byID, err := src.Vendors(ctx, company, erp.VendorQuery{ID: value})
	if err != nil {
		return erp.Vendor{}, err
	}
	if len(byID) == 1 {
		return byID[0], nil
	}
	byName, err := src.Vendors(ctx, company, erp.VendorQuery{Name: value})
	if err != nil {
		return erp.Vendor{}, err
	}
	var match []erp.Vendor
	for _, v := range byName { // the ERP ignores case; the pack also folds inner spaces
		if n, err := VendorName(v.Name); err == nil && n == value {
			match = append(match, v)
		}
	}
	if len(match) != 1 {
		return erp.Vendor{}, resolve.ErrNoMatch
	}
	return match[0], nil
}

// bills resolves a bill to one of the company's vendor bills (credit notes
// are never paid and never match). It tries, in order, the bill's ID, its
// number, and its vendor reference: spelled the same (as BillReference
// normalizes it) or under RefKey. A number or reference that matches bills
// of several vendors matches none of them (the registry cannot see which
// vendor the agent named, and taking one would refuse the other vendor's
// bill with a misleading reason): the agent must then use the bill's
// number. Among bills of one vendor, a reference spelled the same wins,
// then the oldest, and the duplicate check of the context provider looks
// at the others. Record value: the bill's ID.
// Attributes: vendor (ID), currency, currency_supported (the currency has
// two decimal places: the only ones the pack pays), state, number, ref and
// due (YYYY-MM-DD, "" if none). What can change while a payment is decided
// (residual, payment state) is not an attribute: the context provider
// reads it once the bill's vendor is held.
type bills struct{ src erp.Source }

func (r bills) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	all, err := r.src.Bills(ctx, string(owner), erp.BillQuery{})
	if err != nil {
		return resolve.Record{}, err
	}
	all = slices.DeleteFunc(all, func(b erp.Bill) bool { return b.Kind != erp.KindBill })
	for _, b := range all {
		if b.ID == value {
			return billRecord(b), nil
		}
	}
	var byNumber []erp.Bill
	for _, b := range all { // sorted by ID: the oldest first
		if same, err := normalize.SameName(b.Name, value); err == nil && same { // exact up to ASCII case: never a compatibility fold
			byNumber = append(byNumber, b)
		}
	}
	if len(byNumber) > 0 {
		return oneVendor(byNumber, 0)
	}
	key := RefKey(value)
	var byRef []erp.Bill
	exact := -1
	for _, b := range all {
		n, err := BillReference(b.Ref)
		same := err == nil && n == value
		if !same && (key == "" || RefKey(b.Ref) != key) {
			continue
		}
		if same && exact < 0 {
			exact = len(byRef)
		}
		byRef = append(byRef, b)
	}
	if len(byRef) == 0 {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	return oneVendor(byRef, max(exact, 0))
}

// oneVendor returns the record of bs[i], or ErrNoMatch if bs are bills of
// several vendors.
func oneVendor(bs []erp.Bill, i int) (resolve.Record, error) {
	for _, b := range bs {
		if b.Vendor != bs[0].Vendor {
			return resolve.Record{}, resolve.ErrNoMatch
		}
	}
	return billRecord(bs[i]), nil
}

func billRecord(b erp.Bill) resolve.Record {
	return resolve.Record{ID: b.ID, Value: b.ID, Attrs: billAttrs(b)}
}

func billAttrs(b erp.Bill) map[string]intent.Value {
	due := ""
	if !b.Due.IsZero() {
		due = b.Due.UTC().Format(time.DateOnly)
	}
	return map[string]intent.Value{
		"vendor":             intent.Str(b.Vendor),
		"currency":           intent.Str(b.Currency),
		"currency_supported": intent.Bool(supportedCurrency(b.Currency)),
		"state":              intent.Str(string(b.State)),
		"number":             intent.Str(b.Name),
		"ref":                intent.Str(b.Ref),
		"due":                intent.Str(due),
	}
}

// bankAccounts resolves an IBAN (electronic format) to a bank account on
// file for one of the company's vendors, archived and untrusted ones
// included so that the policy can say why they are refused. Record value:
// the sanitized number; At: when it was set. Attributes: vendor (ID),
// trusted, active, age_days (whole days since it was set) and shared (the
// number is on file more than once, for several vendors: Odoo accepts that
// without a warning, and it is refused).
type bankAccounts struct {
	src erp.Source
	now func() time.Time
}

func (r bankAccounts) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	as, err := r.src.BankAccounts(ctx, string(owner), erp.BankAccountQuery{Number: value})
	if err != nil {
		return resolve.Record{}, err
	}
	if len(as) == 0 {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	a := as[0]
	if cur, ok := currentOf(as); ok {
		a = cur
	}
	age := max(int64(r.now().Sub(a.SetAt)/(24*time.Hour)), 0)
	return resolve.Record{
		ID: a.ID, Value: a.Sanitized, At: a.SetAt.UTC(),
		Attrs: map[string]intent.Value{
			"vendor":   intent.Str(a.Vendor),
			"trusted":  intent.Bool(a.Trusted),
			"active":   intent.Bool(a.Active),
			"age_days": intent.Int(age),
			"shared":   intent.Bool(len(as) > 1),
		},
	}, nil
}

// currentOf returns, among accounts sharing one number, an active trusted
// one if there is any.
func currentOf(as []erp.BankAccount) (erp.BankAccount, bool) {
	for _, a := range as {
		if a.Active && a.Trusted {
			return a, true
		}
	}
	return erp.BankAccount{}, false
}

// callbacks resolves the IBAN of a bank-detail change to the most recent
// call-back of the company that confirmed it. Record value: the IBAN; At:
// when the call-back was recorded. Attributes: vendor (the ID of the vendor
// called), called_by, phone_on_file (the number dialled is the vendor's
// phone on file), fresh (recorded within Config.CallbackValidity, and not
// in the future) and on_other_vendor (the number is already on file for
// another vendor of the company); and, for the person who approves the
// change, phone_dialled (the number dialled, as typed) and called_at (when
// the call-back was recorded, RFC 3339 in UTC).
type callbacks struct {
	src erp.Source
	cfg Config
}

func (r callbacks) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	cb, err := r.cfg.Callbacks.Callback(ctx, string(owner), value)
	if errors.Is(err, ErrNoCallback) {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	if err != nil {
		return resolve.Record{}, err
	}
	if cb.Company != string(owner) || cb.Number != value {
		return resolve.Record{}, resolve.ErrNoMatch // a Callbacks that breaks its contract
	}
	onFile := false
	vs, err := r.src.Vendors(ctx, string(owner), erp.VendorQuery{ID: cb.Vendor})
	if err != nil {
		return resolve.Record{}, err
	}
	if len(vs) == 1 {
		onFile = SamePhone(cb.Phone, vs[0].Phone)
	}
	as, err := r.src.BankAccounts(ctx, string(owner), erp.BankAccountQuery{Number: value})
	if err != nil {
		return resolve.Record{}, err
	}
	other := slices.ContainsFunc(as, func(a erp.BankAccount) bool { return a.Vendor != cb.Vendor })
	now := r.cfg.Now()
	fresh := !cb.At.After(now) && now.Sub(cb.At) <= r.cfg.CallbackValidity
	return resolve.Record{
		ID: cb.ID, Value: cb.Number, At: cb.At.UTC(),
		Attrs: map[string]intent.Value{
			"vendor":          intent.Str(cb.Vendor),
			"called_by":       intent.Str(cb.CalledBy),
			"phone_on_file":   intent.Bool(onFile),
			"fresh":           intent.Bool(fresh),
			"on_other_vendor": intent.Bool(other),
			"phone_dialled":   intent.Str(cb.Phone),
			"called_at":       intent.Str(cb.At.UTC().Format(time.RFC3339)),
		},
	}, nil
}
