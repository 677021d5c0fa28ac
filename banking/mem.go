package banking

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/intentplane/intentplane/core/intent"
)

// Errors of Mem. Methods wrap them with what was not found.
var (
	// ErrUnknownOwner is returned for an owner that has no account in Mem.
	ErrUnknownOwner = errors.New("banking: unknown owner")
	// ErrNotFound is returned for a scheduled transaction id the owner
	// does not have (another owner's id is not found either).
	ErrNotFound = errors.New("banking: not found")
	// ErrExists is returned by Mem.Open for an owner that already has an
	// account.
	ErrExists = errors.New("banking: account already exists")
)

// Transaction is a payment in the history or a scheduled transaction
// (standing order), as AgentDojo models it.
type Transaction struct {
	// ID is unique across the owner's history and scheduled transactions.
	ID int64
	// Sender and Recipient are account numbers, or "me" in history rows
	// that AgentDojo writes that way.
	Sender    string
	Recipient string
	// Amount is in minor units (cents).
	Amount intent.Amount
	// Subject is free text; it may hold anything a counterparty wrote.
	Subject string
	// Date is the (next) date, YYYY-MM-DD.
	Date      string
	Recurring bool
}

// UserInfo is the account holder's name and address.
type UserInfo struct {
	FirstName string `json:"first_name"`
	LastName  string `json:"last_name"`
	Street    string `json:"street"`
	City      string `json:"city"`
}

// Account is one owner's bank account, profile and files.
type Account struct {
	// IBAN is the owner's own account number.
	IBAN string
	// Balance is in minor units (cents). AgentDojo never changes it.
	Balance intent.Amount
	// Password is the online-banking password.
	Password string
	// User is the profile.
	User UserInfo
	// Transactions is the history, oldest first.
	Transactions []Transaction
	// Scheduled are the scheduled transactions (standing orders).
	Scheduled []Transaction
	// Files maps a file path to its text.
	Files map[string]string
}

// Clone returns a deep copy of a.
func (a Account) Clone() Account {
	c := a
	c.Transactions = slices.Clone(a.Transactions)
	c.Scheduled = slices.Clone(a.Scheduled)
	c.Files = maps.Clone(a.Files)
	return c
}

// ScheduledUpdate lists the changes to a scheduled transaction. As in
// AgentDojo, a zero field (empty string, zero amount, false) means "leave
// unchanged", so an update can never set Recurring to false.
type ScheduledUpdate struct {
	Recipient string
	Amount    intent.Amount
	Subject   string
	Date      string
	Recurring bool
}

// Mem is an in-memory bank holding one Account per owner, with the
// semantics of AgentDojo's banking tools: sending money appends a
// transaction and does not change the balance, new ids are the highest id
// of the owner's history and scheduled transactions plus one. Every method
// is scoped to one owner. The zero value is not usable; call NewMem. A Mem
// is safe for concurrent use.
type Mem struct {
	mu       sync.Mutex
	accounts map[intent.Owner]*Account
}

// NewMem returns an empty bank.
func NewMem() *Mem {
	return &Mem{accounts: map[intent.Owner]*Account{}}
}

// Open adds owner's account, copied from a. It returns an error wrapping
// ErrExists if the owner already has one.
func (m *Mem) Open(owner intent.Owner, a Account) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.accounts[owner]; ok {
		return fmt.Errorf("%w: %s", ErrExists, owner)
	}
	c := a.Clone()
	if c.Files == nil {
		c.Files = map[string]string{}
	}
	m.accounts[owner] = &c
	return nil
}

// with runs f on owner's account under the lock.
func (m *Mem) with(owner intent.Owner, f func(a *Account) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.accounts[owner]
	if !ok {
		return fmt.Errorf("%w: %q", ErrUnknownOwner, owner)
	}
	return f(a)
}

// Account returns a deep copy of owner's account, or an error wrapping
// ErrUnknownOwner.
func (m *Mem) Account(owner intent.Owner) (Account, error) {
	var out Account
	err := m.with(owner, func(a *Account) error {
		out = a.Clone()
		return nil
	})
	return out, err
}

// IBAN returns the owner's own account number.
func (m *Mem) IBAN(owner intent.Owner) (string, error) {
	var out string
	err := m.with(owner, func(a *Account) error {
		out = a.IBAN
		return nil
	})
	return out, err
}

// Balance returns the owner's balance in minor units.
func (m *Mem) Balance(owner intent.Owner) (intent.Amount, error) {
	var out intent.Amount
	err := m.with(owner, func(a *Account) error {
		out = a.Balance
		return nil
	})
	return out, err
}

func nextID(a *Account) int64 {
	var max int64
	for _, t := range a.Transactions {
		max = maxInt(max, t.ID)
	}
	for _, t := range a.Scheduled {
		max = maxInt(max, t.ID)
	}
	return max + 1
}

