package postgres_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/store/postgres"
	"github.com/intentplane/intentplane/store/postgres/internal/pgtest"
)

// BenchmarkDecide measures allowed decisions against PostgreSQL with
// durable receipts (synchronous commit, as the server is configured), all
// on one mandate, so on one budget account and one owner's receipt chain:
// the most contended case.
//
//   - replicas=1: one gateway with its own Store, 64 concurrent clients;
//   - replicas=4: four gateways in this process, each with its own Store
//     and connection pool, sharing the database, 64 clients spread over
//     them (separate processes would add no database work, only the client
//     CPU this machine shares with the server);
//   - replicas=1/clients=1: one client at a time, for the latency of a
//     decision without queueing.
//
// ns/op is wall time divided by decisions (the inverse of throughput);
// decisions/s, p50-ms and p99-ms are reported besides.
func BenchmarkDecide(b *testing.B) {
	for _, tc := range []struct {
		name              string
		replicas, clients int
	}{
		{"replicas=1", 1, 64},
		{"replicas=4", 4, 64},
		{"replicas=1/clients=1", 1, 1},
	} {
		var gws []*gateway.Gateway
		var tok string
		var next atomic.Int64
		b.Run(tc.name, func(sb *testing.B) {
			if gws == nil {
				// Set up once for every round of this sub-benchmark, and
				// clean up when the whole benchmark ends.
				dsn, _ := pgtest.Schema(b)
				for range tc.replicas {
					st, err := postgres.Open(context.Background(), dsn, postgres.Config{MaxConns: int32(32 / tc.replicas)})
					if err != nil {
						sb.Fatal(err)
					}
					b.Cleanup(st.Close)
					gw, err := gatewaytest.Gateway(st, &gatewaytest.Recorder{})
					if err != nil {
						sb.Fatal(err)
					}
					gws = append(gws, gw)
				}
				var err error
				if tok, err = gatewaytest.Mandate("m-bench", "bench", 1<<60, time.Now()); err != nil {
					sb.Fatal(err)
				}
				// Warm up: connections, prepared statements, the mandate
				// cache.
				if _, err := gatewaytest.Load(context.Background(), gws, tok, 64, 512, &next); err != nil {
					sb.Fatal(err)
				}
			}
			benchLoad(sb, gws, tok, tc.clients, &next)
		})
	}
}

// benchLoad makes b.N allowed decisions from clients concurrent clients and
// reports throughput and latency.
func benchLoad(b *testing.B, gws []*gateway.Gateway, tok string, clients int, next *atomic.Int64) {
	b.ResetTimer()
	start := time.Now()
	lat, err := gatewaytest.Load(context.Background(), gws, tok, clients, b.N, next)
	elapsed := time.Since(start)
	b.StopTimer()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "decisions/s")
	b.ReportMetric(float64(gatewaytest.Percentile(lat, 50).Microseconds())/1000, "p50-ms")
	b.ReportMetric(float64(gatewaytest.Percentile(lat, 99).Microseconds())/1000, "p99-ms")
}
