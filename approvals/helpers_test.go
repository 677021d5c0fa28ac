package approvals_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passcode"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/internal/testclock"
	"github.com/intentplane/intentplane/store/mem"
)

type seed byte

func (s seed) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(s)
	}
	return len(p), nil
}

func key(b byte) ed25519.PrivateKey {
	_, priv, _ := ed25519.GenerateKey(seed(b))
	return priv
}

// clock is the module's test clock.
type clock = testclock.Clock

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

// memLog is an in-memory receipt log: one chain per owner.
type memLog struct {
	mu     sync.Mutex
	chains map[intent.Owner][]receipt.Receipt
	cps    map[intent.Owner][]receipt.Checkpoint
	fail   bool
}

func (l *memLog) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fail {
		return receipt.Receipt{}, fmt.Errorf("disk full")
	}
	if l.chains == nil {
		l.chains = map[intent.Owner][]receipt.Receipt{}
	}
	var prev *receipt.Receipt
	if c := l.chains[r.Owner]; len(c) > 0 {
		prev = &c[len(c)-1]
	}
	linked, err := receipt.Link(r, prev)
	if err != nil {
		return receipt.Receipt{}, err
	}
	l.chains[r.Owner] = append(l.chains[r.Owner], linked)
	return linked, nil
}

func (l *memLog) all(owner intent.Owner) []receipt.Receipt {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]receipt.Receipt(nil), l.chains[owner]...)
}

// Passcodes of the test approvers; hashed cheaply (ln=4) for speed.
var passcodes = map[string]string{"alice": "alice-passcode-1", "bob": "bob-passcode-22", "carol": "carol-passcode-333"}

var hashes = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for name, p := range passcodes {
		h, err := passcode.Hash(p, passcode.Params{LogN: 4, R: 1}, nil)
		if err != nil {
			panic(err)
		}
		m[name] = h
	}
	return m
})

var approverKeys = map[string]ed25519.PrivateKey{"alice": key(11), "bob": key(12), "carol": key(13)}

// fixture is a Server behind an httptest server, with a fake clock and an
// in-memory log.
type fixture struct {
	t     *testing.T
	srv   *approvals.Server
	ts    *httptest.Server
	clock *clock
	log   *memLog
	cfg   approvals.Config
	st    *mem.Store                   // the Server's store; restart keeps it
	h     atomic.Pointer[http.Handler] // the server's handler; restart swaps it
	base  string                       // the URL clients use; "" means ts.URL
}

// restart replaces f's Server with a new one over the same configuration
// and the same store, as a process restart does; mutate, when not
// nil, changes the configuration first.
func (f *fixture) restart(mutate func(*approvals.Config)) {
	f.t.Helper()
	if mutate != nil {
		mutate(&f.cfg)
	}
	srv, err := approvals.New(f.cfg, f.log, f.st)
	if err != nil {
		f.t.Fatal(err)
	}
	h := srv.Handler()
	f.srv = srv
	f.h.Store(&h)
}

func newFixture(t *testing.T, mutate func(*approvals.Config)) *fixture {
	t.Helper()
	f := &fixture{t: t, clock: testclock.New(t0), log: &memLog{}}
	f.st = mem.New(f.clock.Now)
	f.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { (*f.h.Load()).ServeHTTP(w, r) }))
	t.Cleanup(f.ts.Close)
	cfg := approvals.Config{BaseURL: f.ts.URL, Now: f.clock.Now, TTL: 10 * time.Minute}
	for _, name := range []string{"alice", "bob", "carol"} {
		cfg.Approvers = append(cfg.Approvers, approvals.Approver{Name: name, Passcode: hashes()[name], Key: approverKeys[name]})
	}
	if mutate != nil {
		mutate(&cfg)
	}
	f.cfg = cfg
	f.restart(nil)
	return f
}

