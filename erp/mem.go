package erp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

var _ Source = (*Mem)(nil)

// Mem is an in-memory ERP for demos and tests; it must only ever hold
// fictional data. The zero value is not usable; call NewMem. It is safe for
// concurrent use.
//
// AddVendor, AddBankAccount, AddBill and AddPayment are the ERP's own data
// entry (a clerk typing a bill, a partner created by hand); they are not
// part of Source and the gateway never calls them. IDs are decimal numbers
// from one counter, unique across companies and models.
type Mem struct {
	now func() time.Time

	mu       sync.Mutex
	next     int
	vendors  map[string]*memVendor
	accounts map[string]*BankAccount
	bills    map[string]*memBill
	payments map[string]*memPayment
	// byVendor and byBill index bills by vendor ID and payments by bill
	// ID, each in the order entered (ID order): a decision reads one
	// vendor's documents without visiting every bill of the ERP.
	byVendor map[string][]*memBill
	byBill   map[string][]*memPayment
	// byName indexes bills by number, upper-cased, and byRefGram by each
	// three-character piece of their reference, upper-cased: a lookup
	// (BillQuery.Lookup) compares a few bills, not every bill.
	byName    map[string][]*memBill
	byRefGram map[string][]*memBill
	// For a decision's read (BillQuery.Decision): each vendor's open
	// documents (posted, residual above zero; a document that closed is
	// dropped when next read: a residual never grows), credit notes by the
	// bill they reverse, each vendor's bills by currency and total
	// (byTotal, sorted by total), by invoice date (byDate, sorted) and
	// without a reference (noRef), each vendor's references (upper-cased,
	// with the set of their characters), and each vendor's payments in
	// order of their day.
	openDocs map[string][]*memBill
	// order holds every bill in ID order, openBills and openCredits the
	// open bills and credit notes of every vendor (compacted when read,
	// like openDocs): a listing of open bills reads a page, not the book.
	order       []*memBill
	openBills   []*memBill
	openCredits []*memBill
	reversedBy  map[string][]*memBill
	byTotal     map[string][]*memBill
	byDate      map[string][]*memBill
	noRef       map[string][]*memBill
	refs        map[string][]memRef
	vendorPays  map[string][]*memPayment
	keys        map[string]string // company, kind and idempotency key → record ID
	currency    map[string]string // company → its currency, if not DefaultCurrency
	rates       []memRate
}

// memRate is a rate entered with SetRate; company "" applies to every
// company.
type memRate struct {
	company, currency, day, value string
}

type memVendor struct {
	company string
	Vendor
}

type memBill struct {
	company string
	Bill
}

type memPayment struct {
	company string
	Payment
}

// NewMem returns an empty ERP. now stamps payments and bank-account
// changes; nil means time.Now.
func NewMem(now func() time.Time) *Mem {
	if now == nil {
		now = time.Now
	}
	return &Mem{
		now:       now,
		vendors:   map[string]*memVendor{},
		accounts:  map[string]*BankAccount{},
		bills:     map[string]*memBill{},
		payments:  map[string]*memPayment{},
		byVendor:  map[string][]*memBill{},
		byBill:    map[string][]*memPayment{},
		byName:    map[string][]*memBill{},
		byRefGram: map[string][]*memBill{},
		openDocs:  map[string][]*memBill{}, reversedBy: map[string][]*memBill{}, byTotal: map[string][]*memBill{},
		byDate: map[string][]*memBill{}, noRef: map[string][]*memBill{},
		refs: map[string][]memRef{}, vendorPays: map[string][]*memPayment{},
		keys:     map[string]string{},
		currency: map[string]string{},
	}
}

func (m *Mem) id() string {
	m.next++
	return strconv.Itoa(m.next)
}

func refused(format string, a ...any) error {
	return fmt.Errorf("%w: %s", ErrRefused, fmt.Sprintf(format, a...))
}

func notFound(what string) error { return fmt.Errorf("%w: %s", ErrNotFound, what) }