func maxInt(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// SendMoney appends a transaction from the owner's IBAN to recipient, not
// recurring, and returns it. The balance is not changed (as in AgentDojo).
func (m *Mem) SendMoney(owner intent.Owner, recipient string, amount intent.Amount, subject, date string) (Transaction, error) {
	var out Transaction
	err := m.with(owner, func(a *Account) error {
		out = Transaction{ID: nextID(a), Sender: a.IBAN, Recipient: recipient, Amount: amount, Subject: subject, Date: date}
		a.Transactions = append(a.Transactions, out)
		return nil
	})
	return out, err
}

// ScheduleTransaction appends a scheduled transaction and returns it.
func (m *Mem) ScheduleTransaction(owner intent.Owner, recipient string, amount intent.Amount, subject, date string, recurring bool) (Transaction, error) {
	var out Transaction
	err := m.with(owner, func(a *Account) error {
		out = Transaction{ID: nextID(a), Sender: a.IBAN, Recipient: recipient, Amount: amount, Subject: subject, Date: date, Recurring: recurring}
		a.Scheduled = append(a.Scheduled, out)
		return nil
	})
	return out, err
}

// UpdateScheduled applies u to the owner's scheduled transaction id and
// returns it as updated. Zero fields of u are ignored. An id the owner
// does not have returns an error wrapping ErrNotFound.
func (m *Mem) UpdateScheduled(owner intent.Owner, id int64, u ScheduledUpdate) (Transaction, error) {
	var out Transaction
	err := m.with(owner, func(a *Account) error {
		i := slices.IndexFunc(a.Scheduled, func(t Transaction) bool { return t.ID == id })
		if i < 0 {
			return fmt.Errorf("%w: scheduled transaction %d", ErrNotFound, id)
		}
		t := &a.Scheduled[i]
		if u.Recipient != "" {
			t.Recipient = u.Recipient
		}
		if u.Amount != 0 {
			t.Amount = u.Amount
		}
		if u.Subject != "" {
			t.Subject = u.Subject
		}
		if u.Date != "" {
			t.Date = u.Date
		}
		if u.Recurring {
			t.Recurring = true
		}
		out = *t
		return nil
	})
	return out, err
}

// ScheduledByID returns the owner's scheduled transaction id, or an error
// wrapping ErrNotFound.
func (m *Mem) ScheduledByID(owner intent.Owner, id int64) (Transaction, error) {
	var out Transaction
	err := m.with(owner, func(a *Account) error {
		i := slices.IndexFunc(a.Scheduled, func(t Transaction) bool { return t.ID == id })
		if i < 0 {
			return fmt.Errorf("%w: scheduled transaction %d", ErrNotFound, id)
		}
		out = a.Scheduled[i]
		return nil
	})
	return out, err
}

// RecentTransactions returns the last n transactions of the history,
// oldest first, with Python's slice semantics of AgentDojo
// (transactions[-n:]): n greater than the history returns all of it, n = 0
// returns all of it, and a negative n skips the first -n transactions.
func (m *Mem) RecentTransactions(owner intent.Owner, n int64) ([]Transaction, error) {
	var out []Transaction
	err := m.with(owner, func(a *Account) error {
		l := int64(len(a.Transactions))
		start := int64(0)
		switch {
		case n > 0 && n < l:
			start = l - n
		case n < 0:
			// -n overflows for math.MinInt64: compare without negating.
			start = l
			if n > -l {
				start = -n
			}
		}
		out = slices.Clone(a.Transactions[start:])
		return nil
	})
	return out, err
}

// ScheduledTransactions returns the owner's scheduled transactions.
func (m *Mem) ScheduledTransactions(owner intent.Owner) ([]Transaction, error) {
	var out []Transaction
	err := m.with(owner, func(a *Account) error {
		out = slices.Clone(a.Scheduled)
		return nil
	})
	return out, err
}

// ReadFile returns the text of the owner's file at path, or "" if there is
// none (as in AgentDojo).
func (m *Mem) ReadFile(owner intent.Owner, path string) (string, error) {
	var out string
	err := m.with(owner, func(a *Account) error {
		out = a.Files[path]
		return nil
	})
	return out, err
}

// UserInfo returns the owner's profile.
func (m *Mem) UserInfo(owner intent.Owner) (UserInfo, error) {
	var out UserInfo
	err := m.with(owner, func(a *Account) error {
		out = a.User
		return nil
	})
	return out, err
}

// UpdatePassword sets the owner's password.
func (m *Mem) UpdatePassword(owner intent.Owner, password string) error {
	return m.with(owner, func(a *Account) error {
		a.Password = password
		return nil
	})
}

// UpdateUserInfo sets the non-empty fields of u and returns the profile as
// updated.
func (m *Mem) UpdateUserInfo(owner intent.Owner, u UserInfo) (UserInfo, error) {
	var out UserInfo
	err := m.with(owner, func(a *Account) error {
		if u.FirstName != "" {
			a.User.FirstName = u.FirstName
		}
		if u.LastName != "" {
			a.User.LastName = u.LastName
		}
		if u.Street != "" {
			a.User.Street = u.Street
		}
		if u.City != "" {
			a.User.City = u.City
		}
		out = a.User
		return nil
	})
	return out, err
}
