package ap

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

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
// one of the company's vendors. A name shared by several vendors of the
// company matches none of them, and the refusal names their IDs: the
// agent must then use the ID. Record value: the vendor's ID. Attributes:
// active, and country (the vendor's ISO 3166-1 country code on file, ""
// if none; see erp.Vendor.Country). The vendor's name is kept for the
// facts of the decision (decided.keepVendor).
type vendors struct {
	src     erp.Source
	decided *decided
}

func (r vendors) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	v, err := findVendor(ctx, r.src, string(owner), value)
	if err != nil {
		return resolve.Record{}, err
	}
	r.decided.keepVendor(string(owner), v)
	return resolve.Record{ID: v.ID, Value: v.ID, Attrs: map[string]intent.Value{"active": intent.Bool(v.Active), "country": intent.Str(v.Country)}}, nil
}

// FindVendor returns the company's vendor whose ID is value or, failing
// that, the only one whose name, as VendorName normalizes it, is value (the
// caller normalizes value with VendorName first). It returns an error
// wrapping resolve.ErrNoMatch when no vendor, or several, match (then
// saying which); any other error means the ERP could not be read. It is
// how the pack resolves a vendor, for a channel that records call-backs to
// name the vendor the same way.
func FindVendor(ctx context.Context, src erp.Reader, company, value string) (erp.Vendor, error) {
	return findVendor(ctx, src, company, value)
}

// vendorCandidates bounds a lookup by name: more vendors of one name than
// this is refused as ambiguous all the same.
const vendorCandidates = 20

func findVendor(ctx context.Context, src erp.Reader, company, value string) (erp.Vendor, error) {
	if isID(value) {
		byID, err := src.Vendors(ctx, company, erp.VendorQuery{ID: value, Limit: 1})
		if err != nil {
			return erp.Vendor{}, err
		}
		if len(byID) == 1 {
			return byID[0], nil
		}
	}
	byName, err := src.Vendors(ctx, company, erp.VendorQuery{Name: value, Limit: vendorCandidates})
	if err != nil {
		return erp.Vendor{}, err
	}
	var match []erp.Vendor
	for _, v := range byName { // the ERP ignores case; the pack also folds inner spaces
		if n, err := VendorName(v.Name); err == nil && n == value {
			match = append(match, v)
		}
	}
	switch len(match) {
	case 0:
		return erp.Vendor{}, resolve.ErrNoMatch
	case 1:
		return match[0], nil
	}
	ids := make([]string, len(match))
	for i, v := range match {
		ids[i] = v.ID
		if !v.Active {
			ids[i] += " (archived)"
		}
	}
	return erp.Vendor{}, resolve.NoMatch(fmt.Sprintf("is the name of %d vendors on file (IDs %s): it names none of them. "+
		"Name the vendor by its ID; ap.list_open_bills shows each bill's vendor ID, and ap.get_vendor with an ID shows that vendor's bank account",
		len(match), strings.Join(ids, ", ")))
}

// isID reports whether value can be a record ID: a decimal number.
func isID(value string) bool {
	return value != "" && strings.Trim(value, "0123456789") == ""
}

// bills resolves a bill to one of the company's vendor bills (credit notes
// are never paid and never match). It tries, in order, the bill's ID, its
// number, and its vendor reference spelled the same (as BillReference
// normalizes it: case and runs of spaces aside). It never matches
// fuzzily: a reference that only shares normalize.DuplicateKey with a
// bill names no bill (the key serves the duplicate control only, see
// docs/controls.md). Resolved after the vendor (LookupIn), it looks
// among the named vendor's bills first, so that a number or reference
// that bills of several vendors share names the named vendor's; only when
// the vendor has none does it look at the others' (the policy then
// refuses a bill of another vendor than the one named, saying so), and a
// number or reference of several other vendors matches none of them, the
// refusal naming them. Among one vendor's bills, the oldest wins, and the
// duplicate control of the context provider looks at the others. It reads
// only the candidates (erp.BillQuery.Lookup), without their vendors'
// names (erp.BillQuery.NoVendorName) but for a refusal that names bills of
// several vendors (nameVendors). Record value: the bill's ID.
// Attributes: vendor (ID), currency, currency_supported (the currency has
// two decimal places: the only ones the pack pays), state, number, ref and
// due (YYYY-MM-DD, "" if none). What can change while a payment is decided
// (residual, payment state) is not an attribute: the context provider
// reads it once the bill's vendor is held; the bill resolved is kept for
// it (decided.keepResolved), whose reference and amount choose what of
// the vendor's history it reads.
type bills struct {
	src     erp.Source
	decided *decided
}