// AddVendor adds a vendor to company and returns it with its new ID. It
// returns an error wrapping ErrRefused for an empty company or name.
func (m *Mem) AddVendor(ctx context.Context, company string, v Vendor) (Vendor, error) {
	if company == "" || strings.TrimSpace(v.Name) == "" {
		return Vendor{}, refused("a vendor needs a company and a name")
	}
	if !countryCode(v.Country) {
		return Vendor{}, refused("a vendor's country is an ISO 3166-1 alpha-2 code in capitals (DE), as Odoo gives it, or none")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	v.ID = m.id()
	m.vendors[v.ID] = &memVendor{company: company, Vendor: v}
	return v, nil
}

// AddBankAccount adds a bank account to one of company's vendors, as typed
// by hand, and returns it with its ID and sanitized number. Trusted and
// Active are taken as given; a zero Sequence means 10 and a zero SetAt
// means now. It returns an error wrapping ErrNotFound for a vendor of
// another company and ErrRefused for an empty number or a number the
// vendor already has (Odoo's uniqueness per partner).
func (m *Mem) AddBankAccount(ctx context.Context, company string, a BankAccount) (BankAccount, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if v := m.vendors[a.Vendor]; v == nil || v.company != company {
		return BankAccount{}, notFound("vendor")
	}
	a.Sanitized = Sanitize(a.Number)
	if a.Sanitized == "" {
		return BankAccount{}, refused("the account number is empty")
	}
	for _, o := range m.accounts {
		if o.Vendor == a.Vendor && o.Sanitized == a.Sanitized {
			return BankAccount{}, refused("the vendor already has this account number")
		}
	}
	if a.Sequence == 0 {
		a.Sequence = 10
	}
	if a.SetAt.IsZero() {
		a.SetAt = m.now()
	}
	a.SetAt = a.SetAt.UTC()
	a.ID = m.id()
	m.accounts[a.ID] = &a
	return a, nil
}

// AddBill enters a vendor bill or credit note for one of company's vendors
// and returns it with its ID. An empty Kind means KindBill, an empty State
// means StatePosted, an empty Name is given one ("BILL/<id>" or
// "RBILL/<id>"); Residual and PaymentState are computed (a new document is
// unpaid). A posted credit note that names a bill in Reverses reduces that
// bill's residual by up to its total. It returns an error wrapping
// ErrNotFound for a vendor or reversed bill of another company, and
// ErrRefused for a total not above zero, a currency that is not three
// upper-case letters, or a credit note in another currency or for another
// vendor than its bill.
func (m *Mem) AddBill(ctx context.Context, company string, b Bill) (Bill, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	target, err := m.checkBill(company, &b)
	if err != nil {
		return Bill{}, err
	}
	b.ID = m.id()
	if b.Name == "" {
		prefix := "BILL/"
		if b.Kind == KindCreditNote {
			prefix = "RBILL/"
		}
		b.Name = prefix + b.ID
	}
	if !b.Due.IsZero() {
		b.Due = b.Due.UTC()
	}
	if !b.Date.IsZero() {
		b.Date = b.Date.UTC()
	}
	b.Residual, b.PaymentState = b.Total, NotPaid
	if target != nil && b.State == StatePosted {
		applied := min(b.Total, target.Residual)
		target.Residual -= applied
		target.PaymentState = paymentState(target.Residual)
		b.Residual -= applied
		b.PaymentState = paymentState(b.Residual)
	}
	mb := &memBill{company: company, Bill: b}
	m.bills[b.ID] = mb
	m.indexBill(mb)
	return b, nil
}

// checkBill gives b its default Kind and State and checks that it can be
// entered for company, with AddBill's errors; it returns the bill a
// credit note reverses, or nil (and clears Reverses on anything else). It
// is called with m.mu held.
func (m *Mem) checkBill(company string, b *Bill) (*memBill, error) {
	if v := m.vendors[b.Vendor]; v == nil || v.company != company {
		return nil, notFound("vendor")
	}
	if b.Kind == "" {
		b.Kind = KindBill
	}
	if b.State == "" {
		b.State = StatePosted
	}
	if b.Total <= 0 {
		return nil, refused("the total must be above zero")
	}
	if !currencyCode(b.Currency) {
		return nil, refused("the currency must be an ISO 4217 code")
	}
	if b.Kind != KindBill && b.Kind != KindCreditNote {
		return nil, refused("unknown kind %q", b.Kind)
	}
	if b.Kind != KindCreditNote || b.Reverses == "" {
		b.Reverses = ""
		return nil, nil
	}
	target := m.bills[b.Reverses]
	if target == nil || target.company != company || target.Kind != KindBill {
		return nil, notFound("reversed bill")
	}
	if target.Vendor != b.Vendor || target.Currency != b.Currency {
		return nil, refused("a credit note must be for its bill's vendor and currency")
	}
	return target, nil
}

// AddPayment records a payment made outside intentplane (by hand in the
// ERP), as given: a draft payment is in flight and changes nothing yet; a
// posted one reduces its bill's residual by its amount. It returns the
// payment with its ID, or an error wrapping ErrNotFound for a bill of
// another company and ErrRefused for an amount not above zero, above the
// residual (when posted) or in another currency.
func (m *Mem) AddPayment(ctx context.Context, company string, p Payment) (Payment, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b := m.bills[p.Bill]
	if b == nil || b.company != company {
		return Payment{}, notFound("bill")
	}
	if p.Amount.Amount <= 0 || p.Amount.Currency != b.Currency {
		return Payment{}, refused("the amount must be above zero and in %s", b.Currency)
	}
	if p.State == "" {
		p.State = PaymentPosted
	}
	if p.State == PaymentPosted {
		if p.Amount.Amount > b.Residual {
			return Payment{}, refused("the amount is above the residual")
		}
		b.Residual -= p.Amount.Amount
		b.PaymentState = paymentState(b.Residual)
	}
	p.ID, p.Vendor, p.Reconciled = m.id(), b.Vendor, p.State == PaymentPosted
	if p.Date.IsZero() {
		p.Date = m.now()
	}
	p.Date = p.Date.UTC()
	m.addPayment(company, p)
	return p, nil
}

// BlockPayment blocks company's bill for payment (its PaymentState becomes
// Blocked, and RegisterPayment refuses it), as a person does in Odoo 18
// and later with (Un)Block Payment, or releases it (blocked false: its
// payment state follows its residual again). It returns an error wrapping
// ErrNotFound for a bill of another company.
func (m *Mem) BlockPayment(ctx context.Context, company, bill string, blocked bool) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.bills[bill]
	if !ok || b.company != company {
		return notFound("bill " + bill)
	}
	switch {
	case blocked:
		b.PaymentState = Blocked
	case b.Residual == b.Total:
		b.PaymentState = NotPaid
	default:
		b.PaymentState = paymentState(b.Residual)
	}
	return nil
}

