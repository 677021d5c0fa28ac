package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/postgres"
)

// chains is what checkpointing needs of a durable store: its owners, their
// receipts, their checkpoints, and a place to save new ones.
type chains interface {
	Owners(ctx context.Context) ([]intent.Owner, error)
	Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error)
	Checkpoints(ctx context.Context, owner intent.Owner) ([]receipt.Checkpoint, error)
	SaveCheckpoint(ctx context.Context, c receipt.Checkpoint) error
}

var (
	_ chains = (*embedded.Store)(nil)
	_ chains = (*postgres.Store)(nil)
)

// store is the gateway's store as configured in [store], with what closes
// it and, when a checkpoint key is set, what signs checkpoints.
type store struct {
	gateway.Store
	close func() error

	chains chains         // nil for the in-memory store
	signer receipt.Signer // nil: no checkpoints
	every  time.Duration  // between checkpoints
	log    *slog.Logger
	stop   context.CancelFunc
	done   sync.WaitGroup
}

// openStore opens the store [store] names. The PostgreSQL connection
// string is read from the environment variable named by dsn_env, never
// from the file.
func openStore(ctx context.Context, c *config, log *slog.Logger) (*store, error) {
	sc := c.Store
	at := []string{"store"}
	s := &store{log: log, close: func() error { return nil }}
	type key struct {
		name string
		set  bool
	}
	only := func(kind string, keys ...key) error {
		for _, k := range keys {
			if k.set {
				return c.errAt(append(at, k.name), "%s does not apply to the %s store", k.name, kind)
			}
		}
		return nil
	}
	switch sc.Kind {
	case "", "mem":
		if err := only("mem", key{"path", sc.Path != ""}, key{"dsn_env", sc.DSNEnv != ""}, key{"checkpoint_key", sc.CheckpointKey != ""}); err != nil {
			return nil, err
		}
		s.Store = mem.New(nil)
	case "embedded":
		if err := only("embedded", key{"dsn_env", sc.DSNEnv != ""}); err != nil {
			return nil, err
		}
		if sc.Path == "" {
			return nil, c.errAt(at, "the embedded store needs path: the file that holds budgets, nonces and receipts")
		}
		st, err := embedded.Open(c.file(sc.Path), embedded.Options{})
		if err != nil {
			return nil, c.errAt(append(at, "path"), "%v", err)
		}
		s.Store, s.chains, s.close = st, st, st.Close
	case "postgres":
		if err := only("postgres", key{"path", sc.Path != ""}); err != nil {
			return nil, err
		}
		if sc.DSNEnv == "" {
			return nil, c.errAt(at, "the postgres store needs dsn_env: the name of the environment variable holding the connection string")
		}
		if strings.Contains(sc.DSNEnv, "://") || strings.Contains(sc.DSNEnv, "=") {
			return nil, c.errAt(append(at, "dsn_env"), "dsn_env is the name of an environment variable, not a connection string: keep passwords out of the file")
		}
		dsn, ok := os.LookupEnv(sc.DSNEnv)
		if !ok || dsn == "" {
			return nil, c.errAt(append(at, "dsn_env"), "the environment variable %s is not set", sc.DSNEnv)
		}
		st, err := postgres.Open(ctx, dsn, postgres.Config{Logger: log})
		if err != nil {
			return nil, c.errAt(append(at, "dsn_env"), "%v", err)
		}
		s.Store, s.chains, s.close = st, st, func() error { st.Close(); return nil }
	default:
		return nil, c.errAt(append(at, "kind"), "unknown store %q (mem, embedded, postgres)", sc.Kind)
	}
	if sc.CheckpointKey != "" {
		priv, err := readPrivateKey(c.file(sc.CheckpointKey))
		if err != nil {
			_ = s.close()
			return nil, c.errAt(append(at, "checkpoint_key"), "%v", err)
		}
		id := sc.CheckpointKeyID
		if id == "" {
			id = "intentplane-mcp"
		}
		s.signer = receipt.NewEd25519Signer(id, priv)
		s.every = sc.CheckpointEvery.Duration
		if s.every == 0 {
			s.every = time.Hour
		}
	} else if sc.CheckpointKeyID != "" || sc.CheckpointEvery.Duration != 0 {
		_ = s.close()
		return nil, c.errAt(at, "checkpoint_key_id and checkpoint_every need checkpoint_key")
	}
	return s, nil
}

// start signs checkpoints every s.every until Close, when there is a
// signer.
func (s *store) start(ctx context.Context) {
	if s.signer == nil || s.chains == nil {
		return
	}
	ctx, s.stop = context.WithCancel(context.WithoutCancel(ctx))
	s.done.Add(1)
	go func() {
		defer s.done.Done()
		t := time.NewTicker(s.every)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if err := s.checkpoint(ctx); err != nil {
					s.log.Error("checkpoints not signed", "err", err)
				}
			}
		}
	}()
}

// checkpoint signs and saves a checkpoint of every chain whose head moved
// since its last checkpoint by this key.
func (s *store) checkpoint(ctx context.Context) error {
	owners, err := s.chains.Owners(ctx)
	if err != nil {
		return err
	}
	var errs []error
	for _, o := range owners {
		cs, err := s.chains.Checkpoints(ctx, o)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		from := uint64(1)
		for _, c := range cs {
			if c.KeyID == s.signer.KeyID() && c.Seq >= from {
				from = c.Seq + 1
			}
		}
		var head receipt.Receipt
		for {
			rs, err := s.chains.Receipts(ctx, o, from, 1000)
			if err != nil {
				errs = append(errs, err)
				break
			}
			if len(rs) == 0 {
				break
			}
			head = rs[len(rs)-1]
			from = head.Seq + 1
		}
		if head.Seq == 0 {
			continue
		}
		c, err := receipt.SignCheckpoint(s.signer, head, time.Now())
		if err == nil {
			err = s.chains.SaveCheckpoint(ctx, c)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("owner %q: %w", o, err))
		}
	}
	return errors.Join(errs...)
}

// Close signs a last round of checkpoints, then closes the store.
func (s *store) Close() error {
	var errs []error
	if s.stop != nil {
		s.stop()
		s.done.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		errs = append(errs, s.checkpoint(ctx))
		cancel()
	}
	return errors.Join(append(errs, s.close())...)
}