var _ resolve.ScopedRegistry = bills{}

func (r bills) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	return r.LookupIn(ctx, owner, value, nil)
}

func (r bills) LookupIn(ctx context.Context, owner intent.Owner, value string, resolved map[string]string) (resolve.Record, error) {
	b, err := r.lookupIn(ctx, owner, value, resolved)
	if err != nil {
		return resolve.Record{}, err
	}
	if r.decided != nil {
		r.decided.keepResolved(string(owner), b)
	}
	return billRecord(b), nil
}

func (r bills) lookupIn(ctx context.Context, owner intent.Owner, value string, resolved map[string]string) (erp.Bill, error) {
	all, err := r.src.Bills(ctx, string(owner), erp.BillQuery{Lookup: value, NoVendorName: true})
	if err != nil {
		return erp.Bill{}, err
	}
	all = slices.DeleteFunc(all, func(b erp.Bill) bool { return b.Kind != erp.KindBill })
	for _, b := range all {
		if b.ID == value {
			return b, nil
		}
	}
	var byNumber, byRef []erp.Bill
	for _, b := range all { // sorted by ID: the oldest first
		if same, err := normalize.SameName(b.Name, value); err == nil && same { // exact up to ASCII case: never a compatibility fold
			byNumber = append(byNumber, b)
		}
		if n, err := BillReference(b.Ref); err == nil && n == value {
			byRef = append(byRef, b)
		}
	}
	for _, bs := range [][]erp.Bill{byNumber, byRef} {
		if len(bs) == 0 {
			continue
		}
		if mine := slices.DeleteFunc(slices.Clone(bs), func(b erp.Bill) bool { return b.Vendor != resolved["vendor"] }); len(mine) > 0 {
			// The vendor's open bill first: a bill reversed by a credit
			// note (or paid) and entered again under the same reference
			// must not hide its re-issue behind "already paid". The
			// duplicate control still compares the two.
			if i := slices.IndexFunc(mine, openBill); i >= 0 {
				return mine[i], nil
			}
			return mine[0], nil
		}
		if err := r.nameVendors(ctx, owner, value, bs); err != nil {
			return erp.Bill{}, err
		}
		return oneVendor(bs, 0)
	}
	return erp.Bill{}, resolve.ErrNoMatch
}

// openBill reports whether b is a posted bill that still owes something.
func openBill(b erp.Bill) bool {
	return b.Kind == erp.KindBill && b.State == erp.StatePosted && b.Residual > 0 && !b.PaymentState.Settled()
}

// nameVendors sets the VendorName of bs, bills that the lookup of value
// found without their vendors' names, when they are bills of several
// vendors (which oneVendor refuses, naming them): it reads them again,
// with the names (one call, on that refusal only).
func (r bills) nameVendors(ctx context.Context, owner intent.Owner, value string, bs []erp.Bill) error {
	if !slices.ContainsFunc(bs, func(b erp.Bill) bool { return b.Vendor != bs[0].Vendor }) {
		return nil
	}
	named, err := r.src.Bills(ctx, string(owner), erp.BillQuery{Lookup: value})
	if err != nil {
		return err
	}
	for i := range bs {
		if j := slices.IndexFunc(named, func(n erp.Bill) bool { return n.ID == bs[i].ID }); j >= 0 {
			bs[i].VendorName = named[j].VendorName
		}
	}
	return nil
}

