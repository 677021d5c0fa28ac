package approvals_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/store/mem"
)

// storedFixture is a fixture and the store that outlives its restarts (as
// the embedded or PostgreSQL store outlives a process).
func storedFixture(t *testing.T, mutate func(*approvals.Config)) (*fixture, *mem.Store) {
	t.Helper()
	f := newFixture(t, mutate)
	return f, f.st
}

// TestRestartKeepsRequests: a restart of the Server over the same Store
// keeps every request: an open one is still listed and can be approved
// after; an approval given before is still there, signed; a rejection is
// still final; a four-eyes request keeps its first vote, and the same
// approver still cannot give the second.
func TestRestartKeepsRequests(t *testing.T) {
	t.Parallel()
	f, _ := storedFixture(t, nil)
	open := f.request(pending(t, 150000, "open", intent.LevelConfirm))
	approved := f.request(pending(t, 150000, "approved", intent.LevelConfirm))
	rejected := f.request(pending(t, 150000, "rejected", intent.LevelConfirm))
	four := f.request(pending(t, 600000, "four", intent.LevelFourEyes))
	alice := f.signedIn("alice")
	for _, d := range []struct {
		id      string
		approve bool
	}{{approved.ID, true}, {rejected.ID, false}, {four.ID, true}} {
		if p := alice.decide(d.id, d.approve); p.code != http.StatusSeeOther {
			t.Fatalf("decide %s: %d %.300s", d.id, p.code, p.body)
		}
	}
	before := f.outcome(approved.ID)

	f.restart(nil)
	ctx := context.Background()
	if out := f.outcome(open.ID); out.Status != approvals.StatusPending {
		t.Fatalf("open request after a restart: %s", out.Status)
	}
	bob := f.signedIn("bob")
	list := bob.do("GET", "/requests", nil, nil)
	for _, id := range []string{open.ID, four.ID, approved.ID, rejected.ID} {
		if !strings.Contains(list.body, id) {
			t.Errorf("request %s not listed after a restart", id)
		}
	}
	if !strings.Contains(list.body, "approved") || !strings.Contains(list.body, "emma #") {
		t.Errorf("recent decisions lost in the restart: %.2000s", list.body)
	}

	after := f.outcome(approved.ID)
	if after.Status != approvals.StatusApproved || len(after.Approvals) != 1 || after.Approvals[0].ID != before.Approvals[0].ID {
		t.Fatalf("approved request after a restart: %+v", after)
	}
	if g, err := approval.Evaluate(f.srv.Keys(), after.Approvals[0].Operation, "m-emma", f.clock.Now(), after.Approvals); err != nil || !g.Confirm {
		t.Fatalf("the kept approval no longer verifies: %v", err)
	}
	if out := f.outcome(rejected.ID); out.Status != approvals.StatusRejected {
		t.Fatalf("rejected request after a restart: %s", out.Status)
	}
	if p := bob.decide(rejected.ID, true); p.code != http.StatusConflict {
		t.Fatalf("approving a rejected request after a restart: %d", p.code)
	}
	// alice's first vote of four eyes survived: she cannot give the
	// second, bob can.
	if p := alice.decide(four.ID, true); p.code != http.StatusConflict || !strings.Contains(p.body, "Already decided by you") {
		t.Fatalf("alice's second vote after a restart: %d %.300s", p.code, p.body)
	}
	if p := bob.decide(four.ID, true); p.code != http.StatusSeeOther {
		t.Fatalf("bob's vote after a restart: %d %.300s", p.code, p.body)
	}
	if out := f.outcome(four.ID); out.Status != approvals.StatusApproved || len(out.Approvals) != 2 {
		t.Fatalf("four eyes after a restart: %+v", out)
	}
	if p := bob.decide(open.ID, true); p.code != http.StatusSeeOther {
		t.Fatalf("approving the open request after a restart: %d", p.code)
	}
	out, err := f.srv.Wait(ctx, open.ID)
	if err != nil || out.Status != approvals.StatusApproved {
		t.Fatalf("Wait after a restart: %+v, %v", out, err)
	}

	// Expiry and Retain still hold: an hour after its expiry a request
	// is forgotten.
	f.clock.Advance(10*time.Minute + time.Hour + time.Second)
	if _, err := f.srv.Outcome(ctx, open.ID); !errors.Is(err, approvals.ErrNotFound) {
		t.Fatalf("a request past Retain: %v", err)
	}
}

