package embedded

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	boltErrors "go.etcd.io/bbolt/errors"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

var (
	_ state.Store       = (*Store)(nil)
	_ state.DeferredLog = (*Store)(nil)
)

// Errors returned by Open and by a closed Store.
var (
	// ErrLocked is returned by Open when another process holds the file
	// open for longer than Options.LockTimeout.
	ErrLocked = errors.New("embedded: the store file is in use by another process")
	// ErrClosed is returned by every method of a Store after Close.
	ErrClosed = errors.New("embedded: store is closed")
	// ErrVersion is returned by Open for a file written by a newer,
	// incompatible version of this package.
	ErrVersion = errors.New("embedded: unsupported store file version")
)

// Options configures Open. The zero value means the defaults stated on each
// field.
type Options struct {
	// LockTimeout is how long Open waits for another process to release
	// the file; zero means 1s.
	LockTimeout time.Duration
	// MaxBatch bounds how many writes are committed in one transaction;
	// zero means 256.
	MaxBatch int
	// MaxQueue bounds how many writes may wait for the commit loop; a
	// write that finds the queue full waits for room, deferred receipts
	// included; zero means 4096.
	MaxQueue int
	// Now returns the current time, used to forget expired single-use keys;
	// nil means time.Now.
	Now func() time.Time
	// Logger receives the deferred receipts a failed write lost (see
	// AppendDeferred); nil means discard.
	Logger *slog.Logger
	// Lost is called, from the commit loop, once for each deferred
	// receipt a failed write lost, with the write's error, so that an
	// operator's metrics count it (intentplane-mcp:
	// intentplane_store_errors_total{op="append_deferred"}); nil means
	// none. It must not block.
	Lost func(owner intent.Owner, err error)
}

// Bucket names. Every key in them starts with a one-byte tag, so that empty
// strings are valid keys, and owners are length-prefixed, so that one
// owner's keys never prefix another's.
var (
	bucketMeta         = []byte("meta")
	bucketAccounts     = []byte("accounts")
	bucketReservations = []byte("reservations")
	bucketConsumed     = []byte("consumed")
	bucketLocks        = []byte("locks")
	bucketHeads        = []byte("heads")
	bucketReceipts     = []byte("receipts")
	bucketCheckpoints  = []byte("checkpoints")
	keyVersion         = []byte("version")
)

// fileVersion is the layout version written in the meta bucket: 2 since
// receipts are indexed for state.ReceiptIndex (audit.go). Open upgrades a
// file of version 1 in place; a gateway of version 1 refuses a file of
// version 2 (ErrVersion), whose index it would not keep.
const fileVersion = 2

// maxKey is the longest owner or checkpoint key id accepted, in bytes
// (other keys are bounded by state.MaxKeyLen) (bbolt keys are at most 32 KiB).
const maxKey = 16 << 10

// sweepEvery is how many Consume calls pass between sweeps of expired
// keys.
const sweepEvery = 4096

// Store is the embedded state.Store over one bbolt file. The zero value
// is not usable; call Open. It is safe for concurrent use.
type Store struct {
	db       *bolt.DB
	now      func() time.Time
	log      *slog.Logger
	lost     func(intent.Owner, error)
	maxBatch int
	maxQueue int

	mu     sync.RWMutex // held for reading while queueing a write or reading
	closed bool

	// The queue of writes for the commit loop, in the order they are
	// committed. qcond signals both a write queued and room made.
	qmu     sync.Mutex
	qcond   *sync.Cond
	queue   []*request
	qclosed bool

	done     chan struct{} // closed when the commit loop exits
	deferred atomic.Int64  // deferred receipts queued and not yet committed
	consumes atomic.Uint64
}

