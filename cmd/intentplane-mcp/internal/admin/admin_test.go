package admin_test

import (
	"context"
	"errors"
	"io"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/admin"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
	"github.com/intentplane/intentplane/mcpproxy"
)

func TestHandler(t *testing.T) {
	t.Parallel()
	m := admin.NewMetrics()
	m.Decided("bank.send_money", intent.StepUp, intent.CodeApprovalRequired, 30*time.Millisecond)
	m.Decided("bank.send_money", intent.StepUp, intent.CodeApprovalRequired, 2*time.Second)
	m.Called("bank", "send_money", mcpproxy.CallOK, 20*time.Millisecond)
	m.Called("bank", "send_money", mcpproxy.CallNoAnswer, 60*time.Second)
	pending := 3
	m.WatchPending("page", func() int { return pending })
	var down error
	srv := httptest.NewServer(m.Handler(func(context.Context) error { return down }))
	defer srv.Close()
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthy: %d %q", code, body)
	}
	down = errors.New("store unreachable")
	if code, body := get("/healthz"); code != 503 || !strings.Contains(body, "store unreachable") {
		t.Errorf("unhealthy: %d %q", code, body)
	}
	_, body := get("/metrics")
	for _, want := range []string{
		`intentplane_decisions_total{code="approval.required",verdict="step_up"} 2`,
		`intentplane_decision_seconds_bucket{verdict="step_up",le="0.05"} 1`,
		`intentplane_decision_seconds_bucket{verdict="step_up",le="2.5"} 2`,
		`intentplane_downstream_call_seconds_count{server="bank",tool="send_money"} 2`,
		`intentplane_downstream_call_seconds_bucket{server="bank",tool="send_money",le="0.025"} 1`,
		`intentplane_downstream_errors_total{kind="no_answer",server="bank",tool="send_money"} 1`,
		`intentplane_pending_approvals{channel="page"} 3`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get("/other"); code != 404 {
		t.Errorf("/other: %d", code)
	}
}

// TestCountErrors: a store's failures are counted by operation; its
// answers by design (a consumed key, an exceeded budget) are not.
func TestCountErrors(t *testing.T) {
	t.Parallel()
	m := admin.NewMetrics()
	broken := errors.New("connection refused")
	st := m.CountErrors(failingStore{consume: state.ErrReplayed, append: broken})
	ctx := context.Background()
	if err := st.Consume(ctx, "k", time.Time{}); !errors.Is(err, state.ErrReplayed) {
		t.Errorf("Consume: %v", err)
	}
	for range 2 {
		if _, err := st.Append(ctx, receipt.Receipt{}); !errors.Is(err, broken) {
			t.Errorf("Append: %v", err)
		}
	}
	if err := st.Commit(ctx, "id"); err != nil {
		t.Errorf("Commit: %v", err)
	}
	srv := httptest.NewServer(m.Handler(func(context.Context) error { return nil }))
	defer srv.Close()
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(b), `intentplane_store_errors_total{op="append"} 2`) || strings.Contains(string(b), `op="consume"`) || strings.Contains(string(b), `op="commit"`) {
		t.Errorf("/metrics store errors:\n%s", grep(string(b), "intentplane_store_errors_total"))
	}
}

// failingStore fails Consume and Append with the errors given; every other
// method succeeds.
type failingStore struct {
	admin.ReconcilingStore
	consume, append error
}

func (f failingStore) Consume(context.Context, string, time.Time) error { return f.consume }
func (f failingStore) Commit(context.Context, string) error             { return nil }
func (f failingStore) Append(context.Context, receipt.Receipt) (receipt.Receipt, error) {
	return receipt.Receipt{}, f.append
}

func grep(s, sub string) string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, sub) {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
