package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/postgres"
)

// receiptStore is what the receipts commands need of a store: its chains,
// their checkpoints, and a place to save new checkpoints.
type receiptStore interface {
	Owners(ctx context.Context) ([]intent.Owner, error)
	Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error)
	Checkpoints(ctx context.Context, owner intent.Owner) ([]receipt.Checkpoint, error)
	SaveCheckpoint(ctx context.Context, c receipt.Checkpoint) error
	Close() error
}

var (
	_ receiptStore = (*embedded.Store)(nil)
	_ receiptStore = pgStore{}
)

// pgStore gives postgres.Store the Close of receiptStore.
type pgStore struct{ *postgres.Store }

func (s pgStore) Close() error { s.Store.Close(); return nil }

// openReceiptStore opens the store spec names: a postgres:// or
// postgresql:// URL, or the path of an embedded store file (with or without
// an embedded: prefix). The store must exist: an embedded file is not
// created and a PostgreSQL schema is not migrated (postgres.ErrNotMigrated).
// An embedded file another process holds is refused with busy, what to do
// about it, appended to the error.
func openReceiptStore(ctx context.Context, spec, busy string) (receiptStore, error) {
	if strings.HasPrefix(spec, "postgres://") || strings.HasPrefix(spec, "postgresql://") {
		s, err := postgres.Open(ctx, spec, postgres.Config{MaxConns: 2, Timeout: time.Minute, NoMigrate: true})
		if err != nil {
			return nil, err
		}
		return pgStore{s}, nil
	}
	path := strings.TrimPrefix(spec, "embedded:")
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	s, err := embedded.Open(path, embedded.Options{})
	if errors.Is(err, embedded.ErrLocked) {
		return nil, fmt.Errorf("%w (%s)", err, busy)
	}
	return s, err
}

// What to do about an embedded store file a gateway holds, by command.
const (
	busyRead      = "stop the gateway that uses it, or read a backup copy"
	busyReconcile = "stop the gateway that uses it: intentplane-mcp reconciles its store itself at start; reconciling a copy would settle nothing"
)

// exportPage is how many receipts are read at a time.
const exportPage = 10000

// exportChains writes every owner's chain to w, receipts in seq order and
// then the owner's checkpoints. With a signer, it first signs a checkpoint
// of each head, saves it in the store and writes it too.
func exportChains(ctx context.Context, src receiptStore, w io.Writer, signer receipt.Signer) error {
	owners, err := src.Owners(ctx)
	if err != nil {
		return err
	}
	for _, o := range owners {
		var head receipt.Receipt
		for from := uint64(1); ; {
			rs, err := src.Receipts(ctx, o, from, exportPage)
			if err != nil {
				return fmt.Errorf("owner %q: %w", o, err)
			}
			if err := receipt.WriteJSONL(w, rs); err != nil {
				return err
			}
			if len(rs) == 0 {
				break
			}
			head = rs[len(rs)-1]
			if len(rs) < exportPage {
				break
			}
			from = head.Seq + 1
		}
		cs, err := src.Checkpoints(ctx, o)
		if err != nil {
			return fmt.Errorf("owner %q: %w", o, err)
		}
		if signer != nil && head.Seq > 0 {
			c, err := receipt.SignCheckpoint(signer, head, time.Now())
			if err != nil {
				return err
			}
			if err := src.SaveCheckpoint(ctx, c); err != nil {
				return err
			}
			cs = append(cs, c)
		}
		if err := receipt.WriteCheckpoints(w, cs); err != nil {
			return err
		}
	}
	return nil
}

// countingWriter counts the lines written through it.
type countingWriter struct {
	w     io.Writer
	lines int
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.lines += bytes.Count(p[:n], []byte("\n"))
	return n, err
}

// redactDSN hides the password of a connection URL for messages.
func redactDSN(spec string) string {
	if u, err := url.Parse(spec); err == nil && u.User != nil {
		if _, ok := u.User.Password(); ok {
			u.User = url.UserPassword(u.User.Username(), "xxxxx")
		}
		return u.String()
	}
	return spec
}