// TestSessionsKeptHashed: a sign-in survives a restart until it expires;
// the store holds neither the session cookie nor the form token; the
// sign-in of an approver no longer configured ends.
func TestSessionsKeptHashed(t *testing.T) {
	t.Parallel()
	f, st := storedFixture(t, nil)
	tk := f.request(pending(t, 150000, "x", intent.LevelConfirm))
	alice, bob := f.signedIn("alice"), f.signedIn("bob")
	u, _ := url.Parse(f.ts.URL)
	var secrets []string
	for _, c := range []*client{alice, bob} {
		for _, ck := range c.hc.Jar.Cookies(u) {
			if ck.Name == "ip_session" {
				secrets = append(secrets, ck.Value)
			}
		}
		secrets = append(secrets, csrfOf(t, c.do("GET", "/requests", nil, nil)))
	}
	if len(secrets) != 4 {
		t.Fatalf("cookies and form tokens: %q", secrets)
	}
	n := 0
	if err := st.Entries(context.Background(), approvals.SpaceSessions, func(k string, v []byte) error {
		n++
		for _, s := range secrets {
			if strings.Contains(k, s) || strings.Contains(string(v), s) {
				t.Errorf("the store holds a session secret in clear: %q = %s", k, v)
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if n != 2 {
		t.Fatalf("%d sessions kept, want 2", n)
	}

	f.restart(func(c *approvals.Config) { c.Approvers = c.Approvers[:2] }) // carol removed; alice and bob stay
	if p := alice.decide(tk.ID, true); p.code != http.StatusSeeOther {
		t.Fatalf("alice's sign-in did not survive the restart: %d %.300s", p.code, p.body)
	}
	f.restart(func(c *approvals.Config) { c.Approvers = c.Approvers[:1] }) // bob removed
	if p := bob.do("GET", "/requests", nil, nil); p.code != http.StatusSeeOther || !strings.HasPrefix(p.loc, "/login") {
		t.Fatalf("a removed approver's sign-in still works: %d %q", p.code, p.loc)
	}
	// Signing out ends the sign-in everywhere the store is shared.
	csrf := csrfOf(t, alice.do("GET", "/requests", nil, nil))
	if p := alice.do("POST", "/logout", url.Values{"csrf": {csrf}}, nil); p.code != http.StatusSeeOther {
		t.Fatalf("logout: %d", p.code)
	}
	f.clock.Advance(time.Second)
	if p := alice.do("GET", "/requests", nil, nil); p.code != http.StatusSeeOther {
		t.Fatalf("signed out, still in: %d", p.code)
	}
	// And a sign-in expires at SessionTTL, restart or not.
	again := f.signedIn("alice")
	f.restart(nil)
	f.clock.Advance(31 * time.Minute)
	if p := again.do("GET", "/requests", nil, nil); p.code != http.StatusSeeOther {
		t.Fatalf("an expired sign-in still works after a restart: %d", p.code)
	}
}

// TestCallbacksKept: a call-back recorded on the page is still listed
// after a restart, for CallbackRetain; one the sink refused is not listed.
func TestCallbacksKept(t *testing.T) {
	t.Parallel()
	sk := &sink{}
	f, st := storedFixture(t, func(c *approvals.Config) { c.Callbacks = sk })
	if p := f.signedIn("alice").postCallback(goodForm()); p.code != http.StatusSeeOther {
		t.Fatalf("post: %d %.300s", p.code, p.body)
	}
	id := sk.entries()[0].ID
	f.restart(nil)
	bob := f.signedIn("bob")
	if p := bob.do("GET", "/callbacks", nil, nil); !strings.Contains(p.body, id) || !strings.Contains(p.body, "emma #") {
		t.Fatalf("the call-back is not listed after a restart: %.2000s", p.body)
	}
	sk.mu.Lock()
	sk.noRecord = true
	sk.mu.Unlock()
	if p := bob.postCallback(goodForm()); p.code != http.StatusInternalServerError || !strings.Contains(p.body, "does not count") {
		t.Fatalf("a call-back the sink did not record: %d %.300s", p.code, p.body)
	}
	n := 0
	if err := st.Entries(context.Background(), approvals.SpaceCallbacks, func(string, []byte) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("%d call-backs kept, %v; want 1", n, err)
	}
	// Kept for CallbackRetain, then forgotten.
	f.clock.Advance(30*24*time.Hour + time.Second)
	if p := bob.signedInAgain(f); strings.Contains(p.body, id) {
		t.Fatal("a call-back past CallbackRetain is still listed")
	}
}

// signedInAgain signs c's approver in again (the clock moved past the
// session) and opens the call-back page.
func (c *client) signedInAgain(f *fixture) page {
	c.t.Helper()
	if p := c.login("bob", passcodes["bob"]); p.code != http.StatusSeeOther {
		c.t.Fatalf("login: %d", p.code)
	}
	return c.do("GET", "/callbacks", nil, nil)
}

// TestTrackerRestart: the Tracker's memory is kept in the store: after a
// restart, the agent's retry of an operation finds its request (approved
// meanwhile) instead of opening another, and a rejection stays final.
func TestTrackerRestart(t *testing.T) {
	t.Parallel()
	f, st := storedFixture(t, nil)
	ctx := context.Background()
	tcfg := approvals.TrackerConfig{Until: t0.Add(24 * time.Hour), Now: f.clock.Now}
	tr := approvals.NewTracker(f.srv, st, tcfg)
	ok, no := pending(t, 150000, "ok", intent.LevelConfirm), pending(t, 150000, "no", intent.LevelConfirm)
	l1, err := tr.Request(ctx, ok)
	if err != nil {
		t.Fatal(err)
	}
	l2, err := tr.Request(ctx, no)
	if err != nil {
		t.Fatal(err)
	}
	bob := f.signedIn("bob")
	bob.decide(l2[strings.LastIndex(l2, "/")+1:], false)
	if _, err := tr.Await(ctx, no.Hash, 0); !errors.Is(err, approval.ErrRejected) {
		t.Fatalf("Await of the rejected operation: %v", err)
	}

	f.restart(nil)
	tr = approvals.NewTracker(f.srv, st, tcfg)
	if l, err := tr.Request(ctx, ok); err != nil || l != l1 {
		t.Fatalf("the retry after a restart got %q, %v; want the open request %s", l, err, l1)
	}
	if as, err := tr.Await(ctx, ok.Hash, 0); err != nil || len(as) != 0 {
		t.Fatalf("Await of the open request: %v, %v", as, err)
	}
	bob.decide(l1[strings.LastIndex(l1, "/")+1:], true)
	f.restart(nil)
	tr = approvals.NewTracker(f.srv, st, tcfg)
	as, err := tr.Await(ctx, ok.Hash, 0)
	if err != nil || len(as) != 1 || as[0].Approver != "bob" || as[0].Operation != ok.Hash {
		t.Fatalf("Await after a restart: %+v, %v", as, err)
	}
	if _, err := tr.Request(ctx, no); !errors.Is(err, approval.ErrRejected) || !strings.Contains(err.Error(), "by bob") {
		t.Fatalf("a rejected operation after a restart: %v", err)
	}
	if _, err := tr.Await(ctx, no.Hash, 0); !errors.Is(err, approval.ErrRejected) {
		t.Fatalf("Await of a rejected operation after a restart: %v", err)
	}
	// Until the mandate expires.
	f.clock.Advance(24 * time.Hour)
	if err := st.Entries(ctx, approvals.SpaceRejections, func(k string, _ []byte) error {
		return errors.New("a rejection kept after the mandate expired: " + k)
	}); err != nil {
		t.Fatal(err)
	}
}

// TestReplicasShareRequests: two Servers over one store (two replicas
// sharing PostgreSQL) list the same requests; a decision on one is what
// the other's Wait returns.
func TestReplicasShareRequests(t *testing.T) {
	t.Parallel()
	f, _ := storedFixture(t, nil)
	other, err := approvals.New(f.cfg, f.log, f.st) // one store, two replicas
	if err != nil {
		t.Fatal(err)
	}
	tk := f.request(pending(t, 150000, "shared", intent.LevelConfirm))
	out, err := other.Outcome(context.Background(), tk.ID)
	if err != nil || out.Status != approvals.StatusPending {
		t.Fatalf("the other replica: %+v, %v", out, err)
	}
	done := make(chan approvals.Outcome, 1)
	go func() {
		out, _ := other.Wait(context.Background(), tk.ID)
		done <- out
	}()
	f.signedIn("alice").decide(tk.ID, true)
	select {
	case out := <-done:
		if out.Status != approvals.StatusApproved || len(out.Approvals) != 1 {
			t.Fatalf("the other replica's Wait: %+v", out)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the other replica's Wait did not see the decision")
	}
}

// racingStore is a store that runs between, once, after a Server has
// read a request and before it swaps its vote in: another replica's
// decision landing at that very moment.
type racingStore struct {
	*mem.Store
	once    sync.Once
	between func()
}

func (s *racingStore) SwapEntry(ctx context.Context, space, key string, old, value []byte, expires time.Time) (bool, error) {
	if space == approvals.SpaceRequests {
		s.once.Do(s.between)
	}
	return s.Store.SwapEntry(ctx, space, key, old, value, expires)
}

// replica is another Server over f's store (or a wrapper of it), with its
// own page: a second replica of the approvals service.
func (f *fixture) replica(st approvals.Store) *fixture {
	f.t.Helper()
	r := &fixture{t: f.t, clock: f.clock, log: f.log, cfg: f.cfg, st: f.st}
	r.ts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, q *http.Request) { (*r.h.Load()).ServeHTTP(w, q) }))
	f.t.Cleanup(r.ts.Close)
	r.cfg.BaseURL = r.ts.URL // its own address, as the page checks Host
	srv, err := approvals.New(r.cfg, f.log, st)
	if err != nil {
		f.t.Fatal(err)
	}
	r.srv = srv
	h := srv.Handler()
	r.h.Store(&h)
	return r
}

// TestReplicasSimultaneousVotes: two approvers decide one request at the
// same moment on two replicas sharing the store (the second lands between
// the first's read and its write). No vote is lost silently: of two
// four-eyes approvals both count and the request is approved; an approval
// racing a rejection that landed first does not count, its approver is
// told so, the request stays rejected with no approval, and the receipt
// chain says the approval did not count. (With the last write winning,
// the first case kept one approval of two and the second turned a
// rejection into an approval.)
func TestReplicasSimultaneousVotes(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name       string
		level      intent.Level
		bobApprove bool
		wantStatus approvals.Status
		wantAlice  int // the page's answer to alice
		approvals  int
	}{
		{"four eyes, two approvals", intent.LevelFourEyes, true, approvals.StatusApproved, http.StatusSeeOther, 2},
		{"approval racing a rejection", intent.LevelConfirm, false, approvals.StatusRejected, http.StatusConflict, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, st := storedFixture(t, nil)
			tk := f.request(pending(t, 600000, tc.name, tc.level))
			b := f.replica(st)
			bob := b.signedIn("bob")
			racing := &racingStore{Store: st}
			racing.between = func() {
				if p := bob.decide(tk.ID, tc.bobApprove); p.code != http.StatusSeeOther {
					t.Errorf("bob on replica B: %d %.300s", p.code, p.body)
				}
			}
			a := f.replica(racing)
			p := a.signedIn("alice").decide(tk.ID, true)
			if p.code != tc.wantAlice {
				t.Fatalf("alice on replica A: %d %.500s", p.code, p.body)
			}
			out := f.outcome(tk.ID)
			if out.Status != tc.wantStatus || len(out.Approvals) != tc.approvals {
				t.Fatalf("request after both votes: %s with %d approvals; want %s with %d", out.Status, len(out.Approvals), tc.wantStatus, tc.approvals)
			}
			if tc.wantAlice == http.StatusConflict {
				if !strings.Contains(p.body, "did not count") {
					t.Errorf("alice is not told her vote did not count: %.500s", p.body)
				}
				said := false
				for _, r := range f.log.all("emma") {
					said = said || (strings.Contains(r.Message, "did not count") && strings.Contains(r.Message, "alice"))
				}
				if !said {
					t.Error("no receipt says alice's approval did not count")
				}
			}
		})
	}
}