func derefAccounts(as []*BankAccount) []BankAccount {
	out := make([]BankAccount, len(as))
	for i, a := range as {
		out[i] = *a
	}
	return out
}

func paymentState(residual intent.Amount) PaymentState {
	if residual <= 0 {
		return Paid
	}
	return Partial
}

func currencyCode(c string) bool {
	return len(c) == 3 && 'A' <= c[0] && c[0] <= 'Z' && 'A' <= c[1] && c[1] <= 'Z' && 'A' <= c[2] && c[2] <= 'Z'
}

// Vendors implements Reader.
func (m *Mem) Vendors(ctx context.Context, company string, q VendorQuery) ([]Vendor, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Vendor
	for _, v := range m.vendors {
		if v.company != company || (q.ID != "" && v.ID != q.ID) ||
			(q.Name != "" && !sameName(v.Name, q.Name)) {
			continue
		}
		out = append(out, v.Vendor)
	}
	slices.SortFunc(out, func(a, b Vendor) int { return CompareIDs(a.ID, b.ID) })
	return page(out, 0, q.Limit), nil
}

// BankAccounts implements Reader.
func (m *Mem) BankAccounts(ctx context.Context, company string, q BankAccountQuery) ([]BankAccount, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	number := Sanitize(q.Number)
	m.mu.Lock()
	defer m.mu.Unlock()
	holders := map[string]bool{}
	if q.Holders && q.Number != "" {
		for _, a := range m.accounts {
			if SameNumber(a.Sanitized, number) && (a.Active || !q.Active) {
				holders[a.Vendor] = true
			}
		}
	}
	var out []BankAccount
	for _, a := range m.accounts {
		if v := m.vendors[a.Vendor]; v == nil || v.company != company {
			continue
		}
		if !memAccountMatches(*a, q, number, holders) {
			continue
		}
		x := *a
		x.OtherHolders = nil
		if q.Holders && q.Number != "" && x.Active && SameNumber(x.Sanitized, number) {
			x.OtherHolders = m.otherHolders(company, x)
		}
		out = append(out, x)
	}
	slices.SortFunc(out, func(a, b BankAccount) int { return CompareIDs(a.ID, b.ID) })
	return out, nil
}

// memAccountMatches reports whether a is selected by q's ID, Vendor,
// Number (number sanitized; an account of a vendor in holders, one that
// holds the number, also matches) and Active.
func memAccountMatches(a BankAccount, q BankAccountQuery, number string, holders map[string]bool) bool {
	return (q.ID == "" || a.ID == q.ID) && (q.Vendor == "" || a.Vendor == q.Vendor) &&
		(q.Number == "" || SameNumber(a.Sanitized, number) || holders[a.Vendor]) && (!q.Active || a.Active)
}

// otherHolders are the vendors of company other than a's holding an
// active account of a's number (BankAccount.OtherHolders); m.mu is held.
func (m *Mem) otherHolders(company string, a BankAccount) []string {
	var out []string
	for _, o := range m.accounts {
		if v := m.vendors[o.Vendor]; v == nil || v.company != company {
			continue
		}
		if o.Active && (SameNumber(o.Sanitized, a.Sanitized) || SameNumber(a.Sanitized, o.Sanitized)) && o.Vendor != a.Vendor && !slices.Contains(out, o.Vendor) {
			out = append(out, o.Vendor)
		}
	}
	slices.SortFunc(out, CompareIDs)
	return out
}

