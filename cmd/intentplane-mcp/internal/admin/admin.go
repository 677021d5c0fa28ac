// Package admin is intentplane-mcp's admin listener: /healthz (the store
// is reachable) and /metrics (Prometheus text format, from
// github.com/prometheus/client_golang). It listens on loopback unless the
// operator explicitly allows another address.
//
// Only cmd/intentplane-mcp imports it.
package admin

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/intentplane/intentplane/core/intent"
)

// Metrics are the proxy's Prometheus metrics. It implements
// mcpproxy.Observer.
type Metrics struct {
	reg       *prometheus.Registry
	decisions *prometheus.CounterVec
	latency   *prometheus.HistogramVec
}

// NewMetrics registers the metrics, with the Go and process collectors, in
// a registry of their own:
//
//   - intentplane_decisions_total{verdict, code}: decisions by verdict
//     ("allow", "deny", "step_up") and reason code ("" when allowed);
//   - intentplane_decision_seconds{verdict}: decision latency in seconds,
//     execution included.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "intentplane_decisions_total", Help: "Decisions by verdict and reason code.",
		}, []string{"verdict", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "intentplane_decision_seconds", Help: "Decision latency in seconds, execution included.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"verdict"}),
	}
	m.reg.MustRegister(m.decisions, m.latency, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Decided counts one decision (mcpproxy.Observer).
func (m *Metrics) Decided(_ intent.Action, verdict intent.Verdict, code intent.Code, latency time.Duration) {
	m.decisions.WithLabelValues(verdict.String(), string(code)).Inc()
	m.latency.WithLabelValues(verdict.String()).Observe(latency.Seconds())
}

// Handler serves /healthz, 200 "ok" when health returns nil within two
// seconds and 503 with the error otherwise, and /metrics.
func (m *Metrics) Handler(health func(context.Context) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
		defer cancel()
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if err := health(ctx); err != nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintf(w, "unhealthy: %v\n", err)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("GET /metrics", promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{}))
	return mux
}

// Serve serves h on ln until ctx is done.
func Serve(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(sctx)
	}()
	if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