// Open opens or creates the store file at path (mode 0600) and returns a
// Store that holds it until Close. It returns ErrLocked if another process
// holds the file, ErrVersion for a file of a newer layout, and the
// filesystem's error otherwise.
func Open(path string, opts Options) (*Store, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = time.Second
	}
	if opts.MaxBatch <= 0 {
		opts.MaxBatch = 256
	}
	if opts.MaxQueue <= 0 {
		opts.MaxQueue = 4096
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: opts.LockTimeout})
	if err != nil {
		if errors.Is(err, boltErrors.ErrTimeout) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	upgrade := false
	err = db.Update(func(tx *bolt.Tx) error {
		for _, b := range append([][]byte{bucketMeta, bucketAccounts, bucketReservations, bucketConsumed, bucketLocks, bucketHeads, bucketReceipts, bucketCheckpoints}, auditBuckets...) {
			if _, err := tx.CreateBucketIfNotExists(b); err != nil {
				return err
			}
		}
		meta := tx.Bucket(bucketMeta)
		if v := meta.Get(keyVersion); v != nil {
			if len(v) != 8 || binary.BigEndian.Uint64(v) > fileVersion {
				return fmt.Errorf("%w: %x", ErrVersion, v)
			}
			upgrade = binary.BigEndian.Uint64(v) < fileVersion
			return nil
		}
		return meta.Put(keyVersion, binary.BigEndian.AppendUint64(nil, fileVersion))
	})
	if err == nil && upgrade {
		// A file of version 1 has no index of its receipts: build it.
		err = reindex(db)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("embedded: open %s: %w", path, err)
	}
	s := &Store{
		db:       db,
		now:      opts.Now,
		log:      opts.Logger,
		lost:     opts.Lost,
		maxBatch: opts.MaxBatch,
		maxQueue: opts.MaxQueue,
		done:     make(chan struct{}),
	}
	s.qcond = sync.NewCond(&s.qmu)
	go s.commitLoop()
	return s, nil
}

// Close waits for pending writes (deferred receipts included), then closes
// the file. Later calls return
// ErrClosed; Close itself is idempotent and returns the file's close error
// once.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.qmu.Lock()
	s.qclosed = true
	s.qcond.Broadcast()
	s.qmu.Unlock()
	s.mu.Unlock()
	<-s.done
	return s.db.Close()
}

// Path returns the store file's path.
func (s *Store) Path() string { return s.db.Path() }

// request is one write waiting for the commit loop: fn, or nothing (a
// barrier, done once every write queued before it is). A deferred
// request's caller does not wait for it; done is nil.
type request struct {
	fn    func(tx *bolt.Tx) error
	err   error
	done  chan struct{}
	owner intent.Owner // a deferred receipt's owner, for the log
}

// update runs fn in a write transaction, possibly together with other
// callers' functions, and returns once that transaction is durable. fn may
// be called more than once (if another function of its batch fails, each
// is run again alone); it must set its results on every call. fn must
// return a clean error (see clean) only before it writes anything.
func (s *Store) update(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	r := &request{fn: fn, done: make(chan struct{})}
	if err := s.enqueue(r); err != nil {
		return err
	}
	// The write is already queued: wait for its outcome whatever ctx says,
	// so that the caller never believes undone what is durable.
	<-r.done
	return r.err
}

// enqueue queues r for the commit loop, waiting while the queue is full.
func (s *Store) enqueue(r *request) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	s.qmu.Lock()
	for len(s.queue) >= s.maxQueue && !s.qclosed {
		s.qcond.Wait()
	}
	s.queue = append(s.queue, r)
	s.qcond.Broadcast()
	s.qmu.Unlock()
	return nil
}

// settled returns once every write queued before the call is committed
// (or has failed): readers of receipt chains call it so that they see the
// deferred receipts already appended.
func (s *Store) settled(ctx context.Context) error {
	if s.deferred.Load() == 0 {
		return ctx.Err()
	}
	return s.update(ctx, nil)
}

// errSolo rolls a batch back so that its functions run one by one.
var errSolo = errors.New("embedded: run alone")

// clean reports whether err is an answer (the function wrote nothing and
// the others in its batch may commit) rather than a failure.
func clean(err error) bool {
	return errors.Is(err, state.ErrExceeded) || errors.Is(err, state.ErrCurrency) ||
		errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrDuplicate) ||
		errors.Is(err, state.ErrLimitMismatch) ||
		errors.Is(err, state.ErrReplayed) || errors.Is(err, state.ErrHeld) ||
		errors.Is(err, state.ErrKeyTooLong) || errors.Is(err, receipt.ErrInvalid) ||
		errors.Is(err, errBadInput)
}