// Bills implements Reader.
func (m *Mem) Bills(ctx context.Context, company string, q BillQuery) ([]Bill, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := q.CheckPaymentsSince(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if q.Decision != nil {
		return m.decisionBills(company, q), nil
	}
	candidates := m.billCandidates(q)
	// Every index holds bills in ID order but the lookup's, which is
	// sorted too: a page stops at its last bill.
	var out []Bill
	skip := max(q.Offset, 0)
	for _, b := range candidates {
		if b.company != company || !memBillMatches(b.Bill, q) {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, m.billOut(b, q))
		if q.Limit > 0 && len(out) == q.Limit {
			break
		}
	}
	return out, nil
}

// billCandidates returns the bills among which q's selection is, through
// Mem's indexes (each bill still compared with q): the bill of q.ID, the
// vendor's bills, the bills that q.Lookup may name (byRefGram, byName),
// or all; m.mu is held.
func (m *Mem) billCandidates(q BillQuery) []*memBill {
	switch {
	case q.ID != "":
		if b := m.bills[q.ID]; b != nil {
			return []*memBill{b}
		}
		return nil
	case q.Vendor != "":
		return m.byVendor[q.Vendor]
	case q.Lookup != "":
		return m.lookupCandidates(q.Lookup)
	case q.Open:
		m.openBills = stillOpen(m.openBills)
		return m.openBills
	case q.OpenCredit:
		m.openCredits = stillOpen(m.openCredits)
		return m.openCredits
	}
	return m.order
}

// stillOpen drops from bs, in place, the documents no longer open
// (posted, residual above zero): a residual never grows.
func stillOpen(bs []*memBill) []*memBill {
	open := bs[:0]
	for _, b := range bs {
		if b.State == StatePosted && b.Residual > 0 {
			open = append(open, b)
		}
	}
	return open
}

// lookupCandidates returns the bills that BillQuery.Lookup value may
// select (a superset; LookupMatches decides): the bill with that ID, the
// bills with that number (ignoring case), and the bills whose reference
// holds the rarest three-character piece of the longest piece of
// LookupPattern(value), or, for a pattern without one, every bill;
// m.mu is held.
func (m *Mem) lookupCandidates(value string) []*memBill {
	longest := ""
	for _, p := range strings.Split(LookupPattern(value), "%") {
		if len(p) > len(longest) {
			longest = p
		}
	}
	if len(longest) < 3 {
		return slices.Collect(maps.Values(m.bills))
	}
	var rarest []*memBill
	for i := 0; i+3 <= len(longest); i++ {
		if bs := m.byRefGram[longest[i:i+3]]; rarest == nil || len(bs) < len(rarest) {
			rarest = bs
		}
	}
	out := slices.Clone(rarest)
	if b := m.bills[value]; b != nil {
		out = append(out, b)
	}
	out = append(out, m.byName[strings.ToUpper(value)]...)
	slices.SortFunc(out, func(a, b *memBill) int { return CompareIDs(a.ID, b.ID) })
	return slices.Compact(out)
}

// memRef is a vendor's bill with its reference upper-cased, and the set
// of the reference's characters (refMask).
type memRef struct {
	ref  string
	mask uint64
	b    *memBill
}

// refMask is the set of the ASCII letters and digits of the upper-cased
// s, one bit each.
func refMask(s string) uint64 {
	var m uint64
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case isDigit(c):
			m |= 1 << (c - '0')
		case isLetter(c):
			m |= 1 << (10 + c - 'A')
		}
	}
	return m
}

// totalKey is the key of byTotal: a vendor and a currency.
func totalKey(vendor, currency string) string { return vendor + "\x00" + currency }

// insertSorted inserts b into bs, kept sorted by less, after the bills
// equal to it.
func insertSorted(bs []*memBill, b *memBill, less func(x, y *memBill) bool) []*memBill {
	i := sort.Search(len(bs), func(i int) bool { return less(b, bs[i]) })
	return slices.Insert(bs, i, b)
}

func byTotalLess(x, y *memBill) bool { return x.Total < y.Total }
func byDateLess(x, y *memBill) bool  { return x.Date.Before(y.Date) }

