package approvals_test

import (
	"context"
	"crypto/ed25519"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passcode"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/store/mem"
)

func TestNewRefusesBadConfig(t *testing.T) {
	t.Parallel()
	good := approvals.Approver{Name: "alice", Passcode: hashes()["alice"], Key: approverKeys["alice"]}
	for _, tt := range []struct {
		name string
		cfg  approvals.Config
		want *approvals.ApproverError // nil: not an approver's fault
	}{
		{"no approver", approvals.Config{}, nil},
		{"no name", approvals.Config{Approvers: []approvals.Approver{good, {Passcode: good.Passcode, Key: good.Key}}}, &approvals.ApproverError{Index: 1, Field: "name"}},
		{"name too long", approvals.Config{Approvers: []approvals.Approver{{Name: strings.Repeat("a", 65), Passcode: good.Passcode, Key: good.Key}}}, &approvals.ApproverError{Name: strings.Repeat("a", 65), Field: "name"}},
		{"no key", approvals.Config{Approvers: []approvals.Approver{{Name: "alice", Passcode: good.Passcode}}}, &approvals.ApproverError{Name: "alice", Field: "key"}},
		{"plain passcode", approvals.Config{Approvers: []approvals.Approver{{Name: "alice", Passcode: "hunter22", Key: good.Key}}}, &approvals.ApproverError{Name: "alice", Field: "passcode"}},
		{"twice", approvals.Config{Approvers: []approvals.Approver{good, good}}, &approvals.ApproverError{Index: 1, Name: "alice", Field: "name"}},
		{"base URL with path", approvals.Config{Approvers: []approvals.Approver{good}, BaseURL: "http://x/approve"}, nil},
	} {
		_, err := approvals.New(tt.cfg, &memLog{}, mem.New(nil))
		if err == nil {
			t.Errorf("%s: New succeeded", tt.name)
			continue
		}
		var ae *approvals.ApproverError
		switch {
		case tt.want == nil && errors.As(err, &ae):
			t.Errorf("%s: New() = %v, an approver's error", tt.name, err)
		case tt.want != nil && !errors.As(err, &ae):
			t.Errorf("%s: New() = %v, want an *ApproverError", tt.name, err)
		case tt.want != nil && (ae.Index != tt.want.Index || ae.Name != tt.want.Name || ae.Field != tt.want.Field):
			t.Errorf("%s: New() = %+v, want %+v", tt.name, ae, tt.want)
		}
		if tt.name == "plain passcode" && !errors.Is(err, passcode.ErrMalformed) {
			t.Errorf("%s: %v does not wrap passcode.ErrMalformed", tt.name, err)
		}
	}
	s, err := approvals.New(approvals.Config{Approvers: []approvals.Approver{good}}, &memLog{}, mem.New(nil))
	if err != nil {
		t.Fatal(err)
	}
	if s.URL() != "http://127.0.0.1:8477" {
		t.Fatalf("default URL %q, want loopback", s.URL())
	}
}

