package approvals_test

import (
	"context"
	"crypto/ed25519"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
)

// TestServe: Serve routes /webhook to the webhook's callbacks only when a
// webhook is given, and returns nil once ctx ends.
func TestServe(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	hook, err := approvals.NewWebhook(f.srv, approvals.WebhookConfig{URL: "http://127.0.0.1:1/", Key: key(40), CallbackKey: key(41).Public().(ed25519.PublicKey)})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		hook *approvals.Webhook
		want int // status of an unsigned POST /webhook
	}{
		{"with a webhook", hook, http.StatusUnauthorized},
		{"without", nil, http.StatusNotFound},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			errc := make(chan error, 1)
			go func() { errc <- f.srv.Serve(ctx, ln, tc.hook) }()
			req, _ := http.NewRequest("POST", "http://"+ln.Addr().String()+"/webhook", strings.NewReader(`{}`))
			req.Host = strings.TrimPrefix(f.ts.URL, "http://")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Errorf("POST /webhook: %d, want %d", resp.StatusCode, tc.want)
			}
			cancel()
			select {
			case err := <-errc:
				if err != nil {
					t.Errorf("Serve after ctx ended: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Serve did not return after ctx ended")
			}
		})
	}
}
