package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

var (
	_ state.Store         = (*Store)(nil)
	_ state.BatchReserver = (*Store)(nil)
)

// ErrUnavailable is wrapped by every error that is not an answer of the
// store (not a budget sentinel, state.ErrReplayed or receipt.ErrNotFound):
// the database could not be reached, timed out, or failed the call. The
// error's text names the call and the database's reason; the gateway turns
// it into a refusal with code gateway.unavailable.
var ErrUnavailable = errors.New("postgres: database unavailable")

// Config configures a Store. The zero value means the defaults stated on
// each field.
type Config struct {
	// Timeout bounds each call of the Store, its retries included; zero
	// means 5s.
	Timeout time.Duration
	// Retries is how many times a call is retried after a serialization
	// failure, a deadlock, or a connection error raised before the call
	// reached the database; zero means 3, negative means never.
	Retries int
	// MaxConns is the size of the connection pool; zero means the DSN's
	// pool_max_conns if it sets one, else 16.
	MaxConns int32
	// MaxBatch bounds how many receipts of one owner are written in one
	// transaction; zero means 128.
	MaxBatch int
	// Logger receives a line per retried call; nil means discard.
	Logger *slog.Logger
	// Now is the gateway's clock, the one the expiries given to the Store
	// (entries, records, consumed keys) were computed with, so that they
	// are compared with it, as the other stores do, and not with the
	// database server's; nil means time.Now. Record holds, whose length is
	// a duration, start and end on the database server's clock, and a
	// reservation is stamped with it; what the Store tells of them (a
	// hold's end, a reservation's age) is given on Now's clock.
	Now func() time.Time
	// NoMigrate opens a store a gateway has already created, without
	// creating or upgrading anything: Open fails with ErrNotMigrated when
	// the connection's schema holds no intentplane store or an older one.
	// Tools that only read or settle (receipts export and verify,
	// reconcile) set it, so that a mistyped database is reported instead
	// of being given empty tables.
	NoMigrate bool
}

// Store is the PostgreSQL state.Store. The zero value is not usable; call
// Open. It is safe for concurrent use, and several Stores (in several
// processes) may share one database.
type Store struct {
	pool  *pgxpool.Pool
	cfg   Config
	log   *slog.Logger
	trips *roundTrips

	mu         sync.Mutex
	chains     map[intent.Owner]*chain
	accounts   map[string]*account
	reservedIn map[string]string // account of each open reservation made here
	consumes   group[consumeReq, struct{}]
	settles    group[[]settleOp, struct{}]
	holds      group[holdReq, struct{}]
	unholds    group[holdReq, struct{}]
}

// Open connects to the database named by dsn (a postgres:// URL or a
// key=value string, as pgx accepts them), creates or upgrades the schema in
// the connection's current schema, and returns a Store. It returns an error
// wrapping ErrUnavailable if the database cannot be reached within
// cfg.Timeout, ErrSchemaVersion if a newer gateway migrated it,
// ErrNotMigrated with cfg.NoMigrate and no current store, and an error
// for a DSN that does not parse.
func Open(ctx context.Context, dsn string, cfg Config) (*Store, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 5 * time.Second
	}
	if cfg.Retries == 0 {
		cfg.Retries = 3
	}
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = 128
	}
	pc, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: bad connection string: %w", errors.New(redact(err)))
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	} else if !strings.Contains(dsn, "pool_max_conns") {
		pc.MaxConns = 16
	}
	// When a call's context ends, ask the server to cancel the statement
	// (it is then rolled back) instead of only dropping the socket, which
	// would leave the statement to finish, and commit, behind the caller's
	// back. The socket is closed if the server has not answered 2s later.
	pc.ConnConfig.BuildContextWatcherHandler = func(c *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: c, DeadlineDelay: 2 * time.Second}
	}
	trips := &roundTrips{}
	pc.ConnConfig.Tracer = trips
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("%w: connect: %s", ErrUnavailable, redact(err))
	}
	s := &Store{pool: pool, cfg: cfg, log: cfg.Logger, trips: trips, chains: map[intent.Owner]*chain{},
		accounts: map[string]*account{}, reservedIn: map[string]string{}}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if cfg.NoMigrate {
		err = s.do(ctx, "check schema", func(ctx context.Context) error { return checkSchema(ctx, pool) })
	} else {
		err = s.do(ctx, "migrate", func(ctx context.Context) error { return migrate(ctx, pool) })
	}
	if err != nil {
		pool.Close()
		return nil, err
	}
	return s, nil
}