// TestApproveSigns: an approval given on the page is the approver's
// Ed25519 signature over the operation hash, bound to the mandate,
// expiring with the request, and recorded as a receipt.
func TestApproveSigns(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	p := pending(t, 150000, "", intent.LevelConfirm)
	tk := f.request(p)
	if !strings.HasPrefix(tk.URL, f.ts.URL+"/requests/") || !tk.ExpiresAt.Equal(t0.Add(10*time.Minute)) {
		t.Fatalf("ticket %+v", tk)
	}
	if out := f.outcome(tk.ID); out.Status != approvals.StatusPending || len(out.Approvals) != 0 {
		t.Fatalf("outcome before approval %+v", out)
	}
	alice := f.signedIn("alice")
	if r := alice.decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("approve: %d %.300s", r.code, r.body)
	}
	out := f.outcome(tk.ID)
	if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 || len(out.Votes) != 1 {
		t.Fatalf("outcome %+v", out)
	}
	a := out.Approvals[0]
	if a.Approver != "alice" || a.Operation != p.Hash || a.MandateID != "m-emma" || !a.ExpiresAt.Equal(tk.ExpiresAt) || !a.IssuedAt.Equal(t0) {
		t.Fatalf("approval %+v", a)
	}
	msg, _ := a.SignedBytes()
	if !ed25519.Verify(approverKeys["alice"].Public().(ed25519.PublicKey), msg, a.Sig) {
		t.Fatal("approval not signed with alice's key")
	}
	g, err := approval.Evaluate(f.srv.Keys(), p.Hash, "m-emma", f.clock.Now(), out.Approvals)
	if err != nil || g.Level() != intent.LevelConfirm {
		t.Fatalf("Evaluate: %v, level %s", err, g.Level())
	}
	// Another operation, one cent more, is not covered.
	_, other := operation(t, 150001, "")
	if _, err := approval.Evaluate(f.srv.Keys(), other, "m-emma", f.clock.Now(), out.Approvals); !errors.Is(err, approval.ErrOtherOperation) {
		t.Fatalf("approval covers another operation: %v", err)
	}
	// Receipts: the request and the decision, chained in emma's chain.
	rs := f.log.all("emma")
	if len(rs) != 2 || rs[0].Verdict != intent.StepUp || rs[0].Code != intent.CodeApprovalRequired || rs[0].Operation != p.Hash.String() {
		t.Fatalf("receipts %+v", rs)
	}
	if len(rs[1].Approvals) != 1 || rs[1].Approvals[0].ID != a.ID || rs[1].Approvals[0].Approver != "alice" || rs[1].Prev != rs[0].Hash {
		t.Fatalf("decision receipt %+v", rs[1])
	}
	if out.Votes[0].Receipt.Hash != rs[1].Hash {
		t.Fatal("decision does not carry its receipt")
	}
	// The page lists the decision with its receipt.
	list := alice.do("GET", "/requests", nil, nil)
	if !strings.Contains(list.body, "emma #2") || !strings.Contains(list.body, rs[1].Hash.String()) || !strings.Contains(list.body, "1,500.00 EUR") {
		t.Fatalf("recent decisions do not show the receipt: %.2000s", list.body)
	}
	// The same approval cannot be given twice.
	if r := alice.decide(tk.ID, true); r.code != http.StatusConflict {
		t.Fatalf("second approval: %d", r.code)
	}
}

