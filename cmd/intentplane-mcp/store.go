package main

import (
	"context"
	"crypto/ed25519"
	"log/slog"
	"os"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/checkpoint"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/postgres"
)

// store is the gateway's store as configured in [store], with what closes
// it and, when a checkpoint key is set, the checkpointing wrapper.
type store struct {
	gateway.Store
	close func() error
	// records keeps the mandate issued at start (the store itself, under
	// any checkpointing wrapper); nil for "mem", which forgets at exit.
	records state.Records
	// entries keeps the approval page's requests, sessions and
	// call-backs and the tracker's memory (the store itself).
	entries approvals.Store

	cp *checkpoint.Store // nil: no checkpoints
	// audit reads the chains and checkpoints for the page's audit view;
	// verifier checks the checkpoints (nil: no checkpoint key).
	audit    approvals.AuditLog
	verifier receipt.Verifier
	stop     context.CancelFunc
	done     chan struct{}
}

var (
	_ state.DeferredLog   = (*store)(nil)
	_ state.BatchReserver = (*store)(nil)
	_ state.Settler       = (*store)(nil)
)

// openStore opens the store [store] names. The PostgreSQL connection
// string is read from the environment variable named by dsn_env, never
// from the file.
//
// lost, if not nil, is told of each deferred receipt (the receipt of a
// decision that changed nothing) that the embedded store's write lost
// after the answer was given; it is logged in any case.
func openStore(ctx context.Context, c *config.Config, log *slog.Logger, lost func()) (*store, error) {
	sc := c.Store
	at := []string{"store"}
	s := &store{close: func() error { return nil }}
	var sink checkpoint.Sink
	switch sc.Kind {
	case "", "mem":
		m := mem.New(nil)
		s.Store, s.audit, s.entries = m, memAudit{m}, m
		log.Warn("intentplane-mcp: [store] kind = \"mem\": budgets, spent nonces, executed operations and receipts are lost when this process exits, and a restart starts a new mandate with its whole budget; use kind = \"embedded\" (docs/stores.md)")
	case "embedded":
		opts := embedded.Options{Logger: log}
		if lost != nil {
			opts.Lost = func(intent.Owner, error) { lost() }
		}
		st, err := embedded.Open(c.File(sc.Path), opts)
		if err != nil {
			return nil, c.ErrAt(append(at, "path"), "%v", err)
		}
		s.Store, sink, s.close, s.audit, s.records, s.entries = st, st, st.Close, st, st, st
	case "postgres":
		dsn, ok := os.LookupEnv(sc.DSNEnv)
		if !ok || dsn == "" {
			return nil, c.ErrAt(append(at, "dsn_env"), "the environment variable %s is not set", sc.DSNEnv)
		}
		st, err := postgres.Open(ctx, dsn, postgres.Config{Logger: log})
		if err != nil {
			return nil, c.ErrAt(append(at, "dsn_env"), "%v", err)
		}
		s.Store, sink, s.close, s.audit, s.records, s.entries = st, st, func() error { st.Close(); return nil }, st, st, st
	default: // config checked the kind
		return nil, c.ErrAt(append(at, "kind"), "unknown store %q", sc.Kind)
	}
	if sc.CheckpointKey != "" {
		priv, err := readPrivateKey(c.File(sc.CheckpointKey))
		if err != nil {
			_ = s.close()
			return nil, c.ErrAt(append(at, "checkpoint_key"), "%v", err)
		}
		id := sc.CheckpointKeyID
		if id == "" {
			id = "intentplane-mcp"
		}
		s.cp = checkpoint.Wrap(s.Store, sink, receipt.NewEd25519Signer(id, priv), checkpoint.Config{
			Every: sc.CheckpointEvery, Interval: sc.CheckpointInterval.Duration, Logger: log,
		})
		s.Store = s.cp
		s.verifier = receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{id: priv.Public().(ed25519.PublicKey)})
	}
	return s, nil
}

// AppendDeferred implements state.DeferredLog (the gateway appends the
// receipts of decisions that changed nothing so): the configured store's,
// or its Append when it has none.
func (s *store) AppendDeferred(ctx context.Context, r receipt.Receipt) error {
	if dl, ok := s.Store.(state.DeferredLog); ok {
		return dl.AppendDeferred(ctx, r)
	}
	_, err := s.Store.Append(ctx, r)
	return err
}

// ReserveAll implements state.BatchReserver (one round trip for an
// operation's running totals on PostgreSQL) through the configured store.
func (s *store) ReserveAll(ctx context.Context, rs []state.ReserveRequest) ([]state.Usage, []error) {
	return state.ReserveAll(ctx, s.Store, rs)
}

// Settle implements state.Settler (one round trip for an operation's
// reservations on PostgreSQL) through the configured store.
func (s *store) Settle(ctx context.Context, ids []string, commit bool) []error {
	return state.Settle(ctx, s.Store, ids, commit)
}

// auditConfig is the approval page's audit view over the store.
func (s *store) auditConfig() approvals.AuditConfig {
	return approvals.AuditConfig{Log: s.audit, Verifier: s.verifier}
}

// memAudit gives store/mem the methods of approvals.AuditLog: it keeps no
// checkpoints.
type memAudit struct{ *mem.Store }

func (m memAudit) Owners(context.Context) ([]intent.Owner, error) { return m.Store.Owners(), nil }

func (memAudit) Checkpoints(context.Context, intent.Owner) ([]receipt.Checkpoint, error) {
	return nil, nil
}

// start signs checkpoints every interval until Close, when there is a
// checkpoint key.
func (s *store) start(ctx context.Context) {
	if s.cp == nil {
		return
	}
	ctx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	s.done = make(chan struct{})
	go func() {
		defer close(s.done)
		_ = s.cp.Run(ctx)
	}()
}

// Close signs a last checkpoint of the heads not yet covered, then closes
// the store.
func (s *store) Close() error {
	if s.stop != nil {
		s.stop()
		<-s.done // Run flushes once more as it ends
	}
	return s.close()
}
