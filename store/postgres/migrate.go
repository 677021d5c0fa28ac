package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The schema is versioned by a small scheme rather than a migration
// library: migrations/NNNN_name.sql files, applied in order, each in the
// same transaction as the row recording it in schema_migrations, all under
// a transaction-scoped advisory lock so that replicas starting together
// apply each file once. Migrations are only ever added, never edited.

//go:embed migrations/*.sql
var migrationFiles embed.FS

// ErrSchemaVersion is returned by Open when the database was migrated by a
// newer version of this package than the running one.
var ErrSchemaVersion = errors.New("postgres: database schema is newer than this gateway")

type migration struct {
	version int
	name    string
	sql     string
}

func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("postgres: migration file %s is not named NNNN_name.sql", base)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: strings.TrimSuffix(base, ".sql"), sql: string(b)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("postgres: migration %s: versions must run 1, 2, 3... without gaps", m.name)
		}
	}
	return ms, nil
}

// SchemaVersion is the schema version this package migrates to.
func SchemaVersion() int {
	ms, err := migrations()
	if err != nil {
		return 0
	}
	return len(ms)
}

// migrate applies the migrations the database lacks, in one transaction.
func migrate(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	return pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// The lock is scoped to the schema the tables go to, so that
		// separate schemas (tests, tenants) migrate independently.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('intentplane.migrate/' || coalesce(current_schema(), '')))`); err != nil {
			return err
		}
		var schema *string
		if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
			return err
		}
		if schema == nil {
			return errors.New("postgres: no schema to create tables in (does the search_path name an existing schema?)")
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version    int         PRIMARY KEY,
			name       text        NOT NULL,
			applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		var current int
		if err := tx.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
			return err
		}
		if current > len(ms) {
			return fmt.Errorf("%w: the database is at version %d, this gateway knows %d", ErrSchemaVersion, current, len(ms))
		}
		for _, m := range ms[current:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("postgres: migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
		}
		return nil
	})
}

// ErrNotMigrated is returned by Open with Config.NoMigrate when the
// connection's schema holds no intentplane store, or one older than this
// gateway's migrations.
var ErrNotMigrated = errors.New("postgres: no intentplane store here")

// checkSchema reads, without writing, the migration version of the
// connection's current schema.
func checkSchema(ctx context.Context, pool *pgxpool.Pool) error {
	ms, err := migrations()
	if err != nil {
		return err
	}
	var table *string
	if err := pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations')::text`).Scan(&table); err != nil {
		return err
	}
	if table == nil {
		return fmt.Errorf("%w: the database (its current schema) has no schema_migrations table; check the URL, or start a gateway on it first", ErrNotMigrated)
	}
	var current int
	if err := pool.QueryRow(ctx, `SELECT coalesce(max(version), 0) FROM schema_migrations`).Scan(&current); err != nil {
		return err
	}
	switch {
	case current > len(ms):
		return fmt.Errorf("%w: the database is at version %d, this tool knows %d", ErrSchemaVersion, current, len(ms))
	case current < len(ms):
		return fmt.Errorf("%w: the store is at version %d, this tool needs %d; start a gateway of this version on it first", ErrNotMigrated, current, len(ms))
	}
	return nil
}