// operation returns a payment operation and its hash.
func operation(t *testing.T, amount intent.Amount, memo string) (intent.Operation, intent.OperationHash) {
	t.Helper()
	op := intent.Operation{
		Action: "pay.send", MandateID: "m-emma", Owner: "emma",
		Args: intent.Args{"recipient": intent.Str("GB29"), "amount": intent.AmountValue(amount, 2), "memo": intent.Str(memo)},
	}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return op, h
}

func pending(t *testing.T, amount intent.Amount, memo string, level intent.Level) approval.Request {
	t.Helper()
	op, h := operation(t, amount, memo)
	return approval.Request{
		Operation: op, Hash: h, Level: level, Currency: "EUR",
		Reason: "payments above 1,000.00 need a person to confirm",
		Resolved: []intent.Resolved{{Param: "recipient", Sent: "gb 29", Value: "GB29",
			Provenance: intent.Provenance{Source: "registry:beneficiaries", RecordID: "ben-1", Version: "3", At: t0.Add(-40 * 24 * time.Hour)}}},
	}
}

func (f *fixture) request(p approval.Request) approvals.Ticket {
	f.t.Helper()
	tk, err := f.srv.Request(context.Background(), p)
	if err != nil {
		f.t.Fatalf("Request: %v", err)
	}
	return tk
}

func (f *fixture) outcome(id string) approvals.Outcome {
	f.t.Helper()
	out, err := f.srv.Outcome(context.Background(), id)
	if err != nil {
		f.t.Fatal(err)
	}
	return out
}

// client is a cookie-keeping HTTP client that does not follow redirects.
type client struct {
	t  *testing.T
	f  *fixture
	hc *http.Client
}

func (f *fixture) client() *client {
	jar, _ := cookiejar.New(nil)
	return &client{t: f.t, f: f, hc: &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
}

type page struct {
	code int
	body string
	hdr  http.Header
	loc  string
}

func (c *client) do(method, path string, form url.Values, hdr map[string]string) page {
	c.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	base := c.f.ts.URL
	if c.f.base != "" {
		base = c.f.base
	}
	req, err := http.NewRequest(method, base+path, body)
	if err != nil {
		c.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return page{code: resp.StatusCode, body: string(b), hdr: resp.Header, loc: resp.Header.Get("Location")}
}

var csrfPattern = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func csrfOf(t *testing.T, p page) string {
	t.Helper()
	m := csrfPattern.FindStringSubmatch(p.body)
	if m == nil {
		t.Fatalf("no csrf token in page (%d): %.300s", p.code, p.body)
	}
	return m[1]
}

// login signs in and returns the result of the sign-in post.
func (c *client) login(name, pass string) page {
	c.t.Helper()
	form := c.do("GET", "/login", nil, nil)
	return c.do("POST", "/login", url.Values{"csrf": {csrfOf(c.t, form)}, "approver": {name}, "passcode": {pass}}, nil)
}

func (f *fixture) signedIn(name string) *client {
	f.t.Helper()
	c := f.client()
	if p := c.login(name, passcodes[name]); p.code != http.StatusSeeOther {
		f.t.Fatalf("login %s: %d %.300s", name, p.code, p.body)
	}
	return c
}

// decide opens the request page and posts its approve or reject form.
func (c *client) decide(id string, approve bool) page {
	c.t.Helper()
	p := c.do("GET", "/requests/"+id, nil, nil)
	verb := "reject"
	if approve {
		verb = "approve"
	}
	// The form's hidden hash when the page offers the form; the request's
	// own hash otherwise, as a replayed form would carry it.
	hash := c.f.outcome(id).Hash.String()
	if m := regexp.MustCompile(`name="operation" value="([0-9a-f]{64})"`).FindStringSubmatch(p.body); m != nil {
		hash = m[1]
	}
	form := url.Values{"csrf": {csrfOf(c.t, p)}, "operation": {hash}}
	if !approve {
		form.Set("reason", "not the amount agreed")
	}
	return c.do("POST", "/requests/"+id+"/"+verb, form, nil)
}
