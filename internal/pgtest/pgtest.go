// Package pgtest gives each PostgreSQL test a schema of its own in the
// database named by the PG_URL environment variable, so that tests run in
// parallel and repeatedly against one server. Without PG_URL the tests are
// skipped, except with CI=true, where they fail: CI must run them. With
// PG_URL set, a server that cannot be reached fails them: whoever set it
// meant them to run, and a typo must not pass for a green run.
//
// It is for tests only; it imports pgx and the standard library.
package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// EnvURL is the environment variable holding the test database's DSN, e.g.
// postgres://postgres@127.0.0.1:5432/test?sslmode=disable.
const EnvURL = "PG_URL"

// unavailable skips t, or fails it under CI=true.
func unavailable(t testing.TB, format string, args ...any) {
	t.Helper()
	if os.Getenv("CI") == "true" {
		t.Fatalf("CI=true and the PostgreSQL tests cannot run: "+format, args...)
	}
	t.Skipf(format, args...)
}

// URL returns PG_URL, skipping t (failing it under CI=true) if it is not
// set.
func URL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(EnvURL)
	if u == "" {
		unavailable(t, "%s is not set", EnvURL)
	}
	return u
}

// Schema creates a new schema in the database of PG_URL, drops it when t
// ends (unless PG_KEEP=1), and returns PG_URL with its search_path set to
// it, and its name.
func Schema(t testing.TB) (dsn, schema string) {
	t.Helper()
	base := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		t.Fatalf("cannot connect to %s (%s): %v; unset %s to skip the PostgreSQL tests", EnvURL, redact(base), err, EnvURL)
	}
	defer conn.Close(context.Background())
	var b [6]byte
	_, _ = rand.Read(b[:])
	schema = "t_" + name(t.Name()) + "_" + hex.EncodeToString(b[:])
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema: %v", err)
	}
	if os.Getenv("PG_KEEP") != "1" {
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, base)
			if err != nil {
				t.Logf("drop schema %s: %v", schema, err)
				return
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
				t.Logf("drop schema %s: %v", schema, err)
			}
		})
	}
	return WithSearchPath(base, schema), schema
}

// WithSearchPath returns dsn with its search_path set to schema.
func WithSearchPath(dsn, schema string) string {
	if u, err := url.Parse(dsn); err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql") {
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return dsn + " search_path=" + schema
}

// name turns a test name into a short identifier fragment.
func name(s string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(s) {
		if b.Len() >= 30 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// redact returns dsn with its password, if any, replaced by "xxxxx".
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "(not a URL)"
	}
	return u.Redacted()
}