func TestRequestPageShowsOperation(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	p := pending(t, 123456789, "<script>alert(1)</script>\u202egnp.exe", intent.LevelConfirm)
	tk := f.request(p)
	body := f.signedIn("bob").do("GET", "/requests/"+tk.ID, nil, nil).body
	for _, want := range []string{
		"1,234,567.89 EUR", "1234567.89", // as hashed, in Details
		"GB29", "registry:beneficiaries", "ben-1", "version <code>3</code>", "40 days ago",
		"differs:", "gb 29",
		"&lt;script&gt;alert(1)&lt;/script&gt;", `\u202egnp.exe`,
		p.Hash.String(), "payments above 1,000.00 need a person to confirm", "pay.send", "m-emma",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	if strings.Contains(body, "<script") {
		t.Fatal("page carries a script element")
	}
}

func TestTampered(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	shown := pending(t, 1500, "", intent.LevelConfirm) // 15.00 shown
	_, real := operation(t, 150000, "")                // 1500.00 hashed
	shown.Hash = real
	tk, err := f.srv.Request(context.Background(), shown)
	if !errors.Is(err, approvals.ErrTampered) || tk.ID == "" {
		t.Fatalf("Request of tampered content: %v, %+v", err, tk)
	}
	if out := f.outcome(tk.ID); out.Status != approvals.StatusRefused {
		t.Fatalf("status %s", out.Status)
	}
	alice := f.signedIn("alice")
	page := alice.do("GET", "/requests/"+tk.ID, nil, nil)
	if !strings.Contains(page.body, "Refused request") || strings.Contains(page.body, `id="approve"`) || strings.Contains(page.body, "15.00") {
		t.Fatalf("tampered page shows the content or an approve button: %.1500s", page.body)
	}
	r := alice.do("POST", "/requests/"+tk.ID+"/approve", url.Values{"csrf": {csrfOf(t, page)}, "operation": {real.String()}}, nil)
	if r.code != http.StatusConflict || len(f.outcome(tk.ID).Approvals) != 0 {
		t.Fatalf("approving a tampered request: %d", r.code)
	}
	if rs := f.log.all("emma"); len(rs) != 1 || rs[0].Verdict != intent.Deny || rs[0].Code != intent.CodeApprovalInvalid {
		t.Fatalf("tampered request receipt %+v", rs)
	}

	// A trusted value that is not the argument it claims to be.
	p := pending(t, 150000, "", intent.LevelConfirm)
	p.Resolved[0].Value = "GB30"
	if _, err := f.srv.Request(context.Background(), p); !errors.Is(err, approvals.ErrTampered) {
		t.Fatalf("provenance of another value: %v", err)
	}
	// Changing the caller's arguments after Request changes nothing shown.
	p = pending(t, 150000, "", intent.LevelConfirm)
	tk = f.request(p)
	p.Operation.Args["amount"] = intent.AmountValue(1, 2)
	if r := f.signedIn("bob").decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("approve after the caller's change: %d", r.code)
	}
	if out := f.outcome(tk.ID); out.Approvals[0].Operation != p.Hash {
		t.Fatal("approval over another hash")
	}
	// Refused up front.
	bad := pending(t, 100, "", "auto")
	if _, err := f.srv.Request(context.Background(), bad); !errors.Is(err, approvals.ErrInvalid) {
		t.Fatalf("level auto: %v", err)
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	p := pending(t, 150000, "", intent.LevelFourEyes)
	p.ExpiresAt = t0.Add(2 * time.Minute)
	tk := f.request(p)
	alice, bob := f.signedIn("alice"), f.signedIn("bob")
	if r := alice.decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("approve: %d", r.code)
	}
	page := bob.do("GET", "/requests/"+tk.ID, nil, nil)
	f.clock.Advance(2 * time.Minute)
	if out := f.outcome(tk.ID); out.Status != approvals.StatusExpired {
		t.Fatalf("status %s, want expired", out.Status)
	}
	r := bob.do("POST", "/requests/"+tk.ID+"/approve", url.Values{"csrf": {csrfOf(t, page)}, "operation": {p.Hash.String()}}, nil)
	if r.code != http.StatusGone {
		t.Fatalf("approve after expiry: %d", r.code)
	}
	// Alice's approval expired with the request.
	out := f.outcome(tk.ID)
	if _, err := approval.Evaluate(f.srv.Keys(), p.Hash, "m-emma", f.clock.Now(), out.Approvals); !errors.Is(err, approval.ErrExpired) {
		t.Fatalf("approval after the request expired: %v", err)
	}
	// A Pending that has already expired is refused.
	p.ExpiresAt = t0
	if _, err := f.srv.Request(context.Background(), p); !errors.Is(err, approvals.ErrExpired) {
		t.Fatalf("expired Pending: %v", err)
	}
}

// TestFourEyes: two distinct approvers; the requester's own approval, like
// anyone's, never counts twice.
func TestFourEyes(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	p := pending(t, 2000000, "", intent.LevelFourEyes)
	p.Requester = "alice"
	tk := f.request(p)
	if r := f.signedIn("alice").decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("alice: %d", r.code)
	}
	if out := f.outcome(tk.ID); out.Status != approvals.StatusPending || len(out.Approvals) != 1 {
		t.Fatalf("after one approver: %+v", out)
	}
	// Alice again, in a new session: refused.
	if r := f.signedIn("alice").decide(tk.ID, true); r.code != http.StatusConflict || !strings.Contains(r.body, "never counts twice") {
		t.Fatalf("alice twice: %d", r.code)
	}
	out := f.outcome(tk.ID)
	if out.Status != approvals.StatusPending || len(out.Approvals) != 1 {
		t.Fatalf("after alice twice: %+v", out)
	}
	if g, _ := approval.Evaluate(f.srv.Keys(), p.Hash, "m-emma", f.clock.Now(), out.Approvals); g.FourEyes {
		t.Fatal("one approver granted four eyes")
	}
	if r := f.signedIn("bob").decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("bob: %d", r.code)
	}
	out = f.outcome(tk.ID)
	g, err := approval.Evaluate(f.srv.Keys(), p.Hash, "m-emma", f.clock.Now(), out.Approvals)
	if out.Status != approvals.StatusApproved || err != nil || !g.FourEyes {
		t.Fatalf("two approvers: %+v %v", out, err)
	}
	// A third cannot add anything.
	if r := f.signedIn("carol").decide(tk.ID, true); r.code != http.StatusConflict {
		t.Fatalf("carol after approval: %d", r.code)
	}
}

