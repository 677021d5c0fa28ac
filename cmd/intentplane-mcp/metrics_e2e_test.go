package main_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/internal/pgtest"
)

const adminExtra = "\n[admin]\nlisten = \"127.0.0.1:0\"\n"

// adminURL waits for the admin listener's address on the proxy's stderr.
func adminURL(t *testing.T, stderr *lockedBuffer) string {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if _, rest, ok := strings.Cut(stderr.String(), "admin (/healthz, /metrics) at "); ok {
			addr, _, _ := strings.Cut(rest, "\n")
			return addr
		}
	}
	t.Fatal("no admin address on stderr")
	return ""
}

// scrape returns the metrics lines holding name.
func scrape(t *testing.T, base, name string) string {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var out []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, name) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}

// wantMetric fails unless the scraped lines of the metric hold line.
func wantMetric(t *testing.T, base, line string) {
	t.Helper()
	name, _, _ := strings.Cut(line, "{")
	if got := scrape(t, base, name); !strings.Contains(got+"\n", line+"\n") {
		t.Errorf("/metrics lacks %s; it has:\n%s", line, got)
	}
}

// TestMetricsPendingAndDownstream scrapes /metrics while a confirmation is
// open in the client (pending approvals, channel client), while a
// four-eyes request waits on the approval page (channel page), and after a
// downstream call that got no answer (the bank exits) and one that
// succeeded (downstream errors and latency per server and tool).
func TestMetricsPendingAndDownstream(t *testing.T) {
	t.Parallel()
	pe := newPageEnv(t, 0, adminExtra)
	e := pe.env
	stderr := &lockedBuffer{t: t}
	e.stderr = stderr
	asked, release := make(chan struct{}, 1), make(chan struct{})
	el := &elicitor{answer: func(mcp.ElicitationRequest) *mcp.ElicitationResult {
		asked <- struct{}{}
		<-release
		return answer(mcp.ElicitationResponseActionDecline, false)(mcp.ElicitationRequest{})
	}}
	c := e.start(mcp.ProtocolVersion20251125, el)
	base := adminURL(t, stderr)
	wantMetric(t, base, `intentplane_pending_approvals{channel="client"} 0`)
	wantMetric(t, base, `intentplane_pending_approvals{channel="page"} 0`)

	done := make(chan *mcp.CallToolResult, 1)
	go func() {
		done <- call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.00","reference":"INV-2291"}`, ibanOnFile))
	}()
	select {
	case <-asked:
	case <-time.After(20 * time.Second):
		t.Fatal("the user was never asked to confirm")
	}
	wantMetric(t, base, `intentplane_pending_approvals{channel="client"} 1`)
	close(release)
	wantReason(t, <-done, "approval.declined", "step_up")
	wantMetric(t, base, `intentplane_pending_approvals{channel="client"} 0`)

	// Above 5,000.00 two people approve on the page: the agent gets the
	// link, and the request waits there.
	wantError(t, call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"6000.00","reference":"INV-2292"}`, ibanOnFile)), pe.base+"/requests/")
	wantMetric(t, base, `intentplane_pending_approvals{channel="page"} 1`)

	wantError(t, call(t, c, "test_crash", `{}`), "stopped while handling the call")
	wantOK(t, call(t, c, "get_balance", `{}`), "EUR")
	wantMetric(t, base, `intentplane_downstream_errors_total{kind="no_answer",server="bank",tool="test_crash"} 1`)
	wantMetric(t, base, `intentplane_downstream_call_seconds_count{server="bank",tool="get_balance"} 1`)
	if got := scrape(t, base, "intentplane_downstream_errors_total"); strings.Contains(got, "get_balance") {
		t.Errorf("a successful call counted as an error: %s", got)
	}
}

// TestMetricsStoreErrors: the PostgreSQL store loses its receipts table
// while the proxy runs; the next decision cannot be recorded, which
// /metrics counts as a store error of the operation "append".
func TestMetricsStoreErrors(t *testing.T) {
	t.Parallel()
	e, _, schema := newPostgresEnv(t)
	writeFile(t, e.config, readFile(t, e.config)+adminExtra)
	stderr := &lockedBuffer{t: t}
	e.stderr = stderr
	c := e.start(mcp.ProtocolVersion20251125, nil)
	base := adminURL(t, stderr)
	wantOK(t, call(t, c, "get_balance", `{}`), "EUR")
	if got := scrape(t, base, "intentplane_store_errors_total"); got != "" {
		t.Fatalf("store errors before the failure: %s", got)
	}

	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "ALTER TABLE "+pgx.Identifier{schema, "receipts"}.Sanitize()+" RENAME TO receipts_gone"); err != nil {
		t.Fatal(err)
	}
	r := call(t, c, "get_balance", `{}`)
	if !strings.Contains(text(r), "receipt could not be stored") && !r.IsError {
		t.Errorf("a decision without its receipt table: %s", text(r))
	}
	got := scrape(t, base, "intentplane_store_errors_total")
	if !regexp.MustCompile(`(?m)^intentplane_store_errors_total\{op="append"\} [1-9]`).MatchString(got) {
		t.Errorf("/metrics store errors:\n%s", got)
	}
}