// oneVendor returns bs[i], or an error wrapping ErrNoMatch that names
// the bills if bs are bills of several vendors.
func oneVendor(bs []erp.Bill, i int) (erp.Bill, error) {
	for _, b := range bs {
		if b.Vendor != bs[0].Vendor {
			names := make([]string, 0, len(bs))
			for _, b := range bs {
				names = append(names, fmt.Sprintf("%s of %s (vendor ID %s)", b.Name, b.VendorName, b.Vendor))
			}
			return erp.Bill{}, resolve.NoMatch("matches bills of several vendors: " + strings.Join(names, ", ") +
				"; it names none of them. Name the bill by its number")
		}
	}
	return bs[i], nil
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

// bankAccounts resolves an account key (see AccountKey: an IBAN in
// electronic format, or ABA:, SORTCODE: or BIC: with the bank's code and
// the account number) to an active bank account on file for one of the
// company's vendors; archived accounts are never candidates. An account
// matches only if its number as typed in the ERP (acc_number, not Odoo's
// sanitized_acc_number, which folds ß into SS and a dotless ı into I),
// with its bank's code (bank_id.bic) and its holder's country, is the
// account under the pack's own normalizer (normalize.ParseAccount): an
// account typed with look-alike characters is refused as unusable until it
// is corrected in the ERP, and the refusal says which: also when Odoo
// keeps its number apart from the one asked for (a Cyrillic Е is not
// folded into E), if it is an account of the vendor resolved before (see
// LookupIn). One read gives the
// account and every other active account of its vendor
// (erp.BankAccountQuery.Holders); a UK account takes a second one, for the
// sort code typed in the number. Record value: the key; At:
// when it was set. Attributes: vendor (ID), trusted, active, age_days
// (whole days since it was set), current (it is its vendor's current
// account, erp.Current), cooling_off (it was set less than
// Config.CoolingOff ago) and shared (the number is on active accounts of
// several vendors: Odoo accepts that without a warning, and it is
// refused), shared_with (for people, when shared: the holders' names,
// vendor IDs and account IDs, see holdersText; "" otherwise),
// other_holders (how many other partners of the ERP hold an active
// account of the number, erp.BankAccount.OtherHolders: vendors or not;
// Odoo 19's duplicate_bank_partner_ids) and
// other_holders_ids (their IDs, for people), and country
// (the ISO 3166-1 code of the bank's country, see accountCountry). The account is kept for the payment's execution (see
// decided).
type bankAccounts struct {
	src     erp.Source
	cfg     Config
	decided *decided
}

var _ resolve.ScopedRegistry = bankAccounts{}

func (r bankAccounts) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	return r.LookupIn(ctx, owner, value, nil)
}

// LookupIn is Lookup; when nothing on file matches value, it reads the
// active accounts of the vendor resolved before (resolved["vendor"]) to
// say so when one of them is value typed with characters that are not
// plain ASCII (see lookalikeOf), which Odoo keeps apart from value.
func (r bankAccounts) LookupIn(ctx context.Context, owner intent.Owner, value string, resolved map[string]string) (resolve.Record, error) {
	rec, err := r.lookup(ctx, owner, value)
	if !errors.Is(err, errNotOnFile) || resolved["vendor"] == "" {
		return rec, err
	}
	as, rerr := r.src.BankAccounts(ctx, string(owner), erp.BankAccountQuery{Vendor: resolved["vendor"], Active: true})
	if rerr != nil {
		return resolve.Record{}, rerr
	}
	for _, a := range as {
		if lookalikeOf(a.Number, value) {
			return resolve.Record{}, resolve.NoMatch(lookalikeText(a))
		}
	}
	return resolve.Record{}, resolve.ErrNoMatch
}

// errNotOnFile is the bare resolve.ErrNoMatch of bankAccounts.lookup: no
// account on file, archived or not, has the number.
var errNotOnFile = fmt.Errorf("%w", resolve.ErrNoMatch)

func (r bankAccounts) lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	// Archived ones too, in the same read, only to say why they are
	// refused.
	as, err := accountsWithKey(ctx, r.src, string(owner), value, erp.BankAccountQuery{Holders: true})
	if err != nil {
		return resolve.Record{}, err
	}
	numbers := sanitizedNumbers(value)
	var usable, lookalike, archived []erp.BankAccount
	for _, a := range as {
		if !slices.Contains(numbers, a.Sanitized) {
			continue // another account of a holder
		}
		k, ok := keyOf(a)
		switch {
		case ok && k != value:
			continue // the same number at another bank
		case !a.Active:
			archived = append(archived, a)
		case ok:
			usable = append(usable, a)
		default:
			lookalike = append(lookalike, a)
		}
	}
	if len(usable) == 0 {
		if len(lookalike) > 0 {
			return resolve.Record{}, resolve.NoMatch(unusableText(lookalike[0]))
		}
		if len(archived) > 0 {
			return resolve.Record{}, resolve.NoMatch(fmt.Sprintf("is on file only as an archived bank account (vendor %s, bank account %s); "+
				"archived accounts are never paid", archived[0].Vendor, archived[0].ID))
		}
		return resolve.Record{}, errNotOnFile
	}
	a := usable[0]
	if cur, ok := currentOf(usable); ok {
		a = cur
	}
	holders := map[string]bool{}
	for _, u := range usable {
		holders[u.Vendor] = true
	}
	sharedWith := ""
	if len(holders) > 1 {
		if sharedWith, err = holdersText(ctx, r.src, string(owner), usable); err != nil {
			return resolve.Record{}, err
		}
	}
	cur, ok := erp.Current(as, a.Vendor) // archived accounts are never current
	current := ok && cur.ID == a.ID
	r.decided.keepAccount(string(owner), a)
	age := max(int64(r.cfg.Now().Sub(a.SetAt)/(24*time.Hour)), 0)
	return resolve.Record{
		ID: a.ID, Value: value, At: a.SetAt.UTC(),
		Attrs: map[string]intent.Value{
			"vendor":            intent.Str(a.Vendor),
			"trusted":           intent.Bool(a.Trusted),
			"active":            intent.Bool(a.Active),
			"age_days":          intent.Int(age),
			"current":           intent.Bool(current),
			"cooling_off":       intent.Bool(current && r.cfg.coolingOff(a)),
			"shared":            intent.Bool(len(holders) > 1),
			"country":           intent.Str(accountCountry(a)),
			"shared_with":       intent.Str(sharedWith),
			"other_holders":     intent.Int(int64(len(a.OtherHolders))),
			"other_holders_ids": intent.Str(strings.Join(a.OtherHolders, ", ")),
		},
	}, nil
}