func TestReject(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tk := f.request(pending(t, 2000000, "", intent.LevelFourEyes))
	if r := f.signedIn("alice").decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatal(r.code)
	}
	if r := f.signedIn("bob").decide(tk.ID, false); r.code != http.StatusSeeOther {
		t.Fatal(r.code)
	}
	out := f.outcome(tk.ID)
	if out.Status != approvals.StatusRejected || len(out.Votes) != 2 || out.Votes[1].Approve {
		t.Fatalf("outcome %+v", out)
	}
	if r := f.signedIn("carol").decide(tk.ID, true); r.code != http.StatusConflict {
		t.Fatalf("approve after reject: %d", r.code)
	}
	if rs := f.log.all("emma"); len(rs) != 3 || rs[2].Verdict != intent.Deny || !strings.Contains(rs[2].Message, "rejected by bob") {
		t.Fatalf("receipts %+v", rs)
	}
}

// handlerLogin signs in through the handler directly, from remote address
// ip, and returns the status of the sign-in post.
func handlerLogin(t *testing.T, f *fixture, ip, name, pass string, hdr map[string]string) *httptest.ResponseRecorder {
	t.Helper()
	get := httptest.NewRequest("GET", f.ts.URL+"/login", nil)
	get.RemoteAddr = ip + ":1234"
	rec := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, get)
	var ck *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "ip_login" {
			ck = c
		}
	}
	form := url.Values{"csrf": {ck.Value}, "approver": {name}, "passcode": {pass}}
	post := httptest.NewRequest("POST", f.ts.URL+"/login", strings.NewReader(form.Encode()))
	post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	post.AddCookie(ck)
	post.RemoteAddr = ip + ":1234"
	for k, v := range hdr {
		post.Header.Set(k, v)
	}
	rec = httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, post)
	return rec
}

func TestRateLimit(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	const ip = "192.0.2.1"
	login := func(ip, name, pass string) int {
		return handlerLogin(t, f, ip, name, pass, map[string]string{"X-Forwarded-For": "198.51.100.7"}).Code
	}
	if c := login(ip, "alice", "wrong-passcode"); c != http.StatusUnauthorized {
		t.Fatalf("wrong passcode: %d", c)
	}
	// Locked out for 1s: even the right passcode is not checked.
	if c := login(ip, "alice", passcodes["alice"]); c != http.StatusTooManyRequests {
		t.Fatalf("right passcode during lock-out: %d", c)
	}
	rec := handlerLogin(t, f, ip, "alice", passcodes["alice"], nil)
	if rec.Header().Get("Retry-After") != "1" {
		t.Fatalf("Retry-After %q", rec.Header().Get("Retry-After"))
	}
	// Growing back-off: 1s, 2s, 4s.
	f.clock.Advance(time.Second)
	login(ip, "alice", "wrong-passcode")
	f.clock.Advance(2 * time.Second)
	login(ip, "alice", "wrong-passcode")
	f.clock.Advance(3 * time.Second)
	if c := login(ip, "alice", passcodes["alice"]); c != http.StatusTooManyRequests {
		t.Fatalf("after 3 failures, 3s later: %d, want still locked (4s)", c)
	}
	// Per approver and address only: a process failing sign-ins for alice
	// (the agent, on the same host) does not lock her out everywhere.
	if c := login("192.0.2.2", "alice", passcodes["alice"]); c != http.StatusSeeOther {
		t.Fatalf("alice from another address: %d", c)
	}
	// Per address: bob from the first address too, but not from elsewhere.
	if c := login(ip, "bob", passcodes["bob"]); c != http.StatusTooManyRequests {
		t.Fatalf("bob from the locked address: %d", c)
	}
	if c := login("192.0.2.3", "bob", passcodes["bob"]); c != http.StatusSeeOther {
		t.Fatalf("bob from elsewhere: %d", c)
	}
	// Unknown names count against the address.
	if c := login("192.0.2.4", "mallory", "whatever-1"); c != http.StatusUnauthorized {
		t.Fatalf("unknown approver: %d", c)
	}
	if c := login("192.0.2.4", "carol", passcodes["carol"]); c != http.StatusTooManyRequests {
		t.Fatalf("carol from an address that guessed names: %d", c)
	}
	// Once the lock-out ends, the right passcode works and clears it.
	f.clock.Advance(time.Second)
	if c := login(ip, "alice", passcodes["alice"]); c != http.StatusSeeOther {
		t.Fatalf("after the lock-out: %d", c)
	}
	if c := login(ip, "alice", "wrong-passcode"); c != http.StatusUnauthorized {
		t.Fatalf("after success the count restarts: %d", c)
	}
}

