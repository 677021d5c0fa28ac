package postgres_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/postgres/internal/pgtest"
	"github.com/intentplane/intentplane/store/storetest"
)

// open returns a Store on a fresh schema, closed when t ends.
func open(t testing.TB, cfg postgres.Config) (*postgres.Store, string) {
	t.Helper()
	dsn, _ := pgtest.Schema(t)
	s, err := postgres.Open(context.Background(), dsn, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s, dsn
}

func TestConformance(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) state.Store {
		s, _ := open(t, postgres.Config{})
		return s
	})
}

// TestMigrateTwice: a second Open (another replica, a restart) finds the
// schema current and changes nothing.
func TestMigrateTwice(t *testing.T) {
	t.Parallel()
	s, dsn := open(t, postgres.Config{})
	ctx := context.Background()
	if _, err := s.Append(ctx, receipt.Receipt{Owner: "emma", Time: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 4)
	for range 4 {
		go func() {
			s2, err := postgres.Open(ctx, dsn, postgres.Config{})
			if err == nil {
				s2.Close()
			}
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatalf("concurrent Open of a migrated schema: %v", err)
		}
	}
	rs, err := s.Receipts(ctx, "emma", 1, 0)
	if err != nil || len(rs) != 1 {
		t.Fatalf("after reopening: %d receipts, %v", len(rs), err)
	}
	if v := postgres.SchemaVersion(); v < 1 {
		t.Fatalf("SchemaVersion() = %d", v)
	}
}

// TestDeadDatabase: a database that cannot be reached is an error wrapping
// ErrUnavailable, at Open and on every call once the pool is gone; the
// gateway turns it into a refusal with code gateway.unavailable.
func TestDeadDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	start := time.Now()
	_, err := postgres.Open(ctx, "postgres://postgres:secret-pw@127.0.0.1:1/test?sslmode=disable&connect_timeout=2", postgres.Config{Timeout: 2 * time.Second})
	if !errors.Is(err, postgres.ErrUnavailable) {
		t.Fatalf("Open on a dead port = %v, want ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), "secret-pw") {
		t.Fatalf("error leaks the password: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Open on a dead port took %s", d)
	}

	// Migrated first with the default timeout (a loaded machine may need
	// more than a second), then opened with calls bounded by a second.
	_, dsn := open(t, postgres.Config{})
	s, err := postgres.Open(ctx, dsn, postgres.Config{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	gw, err := gatewaytest.Gateway(s, &gatewaytest.Recorder{})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := gatewaytest.Mandate("m-dead", "emma", 100_00, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: gatewaytest.Send("GB29", "1.00", "before")})
	if err != nil || d.Verdict != intent.Allow {
		t.Fatalf("before the database is lost: %v %v %+v", d.Verdict, err, d.Refusal)
	}
	s.Close()
	d, err = gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: gatewaytest.Send("GB29", "1.00", "after")})
	if d.Verdict != intent.Deny || d.Refusal == nil || d.Refusal.Code != intent.CodeUnavailable || d.Executed {
		t.Fatalf("with the database lost: verdict %v refusal %+v executed %v, want deny %s", d.Verdict, d.Refusal, d.Executed, intent.CodeUnavailable)
	}
	if !errors.Is(err, postgres.ErrUnavailable) {
		t.Fatalf("Decide error = %v, want the receipt's ErrUnavailable", err)
	}
	if err := s.Consume(ctx, "k", time.Now()); !errors.Is(err, postgres.ErrUnavailable) {
		t.Fatalf("Consume on a closed store = %v, want ErrUnavailable", err)
	}
}

// TestTimeout: a call that cannot finish within Config.Timeout (here: the
// account row is locked by another transaction) fails with an error
// wrapping ErrUnavailable and context.DeadlineExceeded, and leaves nothing
// behind.
func TestTimeout(t *testing.T) {
	t.Parallel()
	// Long enough for the migration and the reservation on a loaded
	// machine; the row lock below makes Commit wait all of it.
	s, dsn := open(t, postgres.Config{Timeout: 2 * time.Second})
	ctx := context.Background()
	eur := intent.Money{Currency: "EUR", Amount: 100}
	if err := s.Reserve(ctx, "m", eur, "a", eur); err != nil {
		t.Fatal(err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `SELECT * FROM budget_accounts WHERE account = 'm' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	err = s.Commit(ctx, "a")
	if !errors.Is(err, postgres.ErrUnavailable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Commit behind a row lock = %v, want ErrUnavailable and DeadlineExceeded", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Usage(ctx, "m"); err != nil || u.Reserved != 100 || u.Committed != 0 {
		t.Fatalf("after the timed-out Commit: %+v, %v; want reserved 100 (nothing half done)", u, err)
	}
	if err := s.Commit(ctx, "a"); err != nil {
		t.Fatalf("Commit once the lock is gone: %v", err)
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if err := s.Consume(cctx, "k", time.Now()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Consume with a cancelled context = %v", err)
	}
}

// FuzzKeys: any key round-trips, NUL and non-UTF-8 bytes included (seeds
// in testdata/fuzz/FuzzKeys).
func FuzzKeys(f *testing.F) {
	s, _ := open(f, postgres.Config{})
	storetest.Fuzz(f, s)
}

// TestNoMigrate: a tool that opens with NoMigrate writes nothing to a
// database without a store (it is told so) and opens one a gateway made.
func TestNoMigrate(t *testing.T) {
	t.Parallel()
	dsn, schema := pgtest.Schema(t)
	ctx := context.Background()
	if _, err := postgres.Open(ctx, dsn, postgres.Config{NoMigrate: true}); !errors.Is(err, postgres.ErrNotMigrated) {
		t.Fatalf("NoMigrate on an empty schema: %v, want ErrNotMigrated", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM information_schema.tables WHERE table_schema = $1`, schema).Scan(&n); err != nil || n != 0 {
		t.Fatalf("tables in %s after a NoMigrate open: %d, %v; want none", schema, n, err)
	}
	s, err := postgres.Open(ctx, dsn, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	r, err := postgres.Open(ctx, dsn, postgres.Config{NoMigrate: true})
	if err != nil {
		t.Fatalf("NoMigrate on a store a gateway made: %v", err)
	}
	r.Close()
}

// TestBudgetsPerCurrency: budgets in two currencies of one mandate are
// exact under concurrent payments on PostgreSQL (gatewaytest.PerCurrency).
func TestBudgetsPerCurrency(t *testing.T) {
	t.Parallel()
	s, _ := open(t, postgres.Config{})
	if err := gatewaytest.PerCurrency(context.Background(), s, 8); err != nil {
		t.Fatal(err)
	}
}

func TestAuditConformance(t *testing.T) {
	t.Parallel()
	storetest.RunAudit(t, func(t *testing.T) storetest.AuditStore {
		s, _ := open(t, postgres.Config{})
		return s
	})
}
