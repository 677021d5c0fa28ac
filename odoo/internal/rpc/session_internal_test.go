package rpc

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/odoo/odootest"
)

// countGets counts the GET requests it passes on.
type countGets struct {
	gets atomic.Int64
	fail atomic.Bool // answer every GET with a network error
}

func (c *countGets) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.Method == http.MethodGet {
		c.gets.Add(1)
		if c.fail.Load() {
			return nil, context.DeadlineExceeded
		}
	}
	return http.DefaultTransport.RoundTrip(r)
}

// TestSessionRenewal: the session is asked for at the first call, kept for
// sessionRenewal and then asked for again; after a failure the old one is
// kept and asking is retried after sessionRetry, not at every call.
func TestSessionRenewal(t *testing.T) {
	t.Parallel()
	srv := odootest.NewServer("m")
	defer srv.Close()
	rt := &countGets{}
	tr, err := NewTransport(Options{URL: srv.URL, HTTPClient: &http.Client{Transport: rt}})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	tr.UseDatabase("books", func() time.Time { return now })
	ctx := context.Background()
	first := tr.dbSession(ctx)
	if first == "" || rt.gets.Load() != 1 {
		t.Fatalf("first session %q after %d requests; want one, after one", first, rt.gets.Load())
	}
	now = now.Add(sessionRenewal - time.Second)
	if s := tr.dbSession(ctx); s != first || rt.gets.Load() != 1 {
		t.Errorf("before renewal: session %q after %d requests; want %q after 1", s, rt.gets.Load(), first)
	}
	now = now.Add(time.Second)
	second := tr.dbSession(ctx)
	if second == "" || second == first || rt.gets.Load() != 2 {
		t.Errorf("renewed session %q (was %q) after %d requests; want a new one after 2", second, first, rt.gets.Load())
	}
	rt.fail.Store(true)
	now = now.Add(sessionRenewal)
	if s := tr.dbSession(ctx); s != second || rt.gets.Load() != 3 {
		t.Errorf("failed renewal: session %q after %d requests; want the old %q after 3", s, rt.gets.Load(), second)
	}
	now = now.Add(sessionRetry - time.Second)
	if s := tr.dbSession(ctx); s != second || rt.gets.Load() != 3 {
		t.Errorf("before the retry: session %q after %d requests; want %q after 3", s, rt.gets.Load(), second)
	}
	rt.fail.Store(false)
	now = now.Add(time.Second)
	if s := tr.dbSession(ctx); s == "" || s == second || rt.gets.Load() != 4 {
		t.Errorf("retry: session %q after %d requests; want a new one after 4", s, rt.gets.Load())
	}
}

func TestValidSessionID(t *testing.T) {
	t.Parallel()
	for s, want := range map[string]bool{
		"2333af36b3f4328be123864b0f5d8f987e27f98e": true,
		"": false, "a;b": false, "a b": false, "é": false, string(make([]byte, 129)): false,
	} {
		if got := validSessionID(s); got != want {
			t.Errorf("validSessionID(%q) = %v, want %v", s, got, want)
		}
	}
}
