package mem

import (
	"context"
	"fmt"
	"sort"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

var _ state.Store = (*Store)(nil)

// Store is an in-memory state.Store. The zero value is not usable; call
// New. It is safe for concurrent use.
type Store struct {
	mu       sync.Mutex
	accounts map[string]*account
	reserved map[string]reservation // open reservations by id
	used     map[string]int64       // consumed keys and when they may be forgotten (Unix ns: no pointer for the collector to follow)
	held     map[string]hold        // record locks by key
	sweepAt  int                    // len(used) that triggers the next sweep of expired keys
	chains   map[intent.Owner]*chain
	audit    audit                        // the receipts' index for Page
	records  map[string]record            // state.Records, made on first Keep
	entries  map[string]map[string]record // approvals.Store's entries by space, then key
	now      func() time.Time
}

type account struct {
	currency  string
	limit     intent.Amount // fixed by the account's first reservation
	committed intent.Amount
	reserved  intent.Amount
}

type hold struct {
	holder string
	until  time.Time
}

type reservation struct {
	account string
	amount  intent.Amount
	since   time.Time
}

// New returns an empty store. now is used to forget expired keys; nil means
// time.Now.
func New(now func() time.Time) *Store {
	if now == nil {
		now = time.Now
	}
	return &Store{
		accounts: map[string]*account{},
		reserved: map[string]reservation{},
		used:     map[string]int64{},
		held:     map[string]hold{},
		chains:   map[intent.Owner]*chain{},
		now:      now,
	}
}

// Reserve implements state.Ledger.
func (s *Store) Reserve(ctx context.Context, acct string, limit intent.Money, id string, amount intent.Money) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := state.CheckKeys(acct, id); err != nil {
		return err
	}
	if amount.Amount < 0 {
		return fmt.Errorf("mem: negative reservation %d", amount.Amount)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, dup := s.reserved[id]; dup {
		return state.ErrDuplicate
	}
	if amount.Currency != limit.Currency {
		return state.ErrCurrency
	}
	a := s.accounts[acct]
	if a == nil {
		// Opened, with this currency and limit, once the reservation holds.
		a = &account{currency: limit.Currency, limit: limit.Amount}
	}
	if a.currency != limit.Currency {
		return state.ErrCurrency
	}
	if a.limit != limit.Amount {
		return fmt.Errorf("%w: account %q has limit %d, not %d", state.ErrLimitMismatch, acct, a.limit, limit.Amount)
	}
	// limit - committed - reserved >= amount, without overflow.
	if limit.Amount-a.committed-a.reserved < amount.Amount {
		return state.ErrExceeded
	}
	a.reserved += amount.Amount
	s.accounts[acct] = a
	s.reserved[id] = reservation{account: acct, amount: amount.Amount, since: s.now().UTC()}
	return nil
}

// Commit implements state.Ledger.
func (s *Store) Commit(ctx context.Context, id string) error {
	return s.close(id, true)
}

// Release implements state.Ledger.
func (s *Store) Release(ctx context.Context, id string) error {
	return s.close(id, false)
}

func (s *Store) close(id string, commit bool) error {
	if err := state.CheckKeys(id); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.reserved[id]
	if !ok {
		return state.ErrNotFound
	}
	delete(s.reserved, id)
	a := s.accounts[r.account]
	a.reserved -= r.amount
	if commit {
		a.committed += r.amount
	}
	return nil
}

// Usage implements state.Ledger.
func (s *Store) Usage(ctx context.Context, acct string) (state.Usage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.accounts[acct]
	if a == nil {
		return state.Usage{}, nil
	}
	return state.Usage{Committed: a.committed, Reserved: a.reserved}, nil
}

// Consume implements state.Store. Expired keys are swept whenever the
// set of keys has doubled since the last sweep.
func (s *Store) Consume(ctx context.Context, key string, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := state.CheckKeys(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.used[key]; ok {
		return state.ErrReplayed
	}
	s.used[key] = state.UnixNano(expires)
	// Sweep expired keys when the set has doubled since the last sweep, so
	// the cost per Consume stays constant however many keys are live.
	if len(s.used) >= s.sweepAt {
		now := state.UnixNano(s.now())
		for k, exp := range s.used {
			if now > exp && k != key {
				delete(s.used, k)
			}
		}
		s.sweepAt = max(1024, 2*len(s.used))
	}
	return nil
}

// Unconsume implements state.Nonces.
func (s *Store) Unconsume(ctx context.Context, key string) error {
	if err := state.CheckKeys(key); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.used, key)
	return nil
}

// Hold implements state.Locks. Expired holds of other keys are forgotten
// when they are taken over, or stay until then (one entry per record).
func (s *Store) Hold(ctx context.Context, key, holder string, ttl time.Duration) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := state.CheckKeys(key, holder); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	now := s.now()
	if h, ok := s.held[key]; ok && h.holder != holder && now.Before(h.until) {
		return &state.HeldError{Until: h.until.UTC()}
	}
	s.held[key] = hold{holder: holder, until: now.Add(ttl)}
	return nil
}

// Unhold implements state.Locks.
func (s *Store) Unhold(ctx context.Context, key, holder string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if h, ok := s.held[key]; ok && h.holder == holder {
		delete(s.held, key)
	}
	return nil
}

// Append implements receipt.Log.
func (s *Store) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	if err := ctx.Err(); err != nil {
		return receipt.Receipt{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chains[r.Owner]
	if c == nil {
		c = &chain{}
	}
	out, err := c.append(r, func() { s.chains[r.Owner] = c })
	if err == nil {
		s.audit.add(out)
	}
	return out, err
}

// Receipts implements receipt.Log.
func (s *Store) Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c, ok := s.chains[owner]
	if !ok {
		return nil, receipt.ErrNotFound
	}
	return c.receipts(from, limit)
}

// Owners returns the owners that have a receipt chain, for exports.
func (s *Store) Owners() []intent.Owner {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]intent.Owner, 0, len(s.chains))
	for o := range s.chains {
		out = append(out, o)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
