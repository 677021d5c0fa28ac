// Package scenarios runs every pack's end-to-end scenarios through
// gateway.Decide on every store kind (mem, embedded, PostgreSQL), so that
// what works on the in-memory demo is proven to work the same in the
// configurations people deploy. It holds tests only: see scenarios_test.go
// (the stores and the shared harness), banking_test.go, healthcare_test.go
// and ap_test.go (the scenarios), faults_test.go (a store failing
// mid-stream).
//
// The PostgreSQL cases use a schema of their own in the database named by
// PG_URL (internal/pgtest): without it they are skipped, except under
// CI=true, where they fail.
package scenarios
