package main_test

import (
	"io"
	"net"
	"net/http"
	"testing"
)

// TestAdminListenerHost is issue 24's DNS rebinding of the admin
// listener: the built proxy answers /metrics and /healthz to its own
// address and to a name in [admin] hosts, and 421 to a request naming
// another site in Host, as a page of that site reaching 127.0.0.1 through
// DNS rebinding in the operator's browser would.
func TestAdminListenerHost(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, e.config, readFile(t, e.config)+"\n[admin]\nlisten = \"127.0.0.1:0\"\nhosts = [\"metrics.internal\"]\n")
	stderr := &lockedBuffer{t: t}
	e.stderr = stderr
	e.start("", nil)
	base := adminURL(t, stderr)
	addr := base[len("http://"):]
	_, port, _ := net.SplitHostPort(addr)
	for _, tc := range []struct {
		host string
		want int
	}{
		{addr, 200},
		{"localhost:" + port, 200},
		{"metrics.internal:" + port, 200},
		{"rebind.evil.example:" + port, 421},
	} {
		for _, path := range []string{"/healthz", "/metrics"} {
			req, err := http.NewRequest("GET", base+path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Host = tc.host
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("Host %q %s: %d %q, want %d", tc.host, path, resp.StatusCode, b, tc.want)
			}
		}
	}
}
