package main_test

import (
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/internal/pgtest"
)

// pageUser is a person on the approval page over plain HTTP (a cookie jar,
// the page's forms), for tests that restart the proxy between steps.
type pageUser struct {
	t    *testing.T
	base string
	name string
	hc   *http.Client
}

// signIn signs name in on the page at base.
func signIn(t *testing.T, base, name string) *pageUser {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	u := &pageUser{t: t, base: base, name: name, hc: &http.Client{Jar: jar, Timeout: 20 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}}
	_, body, _ := u.do(http.MethodGet, "/login", nil)
	code, body, _ := u.do(http.MethodPost, "/login", url.Values{"csrf": {formToken(t, body)}, "approver": {name}, "passcode": {passcodes[name]}})
	if code != http.StatusSeeOther {
		t.Fatalf("%s's sign-in: %d %.300s", name, code, body)
	}
	return u
}

var (
	formTokenRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	opHashRE    = regexp.MustCompile(`name="operation" value="([0-9a-f]{64})"`)
	requestIDRE = regexp.MustCompile(`/requests/([0-9a-f]{32})`)
)

func formToken(t *testing.T, body string) string {
	t.Helper()
	m := formTokenRE.FindStringSubmatch(body)
	if m == nil {
		t.Fatalf("no form token on the page: %.500s", body)
	}
	return m[1]
}

