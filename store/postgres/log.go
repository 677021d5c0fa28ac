package postgres

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// chain is this process's view of one owner's receipt chain: the appends
// waiting for a transaction, and the head as last written or read here.
type chain struct {
	owner intent.Owner
	g     group[receipt.Receipt, receipt.Receipt]

	// Touched only by the leader of g: a head of the chain as stored
	// (seq 0: none known, or an empty chain).
	seq  uint64
	hash receipt.Hash
}

// appendAttempts is how many times a batch is linked again after the head
// moved under it (another replica appended) before it is written the
// locking way.
const appendAttempts = 8

type appendJob = job[receipt.Receipt, receipt.Receipt]

func (s *Store) chain(o intent.Owner) *chain {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.chains[o]
	if c == nil {
		c = &chain{owner: o}
		s.chains[o] = c
	}
	return c
}

// Append implements receipt.Log. Concurrent appends to one owner's chain in
// this process are written together, each caller returning once the
// transaction that holds its receipt has committed. Once its receipt is
// queued, Append waits for the outcome whatever ctx says (the write is
// bounded by Config.Timeout), so that no caller reports as lost a receipt
// that was stored.
func (s *Store) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	if err := ctx.Err(); err != nil {
		return receipt.Receipt{}, err
	}
	c := s.chain(r.Owner)
	return c.g.run(r, s.cfg.MaxBatch, func(batch []*appendJob) {
		s.write(context.WithoutCancel(ctx), c, batch)
	})
}

// write stores batch after the chain's head, setting each job's out or err.
func (s *Store) write(ctx context.Context, c *chain, batch []*appendJob) {
	err := s.do(ctx, "append receipts", func(ctx context.Context) error {
		return s.appendAfterHead(ctx, c, batch)
	})
	if err != nil {
		c.seq, c.hash = 0, receipt.Hash{}
		fail(batch, err)
	}
}

func fail(batch []*appendJob, err error) {
	for _, b := range batch {
		if b.err == nil {
			b.out, b.err = receipt.Receipt{}, err
		}
	}
}

// rows are the receipts of a batch as they are inserted.
type rows struct {
	seqs   []int64
	hashes [][]byte
	lines  []string
	head   receipt.Receipt // the last one linked
}

// link links the batch after the head (seq, hash), seq 0 meaning an empty
// chain. A receipt that cannot be linked gets its error and is left out.
func link(owner intent.Owner, seq uint64, hash receipt.Hash, batch []*appendJob) (rows, error) {
	var out rows
	out.head = receipt.Receipt{Owner: owner, Seq: seq, Hash: hash}
	var line bytes.Buffer
	for _, b := range batch {
		var prev *receipt.Receipt
		if out.head.Seq > 0 {
			prev = &out.head
		}
		b.out, b.err = receipt.Link(b.in, prev)
		if b.err != nil {
			continue
		}
		if b.out.Seq > math.MaxInt64 {
			return rows{}, fmt.Errorf("%w: seq beyond 2^63-1", receipt.ErrInvalid)
		}
		line.Reset()
		if b.err = receipt.WriteJSONL(&line, []receipt.Receipt{b.out}); b.err != nil {
			b.out = receipt.Receipt{}
			continue
		}
		out.seqs = append(out.seqs, int64(b.out.Seq))
		out.hashes = append(out.hashes, bytes.Clone(b.out.Hash[:]))
		out.lines = append(out.lines, string(bytes.TrimSuffix(line.Bytes(), []byte("\n"))))
		out.head = b.out
	}
	return out, nil
}

// appendAfterHead links the batch after the head this process knows and
// writes it with intentplane_append, one round trip, which moves the head
// only if no one else did; if someone did, it links the batch again after
// the head intentplane_append returned, up to appendAttempts times, then
// writes it the locking way.
func (s *Store) appendAfterHead(ctx context.Context, c *chain, batch []*appendJob) error {
	seq, hash := c.seq, c.hash
	for range appendAttempts {
		rs, err := link(c.owner, seq, hash, batch)
		if err != nil || len(rs.seqs) == 0 {
			return err
		}
		var prev []byte
		if seq > 0 {
			prev = hash[:]
		}
		var done bool
		var headSeq int64
		var headHash []byte
		err = s.pool.QueryRow(ctx, `SELECT o_done, o_seq, o_hash FROM intentplane_append($1, $2, $3, $4, $5, $6)`,
			string(c.owner), int64(seq), prev, rs.seqs, rs.hashes, rs.lines).Scan(&done, &headSeq, &headHash)
		if err != nil {
			return err
		}
		if done {
			c.seq, c.hash = rs.head.Seq, rs.head.Hash
			return nil
		}
		if headSeq < 0 || (headSeq > 0 && len(headHash) != len(hash)) {
			return fmt.Errorf("corrupt head of owner %q", c.owner)
		}
		seq, hash = uint64(headSeq), receipt.Hash{}
		copy(hash[:], headHash)
	}
	return s.appendLocked(ctx, c, batch)
}