// Close closes the connection pool; calls made after it fail with
// ErrUnavailable.
func (s *Store) Close() { s.pool.Close() }

// answer reports whether err is one of the store's answers rather than a
// failure.
func answer(err error) bool {
	return errors.Is(err, state.ErrExceeded) || errors.Is(err, state.ErrCurrency) ||
		errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrDuplicate) ||
		errors.Is(err, state.ErrLimitMismatch) || errors.Is(err, ErrNotMigrated) ||
		errors.Is(err, state.ErrReplayed) || errors.Is(err, state.ErrHeld) ||
		errors.Is(err, state.ErrKeyTooLong) || errors.Is(err, receipt.ErrNotFound) ||
		errors.Is(err, receipt.ErrInvalid) || errors.Is(err, errBadInput) || errors.Is(err, ErrSchemaVersion)
}

// errBadInput marks arguments refused before the database is asked.
var errBadInput = errors.New("postgres: invalid argument")

// retryable reports whether err may be retried: a serialization failure, a
// deadlock, or a connection error before anything was sent.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return pgconn.SafeToRetry(err)
}

// do runs fn within the call timeout, retrying retryable failures with a
// short backoff, and translates what is left into an error wrapping
// ErrUnavailable that holds no pgx value.
func (s *Store) do(ctx context.Context, op string, fn func(ctx context.Context) error) error {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	backoff := time.Millisecond
	for attempt := 0; ; attempt++ {
		err := fn(ctx)
		if err == nil || answer(err) {
			return err
		}
		if attempt >= s.cfg.Retries || !retryable(err) || ctx.Err() != nil {
			return translate(op, err, ctx)
		}
		s.log.Warn("postgres: retrying", "op", op, "attempt", attempt+1, "err", redact(err))
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return translate(op, err, ctx)
		}
		backoff *= 4
	}
}

// translate turns a driver error into one wrapping ErrUnavailable (and the
// context's error, if it ended).
func translate(op string, err error, ctx context.Context) error {
	if cerr := ctx.Err(); cerr != nil {
		return fmt.Errorf("%w: %s: %w", ErrUnavailable, op, cerr)
	}
	return fmt.Errorf("%w: %s: %s", ErrUnavailable, op, redact(err))
}

// redact returns err's text, without the password a connection error may
// quote, and with the SQLSTATE of a server error.
func redact(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return fmt.Sprintf("%s (SQLSTATE %s)", pe.Message, pe.Code)
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return "cannot connect to the database: " + errors.Unwrap(ce).Error()
	}
	var pce *pgconn.ParseConfigError
	if errors.As(err, &pce) {
		return "cannot parse the connection string"
	}
	return err.Error()
}

// account is this process's queue of ledger operations on one account.
type account struct {
	g     group[ledgerOp, state.Usage]
	users int // callers holding it; it leaves Store.accounts at zero
}

// ledgerOp is one operation of an intentplane_ledger batch.
type ledgerOp struct {
	op       string // "reserve", "commit" or "release"
	id       string
	currency string
	limit    int64
	amount   int64
}

// ledger runs op on account's row, batched with the concurrent operations
// on the same account in this process, and returns the account's usage
// after the batch.
func (s *Store) ledger(ctx context.Context, acct string, op ledgerOp) (state.Usage, error) {
	s.mu.Lock()
	a := s.accounts[acct]
	if a == nil {
		a = &account{}
		s.accounts[acct] = a
	}
	a.users++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		if a.users--; a.users == 0 {
			delete(s.accounts, acct)
		}
		s.mu.Unlock()
	}()
	return a.g.run(op, s.cfg.MaxBatch, func(batch []*job[ledgerOp, state.Usage]) {
		s.writeLedger(context.WithoutCancel(ctx), acct, batch)
	})
}

var ledgerErrs = []error{nil, state.ErrExceeded, state.ErrCurrency, state.ErrDuplicate, state.ErrNotFound, state.ErrLimitMismatch}