func TestCSRFAndHeaders(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tk := f.request(pending(t, 150000, "", intent.LevelConfirm))
	alice := f.signedIn("alice")
	page := alice.do("GET", "/requests/"+tk.ID, nil, nil)
	csrf := csrfOf(t, page)
	hash := f.outcome(tk.ID).Hash.String()
	bob := f.signedIn("bob")
	bobCSRF := csrfOf(t, bob.do("GET", "/requests", nil, nil))
	for _, tt := range []struct {
		name string
		form url.Values
		hdr  map[string]string
		want int
	}{
		{"no token", url.Values{"operation": {hash}}, nil, http.StatusForbidden},
		{"another session's token", url.Values{"csrf": {bobCSRF}, "operation": {hash}}, nil, http.StatusForbidden},
		{"cross-site origin", url.Values{"csrf": {csrf}, "operation": {hash}}, map[string]string{"Origin": "http://evil.example"}, http.StatusForbidden},
		{"cross-site fetch", url.Values{"csrf": {csrf}, "operation": {hash}}, map[string]string{"Sec-Fetch-Site": "cross-site"}, http.StatusForbidden},
		{"another host (DNS rebinding)", url.Values{"csrf": {csrf}, "operation": {hash}}, map[string]string{"Host": "evil.example"}, http.StatusMisdirectedRequest},
		{"another operation", url.Values{"csrf": {csrf}, "operation": {strings.Repeat("ab", 32)}}, nil, http.StatusConflict},
	} {
		if r := alice.do("POST", "/requests/"+tk.ID+"/approve", tt.form, tt.hdr); r.code != tt.want {
			t.Errorf("%s: %d, want %d", tt.name, r.code, tt.want)
		}
	}
	if out := f.outcome(tk.ID); len(out.Votes) != 0 {
		t.Fatalf("a refused post was recorded: %+v", out.Votes)
	}
	// Signed out: nothing.
	if r := f.client().do("POST", "/requests/"+tk.ID+"/approve", url.Values{"csrf": {csrf}, "operation": {hash}}, nil); r.code != http.StatusForbidden {
		t.Fatalf("signed out: %d", r.code)
	}
	// The sign-in form needs its own token.
	if r := f.client().do("POST", "/login", url.Values{"approver": {"alice"}, "passcode": {passcodes["alice"]}}, nil); r.code != http.StatusForbidden {
		t.Fatalf("login without token: %d", r.code)
	}
	// No HTTP endpoint creates a request.
	for _, m := range []string{"POST", "PUT"} {
		if r := alice.do(m, "/requests", url.Values{"csrf": {csrf}}, nil); r.code != http.StatusMethodNotAllowed && r.code != http.StatusNotFound {
			t.Errorf("%s /requests: %d", m, r.code)
		}
	}
	// Headers and cookies.
	if got := page.hdr.Get("Content-Security-Policy"); !strings.Contains(got, "default-src 'none'") || strings.Contains(got, "script-src") {
		t.Errorf("CSP %q", got)
	}
	for _, h := range []string{"X-Frame-Options", "X-Content-Type-Options", "Referrer-Policy", "Cache-Control"} {
		if page.hdr.Get(h) == "" {
			t.Errorf("no %s header", h)
		}
	}
	c := f.client()
	c.do("GET", "/login", nil, nil)
	form := c.do("GET", "/login", nil, nil)
	r := c.do("POST", "/login", url.Values{"csrf": {csrfOf(t, form)}, "approver": {"alice"}, "passcode": {passcodes["alice"]}}, nil)
	var session string
	for _, sc := range r.hdr.Values("Set-Cookie") {
		if strings.HasPrefix(sc, "ip_session=") {
			session = sc
		}
	}
	if !strings.Contains(session, "HttpOnly") || !strings.Contains(session, "SameSite=Strict") || strings.Contains(session, "Secure") {
		t.Fatalf("session cookie %q", session)
	}
	if r.loc != "/requests" {
		t.Fatalf("redirect to %q", r.loc)
	}
	// Open redirect refused.
	form = c.do("GET", "/login", nil, nil)
	r = c.do("POST", "/login", url.Values{"csrf": {csrfOf(t, form)}, "approver": {"alice"}, "passcode": {passcodes["alice"]}, "next": {"//evil.example/"}}, nil)
	if r.loc != "/requests" {
		t.Fatalf("redirect to %q", r.loc)
	}
}

