package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/postgres/internal/pgtest"
	"github.com/intentplane/intentplane/store/storetest"
)

// BenchmarkAuditPage: pages of a log of storetest.BenchReceipts receipts
// (1,000,000 by default) over ten owners (storetest.BenchAudit), loaded
// with COPY into a fresh schema (the generated columns and the
// receipt_values trigger run as for any insert) and analyzed. Before
// measuring, it fails unless the plan of each page is an index scan in
// order (checkPlan) at that size, first and deep (behind as many
// receipts as a quarter of one owner holds).
func BenchmarkAuditPage(b *testing.B) {
	ctx := context.Background()
	dsn, _ := pgtest.Schema(b)
	s, err := postgres.Open(ctx, dsn, postgres.Config{Timeout: time.Minute})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(s.Close)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	n := storetest.BenchReceipts(b) / 10
	start := time.Now()
	if err := load(ctx, conn, storetest.BenchOwners(), n); err != nil {
		b.Fatal(err)
	}
	b.Logf("loaded %d receipts with COPY in %v", 10*n, time.Since(start).Round(time.Millisecond))
	for _, tc := range auditQueries() {
		deep, err := deepCursor(ctx, s, tc.q, n/4)
		if err != nil {
			b.Fatal(err)
		}
		for _, q := range []state.ReceiptQuery{tc.q, deep} {
			sql, args, err := postgres.PageQuery(q)
			if err != nil {
				b.Fatal(err)
			}
			plan, err := planOf(ctx, conn, sql, args...)
			if err != nil {
				b.Fatal(err)
			}
			if err := checkPlan(plan); err != nil {
				b.Fatalf("%s: %v", tc.name, err)
			}
		}
	}
	storetest.BenchAudit(b, s, n)
}