func (s *Store) writeLedger(ctx context.Context, acct string, batch []*job[ledgerOp, state.Usage]) {
	n := len(batch)
	ops, currencies, ids := make([]string, n), make([]string, n), make([][]byte, n)
	limits, amounts := make([]int64, n), make([]int64, n)
	for i, b := range batch {
		ops[i], ids[i], currencies[i], limits[i], amounts[i] = b.in.op, []byte(b.in.id), b.in.currency, b.in.limit, b.in.amount
	}
	err := s.do(ctx, "budget "+batch[0].in.op, func(ctx context.Context) error {
		var codes []int32
		var committed, reserved *int64 // NULL: no account (no reservation opened it)
		err := s.pool.QueryRow(ctx, `SELECT o_codes, o_committed, o_reserved FROM intentplane_ledger_usage($1, $2, $3, $4, $5, $6)`,
			[]byte(acct), ops, ids, currencies, limits, amounts).Scan(&codes, &committed, &reserved)
		if err != nil {
			return err
		}
		var u state.Usage
		if committed != nil && reserved != nil {
			u = state.Usage{Committed: intent.Amount(*committed), Reserved: intent.Amount(*reserved)}
		}
		if len(codes) != n {
			return fmt.Errorf("intentplane_ledger returned %d codes for %d operations", len(codes), n)
		}
		for i, c := range codes {
			if c < 0 || int(c) >= len(ledgerErrs) {
				return fmt.Errorf("intentplane_ledger returned code %d", c)
			}
			batch[i].out, batch[i].err = u, ledgerErrs[c]
		}
		return nil
	})
	if err != nil {
		for _, b := range batch {
			b.err = err
		}
	}
}

// Reserve implements state.Ledger; it also returns an error for a negative
// amount.
func (s *Store) Reserve(ctx context.Context, acct string, limit intent.Money, id string, amount intent.Money) error {
	_, err := s.reserveUsage(ctx, acct, limit, id, amount)
	return err
}

// checkReserve returns the error Reserve answers without asking the
// database, or nil.
func checkReserve(acct string, limit intent.Money, id string, amount intent.Money) error {
	if err := state.CheckKeys(acct, id); err != nil {
		return err
	}
	if amount.Amount < 0 {
		return fmt.Errorf("%w: negative reservation %d", errBadInput, amount.Amount)
	}
	if amount.Currency != limit.Currency {
		return state.ErrCurrency
	}
	return nil
}

// reserveUsage is Reserve, batched with this process's concurrent
// operations on the account, returning the account's usage after its
// batch (one statement, intentplane_ledger_usage).
func (s *Store) reserveUsage(ctx context.Context, acct string, limit intent.Money, id string, amount intent.Money) (state.Usage, error) {
	if err := ctx.Err(); err != nil {
		return state.Usage{}, err
	}
	if err := checkReserve(acct, limit, id, amount); err != nil {
		return state.Usage{}, err
	}
	u, err := s.ledger(ctx, acct, ledgerOp{op: "reserve", id: id, currency: limit.Currency, limit: int64(limit.Amount), amount: int64(amount.Amount)})
	if err != nil {
		return state.Usage{}, err
	}
	s.mu.Lock()
	s.reservedIn[id] = acct
	s.mu.Unlock()
	return u, nil
}

// closeReservation deletes reservation id and moves its amount out of the
// account's reserved amount, into the committed one if commit is true, in
// one statement: for reservations this process did not make.
const closeReservation = `
WITH r AS (DELETE FROM budget_reservations WHERE id = $1 RETURNING account, amount)
UPDATE budget_accounts a
   SET reserved = a.reserved - r.amount,
       committed = a.committed + CASE WHEN $2::bool THEN r.amount ELSE 0 END
  FROM r WHERE a.account = r.account`

// Commit implements state.Ledger.
func (s *Store) Commit(ctx context.Context, id string) error {
	return s.closeReservation(ctx, "commit", id)
}

// Release implements state.Ledger.
func (s *Store) Release(ctx context.Context, id string) error {
	return s.closeReservation(ctx, "release", id)
}