// holdersText names, for people, the vendors holding the accounts as
// (several vendors' accounts of one number): each vendor's name and ID
// and the ID of its account, in the order of as. It reads each vendor.
func holdersText(ctx context.Context, src erp.Reader, company string, as []erp.BankAccount) (string, error) {
	names := make([]string, 0, len(as))
	for _, a := range as {
		vs, err := src.Vendors(ctx, company, erp.VendorQuery{ID: a.Vendor, Limit: 1})
		if err != nil {
			return "", err
		}
		name := "(not found)"
		if len(vs) == 1 {
			name = fmt.Sprintf("%q", vs[0].Name)
		}
		names = append(names, fmt.Sprintf("%s (vendor ID %s, bank account %s)", name, a.Vendor, a.ID))
	}
	return strings.Join(names, ", "), nil
}

// lookalikeOf reports whether number, an account number as typed in the
// ERP that holds a character that is not plain ASCII, is key but for
// those characters: with separators (spaces, '-', '.', '/') left out and
// ASCII case aside, it has as many characters as key, each ASCII one equal
// to key's at its place. Such an account is key typed with look-alikes
// (a Cyrillic Е for an E), which the ERP's sanitized number keeps apart
// from key. Only an IBAN key is compared.
func lookalikeOf(number, key string) bool {
	if strings.Contains(key, ":") {
		return false
	}
	var rs []rune
	foreign := false
	for _, c := range number {
		switch {
		case c == ' ' || c == '-' || c == '.' || c == '/':
			continue
		case c >= utf8.RuneSelf:
			foreign = true
		}
		rs = append(rs, c)
	}
	if !foreign || len(rs) != len(key) {
		return false
	}
	for i, c := range rs {
		if c < utf8.RuneSelf && unicode.ToUpper(c) != rune(key[i]) {
			return false
		}
	}
	return true
}

// unusableText says why an account whose number matches only once Odoo
// folded it cannot be paid.
func unusableText(a erp.BankAccount) string {
	if _, err := normalize.ParseAccount(a.Number, a.BIC, a.Country); errors.Is(err, normalize.ErrNoBank) {
		return fmt.Sprintf("matches bank account %s of vendor %s by its number alone (%q): %s", a.ID, a.Vendor, a.Number, accountProblem(a))
	}
	why := "is not a valid account as typed (an IBAN, or a national account number with its bank's code)"
	return fmt.Sprintf("matches bank account %s of vendor %s only as Odoo folds its number (%q): the number typed in Odoo %s. "+
		"The account is unusable until the accounting team corrects it in Odoo; nothing is paid to it", a.ID, a.Vendor, a.Number, notASCII(a, why))
}

// notASCII returns why, or, when a's number holds a character that is not
// plain ASCII, which one and where.
func notASCII(a erp.BankAccount, why string) string {
	for i, c := range a.Number {
		if c >= utf8.RuneSelf {
			return fmt.Sprintf("contains the character U+%04X at byte %d, which is not plain ASCII", c, i)
		}
	}
	return why
}

// lookalikeText says why the vendor's account a, whose number is the key
// asked for typed with look-alikes (see lookalikeOf), cannot be paid.
func lookalikeText(a erp.BankAccount) string {
	return fmt.Sprintf("is not on file as typed, but vendor %s has bank account %s whose number typed in Odoo (%q) reads the same and %s. "+
		"The account is unusable until the accounting team corrects it in Odoo; nothing is paid to it", a.Vendor, a.ID, a.Number, notASCII(a, "differs"))
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
// another vendor of the company, on an active or an archived account); and, for the person who approves the
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
	// Archived accounts count: a number once on file for another vendor
	// (archived when found to be wrong, or when that vendor moved) is
	// not moved to this one by a call-back alone; the accounting team
	// deletes or corrects the other record first.
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