// appendLocked writes the batch in a transaction that locks the owner's
// head row, creating it for a new owner.
func (s *Store) appendLocked(ctx context.Context, c *chain, batch []*appendJob) error {
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	var seq int64
	var hash []byte
	const lockHead = `SELECT seq, hash FROM receipt_heads WHERE owner = $1 FOR UPDATE`
	err = tx.QueryRow(ctx, lockHead, string(c.owner)).Scan(&seq, &hash)
	if errors.Is(err, pgx.ErrNoRows) {
		if _, err := tx.Exec(ctx, `INSERT INTO receipt_heads (owner, seq, hash) VALUES ($1, 0, '') ON CONFLICT (owner) DO NOTHING`, string(c.owner)); err != nil {
			return err
		}
		err = tx.QueryRow(ctx, lockHead, string(c.owner)).Scan(&seq, &hash)
	}
	if err != nil {
		return err
	}
	var h receipt.Hash
	if seq < 0 || (seq > 0 && len(hash) != len(h)) {
		return fmt.Errorf("corrupt head of owner %q", c.owner)
	}
	copy(h[:], hash)
	rs, err := link(c.owner, uint64(seq), h, batch)
	if err != nil || len(rs.seqs) == 0 {
		return err
	}
	b := &pgx.Batch{}
	b.Queue(`INSERT INTO receipts (owner, seq, hash, line) SELECT $1, t.seq, t.hash, t.line FROM unnest($2::bigint[], $3::bytea[], $4::text[]) AS t(seq, hash, line)`,
		string(c.owner), rs.seqs, rs.hashes, rs.lines)
	b.Queue(`UPDATE receipt_heads SET seq = $2, hash = $3 WHERE owner = $1`, string(c.owner), int64(rs.head.Seq), rs.head.Hash[:])
	if err := tx.SendBatch(ctx, b).Close(); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return err
	}
	c.seq, c.hash = rs.head.Seq, rs.head.Hash
	return nil
}

// Receipts implements receipt.Log: receipt.ErrNotFound if the owner has no
// receipt at all.
func (s *Store) Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error) {
	if from > math.MaxInt64 {
		return nil, nil
	}
	var lim any
	if limit > 0 {
		lim = limit
	}
	var out []receipt.Receipt
	err := s.do(ctx, "read receipts", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT line FROM receipts WHERE owner = $1 AND seq >= $2 ORDER BY seq LIMIT $3`, string(owner), int64(from), lim)
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		n := 0
		for rows.Next() {
			var line []byte
			if err := rows.Scan(&line); err != nil {
				rows.Close()
				return err
			}
			buf.Write(line)
			buf.WriteByte('\n')
			n++
		}
		if err := rows.Err(); err != nil {
			return err
		}
		if n == 0 {
			var exists bool
			if err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM receipts WHERE owner = $1)`, string(owner)).Scan(&exists); err != nil {
				return err
			}
			if !exists {
				return receipt.ErrNotFound
			}
			out = nil
			return nil
		}
		rs, _, err := receipt.ReadJSONL(&buf)
		if err != nil {
			return fmt.Errorf("%w: stored receipts of owner %q do not read back: %w", receipt.ErrInvalid, owner, err)
		}
		out = rs
		return nil
	})
	return out, err
}

// Owners returns every owner with a receipt chain, sorted, for exports.
func (s *Store) Owners(ctx context.Context) ([]intent.Owner, error) {
	var out []intent.Owner
	err := s.do(ctx, "read owners", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT owner FROM receipt_heads WHERE seq > 0 ORDER BY owner`)
		if err != nil {
			return err
		}
		names, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		out = out[:0]
		for _, n := range names {
			out = append(out, intent.Owner(n))
		}
		return nil
	})
	return out, err
}

// SaveCheckpoint stores a signed checkpoint; saving the same owner, seq and
// key id again keeps the first. It does not check the signature.
func (s *Store) SaveCheckpoint(ctx context.Context, c receipt.Checkpoint) error {
	if c.Seq > math.MaxInt64 {
		return fmt.Errorf("%w: seq beyond 2^63-1", receipt.ErrInvalid)
	}
	var line bytes.Buffer
	if err := receipt.WriteCheckpoints(&line, []receipt.Checkpoint{c}); err != nil {
		return err
	}
	return s.do(ctx, "save checkpoint", func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `INSERT INTO receipt_checkpoints (owner, seq, key_id, line) VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING`,
			string(c.Owner), int64(c.Seq), c.KeyID, string(bytes.TrimSuffix(line.Bytes(), []byte("\n"))))
		return err
	})
}

// Checkpoints returns the owner's stored checkpoints in Seq order (then by
// key id); none if the owner has none.
func (s *Store) Checkpoints(ctx context.Context, owner intent.Owner) ([]receipt.Checkpoint, error) {
	var out []receipt.Checkpoint
	err := s.do(ctx, "read checkpoints", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `SELECT line FROM receipt_checkpoints WHERE owner = $1 ORDER BY seq, key_id`, string(owner))
		if err != nil {
			return err
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		var buf bytes.Buffer
		for _, l := range lines {
			buf.WriteString(l)
			buf.WriteByte('\n')
		}
		_, cs, err := receipt.ReadJSONL(&buf)
		if err != nil {
			return fmt.Errorf("%w: stored checkpoints of owner %q do not read back: %w", receipt.ErrInvalid, owner, err)
		}
		out = cs
		return nil
	})
	return out, err
}
