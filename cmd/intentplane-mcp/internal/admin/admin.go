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
	"github.com/intentplane/intentplane/mcpproxy"
)

// Metrics are the proxy's Prometheus metrics. It implements
// mcpproxy.Observer and mcpproxy.CallObserver.
type Metrics struct {
	reg         *prometheus.Registry
	decisions   *prometheus.CounterVec
	latency     *prometheus.HistogramVec
	downErrors  *prometheus.CounterVec
	downLatency *prometheus.HistogramVec
	storeErrors *prometheus.CounterVec
}

// buckets are the latency histograms' bounds, in seconds.
var buckets = []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// NewMetrics registers the metrics, with the Go and process collectors, in
// a registry of their own:
//
//   - intentplane_decisions_total{verdict, code}: decisions by verdict
//     ("allow", "deny", "step_up") and reason code ("" when allowed);
//   - intentplane_decision_seconds{verdict}: decision latency in seconds,
//     execution included;
//   - intentplane_downstream_call_seconds{server, tool}: the latency of
//     every tools/call made to a downstream server, errors included (tool
//     is the name on that server);
//   - intentplane_downstream_errors_total{server, tool, kind}: downstream
//     calls that failed, by kind: "tool_error" (a result with isError),
//     "rpc_error" (a JSON-RPC error answer), "unavailable" (not sent: the
//     server could not be started or reached), "no_answer" (sent, and no
//     answer came: it may have taken effect);
//   - intentplane_store_errors_total{op}: store operations that failed
//     (see StoreFailed), by operation;
//   - intentplane_pending_approvals{channel}: approvals waited for now,
//     once WatchPending is called for the channel.
func NewMetrics() *Metrics {
	m := &Metrics{
		reg: prometheus.NewRegistry(),
		decisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "intentplane_decisions_total", Help: "Decisions by verdict and reason code.",
		}, []string{"verdict", "code"}),
		latency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "intentplane_decision_seconds", Help: "Decision latency in seconds, execution included.", Buckets: buckets,
		}, []string{"verdict"}),
		downErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "intentplane_downstream_errors_total", Help: "Downstream tools/call failures by server, tool and kind (tool_error, rpc_error, unavailable, no_answer).",
		}, []string{"server", "tool", "kind"}),
		downLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "intentplane_downstream_call_seconds", Help: "Downstream tools/call latency in seconds, by server and tool, errors included.", Buckets: buckets,
		}, []string{"server", "tool"}),
		storeErrors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "intentplane_store_errors_total", Help: "Failed store operations, by operation.",
		}, []string{"op"}),
	}
	m.reg.MustRegister(m.decisions, m.latency, m.downErrors, m.downLatency, m.storeErrors,
		collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return m
}

// Called records one downstream call (mcpproxy.CallObserver).
func (m *Metrics) Called(server, tool string, outcome mcpproxy.CallOutcome, latency time.Duration) {
	m.downLatency.WithLabelValues(server, tool).Observe(latency.Seconds())
	if outcome != mcpproxy.CallOK {
		m.downErrors.WithLabelValues(server, tool, string(outcome)).Inc()
	}
}

// StoreFailed counts one failed store operation op ("append", "reserve").
// The caller counts failures of the store itself, not the answers a store
// gives by design (a consumed key, an exceeded budget, not found).
func (m *Metrics) StoreFailed(op string) { m.storeErrors.WithLabelValues(op).Inc() }

// WatchPending adds intentplane_pending_approvals{channel} with count's
// value at each scrape. count is called concurrently and must be quick. It
// panics if channel is already watched.
func (m *Metrics) WatchPending(channel string, count func() int) {
	m.reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "intentplane_pending_approvals", Help: "Approvals waited for now, by channel (client: confirmations open in the MCP client; page: requests on the approval page).",
		ConstLabels: prometheus.Labels{"channel": channel},
	}, func() float64 { return float64(count()) }))
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