func TestSecureCookieUnderTLS(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *approvals.Config) { c.BaseURL = "https://approve.example" })
	get := httptest.NewRequest("GET", "https://approve.example/login", nil)
	w := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(w, get)
	sc := w.Header().Get("Set-Cookie")
	if !strings.Contains(sc, "Secure") || !strings.Contains(sc, "HttpOnly") || !strings.Contains(sc, "SameSite=Strict") {
		t.Fatalf("cookie under TLS %q", sc)
	}
	if w.Header().Get("Strict-Transport-Security") == "" {
		t.Fatal("no HSTS under TLS")
	}
}

func TestAwait(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	ctx := context.Background()
	tk := f.request(pending(t, 150000, "", intent.LevelConfirm))
	// wait = 0: at once, still pending.
	out, err := approvals.Await(ctx, f.srv, tk.ID, 0)
	if err != nil || out.Status != approvals.StatusPending {
		t.Fatalf("Await(0) = %+v, %v", out, err)
	}
	// wait = N without decision: pending after N, no error.
	start := time.Now()
	out, err = approvals.Await(ctx, f.srv, tk.ID, 50*time.Millisecond)
	if err != nil || out.Status != approvals.StatusPending || time.Since(start) < 50*time.Millisecond {
		t.Fatalf("Await(50ms) = %+v, %v after %s", out, err, time.Since(start))
	}
	// wait = N with a decision during the wait.
	alice := f.signedIn("alice")
	done := make(chan approvals.Outcome)
	go func() {
		out, err := approvals.Await(ctx, f.srv, tk.ID, 10*time.Second)
		if err != nil {
			t.Error(err)
		}
		done <- out
	}()
	time.Sleep(20 * time.Millisecond)
	alice.decide(tk.ID, true)
	select {
	case out := <-done:
		if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 {
			t.Fatalf("Await during approval: %+v", out)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Await did not return after the approval")
	}
	// Expiry ends a wait too (with the injected clock).
	tk = f.request(pending(t, 150000, "x", intent.LevelConfirm))
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.clock.Advance(time.Hour)
	}()
	if out, err := approvals.Await(ctx, f.srv, tk.ID, 10*time.Second); err != nil || out.Status != approvals.StatusExpired {
		t.Fatalf("Await over expiry: %+v %v", out, err)
	}
	if _, err := approvals.Await(ctx, f.srv, "nope", time.Second); !errors.Is(err, approvals.ErrNotFound) {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestReceiptFailureFailsClosed(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tk := f.request(pending(t, 150000, "", intent.LevelConfirm))
	alice := f.signedIn("alice")
	f.log.mu.Lock()
	f.log.fail = true
	f.log.mu.Unlock()
	if r := alice.decide(tk.ID, true); r.code != http.StatusInternalServerError || strings.Contains(r.body, "disk full") {
		t.Fatalf("decision with a broken log: %d %.300s", r.code, r.body)
	}
	if out := f.outcome(tk.ID); len(out.Approvals) != 0 {
		t.Fatal("approval given without a receipt")
	}
	if _, err := f.srv.Request(context.Background(), pending(t, 1, "", intent.LevelConfirm)); err == nil {
		t.Fatal("request accepted without a receipt")
	}
}

// TestApproverOwners: an approver limited to some owners neither sees nor
// decides another owner's request, on the page or by a forged form.
func TestApproverOwners(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *approvals.Config) {
		c.Approvers[2].Owners = []intent.Owner{"globex"} // carol
	})
	tk := f.request(pending(t, 150000, "", intent.LevelConfirm)) // emma's
	carol := f.signedIn("carol")
	if p := carol.do("GET", "/requests", nil, nil); p.code != http.StatusOK || strings.Contains(p.body, tk.ID) {
		t.Fatalf("carol's list shows emma's request: %d", p.code)
	}
	if p := carol.do("GET", "/requests/"+tk.ID, nil, nil); p.code != http.StatusNotFound {
		t.Fatalf("carol opened emma's request: %d", p.code)
	}
	csrf := csrfOf(t, carol.do("GET", "/requests", nil, nil))
	hash := f.outcome(tk.ID).Hash.String()
	if p := carol.do("POST", "/requests/"+tk.ID+"/approve", url.Values{"csrf": {csrf}, "operation": {hash}}, nil); p.code != http.StatusNotFound {
		t.Fatalf("carol approved emma's request: %d", p.code)
	}
	if p := carol.do("POST", "/requests/"+tk.ID+"/reject", url.Values{"csrf": {csrf}, "operation": {hash}}, nil); p.code != http.StatusNotFound {
		t.Fatalf("carol rejected emma's request: %d", p.code)
	}
	if out := f.outcome(tk.ID); out.Status != approvals.StatusPending || len(out.Votes) != 0 {
		t.Fatalf("outcome %+v", out)
	}
	alice := f.signedIn("alice")
	if p := alice.do("GET", "/requests", nil, nil); !strings.Contains(p.body, tk.ID) {
		t.Fatal("alice (every owner) does not see the request")
	}
	if r := alice.decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("alice: %d", r.code)
	}
}