func (s *Store) closeReservation(ctx context.Context, op, id string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := state.CheckKeys(id); err != nil {
		return err
	}
	s.mu.Lock()
	acct, known := s.reservedIn[id]
	s.mu.Unlock()
	if known {
		_, err := s.ledger(ctx, acct, ledgerOp{op: op, id: id})
		if err == nil || errors.Is(err, state.ErrNotFound) {
			s.mu.Lock()
			delete(s.reservedIn, id)
			s.mu.Unlock()
		}
		return err
	}
	return s.do(ctx, "budget "+op, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, closeReservation, []byte(id), op == "commit")
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return state.ErrNotFound
		}
		return nil
	})
}

// Usage implements state.Ledger.
func (s *Store) Usage(ctx context.Context, account string) (state.Usage, error) {
	var u state.Usage
	err := s.do(ctx, "usage", func(ctx context.Context) error {
		var committed, reserved int64
		err := s.pool.QueryRow(ctx, `SELECT committed, reserved FROM budget_accounts WHERE account = $1`, []byte(account)).Scan(&committed, &reserved)
		if errors.Is(err, pgx.ErrNoRows) {
			u = state.Usage{}
			return nil
		}
		u = state.Usage{Committed: intent.Amount(committed), Reserved: intent.Amount(reserved)}
		return err
	})
	return u, err
}

// consumeReq is one Consume waiting for its batch.
type consumeReq struct {
	key     string
	expires time.Time
}

// Consume implements state.Nonces: exactly one of any number of concurrent
// calls with one key, in any number of processes, inserts its row.
// Concurrent calls in this process are inserted together, in one
// statement.
func (s *Store) Consume(ctx context.Context, key string, expires time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := state.CheckKeys(key); err != nil {
		return err
	}
	_, err := s.consumes.run(consumeReq{key: key, expires: expires.UTC()}, s.cfg.MaxBatch, func(batch []*job[consumeReq, struct{}]) {
		s.writeConsumes(context.WithoutCancel(ctx), batch)
	})
	return err
}

func (s *Store) writeConsumes(ctx context.Context, batch []*job[consumeReq, struct{}]) {
	// One row per key, in key order, so that two replicas inserting the
	// same keys wait for each other instead of deadlocking; a key asked
	// twice in the batch is consumed by its first asker.
	first := map[string]*job[consumeReq, struct{}]{}
	var keys []string
	for _, b := range batch {
		if first[b.in.key] == nil {
			first[b.in.key] = b
			keys = append(keys, b.in.key)
		}
	}
	slices.Sort(keys)
	keyBytes, expires := make([][]byte, len(keys)), make([]time.Time, len(keys))
	for i, k := range keys {
		keyBytes[i], expires[i] = []byte(k), first[k].in.expires
	}
	inserted := map[string]bool{}
	err := s.do(ctx, "consume", func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, `INSERT INTO consumed_keys (key, expires)
			SELECT * FROM unnest($1::bytea[], $2::timestamptz[])
			ON CONFLICT (key) DO NOTHING RETURNING key`, keyBytes, expires)
		if err != nil {
			return err
		}
		got, err := pgx.CollectRows(rows, pgx.RowTo[[]byte])
		if err != nil {
			return err
		}
		clear(inserted)
		for _, k := range got {
			inserted[string(k)] = true
		}
		return nil
	})
	for _, b := range batch {
		switch {
		case err != nil:
			b.err = err
		case first[b.in.key] == b && inserted[b.in.key]:
			b.err = nil
		default:
			b.err = state.ErrReplayed
		}
	}
}

// Unconsume implements state.Nonces.
func (s *Store) Unconsume(ctx context.Context, key string) error {
	if err := state.CheckKeys(key); err != nil {
		return err
	}
	return s.do(ctx, "unconsume", func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `DELETE FROM consumed_keys WHERE key = $1`, []byte(key))
		return err
	})
}

// Sweep forgets the consumed keys that expired before now and returns how
// many it forgot. It scans the whole table: run it from time to time (an
// operator's job or a timer in the wiring), not per decision.
func (s *Store) Sweep(ctx context.Context, now time.Time) (int64, error) {
	var n int64
	err := s.do(ctx, "sweep", func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `DELETE FROM consumed_keys WHERE expires < $1`, now.UTC())
		n = tag.RowsAffected()
		return err
	})
	return n, err
}