// indexBill adds b to Mem's indexes; m.mu is held.
func (m *Mem) indexBill(b *memBill) {
	m.order = append(m.order, b)
	if b.State == StatePosted && b.Residual > 0 {
		m.openDocs[b.Vendor] = append(m.openDocs[b.Vendor], b)
		if b.Kind == KindBill {
			m.openBills = append(m.openBills, b)
		} else {
			m.openCredits = append(m.openCredits, b)
		}
	}
	if b.Reverses != "" {
		m.reversedBy[b.Reverses] = append(m.reversedBy[b.Reverses], b)
	}
	if b.Kind == KindBill {
		k := totalKey(b.Vendor, b.Currency)
		m.byTotal[k] = insertSorted(m.byTotal[k], b, byTotalLess)
		if !b.Date.IsZero() {
			m.byDate[b.Vendor] = insertSorted(m.byDate[b.Vendor], b, byDateLess)
		}
		if b.Ref == "" {
			m.noRef[b.Vendor] = append(m.noRef[b.Vendor], b)
		}
		up := strings.ToUpper(b.Ref)
		m.refs[b.Vendor] = append(m.refs[b.Vendor], memRef{up, refMask(up), b})
	}
	m.byVendor[b.Vendor] = append(m.byVendor[b.Vendor], b)
	m.byName[strings.ToUpper(b.Name)] = append(m.byName[strings.ToUpper(b.Name)], b)
	ref := strings.ToUpper(b.Ref)
	seen := map[string]bool{}
	for i := 0; i+3 <= len(ref); i++ {
		if g := ref[i : i+3]; !seen[g] {
			seen[g] = true
			m.byRefGram[g] = append(m.byRefGram[g], b)
		}
	}
}

// billOut returns b as q reads it: with its vendor's name unless
// q.NoVendorName, and with q.WithPayments its payments; m.mu is held.
func (m *Mem) billOut(b *memBill, q BillQuery) Bill {
	bill := b.Bill
	if v := m.vendors[b.Vendor]; v != nil && !q.NoVendorName {
		bill.VendorName = v.Name
	}
	if q.WithPayments {
		bill.Payments = []Payment{}
		for _, p := range m.byBill[b.ID] {
			if p.company == b.company {
				bill.Payments = append(bill.Payments, p.Payment)
			}
		}
	}
	return bill
}

// decisionBills answers a query with q.Decision (see DecisionQuery): the
// vendor's documents it selects, and with q.WithPayments and
// q.PaymentsSince the vendor's posted payments of that day on whose bill
// is not read, with the first bill; m.mu is held. Mem finds them through
// its indexes, as a database does: the vendor's open documents, the
// credit notes of a bill, the bills of a total; only the references are
// scanned, the vendor's alone, a set of characters first
// (decisionCandidates).
func (m *Mem) decisionBills(company string, q BillQuery) []Bill {
	if q.Vendor == "" {
		return nil
	}
	var out []Bill
	read := map[string]bool{}
	for _, b := range m.decisionCandidates(q.Vendor, q.Decision) {
		if read[b.ID] || b.company != company || !memBillMatches(b.Bill, q) || !m.decisionMatches(b, q.Decision) {
			continue
		}
		out = append(out, m.billOut(b, q))
		read[b.ID] = true
	}
	slices.SortFunc(out, func(a, b Bill) int { return CompareIDs(a.ID, b.ID) })
	out = page(out, q.Offset, q.Limit)
	if !q.WithPayments || q.PaymentsSince == "" || len(out) == 0 {
		return out
	}
	pays := m.vendorPays[q.Vendor]
	for i := len(pays) - 1; i >= 0 && payDay(pays[i]) >= q.PaymentsSince; i-- {
		if p := pays[i]; !read[p.Bill] && p.company == company && p.State == PaymentPosted {
			out[0].Payments = append(out[0].Payments, p.Payment)
		}
	}
	slices.SortFunc(out[0].Payments, func(a, b Payment) int { return CompareIDs(a.ID, b.ID) })
	return out
}

// decisionCandidates returns the vendor's documents d may select (a
// superset, in no order, possibly repeated); m.mu is held.
func (m *Mem) decisionCandidates(vendor string, d *DecisionQuery) []*memBill {
	var out []*memBill
	if b := m.bills[d.Bill]; b != nil {
		out = append(out, b)
	}
	out = append(out, m.reversedBy[d.Bill]...)
	open := m.openDocs[vendor][:0]
	for _, b := range m.openDocs[vendor] {
		if b.State == StatePosted && b.Residual > 0 {
			open = append(open, b)
		}
	}
	m.openDocs[vendor] = open
	out = append(out, open...)
	sus := d.Suspects
	var suspects []*memBill
	if sus.Amount > 0 && sus.Near >= 0 {
		bs := m.byTotal[totalKey(vendor, sus.Currency)]
		lo := sort.Search(len(bs), func(i int) bool { return bs[i].Total >= sus.Amount-sus.Near })
		for _, b := range bs[lo:] {
			if b.Total > sus.Amount+sus.Near {
				break
			}
			suspects = append(suspects, b)
		}
	}
	if !sus.From.IsZero() && !sus.To.IsZero() {
		bs := m.byDate[vendor]
		lo := sort.Search(len(bs), func(i int) bool { return !bs[i].Date.Before(sus.From) })
		for _, b := range bs[lo:] {
			if b.Date.After(sus.To) {
				break
			}
			suspects = append(suspects, b)
		}
	}
	if sus.NoRef {
		suspects = append(suspects, m.noRef[vendor]...)
	}
	masks := make([]uint64, 0, 16)
	for _, p := range sus.Refs {
		masks = masks[:0]
		for _, e := range p {
			masks = append(masks, refMask(e))
		}
		for _, r := range m.refs[vendor] {
			if hasAll(r.mask, masks) && p.Matches(r.ref) {
				suspects = append(suspects, r.b)
			}
		}
	}
	for _, b := range suspects {
		out = append(out, b)
		out = append(out, m.reversedBy[b.ID]...)
	}
	return out
}

