package mandate

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// Mode says where the values of critical parameters may come from.
type Mode string

// The modes of a mandate.
const (
	// ModeStrict allows critical values only from the mandate's own claims
	// (the payees, recipients or records the user named).
	ModeStrict Mode = "strict"
	// ModeKnownCounterparties also allows critical values from the owner's
	// trusted registries (beneficiaries, vendors and bank accounts on file).
	ModeKnownCounterparties Mode = "known_counterparties"
)

func (m Mode) valid() bool { return m == ModeStrict || m == ModeKnownCounterparties }

// Mandate is what the user asked for, as its issuer signed it.
type Mandate struct {
	// ID identifies the mandate uniquely; revocation, budgets and approvals
	// are keyed by it. It holds no NUL byte. NewID makes one.
	ID string
	// Issuer is the key id of the issuer ("emma-bank-app"); Verify looks up
	// its public key with Keys.IssuerKey.
	Issuer string
	// Audience names the gateway the mandate is for ("intentplane").
	Audience string
	// Owner is whose records every lookup is scoped to.
	Owner intent.Owner
	// Scope lists the allowed actions. Issue sorts it and removes
	// duplicates; a verified mandate's Scope is sorted and unique.
	Scope []intent.Action
	// Budget is the most the mandate may spend, in minor units of its
	// currency. A zero Amount means no spending is allowed; Currency is
	// always an ISO 4217 code (three upper-case letters).
	Budget intent.Money
	// Budgets are further budgets, at most one per currency and none in
	// Budget's currency, each in minor units of its own currency (a EUR
	// company's mandate may also allow up to 2,000.00 USD for its USD
	// bills). Each is spent on its own: an amount is reserved only against
	// the budget of its currency, never converted. Issue sorts them by
	// currency; nil or empty means Budget is the only budget. Use BudgetIn
	// to find the budget of a currency.
	Budgets []intent.Money
	// Claims maps a claim name to the values the user allowed for it, as
	// the user gave them ("payees": ["CH93 0076 2011 6238 5295 7"]);
	// contracts normalize them later. Nil or empty means no claims.
	Claims map[string][]string
	// Mode says where critical values may come from.
	Mode Mode
	// NotBefore is when the mandate becomes valid, in UTC with second
	// precision (Issue truncates finer precision).
	NotBefore time.Time
	// Expiry is when the mandate stops being valid, in UTC with second
	// precision; it must be after NotBefore.
	Expiry time.Time
}

// Allows reports whether action a is in the mandate's scope. A nil
// mandate allows nothing.
func (m *Mandate) Allows(a intent.Action) bool {
	return m != nil && a != "" && slices.Contains(m.Scope, a)
}

// BudgetIn returns the mandate's budget in currency (Budget or one of
// Budgets), and false if it has none in that currency (or m is nil).
func (m *Mandate) BudgetIn(currency string) (intent.Money, bool) {
	if m == nil {
		return intent.Money{}, false
	}
	if m.Budget.Currency == currency {
		return m.Budget, true
	}
	for _, b := range m.Budgets {
		if b.Currency == currency {
			return b, true
		}
	}
	return intent.Money{}, false
}

// AllBudgets returns the mandate's budgets, one per currency: Budget
// first, then Budgets in their order. Nil if m is nil.
func (m *Mandate) AllBudgets() []intent.Money {
	if m == nil {
		return nil
	}
	return append([]intent.Money{m.Budget}, m.Budgets...)
}

// Claim returns a copy of the values allowed for the claim name, in the
// order the user gave them, or nil if the mandate has no such claim (or m
// is nil).
func (m *Mandate) Claim(name string) []string {
	if m == nil {
		return nil
	}
	return slices.Clone(m.Claims[name])
}

// maxField bounds the length in bytes of every string field, claim name and
// claim value.
const maxField = 1024