// do sends a request to the page (a form when form is not nil) and returns
// the status, the body and the redirect's location.
func (u *pageUser) do(method, path string, form url.Values) (int, string, string) {
	u.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, u.base+path, body)
	if err != nil {
		u.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := u.hc.Do(req)
	if err != nil {
		u.t.Fatalf("%s: %s %s: %v", u.name, method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header.Get("Location")
}

// pending returns the ids of the requests the page lists as pending.
func (u *pageUser) pending() []string {
	u.t.Helper()
	code, body, loc := u.do(http.MethodGet, "/requests", nil)
	if code != http.StatusOK {
		u.t.Fatalf("%s: the request list: %d %s", u.name, code, loc)
	}
	_, table, ok := strings.Cut(body, `id="pending"`)
	if !ok {
		return nil
	}
	table, _, _ = strings.Cut(table, "</table>")
	var ids []string
	for _, m := range requestIDRE.FindAllStringSubmatch(table, -1) {
		if !slices.Contains(ids, m[1]) {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// decide approves, or rejects with a reason, the request at link, as its
// page's form does.
func (u *pageUser) decide(link string, approve bool) {
	u.t.Helper()
	path := strings.TrimPrefix(link, u.base)
	code, body, _ := u.do(http.MethodGet, path, nil)
	m := opHashRE.FindStringSubmatch(body)
	if code != http.StatusOK || m == nil {
		u.t.Fatalf("%s: request %s offers no decision: %d %.500s", u.name, path, code, body)
	}
	form := url.Values{"csrf": {formToken(u.t, body)}, "operation": {m[1]}}
	verb := "/approve"
	if !approve {
		verb = "/reject"
		form.Set("reason", "not what we agreed")
	}
	if code, body, _ := u.do(http.MethodPost, path+verb, form); code != http.StatusSeeOther {
		u.t.Fatalf("%s: %s%s: %d %.500s", u.name, path, verb, code, body)
	}
}

// approve posts an approval of the request at link, with the request's
// operation hash, as a forged form would (the page may offer none), and
// returns the status and body.
func (u *pageUser) approve(link string) (int, string, string) {
	u.t.Helper()
	path := strings.TrimPrefix(link, u.base)
	_, body, _ := u.do(http.MethodGet, path, nil)
	m := regexp.MustCompile(`id="hash">([0-9a-f]{64})<`).FindStringSubmatch(body)
	if m == nil {
		u.t.Fatalf("%s: request %s shows no operation hash: %.500s", u.name, path, body)
	}
	return u.do(http.MethodPost, path+"/approve", url.Values{"csrf": {formToken(u.t, body)}, "operation": {m[1]}})
}

// recordCallback records a call-back to ACME Supplies' phone on file,
// confirming newIBAN, as the page's call-back form does.
func (u *pageUser) recordCallback() {
	u.t.Helper()
	_, body, _ := u.do(http.MethodGet, "/callbacks", nil)
	form := url.Values{"csrf": {formToken(u.t, body)}, "company": {ap.DemoCompany}, "vendor": {"ACME Supplies"},
		"iban": {newIBAN}, "phone": {ap.DemoVendorPhone}, "note": {"Called back; Jane read the IBAN twice."}}
	if code, body, loc := u.do(http.MethodPost, "/callbacks", form); code != http.StatusSeeOther || !strings.Contains(loc, "recorded=") {
		u.t.Fatalf("%s: the call-back was not recorded: %d %.500s", u.name, code, body)
	}
}

// usePostgres points e's [store] at the PostgreSQL database dsn, or, when
// dsn is "", at a new schema of PG_URL (failing under CI=true without
// PG_URL), and returns its connection string.
func usePostgres(t *testing.T, e *env, dsn string) string {
	t.Helper()
	if dsn == "" {
		dsn, _ = pgtest.Schema(t)
	}
	cfg := readFile(t, e.config)
	pg := strings.Replace(cfg, "[store]\n"+exampleStore+"\n", "[store]\nkind = \"postgres\"\ndsn_env = \"INTENTPLANE_PG_URL\"\n", 1)
	if pg == cfg {
		t.Fatal("the example's [store] changed; update this test")
	}
	writeFile(t, e.config, pg)
	e.vars = append(e.vars, "INTENTPLANE_PG_URL="+dsn)
	return dsn
}

// TestApprovalsSurviveRestart is issue 11's "approval requests (open,
// approved, rejected), page sessions and call-backs are kept in the
// store", on the embedded store and on PostgreSQL: before a restart of
// intentplane-mcp a step-up is left open, another approved, a third
// rejected, and a call-back recorded; after it the open request is still
// listed (to a person still signed in), is approved, and the agent's retry
// executes exactly once; the approval given before the restart is used
// once; the rejection stays final; and the call-back supports the
// bank-detail change, whose two approvers are two people other than the
// one who recorded it.
func TestApprovalsSurviveRestart(t *testing.T) {
	t.Parallel()
	for _, kind := range []string{"embedded", "postgres"} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			e := newPageEnv(t, 0, "")
			if kind == "postgres" {
				usePostgres(t, e.env, "")
			} else if !strings.Contains(readFile(t, e.config), exampleStore) {
				t.Fatal("the example no longer keeps its state in the embedded store; update this test")
			}
			pay := func(ref string) string {
				return fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.00","reference":%q}`, ibanOnFile, ref)
			}
			change := fmt.Sprintf(`{"vendor":"ACME Supplies","iban":%q}`, newIBAN)

			c := e.start(mcp.ProtocolVersion20251125, nil)
			open := link(t, call(t, c, "send_money", pay("INV-OPEN")))
			approved := link(t, call(t, c, "send_money", pay("INV-APPROVED")))
			rejected := link(t, call(t, c, "send_money", pay("INV-REJECTED")))
			alice, bob := signIn(t, e.base, "alice"), signIn(t, e.base, "bob")
			alice.decide(approved, true)
			bob.decide(rejected, false)
			alice.recordCallback()
			if got := e.bankCalls("send_money"); len(got) != 0 {
				t.Fatalf("the bank received %v before the restart", got)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}

			c = e.start(mcp.ProtocolVersion20251125, nil)
			// alice is still signed in, and the open request is listed.
			if ids := alice.pending(); len(ids) != 1 || !strings.HasSuffix(open, ids[0]) {
				t.Fatalf("pending after the restart: %v; want %s", ids, open)
			}
			// The agent's retry finds the same request, not a new one.
			if l := link(t, call(t, c, "send_money", pay("INV-OPEN"))); l != open {
				t.Fatalf("the retry after the restart got %s, want the open request %s", l, open)
			}
			bob.decide(open, true)
			wantOK(t, call(t, c, "send_money", pay("INV-OPEN")), "Transfer")
			wantError(t, call(t, c, "send_money", pay("INV-OPEN")), "already")
			// The approval given before the restart is used, once.
			wantOK(t, call(t, c, "send_money", pay("INV-APPROVED")), "Transfer")
			wantError(t, call(t, c, "send_money", pay("INV-APPROVED")), "already")
			// The rejection before the restart is final: no new request.
			for range 2 {
				r := call(t, c, "send_money", pay("INV-REJECTED"))
				wantError(t, r, "rejected")
				if linkRE.MatchString(text(r)) {
					t.Fatalf("a rejected operation got a new request after the restart: %s", text(r))
				}
			}
			calls := strings.Join(e.bankCalls("send_money"), "\n")
			for ref, want := range map[string]int{"INV-OPEN": 1, "INV-APPROVED": 1, "INV-REJECTED": 0} {
				if n := strings.Count(calls, ref); n != want {
					t.Errorf("the bank received %s %d times, want %d:\n%s", ref, n, want, calls)
				}
			}
			// The call-back recorded before the restart still counts.
			l := link(t, call(t, c, "ap_change_vendor_bank", change))
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			c = e.start(mcp.ProtocolVersion20251125, nil)
			// alice recorded the call-back, so she is not one of the
			// change's two approvers; bob and dave are.
			if code, body, _ := alice.approve(l); code != http.StatusConflict || !strings.Contains(body, "Not yours to approve") {
				t.Fatalf("the call-back's recorder approved the change: %d %.300s", code, body)
			}
			bob.decide(l, true)
			signIn(t, e.base, "dave").decide(l, true)
			wantOK(t, call(t, c, "ap_change_vendor_bank", change))
			wantOK(t, call(t, c, "ap_get_vendor", `{"vendor":"ACME Supplies"}`), newIBAN)
		})
	}
}

// TestReplicasSharePendingRequests: two intentplane-mcp processes sharing
// one PostgreSQL schema, each with its own approval page, list the same
// pending request; approved on the second's page, the first's agent runs
// it once, and the second's agent, asking for the same operation, is told
// it already executed.
func TestReplicasSharePendingRequests(t *testing.T) {
	t.Parallel()
	e1 := newPageEnv(t, 0, "")
	e2 := newPageEnv(t, 0, "")
	usePostgres(t, e2.env, usePostgres(t, e1.env, ""))
	// One bank for both, so that its log counts every transfer.
	cfg := readFile(t, e2.config)
	shared := strings.Replace(cfg, e2.bankLog, e1.bankLog, 1)
	if shared == cfg {
		t.Fatal("the bank's log is not in the configuration; update this test")
	}
	writeFile(t, e2.config, shared)
	// The same approvers on both pages (keys and passcodes).
	for _, n := range []string{"alice.key", "bob.key", "carol.key", "dave.key"} {
		copyFile(t, e1.dir+"/"+n, e2.dir+"/"+n)
	}
	c1 := e1.start(mcp.ProtocolVersion20251125, nil)
	c2 := e2.start(mcp.ProtocolVersion20251125, nil)

	args := fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.00","reference":"INV-SHARED"}`, ibanOnFile)
	l := link(t, call(t, c1, "send_money", args))
	bob := signIn(t, e2.base, "bob")
	if ids := bob.pending(); len(ids) != 1 || !strings.HasSuffix(l, ids[0]) {
		t.Fatalf("the second replica's page lists %v; want the first's request %s", ids, l)
	}
	bob.decide(e2.base+l[strings.Index(l, "/requests/"):], true)
	wantOK(t, call(t, c1, "send_money", args), "Transfer")
	wantError(t, call(t, c2, "send_money", args), "already")
	if got := e1.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("the bank received %d transfers, want 1: %v", len(got), got)
	}
}