// TestLoopbackAliases: bound to loopback without a BaseURL, the page
// answers at localhost, 127.0.0.1 and [::1] with its port, and nowhere
// else; a sign-in posted from http://localhost:PORT is same-origin.
func TestLoopbackAliases(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *approvals.Config) { c.BaseURL, c.Addr = "", "127.0.0.1:8477" })
	get := func(host string) int {
		r := httptest.NewRequest("GET", "/login", nil)
		r.Host = host
		rec := httptest.NewRecorder()
		f.srv.Handler().ServeHTTP(rec, r)
		return rec.Code
	}
	for host, want := range map[string]int{
		"127.0.0.1:8477": http.StatusOK, "localhost:8477": http.StatusOK, "[::1]:8477": http.StatusOK,
		"localhost:8478": http.StatusMisdirectedRequest, "evil.example:8477": http.StatusMisdirectedRequest,
	} {
		if got := get(host); got != want {
			t.Errorf("Host %s: %d, want %d", host, got, want)
		}
	}
	r := httptest.NewRequest("GET", "/login", nil)
	r.Host = "localhost:8477"
	rec := httptest.NewRecorder()
	f.srv.Handler().ServeHTTP(rec, r)
	var ck *http.Cookie
	for _, c := range rec.Result().Cookies() {
		if c.Name == "ip_login" {
			ck = c
		}
	}
	for origin, want := range map[string]int{"http://localhost:8477": http.StatusSeeOther, "http://127.0.0.1:8477": http.StatusSeeOther, "http://evil.example": http.StatusForbidden} {
		form := url.Values{"csrf": {ck.Value}, "approver": {"alice"}, "passcode": {passcodes["alice"]}}
		post := httptest.NewRequest("POST", "/login", strings.NewReader(form.Encode()))
		post.Host = "localhost:8477"
		post.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		post.Header.Set("Origin", origin)
		post.AddCookie(ck)
		rec := httptest.NewRecorder()
		f.srv.Handler().ServeHTTP(rec, post)
		if rec.Code != want {
			t.Errorf("Origin %s: %d, want %d", origin, rec.Code, want)
		}
	}
}