// validate checks the fields of m as Issue requires them and Verify expects
// them. It returns a description of the first problem, or "".
func (m *Mandate) validate() string {
	for _, f := range []struct{ name, val string }{
		{"id", m.ID},
		{"issuer", m.Issuer},
		{"audience", m.Audience},
		{"owner", string(m.Owner)},
	} {
		if p := checkString(f.val); p != "" {
			return f.name + " " + p
		}
	}
	if strings.IndexByte(m.ID, 0) >= 0 {
		return "id contains a NUL byte" // it separates a mandate's budget accounts (state.BudgetAccount)
	}
	if len(m.Scope) == 0 {
		return "scope is empty"
	}
	for _, a := range m.Scope {
		if p := checkString(string(a)); p != "" {
			return "scope action " + p
		}
	}
	if !m.Mode.valid() {
		return fmt.Sprintf("mode %s is not %q or %q", quote(string(m.Mode)), ModeStrict, ModeKnownCounterparties)
	}
	if p := m.checkBudgets(); p != "" {
		return p
	}
	if p := m.checkClaims(); p != "" {
		return p
	}
	return m.checkValidity()
}

// checkBudgets is validate's check of the budgets: each currency three
// upper-case letters, each amount zero or more, one budget per currency.
// It returns the first problem found, or "".
func (m *Mandate) checkBudgets() string {
	seen := make(map[string]bool, 1+len(m.Budgets))
	for _, b := range m.AllBudgets() {
		if c := b.Currency; len(c) != 3 || !isUpper(c[0]) || !isUpper(c[1]) || !isUpper(c[2]) {
			return fmt.Sprintf("budget currency %s is not three upper-case letters", quote(c))
		}
		if b.Amount < 0 {
			return fmt.Sprintf("budget amount %d %s is negative", b.Amount, b.Currency)
		}
		if seen[b.Currency] {
			return fmt.Sprintf("two budgets in %s: a mandate has at most one budget per currency", b.Currency)
		}
		seen[b.Currency] = true
	}
	return ""
}

// checkClaims is validate's check of the claims: every name and value a
// valid string (checkString) and every claim with at least one value. It
// returns the first problem found, or "".
func (m *Mandate) checkClaims() string {
	for name, vals := range m.Claims {
		if p := checkString(name); p != "" {
			return "claim name " + p
		}
		if len(vals) == 0 {
			return fmt.Sprintf("claim %s has no values", quote(name))
		}
		for _, v := range vals {
			if p := checkString(v); p != "" {
				return fmt.Sprintf("claim %s value %s", quote(name), p)
			}
		}
	}
	return ""
}

// checkValidity is validate's check of the validity window: not-before
// and expiry both set, both in years 1 to 9999 (UTC), and expiry after
// not-before. It returns the first problem found, or "".
func (m *Mandate) checkValidity() string {
	if m.NotBefore.IsZero() || m.Expiry.IsZero() {
		return "not-before and expiry must both be set"
	}
	if y := m.NotBefore.UTC().Year(); y < 1 || y > 9999 {
		return "not-before is outside years 1 to 9999"
	}
	if y := m.Expiry.UTC().Year(); y < 1 || y > 9999 {
		return "expiry is outside years 1 to 9999"
	}
	if !m.Expiry.After(m.NotBefore) {
		return fmt.Sprintf("expiry %s is not after not-before %s", formatTime(m.Expiry), formatTime(m.NotBefore))
	}
	return ""
}

func checkString(s string) string {
	switch {
	case s == "":
		return "is empty"
	case len(s) > maxField:
		return fmt.Sprintf("is longer than %d bytes", maxField)
	case !utf8.ValidString(s):
		return "is not valid UTF-8"
	}
	return ""
}

func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// quote returns s quoted for an error message, cut to 64 bytes: it may
// come from an unverified token.
func quote(s string) string {
	if len(s) > 64 {
		return fmt.Sprintf("%q…", s[:64])
	}
	return fmt.Sprintf("%q", s)
}

// formatTime formats t for people: UTC, RFC 3339, seconds.
func formatTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
