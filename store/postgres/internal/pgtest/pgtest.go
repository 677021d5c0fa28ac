// Package pgtest forwards to internal/pgtest, where the helper moved so
// that tests outside store/postgres (internal/scenarios) can use it; see
// that package. For tests only.
package pgtest

import (
	"testing"

	"github.com/intentplane/intentplane/internal/pgtest"
)

// EnvURL is pgtest.EnvURL.
const EnvURL = pgtest.EnvURL

// URL is pgtest.URL.
func URL(t testing.TB) string { return pgtest.URL(t) }

// Schema is pgtest.Schema.
func Schema(t testing.TB) (dsn, schema string) { return pgtest.Schema(t) }

// WithSearchPath is pgtest.WithSearchPath.
func WithSearchPath(dsn, schema string) string { return pgtest.WithSearchPath(dsn, schema) }
