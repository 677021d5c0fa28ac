// Package postgres is the state.Store for several gateway replicas that
// share one PostgreSQL database, through jackc/pgx/v5.
//
// Budget reservations are atomic across replicas: a reservation is one call
// of a SQL function that checks and raises the account's reserved amount in
// a single conditional UPDATE of the account row, so the row lock orders
// concurrent reservations and the sum of committed and reserved amounts
// never exceeds the limit. Single-use keys (operation nonces, approval ids)
// are consumed by INSERT ... ON CONFLICT DO NOTHING: exactly one replica
// inserts the row. Each owner has one receipt chain whose head (seq and
// hash) lives in a row of receipt_heads: an append either updates that row
// from the head it linked against (a compare-and-set in the same statement
// as the insert) or, when another replica moved the head, locks it with
// SELECT ... FOR UPDATE and links against what it reads. The primary key
// (owner, seq) of the receipts makes a fork impossible even so.
//
// Within one process, concurrent appends to one chain are grouped: while one
// transaction commits, the receipts that arrive queue up and are linked and
// committed together in the next one. Each caller still returns only once
// its receipt is durable (synchronous commit).
//
// Every call is bounded by Config.Timeout and retried (at most
// Config.Retries times) after a serialization failure, a deadlock, or a
// connection error that happened before anything was sent. Any other
// failure returns an error wrapping ErrUnavailable whose text names the
// call; pgx types never cross the package boundary. A lost database thus
// turns into errors, which the gateway turns into refusals
// (gateway.unavailable), never into a partial write: each call is one
// transaction.
//
// The schema is created and upgraded by Open, from SQL files embedded in the
// package, versioned in the table schema_migrations (see migrate.go); the
// tables live in the connection's current schema (set search_path in the
// connection string to place them elsewhere).
//
// It imports core/ and pgx only; it must never import a pack, a connector or
// a front door.
package postgres
