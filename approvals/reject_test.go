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

func TestRejectNeedsConfirmationAndReason(t *testing.T) {
	f := newFixture(t, nil)
	tk := f.request(pending(t, 250000, "", intent.LevelConfirm))
	bob := f.signedIn("bob")
	req := bob.do("GET", "/requests/"+tk.ID, nil, nil)
	if strings.Contains(req.body, `method="post" action="/requests/`+tk.ID+`/reject"`) {
		t.Fatal("the request page rejects in one click")
	}
	confirm := bob.do("GET", "/requests/"+tk.ID+"/reject", nil, nil)
	if confirm.code != http.StatusOK || !strings.Contains(confirm.body, `id="confirm-reject"`) || !strings.Contains(confirm.body, "2,500.00 EUR") {
		t.Fatalf("confirmation step: %d %.1500s", confirm.code, confirm.body)
	}
	if out := f.outcome(tk.ID); len(out.Votes) != 0 {
		t.Fatal("opening the confirmation step decided")
	}
	post := func(reason string) page {
		form := url.Values{"csrf": {csrfOf(t, confirm)}, "operation": {f.outcome(tk.ID).Hash.String()}}
		if reason != "\x00none" {
			form.Set("reason", reason)
		}
		return bob.do("POST", "/requests/"+tk.ID+"/reject", form, nil)
	}
	for _, bad := range []string{"\x00none", "", "   ", "two\nlines", "zero\u200bwidth", strings.Repeat("x", 501)} {
		if p := post(bad); p.code != http.StatusBadRequest || !strings.Contains(p.body, `id="error"`) {
			t.Errorf("reason %q: %d", bad, p.code)
		}
	}
	if out := f.outcome(tk.ID); len(out.Votes) != 0 {
		t.Fatal("a rejection without a valid reason was recorded")
	}
	const why = "the invoice was already paid by card <b>"
	if p := post(why); p.code != http.StatusSeeOther {
		t.Fatalf("reject: %d %.500s", p.code, p.body)
	}
	out := f.outcome(tk.ID)
	if out.Status != approvals.StatusRejected || len(out.Votes) != 1 || out.Votes[0].Reason != why {
		t.Fatalf("outcome %+v", out)
	}
	if msg := out.Votes[0].Receipt.Message; !strings.HasSuffix(msg, "Reason: "+why) {
		t.Fatalf("the receipt does not record the reason: %q", msg)
	}
	if rs := f.log.all("emma"); rs[len(rs)-1].Message != out.Votes[0].Receipt.Message {
		t.Fatal("the stored receipt differs from the vote's")
	}
	shown := bob.do("GET", "/requests/"+tk.ID, nil, nil)
	if !strings.Contains(shown.body, "Why it was rejected: the invoice was already paid by card &lt;b&gt;") {
		t.Fatalf("the reason is not shown (escaped): %.3000s", shown.body)
	}
	// Once decided, the confirmation step is refused.
	if p := bob.do("GET", "/requests/"+tk.ID+"/reject", nil, nil); p.code != http.StatusConflict {
		t.Fatalf("confirmation of a decided request: %d", p.code)
	}
}

func TestRequestListShowsPayeeAndAmount(t *testing.T) {
	f := newFixture(t, nil)
	f.request(apPending(t))
	p := f.signedIn("alice").do("GET", "/requests", nil, nil)
	for _, want := range []string{"<th>Payee</th>", "V-0042 ACME Supplies GmbH", "12,500.00 EUR"} {
		if !strings.Contains(p.body, want) {
			t.Errorf("the request list lacks %q", want)
		}
	}
}

// A name on file with a bidirectional control is shown with the control
// visible, in the list and on the rejection's confirmation step.
func TestRequestListShowsInvisibleCharacters(t *testing.T) {
	f := newFixture(t, nil)
	p := apPending(t)
	p.Facts["vendor_name"] = intent.Str("ACME\u202eHbmG seilppuS")
	tk := f.request(p)
	bob := f.signedIn("bob")
	for _, path := range []string{"/requests", "/requests/" + tk.ID + "/reject"} {
		body := html.UnescapeString(bob.do("GET", path, nil, nil).body)
		if strings.ContainsRune(body, '\u202e') || !strings.Contains(body, "V-0042 ACME[U+202E]HbmG seilppuS") {
			t.Errorf("%s: the payee's control character is not shown: %.4000s", path, body)
		}
	}
}