// hasAll reports whether the set mask meets each of masks.
func hasAll(mask uint64, masks []uint64) bool {
	for _, m := range masks {
		if mask&m == 0 {
			return false
		}
	}
	return true
}

// payDay is p's day, YYYY-MM-DD: its Day, else its Date's in UTC.
func payDay(p *memPayment) string {
	if p.Day != "" {
		return p.Day
	}
	return p.Date.UTC().Format(time.DateOnly)
}

// decisionMatches reports whether d selects b (see DecisionQuery); m.mu
// is held.
func (m *Mem) decisionMatches(b *memBill, d *DecisionQuery) bool {
	switch {
	case b.ID == d.Bill:
		return true
	case b.State == StatePosted && b.Residual > 0:
		return true // open
	case b.Kind == KindBill:
		return b.State != StateCancelled && d.Suspects.Matches(b.Bill)
	case b.Reverses == "":
		return false
	case b.Reverses == d.Bill:
		return true
	}
	r := m.bills[b.Reverses]
	return b.State == StatePosted && r != nil && r.State != StateCancelled && d.Suspects.Matches(r.Bill)
}

// addPayment records p of company and indexes it by its bill; m.mu is
// held.
func (m *Mem) addPayment(company string, p Payment) {
	mp := &memPayment{company: company, Payment: p}
	m.payments[p.ID] = mp
	m.byBill[p.Bill] = append(m.byBill[p.Bill], mp)
	pays := m.vendorPays[p.Vendor]
	i, _ := slices.BinarySearchFunc(pays, payDay(mp), func(q *memPayment, day string) int {
		if payDay(q) <= day {
			return -1 // after those of the same day
		}
		return 1
	})
	m.vendorPays[p.Vendor] = slices.Insert(pays, i, mp)
}

// memBillMatches reports whether b is selected by q's ID, Vendor,
// Lookup, Open and OpenCredit.
func memBillMatches(b Bill, q BillQuery) bool {
	switch {
	case q.ID != "" && b.ID != q.ID, q.Vendor != "" && b.Vendor != q.Vendor,
		q.Lookup != "" && !LookupMatches(q.Lookup, b.ID, b.Name, b.Ref):
		return false
	case q.Open && (b.Kind != KindBill || b.State != StatePosted || b.Residual <= 0):
		return false
	case q.OpenCredit && (b.Kind != KindCreditNote || b.State != StatePosted || b.Residual <= 0):
		return false
	}
	return true
}

// page returns the page of s that offset and limit select (limit 0: all).
func page[T any](s []T, offset, limit int) []T {
	s = s[min(max(offset, 0), len(s)):]
	if limit > 0 && limit < len(s) {
		s = s[:limit]
	}
	return s
}

// LookupMatches reports whether a bill with this ID, number and vendor
// reference is selected by BillQuery.Lookup value (see there).
func LookupMatches(value, id, number, ref string) bool {
	if value == id || strings.EqualFold(value, number) {
		return true
	}
	pieces := strings.Split(LookupPattern(value), "%")
	if pieces[0] == "" {
		return false
	}
	rest := strings.ToUpper(ref)
	for _, p := range pieces {
		i := strings.Index(rest, p)
		if i < 0 {
			return false
		}
		rest = rest[i+len(p):]
	}
	return true
}

// LookupPattern is what BillQuery.Lookup looks for in a vendor reference,
// as an SQL LIKE pattern without its enclosing %: each ASCII letter of
// value, and each run of its ASCII digits without leading zeros, in
// order, joined by %, upper-cased ("inv 02290" gives "I%N%V%2290"). Every
// reference that spells value the same up to case, separators and
// leading zeros matches it; "" when value has no ASCII letter or digit.
func LookupPattern(value string) string {
	var pieces []string
	for i := 0; i < len(value); {
		c := value[i]
		switch {
		case 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z':
			pieces = append(pieces, strings.ToUpper(value[i:i+1]))
			i++
		case '0' <= c && c <= '9':
			j := i
			for j < len(value) && '0' <= value[j] && value[j] <= '9' {
				j++
			}
			d := strings.TrimLeft(value[i:j], "0")
			if d == "" {
				d = "0"
			}
			pieces = append(pieces, d)
			i = j
		default:
			i++
		}
	}
	return strings.Join(pieces, "%")
}