// TestRateLimitLoopbackIsOneClient: a local process cannot dodge the
// back-off by connecting from another loopback address, nor an IPv6 host
// from another address of its /64 (found in review: 50 guesses from
// 127.0.0.2 to 127.0.0.51 were all checked).
func TestRateLimitLoopbackIsOneClient(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	login := func(ip, pass string) int { return handlerLogin(t, f, ip, "alice", pass, nil).Code }
	if c := login("127.0.0.2", "wrong-passcode"); c != http.StatusUnauthorized {
		t.Fatalf("first guess: %d", c)
	}
	if c := login("127.0.0.3", "wrong-passcode"); c != http.StatusTooManyRequests {
		t.Fatalf("second guess from another loopback address: %d, want 429", c)
	}
	if c := login("2001:db8::1", "wrong-passcode"); c != http.StatusUnauthorized {
		t.Fatalf("IPv6 first guess: %d", c)
	}
	if c := login("2001:db8::2", "wrong-passcode"); c != http.StatusTooManyRequests {
		t.Fatalf("IPv6 guess from the same /64: %d, want 429", c)
	}
	if c := login("192.0.2.9", passcodes["alice"]); c != http.StatusSeeOther {
		t.Fatalf("alice from a remote address: %d", c)
	}
}

// TestRequestPageShowsFacts: the facts read from the systems of record are
// shown sorted by name, escaped and flagged like every value, and marked as
// outside the operation hash; they never make a request refused, and a
// change to the caller's map after Request changes nothing shown.
func TestRequestPageShowsFacts(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	p := pending(t, 150000, "", intent.LevelFourEyes)
	p.Facts = map[string]intent.Value{
		"vendor_name":        intent.Str("<b>ACME</b> Supplies\u202e"),
		"current_iban":       intent.Str("DE89370400440532013000"),
		"iban_phone_dialled": intent.Str("+49 30 1234567"),
		"iban_fresh":         intent.Bool(true),
		"open_credit":        intent.Int(2500),
		"empty_fact":         intent.Str(""),
	}
	tk := f.request(p)
	p.Facts["vendor_name"] = intent.Str("Changed after the request")
	if out := f.outcome(tk.ID); out.Status != approvals.StatusPending {
		t.Fatalf("status %s", out.Status)
	}
	body := f.signedIn("bob").do("GET", "/requests/"+tk.ID, nil, nil).body
	start := strings.Index(body, `<table id="facts">`)
	if start < 0 {
		t.Fatalf("no facts table: %.3000s", body)
	}
	table := body[start:]
	table = table[:strings.Index(table, "</table>")]
	for _, want := range []string{
		"&lt;b&gt;ACME&lt;/b&gt; Supplies", `contains non-ASCII or invisible characters: <code>&#34;&lt;b&gt;ACME&lt;/b&gt; Supplies\u202e&#34;</code>`,
		"<code>DE89370400440532013000</code>", "<code>&#43;49 30 1234567</code>", "<code>true</code>", "<code>2500</code>", "(empty)",
	} {
		if !strings.Contains(table, want) {
			t.Errorf("facts table lacks %q: %s", want, table)
		}
	}
	if strings.Contains(body, "<b>ACME") || strings.Contains(body, "Changed after the request") {
		t.Fatal("a fact became markup, or the caller's later change was shown")
	}
	// Sorted by name.
	last := -1
	for _, name := range []string{"current_iban", "empty_fact", "iban_fresh", "iban_phone_dialled", "open_credit", "vendor_name"} {
		i := strings.Index(table, `<th scope="row">`+name+`</th>`)
		if i <= last {
			t.Fatalf("fact %s out of order (at %d, previous at %d): %s", name, i, last, table)
		}
		last = i
	}
	if !strings.Contains(body, "Facts read from the systems of record when the request was made") ||
		!strings.Contains(body, "They are not part of the operation hash") {
		t.Error("the page does not say where the facts come from and that the hash does not cover them")
	}
	// Approvals are still signed over the operation hash alone.
	f.signedIn("alice").decide(tk.ID, true)
	f.signedIn("bob").decide(tk.ID, true)
	if out := f.outcome(tk.ID); out.Status != approvals.StatusApproved || out.Approvals[0].Operation != p.Hash {
		t.Fatalf("outcome %+v", out)
	}

	// A request without facts shows no facts table.
	tk = f.request(pending(t, 150000, "x", intent.LevelConfirm))
	if body := f.signedIn("bob").do("GET", "/requests/"+tk.ID, nil, nil).body; strings.Contains(body, `id="facts"`) {
		t.Fatal("facts table without facts")
	}
}
