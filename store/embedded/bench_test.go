package embedded_test

import (
	"context"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/store/checkpoint"
	"github.com/intentplane/intentplane/store/embedded"
)

var _ checkpoint.Sink = (*embedded.Store)(nil)

// BenchmarkDecide measures allowed decisions on the embedded store, each
// write fsync'd before Decide returns, all on one mandate (one budget
// account, one receipt chain): through one gateway from 64 concurrent
// clients (replicas=1); through four gateways in this process sharing the
// one store (replicas=4: a bbolt file is opened by one process, so this is
// the only way to run four); and from a single client (latency without
// queueing).
//
// ns/op is wall time divided by decisions; decisions/s, p50-ms and p99-ms
// are reported besides.
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
				st, err := embedded.Open(filepath.Join(b.TempDir(), "state.db"), embedded.Options{})
				if err != nil {
					sb.Fatal(err)
				}
				b.Cleanup(func() { st.Close() })
				for range tc.replicas {
					gw, err := gatewaytest.Gateway(st, &gatewaytest.Recorder{})
					if err != nil {
						sb.Fatal(err)
					}
					gws = append(gws, gw)
				}
				if tok, err = gatewaytest.Mandate("m-bench", "bench", 1<<60, time.Now()); err != nil {
					sb.Fatal(err)
				}
				if _, err := gatewaytest.Load(context.Background(), gws, tok, 64, 512, &next); err != nil {
					sb.Fatal(err)
				}
			}
			sb.ResetTimer()
			start := time.Now()
			lat, err := gatewaytest.Load(context.Background(), gws, tok, tc.clients, sb.N, &next)
			elapsed := time.Since(start)
			sb.StopTimer()
			if err != nil {
				sb.Fatal(err)
			}
			sb.ReportMetric(float64(sb.N)/elapsed.Seconds(), "decisions/s")
			sb.ReportMetric(float64(gatewaytest.Percentile(lat, 50).Microseconds())/1000, "p50-ms")
			sb.ReportMetric(float64(gatewaytest.Percentile(lat, 99).Microseconds())/1000, "p99-ms")
		})
	}
}
