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
)

func TestHandler(t *testing.T) {
	t.Parallel()
	m := admin.NewMetrics()
	m.Decided("bank.send_money", intent.StepUp, intent.CodeApprovalRequired, 30*time.Millisecond)
	m.Decided("bank.send_money", intent.StepUp, intent.CodeApprovalRequired, 2*time.Second)
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
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, _ := get("/other"); code != 404 {
		t.Errorf("/other: %d", code)
	}
}