// commitLoop commits queued writes in batches, in queue order, until Close
// and the queue is empty.
func (s *Store) commitLoop() {
	defer close(s.done)
	batch := make([]*request, 0, s.maxBatch)
	for {
		s.qmu.Lock()
		for len(s.queue) == 0 && !s.qclosed {
			s.qcond.Wait()
		}
		if len(s.queue) == 0 {
			s.qmu.Unlock()
			return
		}
		n := min(len(s.queue), s.maxBatch)
		batch = append(batch[:0], s.queue[:n]...)
		clear(s.queue[:n])
		s.queue = s.queue[n:]
		if len(s.queue) == 0 {
			s.queue = s.queue[:0:0] // let the array go
		}
		s.qcond.Broadcast()
		s.qmu.Unlock()
		s.commit(batch)
		clear(batch)
	}
}

// commit commits batch in one transaction (none if it holds only
// barriers) and tells each caller its outcome.
func (s *Store) commit(batch []*request) {
	writes := false
	for _, r := range batch {
		writes = writes || r.fn != nil
	}
	var err error
	if writes {
		err = s.db.Update(func(tx *bolt.Tx) error {
			for _, r := range batch {
				if r.fn == nil {
					continue
				}
				r.err = r.fn(tx)
				if r.err != nil && !clean(r.err) {
					return errSolo
				}
			}
			return nil
		})
	}
	switch {
	case errors.Is(err, errSolo):
		for _, r := range batch {
			if r.fn != nil {
				r.err = s.db.Update(r.fn)
			}
		}
	case err != nil:
		for _, r := range batch {
			if r.fn != nil {
				r.err = fmt.Errorf("embedded: commit: %w", err)
			}
		}
	}
	for _, r := range batch {
		if r.done != nil {
			close(r.done)
			continue
		}
		if r.err != nil {
			s.log.Error("deferred receipt lost: its write failed", "owner", r.owner, "err", r.err)
			if s.lost != nil {
				s.lost(r.owner, r.err)
			}
		}
		s.deferred.Add(-1)
	}
}

// view runs fn in a read transaction.
func (s *Store) view(ctx context.Context, fn func(tx *bolt.Tx) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return s.db.View(fn)
}

// errBadInput marks arguments refused before any write.
var errBadInput = errors.New("embedded: invalid argument")

// key returns tag followed by s, or an error wrapping state.ErrKeyTooLong.
func key(tag byte, s string) ([]byte, error) {
	if err := state.CheckKeys(s); err != nil {
		return nil, err
	}
	k := make([]byte, 0, 1+len(s))
	return append(append(k, tag), s...), nil
}

// ownerKey returns the length-prefixed owner: a prefix of every key of the
// owner's receipts and checkpoints, and of no other owner's.
func ownerKey(o intent.Owner) ([]byte, error) {
	if len(o) > maxKey {
		return nil, fmt.Errorf("%w: owner of %d bytes exceeds %d", errBadInput, len(o), maxKey)
	}
	k := binary.AppendUvarint(make([]byte, 0, 3+len(o)+8), uint64(len(o)))
	return append(k, o...), nil
}

func seqKey(owner []byte, seq uint64) []byte {
	return binary.BigEndian.AppendUint64(slices.Clip(owner), seq)
}

