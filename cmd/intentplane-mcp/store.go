package main

import (
	"context"
	"log/slog"
	"os"
	"strings"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/receipt"
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

	cp   *checkpoint.Store // nil: no checkpoints
	stop context.CancelFunc
	done chan struct{}
}

// openStore opens the store [store] names. The PostgreSQL connection
// string is read from the environment variable named by dsn_env, never
// from the file.
func openStore(ctx context.Context, c *config, log *slog.Logger) (*store, error) {
	sc := c.Store
	at := []string{"store"}
	s := &store{close: func() error { return nil }}
	var sink checkpoint.Sink
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
		s.Store, sink, s.close = st, st, st.Close
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
		s.Store, sink, s.close = st, st, func() error { st.Close(); return nil }
	default:
		return nil, c.errAt(append(at, "kind"), "unknown store %q (mem, embedded, postgres)", sc.Kind)
	}
	if sc.CheckpointKey != "" {
		if sc.CheckpointEvery < 0 {
			_ = s.close()
			return nil, c.errAt(append(at, "checkpoint_every"), "checkpoint_every is a number of receipts, at least 1")
		}
		priv, err := readPrivateKey(c.file(sc.CheckpointKey))
		if err != nil {
			_ = s.close()
			return nil, c.errAt(append(at, "checkpoint_key"), "%v", err)
		}
		id := sc.CheckpointKeyID
		if id == "" {
			id = "intentplane-mcp"
		}
		s.cp = checkpoint.Wrap(s.Store, sink, receipt.NewEd25519Signer(id, priv), checkpoint.Config{
			Every: sc.CheckpointEvery, Interval: sc.CheckpointInterval.Duration, Logger: log,
		})
		s.Store = s.cp
	} else if sc.CheckpointKeyID != "" || sc.CheckpointEvery != 0 || sc.CheckpointInterval.Duration != 0 {
		_ = s.close()
		return nil, c.errAt(at, "checkpoint_key_id, checkpoint_every and checkpoint_interval need checkpoint_key")
	}
	return s, nil
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
