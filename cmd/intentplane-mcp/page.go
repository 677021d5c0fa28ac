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
	"sync"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/mcpproxy"
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
	// a nil set means every owner.
	owners map[string]map[intent.Owner]bool
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
	p := &page{listen: listen, owners: map[string]map[intent.Owner]bool{}}
	cfg := approvals.Config{Addr: listen, BaseURL: strings.TrimSuffix(ac.BaseURL, "/"), TTL: ac.RequestTTL.Duration, MaxPending: maxRequests,
		Callbacks: callbacks, Logger: log}
	for i, a := range ac.Approvers {
		aat := append(at, "approvers", fmt.Sprint(i))
		switch {
		case a.Name == "":
			return nil, c.errAt(aat, "an approver needs a name")
		case a.Name == clientApprover:
			return nil, c.errAt(append(aat, "name"), "approver %q is the name the MCP client's user approves under (approvals.approver); a page approver needs another name", a.Name)
		case has(ac.Approvers[:i], a.Name):
			return nil, c.errAt(append(aat, "name"), "approver %q is declared twice", a.Name)
		case a.PasscodeHash == "":
			return nil, c.errAt(aat, "approver %q needs a passcode_hash (make one with `intentplane hash-passcode`)", a.Name)
		case a.Key == "":
			return nil, c.errAt(aat, "approver %q needs a key: a file with their Ed25519 private key (\"ed25519-priv:…\", from `intentplane mandate keygen`)", a.Name)
		}
		priv, err := readPrivateKey(c.file(a.Key))
		if err != nil {
			return nil, c.errAt(append(aat, "key"), "%v", err)
		}
		var owners []intent.Owner
		if len(a.Owners) > 0 {
			set := map[intent.Owner]bool{}
			for _, o := range a.Owners {
				set[intent.Owner(o)] = true
				owners = append(owners, intent.Owner(o))
			}
			p.owners[a.Name] = set
		} else {
			p.owners[a.Name] = nil
		}
		cfg.Approvers = append(cfg.Approvers, approvals.Approver{Name: a.Name, Passcode: a.PasscodeHash, Key: priv, Owners: owners})
	}
	srv, err := approvals.New(cfg, st)
	if err != nil {
		// Point at the approver the error names, if any.
		where := append(at, "approvers")
		for i, a := range ac.Approvers {
			if strings.Contains(err.Error(), fmt.Sprintf("approver %q", a.Name)) {
				where = append(where, fmt.Sprint(i), "passcode_hash")
			}
		}
		return nil, c.errAt(where, "%s", strings.ReplaceAll(err.Error(), "approvals: ", ""))
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
		if err != nil {
			return nil, c.errAt(wat, "%s", strings.TrimPrefix(err.Error(), "approvals: "))
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

func has(as []pageApproverConfig, name string) bool {
	for _, a := range as {
		if a.Name == name {
			return true
		}
	}
	return false
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

// approverScope says who may approve for whom: the MCP client's user
// (client) only for the session's owner, each page approver for the owners
// listed, or every owner when none is.
func approverScope(client string, session intent.Owner, p *page) func(string, intent.Owner) bool {
	return func(approver string, owner intent.Owner) bool {
		if approver == client {
			return owner == session
		}
		if p == nil {
			return false
		}
		set, ok := p.owners[approver]
		return ok && (set == nil || set[owner])
	}
}

// pageApprovals adapts an approvals.Channel to mcpproxy.Approvals. It
// remembers the request of each operation hash, so that the agent's second
// call of the same operation finds the approvals given on the page. It is
// safe for concurrent use.
type pageApprovals struct {
	ch       approvals.Channel
	currency string    // the mandate's budget currency, shown with amounts
	until    time.Time // the mandate's expiry: rejections are kept until then
	now      func() time.Time
	log      *slog.Logger

	mu   sync.Mutex
	byOp map[intent.OperationHash]approvals.Ticket
	// rejected holds the operations a person rejected, with who did: a
	// rejection is final for the mandate's life, so that asking again does
	// not wear approvers down.
	rejected map[intent.OperationHash]string
}

var _ mcpproxy.Approvals = (*pageApprovals)(nil)

// newPageApprovals adapts ch; until is the mandate's expiry, up to which
// rejections are remembered (operations name their mandate, so none can
// execute after it).
func newPageApprovals(ch approvals.Channel, currency string, until time.Time, now func() time.Time, log *slog.Logger) *pageApprovals {
	if now == nil {
		now = time.Now
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &pageApprovals{ch: ch, currency: currency, until: until, now: now, log: log,
		byOp: map[intent.OperationHash]approvals.Ticket{}, rejected: map[intent.OperationHash]string{}}
}

// Request submits s to the channel, or returns the link of the request
// already open for the same operation. It returns an error wrapping
// mcpproxy.ErrRejected, without a new request, for an operation a person
// rejected, and mcpproxy.ErrTooManyRequests when the page holds as many
// pending requests as it accepts.
func (a *pageApprovals) Request(ctx context.Context, s approval.Request) (string, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.rejectedLocked(s.Hash); err != nil {
		return "", err
	}
	now := a.now()
	for op, t := range a.byOp {
		if !now.Before(t.ExpiresAt) {
			delete(a.byOp, op)
		}
	}
	if t, ok := a.byOp[s.Hash]; ok {
		return t.URL, nil
	}
	s.Currency = a.currency
	t, err := a.ch.Request(ctx, s)
	if err != nil {
		if errors.Is(err, approvals.ErrTooMany) {
			return "", fmt.Errorf("%w: %w", mcpproxy.ErrTooManyRequests, err)
		}
		if !errors.Is(err, approvals.ErrNotDelivered) || t.ID == "" {
			return "", err
		}
		// The webhook missed it, but the request is on the page.
		a.log.Warn("approval request not delivered to the webhook; it is on the page", "id", t.ID, "err", err)
	}
	a.byOp[s.Hash] = t
	return t.URL, nil
}

// Await returns the approvals given on the page for op once its request
// is approved (waiting up to wait for it), none while it is pending or
// when there is no live request, and an error wrapping
// mcpproxy.ErrRejected when a person rejected it. A rejected, expired or
// refused request is forgotten, so that a later call opens a new one.
func (a *pageApprovals) Await(ctx context.Context, op intent.OperationHash, wait time.Duration) ([]approval.Approval, error) {
	a.mu.Lock()
	if err := a.rejectedLocked(op); err != nil {
		a.mu.Unlock()
		return nil, err
	}
	t, ok := a.byOp[op]
	a.mu.Unlock()
	if !ok {
		return nil, nil
	}
	out, err := approvals.Await(ctx, a.ch, t.ID, wait)
	if errors.Is(err, approvals.ErrNotFound) {
		a.forget(op, t.ID)
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	switch out.Status {
	case approvals.StatusApproved:
		if !a.now().Before(out.ExpiresAt) {
			a.forget(op, t.ID)
			return nil, nil
		}
		return out.Approvals, nil
	case approvals.StatusRejected:
		who := ""
		for _, d := range out.Votes {
			if !d.Approve {
				who = d.Approver
			}
		}
		a.mu.Lock()
		if a.now().Before(a.until) {
			a.rejected[op] = fmt.Sprintf("request %s, by %s", t.ID, who)
		}
		a.mu.Unlock()
		a.forget(op, t.ID)
		return nil, fmt.Errorf("%w (request %s, by %s)", mcpproxy.ErrRejected, t.ID, who)
	case approvals.StatusPending:
		return nil, nil
	}
	a.forget(op, t.ID)
	return nil, nil
}

// rejectedLocked returns an error wrapping mcpproxy.ErrRejected if a
// person rejected op. a.mu is held.
func (a *pageApprovals) rejectedLocked(op intent.OperationHash) error {
	if !a.now().Before(a.until) {
		clear(a.rejected) // the mandate expired: no operation of it can run
		return nil
	}
	if why, ok := a.rejected[op]; ok {
		return fmt.Errorf("%w (%s)", mcpproxy.ErrRejected, why)
	}
	return nil
}

func (a *pageApprovals) forget(op intent.OperationHash, id string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.byOp[op].ID == id {
		delete(a.byOp, op)
	}
}