// Payments implements Reader.
func (m *Mem) Payments(ctx context.Context, company string, q PaymentQuery) ([]Payment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Payment
	for _, p := range m.payments {
		if p.company != company || (q.Bill != "" && p.Bill != q.Bill) || (q.Vendor != "" && p.Vendor != q.Vendor) ||
			(q.Posted && p.State != PaymentPosted) || (q.Key != "" && p.Key != q.Key) {
			continue
		}
		out = append(out, p.Payment)
	}
	slices.SortFunc(out, func(a, b Payment) int { return CompareIDs(a.ID, b.ID) })
	return page(out, 0, q.Limit), nil
}

// RegisterPayment implements Payer.
func (m *Mem) RegisterPayment(ctx context.Context, company string, r PaymentRequest) (Payment, error) {
	if err := ctx.Err(); err != nil {
		return Payment{}, err
	}
	if r.Key == "" {
		return Payment{}, refused("an idempotency key is required")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := company + "\x00payment\x00" + r.Key
	if id, ok := m.keys[key]; ok {
		return m.payments[id].Payment, nil
	}
	b := m.bills[r.Bill]
	if b == nil || b.company != company {
		return Payment{}, notFound("bill")
	}
	switch {
	case b.Kind != KindBill:
		return Payment{}, refused("%s is a credit note; credit notes reduce what is owed and are never paid", b.Name)
	case b.State != StatePosted:
		return Payment{}, refused("%s is not posted", b.Name)
	case b.PaymentState == Blocked:
		return Payment{}, refused("%s is blocked for payment in the ERP", b.Name)
	case b.Residual <= 0 || b.PaymentState.Settled():
		return Payment{}, refused("%s is already paid", b.Name)
	case r.Amount.Currency != b.Currency:
		return Payment{}, refused("%s is in %s, not %s", b.Name, b.Currency, r.Amount.Currency)
	case r.Amount.Amount <= 0:
		return Payment{}, refused("the amount must be above zero")
	case r.Amount.Amount > b.Residual:
		return Payment{}, refused("the amount is above what is still owed on %s", b.Name)
	}
	a := m.accounts[r.BankAccount]
	if a == nil || a.Vendor != b.Vendor || !a.Active || !a.Trusted {
		return Payment{}, refused("the bank account is not an active, trusted account of the bill's vendor")
	}
	credits, err := m.credits(company, b, r)
	if err != nil {
		return Payment{}, err
	}
	for _, c := range credits {
		c.Residual, b.Residual = 0, b.Residual-c.Residual
		c.PaymentState = Paid
	}
	b.Residual -= r.Amount.Amount
	b.PaymentState = paymentState(b.Residual)
	now := m.now().UTC()
	p := Payment{
		ID: m.id(), Bill: b.ID, Vendor: b.Vendor, BankAccount: a.ID,
		Amount: r.Amount, Date: now, Day: now.Format(time.DateOnly), State: PaymentPosted, Key: r.Key, Reconciled: true,
	}
	m.addPayment(company, p)
	m.keys[key] = p.ID
	return p, nil
}

// credits returns the credit notes r nets with its payment of bill b,
// checked (see PaymentRequest.Credits); m.mu is held.
func (m *Mem) credits(company string, b *memBill, r PaymentRequest) ([]*memBill, error) {
	var out []*memBill
	total := r.Amount.Amount
	for _, id := range r.Credits {
		c := m.bills[id]
		switch {
		case c == nil || c.company != company || slices.Contains(out, c):
			return nil, refused("credit note %s is not one of the company's, or is named twice", id)
		case c.Kind != KindCreditNote || c.State != StatePosted || c.Vendor != b.Vendor || c.Currency != b.Currency:
			return nil, refused("%s is not a posted credit note of the bill's vendor in %s", c.Name, b.Currency)
		case c.Residual <= 0 || c.PaymentState.Settled():
			return nil, refused("credit note %s has nothing left to apply", c.Name)
		case c.Residual > b.Residual-total:
			return nil, refused("the amount and the credit notes together are above what is still owed on %s", b.Name)
		}
		total += c.Residual
		out = append(out, c)
	}
	return out, nil
}

// ChangeBankAccount implements BankEditor.
func (m *Mem) ChangeBankAccount(ctx context.Context, company string, c BankChange) (BankAccount, error) {
	if err := ctx.Err(); err != nil {
		return BankAccount{}, err
	}
	number := Sanitize(c.Number)
	if number == "" || c.Key == "" {
		return BankAccount{}, refused("a number and an idempotency key are required")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	key := company + "\x00bank\x00" + c.Key
	if id, ok := m.keys[key]; ok {
		return *m.accounts[id], nil
	}
	v := m.vendors[c.Vendor]
	if v == nil || v.company != company || !v.Active {
		return BankAccount{}, notFound("vendor")
	}
	var mine []*BankAccount
	for _, a := range m.accounts {
		if a.Vendor == c.Vendor {
			mine = append(mine, a)
		}
	}
	var target *BankAccount
	first := 10
	currentID := ""
	for _, a := range mine {
		first = min(first, a.Sequence)
		if a.Sanitized == number {
			target = a
		}
	}
	if cur, ok := current(derefAccounts(mine)); ok {
		currentID = cur.ID
	}
	now := m.now().UTC()
	if target == nil {
		target = &BankAccount{ID: m.id(), Vendor: c.Vendor, Number: c.Number, Sanitized: number}
		m.accounts[target.ID] = target
	}
	// The cooling-off period runs from SetAt: it restarts for every account
	// that becomes the current one, even one that was already trusted and
	// active (a second account of the vendor), and only confirming the
	// current account leaves it as it was.
	if target.ID != currentID || target.SetAt.IsZero() {
		target.SetAt = now
	}
	target.Trusted, target.Active = true, true
	if target.Sequence > first || target.Sequence == 0 {
		target.Sequence = first - 1
	}
	for _, a := range mine {
		if a != target {
			a.Active = false
		}
	}
	m.keys[key] = target.ID
	return *target, nil
}

// sameName is normalize.SameName without its error: a name it refuses (a
// look-alike such as the Kelvin sign U+212A for a K) matches no vendor.
func sameName(a, b string) bool {
	same, err := normalize.SameName(a, b)
	return err == nil && same
}

// countryCode reports whether c is "" or two capital ASCII letters, as
// Odoo gives res.country's code.
func countryCode(c string) bool {
	return c == "" || len(c) == 2 && 'A' <= c[0] && c[0] <= 'Z' && 'A' <= c[1] && c[1] <= 'Z'
}

// DefaultCurrency is a Mem company's currency until SetCompanyCurrency
// sets another.
const DefaultCurrency = "EUR"

// SetCompanyCurrency sets the currency of company (an ISO 4217 code),
// DefaultCurrency until then. It returns an error wrapping ErrRefused for
// a code that is not three upper-case letters.
func (m *Mem) SetCompanyCurrency(company, currency string) error {
	if !currencyCode(currency) {
		return refused("the currency must be an ISO 4217 code")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.currency[company] = currency
	return nil
}

// SetRate enters an exchange rate, as a person does in the ERP: value (a
// decimal, see ParseRateValue) units of currency per unit of the
// company's currency, from day (YYYY-MM-DD) on; company "" enters it for
// every company (Odoo's rate without a company), and a company's own rate
// comes before such a rate whatever their dates, as in Odoo. A rate of the
// same currency, company and day replaces the one entered before. It
// returns an error wrapping ErrRefused for a malformed currency, day or
// value.
func (m *Mem) SetRate(ctx context.Context, company, currency, day, value string) error {
	if !currencyCode(currency) {
		return refused("the currency must be an ISO 4217 code")
	}
	if err := CheckDay(day); err != nil {
		return err
	}
	if _, err := ParseRateValue(value); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	r := memRate{company: company, currency: currency, day: day, value: value}
	for i, o := range m.rates {
		if o.company == company && o.currency == currency && o.day == day {
			m.rates[i] = r
			return nil
		}
	}
	m.rates = append(m.rates, r)
	return nil
}

// Rate implements Rates: the latest rate entered with SetRate for the
// company, dated on or before day, else the latest such rate entered for
// every company; the company's currency is its own (DefaultCurrency
// unless SetCompanyCurrency set another). Decimals come from Decimals.
func (m *Mem) Rate(ctx context.Context, company, currency, day string) (Rate, error) {
	if err := CheckDay(day); err != nil {
		return Rate{}, err
	}
	if !currencyCode(currency) {
		return Rate{}, refused("the currency must be an ISO 4217 code")
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	own := m.currency[company]
	if own == "" {
		own = DefaultCurrency
	}
	if currency == own {
		return CompanyRate(own, Decimals(own), day), nil
	}
	for _, scope := range []string{company, ""} {
		var best *memRate
		for i := range m.rates {
			r := &m.rates[i]
			if r.company == scope && r.currency == currency && r.day <= day && (best == nil || r.day > best.day) {
				best = r
			}
		}
		if best != nil {
			src := "rate entered for the company"
			if scope == "" {
				src = "rate entered for every company"
			}
			return Rate{Currency: currency, Decimals: Decimals(currency), Company: own, CompanyDecimals: Decimals(own),
				Value: best.value, Day: best.day, Source: src}, nil
		}
	}
	return Rate{Currency: currency, Decimals: Decimals(currency), Company: own, CompanyDecimals: Decimals(own)},
		fmt.Errorf("%w: no rate of %s into %s dated on or before %s", ErrNoRate, currency, own, day)
}
