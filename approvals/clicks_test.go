package approvals_test

import (
	"html"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
)

// TestRejectPageSaysRejectionIsFinal (issue 25): the reject page said
// "Nothing will be approved for it: the agent must ask again", while a
// rejection is final. It now says so, leads with the operation in words,
// and keeps the action's code and hash under Details.
func TestRejectPageSaysRejectionIsFinal(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	tk := f.request(pending(t, 150000, "", intent.LevelConfirm))
	body := html.UnescapeString(f.signedIn("alice").do("GET", "/requests/"+tk.ID+"/reject", nil, nil).body)
	for _, want := range []string{"A rejection is final.", "never execute, however often the assistant asks for it again", `<p id="summary" class="lead">pay.send: 1,500.00 EUR to GB29</p>`} {
		if !strings.Contains(body, want) {
			t.Errorf("reject page lacks %q", want)
		}
	}
	for _, not := range []string{"must ask again", "Nothing will be approved"} {
		if strings.Contains(body, not) {
			t.Errorf("reject page says %q", not)
		}
	}
	if top := lead(body); strings.Contains(top, "pay.send</code>") || strings.Contains(top, f.outcome(tk.ID).Hash.String()) {
		t.Error("the action's code or the hash is outside Details")
	}
}

// TestSignInReturnsToPage (issue 25): signing in from /callbacks or
// /audit landed on /requests. The sign-in now returns to the page asked
// for, query included, and still only to the page's own pages.
func TestSignInReturnsToPage(t *testing.T) {
	t.Parallel()
	f, _ := callbackFixture(t)
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log, Verifier: checkpointVerifier()}); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ asked, back string }{
		{"/callbacks", "/callbacks"},
		{"/audit?verdict=allow&min=10000", "/audit?min=10000&verdict=allow"},
		{"/audit/decision?owner=emma&seq=1", "/audit/decision?owner=emma&seq=1"},
		{"/requests/0123456789abcdef0123456789abcdef", "/requests/0123456789abcdef0123456789abcdef"},
	} {
		c := f.client()
		// Not signed in: sent to sign in, with where to come back to.
		req, err := http.NewRequest("GET", f.ts.URL+tc.asked, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := c.hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		loc, err := url.Parse(resp.Header.Get("Location"))
		if err != nil || loc.Path != "/login" {
			t.Fatalf("%s: sent to %q", tc.asked, resp.Header.Get("Location"))
		}
		next := loc.Query().Get("next")
		form := c.do("GET", loc.String(), nil, nil)
		p := c.do("POST", "/login", url.Values{"csrf": {csrfOf(t, form)}, "approver": {"alice"}, "passcode": {passcodes["alice"]}, "next": {next}}, nil)
		if p.code != http.StatusSeeOther || p.loc != tc.back {
			t.Errorf("signed in from %s: %d to %q, want %q", tc.asked, p.code, p.loc, tc.back)
		}
	}
	for _, next := range []string{"//evil.example/callbacks", "https://evil.example/audit", "/\\evil.example", "/audit.csv", "/logout", "javascript:alert(1)", "/callbacks#x"} {
		c := f.client()
		form := c.do("GET", "/login", nil, nil)
		p := c.do("POST", "/login", url.Values{"csrf": {csrfOf(t, form)}, "approver": {"alice"}, "passcode": {passcodes["alice"]}, "next": {next}}, nil)
		if p.loc != "/requests" {
			t.Errorf("next %q: sent to %q", next, p.loc)
		}
	}
}
