package admin_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"testing"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/admin"
)

// TestHostCheck is issue 24's DNS rebinding of the admin listener: a page
// of evil.example, resolved to 127.0.0.1 in the operator's browser, sends
// Host: evil.example:PORT, and is answered 421 without reaching /metrics
// or /healthz; the listener's own address, localhost and the names the
// operator adds are served.
func TestHostCheck(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := admin.NewMetrics()
	h := admin.HostCheck(m.Handler(func(context.Context) error { return nil }), admin.Hosts(ln.Addr(), "Metrics.Internal"))
	go func() { _ = admin.Serve(ctx, ln, h) }()
	_, port, _ := net.SplitHostPort(ln.Addr().String())
	for _, tc := range []struct {
		host string
		want int
	}{
		{ln.Addr().String(), 200},
		{"localhost:" + port, 200},
		{"LOCALHOST:" + port, 200},
		{"127.0.0.1", 200},
		{"metrics.internal:" + port, 200},
		{"evil.example:" + port, 421},
		{"evil.example", 421},
		{"127.0.0.1.evil.example:" + port, 421},
		{"localhost.:" + port, 421},
	} {
		for _, path := range []string{"/healthz", "/metrics"} {
			req, err := http.NewRequest("GET", "http://"+ln.Addr().String()+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("Host %q %s: %d, want %d", tc.host, path, resp.StatusCode, tc.want)
			}
		}
	}
}
