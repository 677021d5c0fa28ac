// Package checkpoint signs receipt checkpoints as a gateway appends
// receipts: a Store wraps any state.Store and, every Config.Every receipts
// of an owner and every Config.Interval, signs a receipt.Checkpoint of the
// owner's head with a receipt.Signer (Ed25519, or a key in a KMS) and saves
// it in a Sink (store/embedded and store/postgres are Sinks). An export of
// the chains with their checkpoints then shows, offline and with the
// public key alone, a tail cut off or a chain rewritten before the last
// checkpoint (see receipt.Verify).
//
// Checkpoints are signed after the receipt is durable and never delay or
// fail a decision: a checkpoint that cannot be signed or saved is logged
// and retried at the next occasion. Each replica checkpoints the heads it
// appended; several checkpoints of one chain by several replicas are fine.
//
// It imports core/ only; it must never import a pack, a connector, a store
// driver or a front door.
package checkpoint

import (
	"cmp"
	"context"
	"log/slog"
	"sort"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// Sink stores signed checkpoints. SaveCheckpoint may be called
// concurrently; saving a checkpoint already saved is not an error.
type Sink interface {
	SaveCheckpoint(ctx context.Context, c receipt.Checkpoint) error
}

// Config says when checkpoints are signed. The zero value means the
// defaults stated on each field.
type Config struct {
	// Every is the number of receipts of one owner appended through the
	// Store between two checkpoints of its chain; zero means 1000,
	// negative means never by count.
	Every int
	// Interval is how often Run checkpoints every head not yet covered;
	// zero means one minute, negative means Run does nothing.
	Interval time.Duration
	// Now returns the time written in checkpoints; nil means time.Now.
	Now func() time.Time
	// Logger receives failures to sign or save; nil means discard.
	Logger *slog.Logger
}

// Store is a state.Store whose Append also signs checkpoints. It is safe
// for concurrent use.
type Store struct {
	state.Store
	sink   Sink
	signer receipt.Signer
	cfg    Config

	mu     sync.Mutex
	owners map[intent.Owner]*head
}

var (
	_ state.Store         = (*Store)(nil)
	_ state.DeferredLog   = (*Store)(nil)
	_ state.BatchReserver = (*Store)(nil)
	_ state.Settler       = (*Store)(nil)
)

// Deferrer is a store that appends receipts deferred (state.DeferredLog)
// and can tell the head of a chain they extend: Store appends deferred
// only through one. store/embedded is one.
type Deferrer interface {
	state.DeferredLog
	// Head returns the newest receipt of owner's chain once every receipt
	// appended before the call is stored; receipt.ErrNotFound if the
	// owner has none. It may be called concurrently.
	Head(ctx context.Context, owner intent.Owner) (receipt.Receipt, error)
}

// head is what the Store knows of one owner's chain.
type head struct {
	last    receipt.Receipt // the newest receipt appended here, deferred ones aside
	since   int             // receipts appended since the last checkpoint by count
	covered uint64          // the seq of the newest checkpoint saved
	// deferred: receipts were appended deferred after last, so the
	// chain's head is newer than last (ask the store for it).
	deferred bool
}

// Wrap returns st with checkpoints signed by signer and saved to sink.
func Wrap(st state.Store, sink Sink, signer receipt.Signer, cfg Config) *Store {
	if cfg.Every == 0 {
		cfg.Every = 1000
	}
	if cfg.Interval == 0 {
		cfg.Interval = time.Minute
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	return &Store{Store: st, sink: sink, signer: signer, cfg: cfg, owners: map[intent.Owner]*head{}}
}

// Append appends r through the wrapped store and, when the owner's count
// is reached, signs and saves a checkpoint of the new head before
// returning. Its result and error are the wrapped store's: a checkpoint
// failure is only logged.
func (s *Store) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	out, err := s.Store.Append(ctx, r)
	if err != nil {
		return out, err
	}
	s.mu.Lock()
	h := s.owners[out.Owner]
	if h == nil {
		h = &head{}
		s.owners[out.Owner] = h
	}
	if out.Seq > h.last.Seq {
		h.last = out
	}
	h.since++
	due := s.cfg.Every > 0 && h.since >= s.cfg.Every
	var at receipt.Receipt
	if due {
		h.since = 0
		at = h.last
	}
	s.mu.Unlock()
	if due {
		_ = s.checkpoint(context.WithoutCancel(ctx), at)
	}
	return out, nil
}

// AppendDeferred implements state.DeferredLog: it appends r deferred
// through the wrapped store when that is a Deferrer and no checkpoint is
// due; otherwise (a checkpoint is due, which is signed only over a durable
// receipt, or the wrapped store cannot defer) it appends r as Append does.
func (s *Store) AppendDeferred(ctx context.Context, r receipt.Receipt) error {
	dl, ok := s.Store.(Deferrer)
	s.mu.Lock()
	since := 0
	if h := s.owners[r.Owner]; h != nil {
		since = h.since
	}
	due := s.cfg.Every > 0 && since+1 >= s.cfg.Every
	s.mu.Unlock()
	if !ok || due {
		_, err := s.Append(ctx, r)
		return err
	}
	if err := dl.AppendDeferred(ctx, r); err != nil {
		return err
	}
	s.mu.Lock()
	h := s.owners[r.Owner]
	if h == nil {
		h = &head{}
		s.owners[r.Owner] = h
	}
	h.since++
	h.deferred = true
	s.mu.Unlock()
	return nil
}

// ReserveAll implements state.BatchReserver through the wrapped store.
func (s *Store) ReserveAll(ctx context.Context, rs []state.ReserveRequest) ([]state.Usage, []error) {
	return state.ReserveAll(ctx, s.Store, rs)
}

// Settle implements state.Settler through the wrapped store.
func (s *Store) Settle(ctx context.Context, ids []string, commit bool) []error {
	return state.Settle(ctx, s.Store, ids, commit)
}

// checkpoint signs and saves a checkpoint of at, the head of its owner's
// chain.
func (s *Store) checkpoint(ctx context.Context, at receipt.Receipt) error {
	c, err := receipt.SignCheckpoint(s.signer, at, s.cfg.Now())
	if err == nil {
		err = s.sink.SaveCheckpoint(ctx, c)
	}
	if err != nil {
		s.cfg.Logger.Error("checkpoint not saved", "owner", at.Owner, "seq", at.Seq, "err", err)
		return err
	}
	s.mu.Lock()
	if h := s.owners[at.Owner]; h != nil && at.Seq > h.covered {
		h.covered = at.Seq
	}
	s.mu.Unlock()
	return nil
}

// Flush signs and saves a checkpoint of every head appended through the
// Store that no checkpoint covers yet. It returns the first error, after
// trying every owner.
func (s *Store) Flush(ctx context.Context) error {
	s.mu.Lock()
	var unknown []intent.Owner
	for o, h := range s.owners {
		if h.deferred {
			unknown = append(unknown, o)
		}
	}
	s.mu.Unlock()
	var first error
	for _, o := range unknown { // receipts appended deferred: read the head
		at, err := s.Store.(Deferrer).Head(ctx, o)
		if err != nil {
			first = cmp.Or(first, err)
			continue
		}
		s.mu.Lock()
		if h := s.owners[o]; at.Seq > h.last.Seq {
			h.last = at
		}
		s.owners[o].deferred = false
		s.mu.Unlock()
	}
	s.mu.Lock()
	var due []receipt.Receipt
	for _, h := range s.owners {
		if h.last.Seq > h.covered {
			due = append(due, h.last)
			h.since = 0
		}
	}
	s.mu.Unlock()
	sort.Slice(due, func(i, j int) bool { return due[i].Owner < due[j].Owner })
	for _, r := range due {
		if err := s.checkpoint(ctx, r); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Run calls Flush every Config.Interval until ctx ends, then flushes once
// more (without ctx's cancellation) and returns ctx's error. With a
// negative Interval it returns ctx's error when ctx ends, having done
// nothing.
func (s *Store) Run(ctx context.Context) error {
	if s.cfg.Interval < 0 {
		<-ctx.Done()
		return ctx.Err()
	}
	t := time.NewTicker(s.cfg.Interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			_ = s.Flush(ctx)
		case <-ctx.Done():
			_ = s.Flush(context.WithoutCancel(ctx))
			return ctx.Err()
		}
	}
}
