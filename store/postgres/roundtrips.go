package postgres

import (
	"context"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
)

// roundTrips counts what the pool sends: each statement (a transaction's
// BEGIN and COMMIT included) and each batch is one round trip.
type roundTrips struct{ n atomic.Uint64 }

var (
	_ pgx.QueryTracer = (*roundTrips)(nil)
	_ pgx.BatchTracer = (*roundTrips)(nil)
)

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	r.n.Add(1)
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// RoundTrips returns how many statements and batches the Store has sent to
// the database since Open, each one round trip (a transaction's BEGIN and
// COMMIT count as statements), for benchmarks and metrics.
func (s *Store) RoundTrips() uint64 { return s.trips.n.Load() }