// Reserve implements state.Ledger. Besides the Ledger's errors it returns
// an error for a negative amount and state.ErrKeyTooLong for an account or id longer than
// state.MaxKeyLen. An account's limit is kept under its own key (tag 'l') in the
// accounts bucket; an account written before limits were kept takes the
// limit of its next reservation.
func (s *Store) Reserve(ctx context.Context, acct string, limit intent.Money, id string, amount intent.Money) error {
	if amount.Amount < 0 {
		return fmt.Errorf("embedded: negative reservation %d", amount.Amount)
	}
	ak, err := key('a', acct)
	if err != nil {
		return err
	}
	lk, _ := key('l', acct) // as long as ak
	rk, err := key('r', id)
	if err != nil {
		return err
	}
	tk, _ := key('t', id) // when it was made, for reconciliation
	if len(amount.Currency) > 255 {
		return fmt.Errorf("embedded: currency of %d bytes", len(amount.Currency))
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		accounts, reservations := tx.Bucket(bucketAccounts), tx.Bucket(bucketReservations)
		if reservations.Get(rk) != nil {
			return state.ErrDuplicate
		}
		if amount.Currency != limit.Currency {
			return state.ErrCurrency
		}
		a := account{currency: limit.Currency}
		if v := accounts.Get(ak); v != nil {
			var err error
			if a, err = decodeAccount(v); err != nil {
				return err
			}
		}
		if a.currency != limit.Currency {
			return state.ErrCurrency
		}
		// An account without a limit is new, or was opened before limits
		// were kept: this reservation's limit becomes its limit.
		lv := accounts.Get(lk)
		if lv != nil {
			if len(lv) != 8 {
				return fmt.Errorf("embedded: corrupt limit of account %q", acct)
			}
			if have := intent.Amount(binary.BigEndian.Uint64(lv)); have != limit.Amount {
				return fmt.Errorf("%w: account %q has limit %d, not %d", state.ErrLimitMismatch, acct, have, limit.Amount)
			}
		}
		if limit.Amount-a.committed-a.reserved < amount.Amount {
			return state.ErrExceeded
		}
		a.reserved += amount.Amount
		if err := accounts.Put(ak, a.encode()); err != nil {
			return err
		}
		if lv == nil {
			if err := accounts.Put(lk, binary.BigEndian.AppendUint64(nil, uint64(limit.Amount))); err != nil {
				return err
			}
		}
		if err := reservations.Put(rk, reservation{account: acct, amount: amount.Amount}.encode()); err != nil {
			return err
		}
		return reservations.Put(tk, binary.BigEndian.AppendUint64(nil, uint64(s.now().UnixNano())))
	})
}

// Commit implements state.Ledger.
func (s *Store) Commit(ctx context.Context, id string) error {
	return s.close(ctx, id, true)
}

// Release implements state.Ledger.
func (s *Store) Release(ctx context.Context, id string) error {
	return s.close(ctx, id, false)
}

func (s *Store) close(ctx context.Context, id string, commit bool) error {
	rk, err := key('r', id)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		accounts, reservations := tx.Bucket(bucketAccounts), tx.Bucket(bucketReservations)
		v := reservations.Get(rk)
		if v == nil {
			return state.ErrNotFound
		}
		r, err := decodeReservation(v)
		if err != nil {
			return err
		}
		ak, _ := key('a', r.account)
		av := accounts.Get(ak)
		if av == nil {
			return fmt.Errorf("embedded: reservation %q names the missing account %q", id, r.account)
		}
		a, err := decodeAccount(av)
		if err != nil {
			return err
		}
		a.reserved -= r.amount
		if commit {
			a.committed += r.amount
		}
		if err := reservations.Delete(rk); err != nil {
			return err
		}
		tk, _ := key('t', id)
		if err := reservations.Delete(tk); err != nil {
			return err
		}
		return accounts.Put(ak, a.encode())
	})
}

// Usage implements state.Ledger.
func (s *Store) Usage(ctx context.Context, acct string) (state.Usage, error) {
	ak, err := key('a', acct)
	if err != nil {
		return state.Usage{}, err
	}
	var u state.Usage
	err = s.view(ctx, func(tx *bolt.Tx) error {
		v := tx.Bucket(bucketAccounts).Get(ak)
		if v == nil {
			return nil
		}
		a, err := decodeAccount(v)
		u = state.Usage{Committed: a.committed, Reserved: a.reserved}
		return err
	})
	return u, err
}

