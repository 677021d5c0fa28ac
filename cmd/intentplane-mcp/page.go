package main

import (
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

// page is the approval page wired for the proxy: the server, the channel
// requests go to (the server itself, or the webhook in front of it), and
// who may approve for whom.
type page struct {
	srv     *approvals.Server
	ch      approvals.Channel
	webhook *approvals.Webhook // non-nil when callbacks are accepted
	listen  string
	// owners maps each page approver to the owners they may approve for;
	// none means every owner (approval.Scope.Owners).
	owners map[string][]intent.Owner
}

// buildPage builds the approval page from [approvals], or returns nil when
// no page approver is configured. clientApprover is the name the MCP
// client's user signs under; no page approver may take it. callbacks, when
// not nil, takes the call-backs recorded on the page.
func buildPage(c *config, st approvals.Log, clientApprover string, callbacks approvals.CallbackSink, log *slog.Logger) (*page, error) {
	ac := c.Approvals
	at := []string{"approvals"}
	if len(ac.Approvers) == 0 {
		for _, k := range []struct {
			key string
			set bool
		}{{"listen", ac.Listen != ""}, {"base_url", ac.BaseURL != ""}, {"wait", ac.Wait != 0}, {"request_ttl", ac.RequestTTL.Duration != 0}, {"webhook", ac.Webhook != nil}, {"allow_remote", ac.AllowRemote}, {"max_requests", ac.MaxRequests != 0}} {
			if k.set {
				return nil, c.errAt(append(at, k.key), "%s applies to the approval page, which needs at least one [[approvals.approvers]]", k.key)
			}
		}
		return nil, nil
	}
	if ac.Wait < 0 || ac.Wait > 3600 {
		return nil, c.errAt(append(at, "wait"), "wait is a number of seconds from 0 (answer with the link at once) to 3600")
	}
	listen := ac.Listen
	if listen == "" {
		listen = "127.0.0.1:8477"
	}
	host, port, err := net.SplitHostPort(listen)
	if err != nil || port == "" {
		return nil, c.errAt(append(at, "listen"), "listen must be host:port, like \"127.0.0.1:8477\"")
	}
	var base *url.URL
	if ac.BaseURL != "" {
		u, err := url.Parse(ac.BaseURL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
			return nil, c.errAt(append(at, "base_url"), "base_url must be http(s)://host[:port], without a path")
		}
		base = u
	}
	if !loopback(host) {
		if !ac.AllowRemote {
			return nil, c.errAt(append(at, "listen"), "listen %q is not a loopback address: the page would be reachable from the network. Keep it on 127.0.0.1, or set allow_remote = true with an https base_url (TLS in front of the page)", listen)
		}
		if base == nil || base.Scheme != "https" {
			return nil, c.errAt(append(at, "allow_remote"), "allow_remote needs an https base_url: passcodes and session cookies must not cross the network in clear")
		}
	}
	if ac.MaxRequests < 0 {
		return nil, c.errAt(append(at, "max_requests"), "max_requests must not be negative")
	}
	maxRequests := ac.MaxRequests
	if maxRequests == 0 {
		maxRequests = 32
	}
	p := &page{listen: listen, owners: map[string][]intent.Owner{}}
	cfg := approvals.Config{Addr: listen, BaseURL: strings.TrimSuffix(ac.BaseURL, "/"), TTL: ac.RequestTTL.Duration, MaxPending: maxRequests,
		Callbacks: callbacks, Logger: log}
	for i, a := range ac.Approvers {
		aat := append(at, "approvers", fmt.Sprint(i))
		switch {
		case a.Name != "" && a.Name == clientApprover:
			return nil, c.errAt(append(aat, "name"), "approver %q is the name the MCP client's user approves under (approvals.approver); a page approver needs another name", a.Name)
		case a.Key == "":
			return nil, c.errAt(aat, "approver %q needs a key: a file with their Ed25519 private key (\"ed25519-priv:…\", from `intentplane mandate keygen`)", a.Name)
		}
		priv, err := readPrivateKey(c.file(a.Key))
		if err != nil {
			return nil, c.errAt(append(aat, "key"), "%v", err)
		}
		var owners []intent.Owner
		for _, o := range a.Owners {
			owners = append(owners, intent.Owner(o))
		}
		p.owners[a.Name] = owners
		cfg.Approvers = append(cfg.Approvers, approvals.Approver{Name: a.Name, Passcode: a.PasscodeHash, Key: priv, Owners: owners})
	}
	srv, err := approvals.New(cfg, st)
	var ae *approvals.ApproverError
	if errors.As(err, &ae) {
		key := map[string]string{"name": "name", "key": "key", "passcode": "passcode_hash"}[ae.Field]
		hint := ""
		if ae.Field == "passcode" {
			hint = " (make one with `intentplane hash-passcode`)"
		}
		return nil, c.errAt(append(at, "approvers", fmt.Sprint(ae.Index), key), "approver %q: %s%s", ae.Name, ae.Reason, hint)
	}
	if err != nil {
		return nil, c.errAt(append(at, "approvers"), "%v", err)
	}
	p.srv, p.ch = srv, srv
	if w := ac.Webhook; w != nil {
		wat := append(at, "webhook")
		if w.URL == "" || w.Key == "" {
			return nil, c.errAt(wat, "a webhook needs url and key (a file with the Ed25519 private key signing its payloads)")
		}
		u, err := url.Parse(w.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, c.errAt(append(wat, "url"), "url must be an http(s) URL")
		}
		key, err := readPrivateKey(c.file(w.Key))
		if err != nil {
			return nil, c.errAt(append(wat, "key"), "%v", err)
		}
		wc := approvals.WebhookConfig{URL: w.URL, Key: key, Approvers: w.Approvers}
		if w.CallbackKey != "" {
			b, err := os.ReadFile(c.file(w.CallbackKey))
			if err != nil {
				return nil, c.errAt(append(wat, "callback_key"), "%v", err)
			}
			if wc.CallbackKey, err = mandate.ParsePublicKey(strings.TrimSpace(string(b))); err != nil {
				return nil, c.errAt(append(wat, "callback_key"), "%v", err)
			}
		} else if len(w.Approvers) > 0 {
			return nil, c.errAt(append(wat, "approvers"), "approvers decide through callbacks, which need callback_key")
		}
		wh, err := approvals.NewWebhook(srv, wc)
		if errors.As(err, &ae) {
			return nil, c.errAt(append(wat, "approvers"), "approver %q: %s", ae.Name, ae.Reason)
		}
		if err != nil {
			return nil, c.errAt(wat, "%v", err)
		}
		p.ch = wh
		if wc.CallbackKey != nil {
			p.webhook = wh
		}
	}
	return p, nil
}

// loopback reports whether host (of host:port) names only this machine.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// readPrivateKey reads an "ed25519-priv:…" key file.
func readPrivateKey(path string) (ed25519.PrivateKey, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return mandate.ParsePrivateKey(strings.TrimSpace(string(b)))
}

// serve listens on the page's address and serves the page (and the
// webhook's callbacks at /webhook) until ctx is done. It returns once the
// listener is bound; errc receives the server's error, if any.
func (p *page) serve(ctx context.Context) (<-chan error, error) {
	ln, err := net.Listen("tcp", p.listen)
	if err != nil {
		return nil, fmt.Errorf("approval page: %w", err)
	}
	h := p.srv.Handler()
	if p.webhook != nil {
		mux := http.NewServeMux()
		mux.Handle("/webhook", p.webhook)
		mux.Handle("/", h)
		h = mux
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	errc := make(chan error, 1)
	go func() {
		err := hs.Serve(ln)
		if errors.Is(err, http.ErrServerClosed) {
			err = nil
		}
		errc <- err
	}()
	go func() {
		<-ctx.Done()
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
	}()
	return errc, nil
}