// Consume implements state.Nonces. Every 4096th call also forgets keys
// whose expiry has passed (by Options.Now), in a transaction of its own.
func (s *Store) Consume(ctx context.Context, k string, expires time.Time) error {
	ck, err := key('k', k)
	if err != nil {
		return err
	}
	err = s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketConsumed)
		if b.Get(ck) != nil {
			return state.ErrReplayed
		}
		return b.Put(ck, binary.BigEndian.AppendUint64(nil, expiryNanos(expires)))
	})
	if err == nil && s.consumes.Add(1)%sweepEvery == 0 {
		_, _ = s.Sweep(context.WithoutCancel(ctx))
	}
	return err
}

// Unconsume implements state.Nonces.
func (s *Store) Unconsume(ctx context.Context, k string) error {
	ck, err := key('k', k)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketConsumed).Delete(ck)
	})
}

// Hold implements state.Locks. A hold is stored as its expiry (Unix
// nanoseconds, big-endian) followed by the holder.
func (s *Store) Hold(ctx context.Context, k, holder string, ttl time.Duration) error {
	lk, err := key('h', k)
	if err != nil {
		return err
	}
	if err := state.CheckKeys(holder); err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLocks)
		now := s.now()
		if v := b.Get(lk); len(v) >= 8 && string(v[8:]) != holder && now.UnixNano() < int64(binary.BigEndian.Uint64(v)) {
			return &state.HeldError{Until: time.Unix(0, int64(binary.BigEndian.Uint64(v))).UTC()}
		}
		v := binary.BigEndian.AppendUint64(nil, uint64(now.Add(ttl).UnixNano()))
		return b.Put(lk, append(v, holder...))
	})
}

// Unhold implements state.Locks.
func (s *Store) Unhold(ctx context.Context, k, holder string) error {
	lk, err := key('h', k)
	if err != nil {
		return err
	}
	return s.update(ctx, func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketLocks)
		if v := b.Get(lk); len(v) >= 8 && string(v[8:]) == holder {
			return b.Delete(lk)
		}
		return nil
	})
}

// expiryNanos is t as a consumed key's expiry is kept (and compared, as
// unsigned big-endian bytes): state.UnixNano, and 0 before 1970.
func expiryNanos(t time.Time) uint64 {
	return uint64(max(0, state.UnixNano(t)))
}

// Sweep forgets the consumed keys whose expiry is before Options.Now and
// returns how many it forgot. Consume calls it from time to time; an
// operator may call it too.
func (s *Store) Sweep(ctx context.Context) (int, error) {
	cutoff := expiryNanos(s.now())
	var n int
	err := s.update(ctx, func(tx *bolt.Tx) error {
		n = 0
		b := tx.Bucket(bucketConsumed)
		var expired [][]byte
		err := b.ForEach(func(k, v []byte) error {
			if len(v) == 8 && binary.BigEndian.Uint64(v) < cutoff {
				expired = append(expired, k)
			}
			return nil
		})
		if err != nil {
			return err
		}
		for _, k := range expired {
			if err := b.Delete(k); err != nil {
				return err
			}
		}
		n = len(expired)
		return nil
	})
	return n, err
}

// Append implements receipt.Log: it links r after the owner's head and
// stores it, with the head, in one durable transaction.
func (s *Store) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	ok, err := ownerKey(r.Owner)
	if err != nil {
		return receipt.Receipt{}, err
	}
	var out receipt.Receipt
	if err := s.update(ctx, appendTo(ok, r, &out)); err != nil {
		return receipt.Receipt{}, err
	}
	return out, nil
}

// AppendDeferred implements state.DeferredLog: r is linked and stored by
// the commit loop, in queue order, without the caller waiting. The loop
// starts its transaction at once (or as soon as the one under way ends), so
// r is normally durable a few milliseconds after the call returns, and in
// any case before every write queued after it (any call of this Store that
// returns after AppendDeferred did) returns. It is lost if the process
// dies before that transaction commits, or if the transaction fails (disk
// full, I/O error), which Options.Logger is told. Receipts, Owners,
// Checkpoints and Head see it once it is stored: they wait for the queued
// deferred receipts first.
func (s *Store) AppendDeferred(ctx context.Context, r receipt.Receipt) error {
	ok, err := ownerKey(r.Owner)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Refuse what Append would refuse, now, while the caller can hear it.
	if _, err := receipt.Link(r, nil); err != nil {
		return err
	}
	var out receipt.Receipt
	s.deferred.Add(1)
	if err := s.enqueue(&request{fn: appendTo(ok, r, &out), owner: r.Owner}); err != nil {
		s.deferred.Add(-1)
		return err
	}
	return nil
}

// appendTo returns the write that links r after the head of its owner
// (whose key is ok) and stores both, setting *out to the linked receipt.
func appendTo(ok []byte, r receipt.Receipt, out *receipt.Receipt) func(tx *bolt.Tx) error {
	var line bytes.Buffer
	return func(tx *bolt.Tx) error {
		heads := tx.Bucket(bucketHeads)
		prev, err := head(heads, ok, r.Owner)
		if err != nil {
			return err
		}
		linked, err := receipt.Link(r, prev)
		if err != nil {
			return err
		}
		line.Reset()
		if err := receipt.WriteJSONL(&line, []receipt.Receipt{linked}); err != nil {
			return err
		}
		if err := tx.Bucket(bucketReceipts).Put(seqKey(ok, linked.Seq), line.Bytes()); err != nil {
			return err
		}
		if err := indexReceipt(tx, linked); err != nil {
			return err
		}
		h := binary.BigEndian.AppendUint64(make([]byte, 0, 40), linked.Seq)
		if err := heads.Put(ok, append(h, linked.Hash[:]...)); err != nil {
			return err
		}
		*out = linked
		return nil
	}
}

// head returns the head of owner's chain (Owner, Seq and Hash set) as the
// heads bucket holds it under ok; nil if the owner has no receipt.
func head(heads *bolt.Bucket, ok []byte, owner intent.Owner) (*receipt.Receipt, error) {
	v := heads.Get(ok)
	if v == nil {
		return nil, nil
	}
	if len(v) != 8+len(receipt.Hash{}) {
		return nil, fmt.Errorf("embedded: corrupt head of owner %q", owner)
	}
	return &receipt.Receipt{Owner: owner, Seq: binary.BigEndian.Uint64(v), Hash: receipt.Hash(v[8:])}, nil
}

// Head implements state.DeferredLog: the newest receipt of owner's chain,
// read in full, once the deferred receipts queued before the call are
// stored; receipt.ErrNotFound if the owner has none.
func (s *Store) Head(ctx context.Context, owner intent.Owner) (receipt.Receipt, error) {
	ok, err := ownerKey(owner)
	if err != nil {
		return receipt.Receipt{}, receipt.ErrNotFound
	}
	if err := s.settled(ctx); err != nil {
		return receipt.Receipt{}, err
	}
	var line []byte
	err = s.view(ctx, func(tx *bolt.Tx) error {
		h, err := head(tx.Bucket(bucketHeads), ok, owner)
		if err != nil {
			return err
		}
		if h == nil {
			return receipt.ErrNotFound
		}
		line = slices.Clone(tx.Bucket(bucketReceipts).Get(seqKey(ok, h.Seq)))
		return nil
	})
	if err != nil {
		return receipt.Receipt{}, err
	}
	rs, _, err := receipt.ReadJSONL(bytes.NewReader(line))
	if err != nil || len(rs) != 1 {
		return receipt.Receipt{}, fmt.Errorf("embedded: stored head receipt of owner %q: %v", owner, err)
	}
	return rs[0], nil
}

// Receipts implements receipt.Log: receipt.ErrNotFound if the owner has
// no receipt at all.
func (s *Store) Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error) {
	ok, err := ownerKey(owner)
	if err != nil {
		return nil, receipt.ErrNotFound
	}
	if err := s.settled(ctx); err != nil {
		return nil, err
	}
	var lines bytes.Buffer
	err = s.view(ctx, func(tx *bolt.Tx) error {
		if tx.Bucket(bucketHeads).Get(ok) == nil {
			return receipt.ErrNotFound
		}
		c := tx.Bucket(bucketReceipts).Cursor()
		n := 0
		for k, v := c.Seek(seqKey(ok, from)); k != nil && bytes.HasPrefix(k, ok) && len(k) == len(ok)+8; k, v = c.Next() {
			if limit > 0 && n == limit {
				break
			}
			lines.Write(v)
			n++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	rs, _, err := receipt.ReadJSONL(&lines)
	if err != nil {
		return nil, fmt.Errorf("embedded: stored receipts of owner %q: %w", owner, err)
	}
	return rs, nil
}

// Owners returns every owner with a receipt chain, sorted by their
// length-prefixed encoding (shorter names first), for exports.
func (s *Store) Owners(ctx context.Context) ([]intent.Owner, error) {
	if err := s.settled(ctx); err != nil {
		return nil, err
	}
	var out []intent.Owner
	err := s.view(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketHeads).ForEach(func(k, _ []byte) error {
			n, w := binary.Uvarint(k)
			if w <= 0 || uint64(len(k)-w) != n {
				return fmt.Errorf("embedded: corrupt head key %x", k)
			}
			out = append(out, intent.Owner(k[w:]))
			return nil
		})
	})
	return out, err
}

// SaveCheckpoint stores a signed checkpoint; saving the same owner, seq and
// key id again replaces it. It does not check the signature.
func (s *Store) SaveCheckpoint(ctx context.Context, c receipt.Checkpoint) error {
	ok, err := ownerKey(c.Owner)
	if err != nil {
		return err
	}
	if len(c.KeyID) > maxKey {
		return fmt.Errorf("%w: key id of %d bytes", errBadInput, len(c.KeyID))
	}
	var line bytes.Buffer
	if err := receipt.WriteCheckpoints(&line, []receipt.Checkpoint{c}); err != nil {
		return err
	}
	k := append(seqKey(ok, c.Seq), c.KeyID...)
	return s.update(ctx, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketCheckpoints).Put(k, line.Bytes())
	})
}

// Checkpoints returns the owner's stored checkpoints in Seq order (then by
// key id); none if the owner has none.
func (s *Store) Checkpoints(ctx context.Context, owner intent.Owner) ([]receipt.Checkpoint, error) {
	ok, err := ownerKey(owner)
	if err != nil {
		return nil, nil
	}
	if err := s.settled(ctx); err != nil {
		return nil, err
	}
	var lines bytes.Buffer
	err = s.view(ctx, func(tx *bolt.Tx) error {
		c := tx.Bucket(bucketCheckpoints).Cursor()
		for k, v := c.Seek(ok); k != nil && bytes.HasPrefix(k, ok) && len(k) >= len(ok)+8; k, v = c.Next() {
			lines.Write(v)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	_, cs, err := receipt.ReadJSONL(&lines)
	if err != nil {
		return nil, fmt.Errorf("embedded: stored checkpoints of owner %q: %w", owner, err)
	}
	return cs, nil
}

// account is an accounts value: committed and reserved (8 bytes each, big
// endian), then the currency.
type account struct {
	currency            string
	committed, reserved intent.Amount
}

func (a account) encode() []byte {
	b := make([]byte, 0, 16+len(a.currency))
	b = binary.BigEndian.AppendUint64(b, uint64(a.committed))
	b = binary.BigEndian.AppendUint64(b, uint64(a.reserved))
	return append(b, a.currency...)
}

func decodeAccount(v []byte) (account, error) {
	if len(v) < 16 {
		return account{}, errors.New("embedded: corrupt account")
	}
	return account{
		committed: intent.Amount(binary.BigEndian.Uint64(v)),
		reserved:  intent.Amount(binary.BigEndian.Uint64(v[8:])),
		currency:  string(v[16:]),
	}, nil
}

// reservation is a reservations value: the amount (8 bytes, big endian),
// then the account.
type reservation struct {
	account string
	amount  intent.Amount
}

func (r reservation) encode() []byte {
	b := binary.BigEndian.AppendUint64(make([]byte, 0, 8+len(r.account)), uint64(r.amount))
	return append(b, r.account...)
}

func decodeReservation(v []byte) (reservation, error) {
	if len(v) < 8 {
		return reservation{}, errors.New("embedded: corrupt reservation")
	}
	return reservation{amount: intent.Amount(binary.BigEndian.Uint64(v)), account: string(v[8:])}, nil
}
