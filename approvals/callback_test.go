package approvals_test

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// sink is a fake CallbackSink: vendor "acme" (or its ID "v1") of any
// company, whose phone on file is "+49 30 1234567"; IBANs are upper-cased
// and stripped of spaces, and must start with two letters.
type sink struct {
	mu       sync.Mutex
	checked  int
	recorded []approvals.CallbackEntry
	broken   bool
	noRecord bool // RecordCallback fails
}

func (s *sink) CheckCallback(ctx context.Context, e approvals.CallbackEntry) (approvals.CallbackEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checked++
	if s.broken {
		return e, errors.New("erp: connection refused at 10.0.0.7")
	}
	if e.Vendor != "acme" && e.Vendor != "v1" {
		return e, &approvals.CallbackError{Field: "vendor", Text: "No such vendor <b>on file</b>."}
	}
	if e.Phone != "+49 30 1234567" {
		return e, &approvals.CallbackError{Field: "phone", Text: "Not the phone on file."}
	}
	n := strings.ToUpper(strings.ReplaceAll(e.IBAN, " ", ""))
	if len(n) < 4 || n[0] < 'A' || n[0] > 'Z' {
		return e, &approvals.CallbackError{Field: "iban", Text: "Not a valid IBAN."}
	}
	e.Vendor, e.VendorName, e.IBAN = "v1", "ACME Supplies", n
	e.CalledBy = "someone else" // the page must keep its own
	return e, nil
}

func (s *sink) RecordCallback(ctx context.Context, e approvals.CallbackEntry) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.noRecord {
		return errors.New("records unavailable")
	}
	s.recorded = append(s.recorded, e)
	return nil
}

func (s *sink) entries() []approvals.CallbackEntry {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]approvals.CallbackEntry(nil), s.recorded...)
}

// callbackFixture is a page with a sink; alice may act for emma only.
func callbackFixture(t *testing.T) (*fixture, *sink) {
	t.Helper()
	sk := &sink{}
	f := newFixture(t, func(c *approvals.Config) {
		c.Callbacks = sk
		c.Approvers[0].Owners = []intent.Owner{"emma"}
	})
	return f, sk
}

func goodForm() url.Values {
	return url.Values{"company": {"emma"}, "vendor": {"acme"}, "iban": {"de89 3704 0044 0532 0130 00"},
		"phone": {"+49 30 1234567"}, "note": {"Spoke to Jane in accounts; she read the IBAN twice."}}
}

// postCallback opens the form and posts it with fields changed by form.
func (c *client) postCallback(form url.Values) page {
	c.t.Helper()
	p := c.do("GET", "/callbacks", nil, nil)
	if p.code != http.StatusOK {
		c.t.Fatalf("GET /callbacks: %d %.300s", p.code, p.body)
	}
	if _, ok := form["csrf"]; !ok {
		form.Set("csrf", csrfOf(c.t, p))
	}
	return c.do("POST", "/callbacks", form, nil)
}

func TestCallbackRecorded(t *testing.T) {
	t.Parallel()
	f, sk := callbackFixture(t)
	c := f.signedIn("alice")
	if p := c.do("GET", "/requests", nil, nil); !strings.Contains(p.body, `href="/callbacks"`) {
		t.Fatalf("the list does not link the call-back form: %.500s", p.body)
	}
	p := c.postCallback(goodForm())
	if p.code != http.StatusSeeOther || !strings.HasPrefix(p.loc, "/callbacks?recorded=") {
		t.Fatalf("post: %d %q %.300s", p.code, p.loc, p.body)
	}
	got := sk.entries()
	if len(got) != 1 {
		t.Fatalf("sink recorded %d call-backs", len(got))
	}
	e := got[0]
	if e.CalledBy != "alice" || e.Owner != "emma" || e.Vendor != "v1" || e.IBAN != "DE89370400440532013000" || !e.At.Equal(t0) || len(e.ID) != 32 {
		t.Fatalf("recorded %+v", e)
	}
	// The receipt: who, when, what, in the company's chain.
	rs := f.log.all("emma")
	if len(rs) != 1 {
		t.Fatalf("%d receipts", len(rs))
	}
	r := rs[0]
	if r.Action != approvals.ActionRecordCallback || r.Verdict != intent.Allow || r.Result != receipt.ResultExecuted || !r.Time.Equal(t0) {
		t.Fatalf("receipt %+v", r)
	}
	for k, want := range map[string]string{"called_by": "alice", "vendor": "v1", "vendor_name": "ACME Supplies", "iban": "DE89370400440532013000",
		"phone": "+49 30 1234567", "callback": e.ID, "note": "Spoke to Jane in accounts; she read the IBAN twice."} {
		if got := r.Args[k].Str; got != want {
			t.Errorf("receipt arg %s = %q, want %q", k, got, want)
		}
	}
	// Shown back normalized, in groups of four, and listed.
	p = c.do("GET", p.loc, nil, nil)
	if !strings.Contains(p.body, `id="recorded-iban">DE89 3704 0044 0532 0130 00<`) {
		t.Fatalf("recorded IBAN not shown back: %.2000s", p.body)
	}
	if !strings.Contains(p.body, `id="recent-callbacks"`) || !strings.Contains(p.body, "emma #1") ||
		!strings.Contains(p.body, `<code class="record">`+e.ID+`</code>`) || !strings.Contains(p.body, `id="recorded-id">`+e.ID+`<`) {
		t.Fatalf("recent call-backs not listed: %.2000s", p.body)
	}
}

func TestCallbackFormRefusals(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change url.Values
		code   int
		text   string
	}{
		{"no vendor", url.Values{"vendor": {""}}, http.StatusBadRequest, "Fill in the vendor"},
		{"no IBAN", url.Values{"iban": {"  "}}, http.StatusBadRequest, "Fill in the vendor"},
		{"no phone", url.Values{"phone": {""}}, http.StatusBadRequest, "Fill in the vendor"},
		{"no company", url.Values{"company": {""}}, http.StatusBadRequest, "Choose the company"},
		{"vendor too long", url.Values{"vendor": {strings.Repeat("a", 129)}}, http.StatusBadRequest, "too long"},
		{"control character", url.Values{"iban": {"DE89\x00370400440532013000"}}, http.StatusBadRequest, "control or invisible"},
		{"invisible character", url.Values{"vendor": {"ac\u200bme"}}, http.StatusBadRequest, "control or invisible"},
		{"line break outside the note", url.Values{"phone": {"+49 30\n1234567"}}, http.StatusBadRequest, "control or invisible"},
		{"invalid UTF-8", url.Values{"note": {"\xff"}}, http.StatusBadRequest, "control or invisible"},
		{"another company", url.Values{"company": {"globex"}}, http.StatusForbidden, "only for the companies you approve for"},
		{"unknown vendor", url.Values{"vendor": {"initech"}}, http.StatusUnprocessableEntity, "No such vendor &lt;b&gt;on file&lt;/b&gt;."},
		{"phone not on file", url.Values{"phone": {"+44 20 7946 0000"}}, http.StatusUnprocessableEntity, "Not the phone on file."},
		{"bad IBAN", url.Values{"iban": {"1234"}}, http.StatusUnprocessableEntity, "Not a valid IBAN."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f, sk := callbackFixture(t)
			form := goodForm()
			for k, v := range tt.change {
				form[k] = v
			}
			p := f.signedIn("alice").postCallback(form)
			if p.code != tt.code || !strings.Contains(p.body, tt.text) {
				t.Fatalf("got %d, want %d with %q: %.3000s", p.code, tt.code, tt.text, p.body)
			}
			if n := len(sk.entries()); n != 0 {
				t.Fatalf("%d call-backs recorded", n)
			}
			if tt.code == http.StatusUnprocessableEntity && !strings.Contains(p.body, `aria-invalid="true"`) {
				t.Errorf("the field at fault is not marked")
			}
			rs := f.log.all(intent.Owner(form.Get("company")))
			if tt.code == http.StatusUnprocessableEntity {
				// A refusal of the sink is receipted, as refused.
				if len(rs) != 1 || rs[0].Verdict != intent.Deny || rs[0].Result != receipt.ResultNotExecuted || rs[0].Args["called_by"].Str != "alice" {
					t.Fatalf("receipts %+v", rs)
				}
			} else if len(rs) != 0 || sk.checked != 0 {
				t.Fatalf("form refused by the page reached the sink (%d) or the log (%d)", sk.checked, len(rs))
			}
		})
	}
}

func TestCallbackCSRF(t *testing.T) {
	t.Parallel()
	f, sk := callbackFixture(t)
	c := f.signedIn("bob")
	for _, tok := range []string{"", "0000"} {
		form := goodForm()
		form.Set("csrf", tok)
		if p := c.postCallback(form); p.code != http.StatusForbidden || !strings.Contains(p.body, "nothing was done") {
			t.Fatalf("csrf %q: %d %.300s", tok, p.code, p.body)
		}
	}
	// A form from another site, with the right token.
	p := c.do("GET", "/callbacks", nil, nil)
	form := goodForm()
	form.Set("csrf", csrfOf(t, p))
	if p := c.do("POST", "/callbacks", form, map[string]string{"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"}); p.code != http.StatusForbidden {
		t.Fatalf("cross-site post: %d", p.code)
	}
	// Signed out.
	if p := f.client().do("POST", "/callbacks", goodForm(), nil); p.code != http.StatusForbidden {
		t.Fatalf("signed-out post: %d", p.code)
	}
	if n := len(sk.entries()); n != 0 || len(f.log.all("emma")) != 0 {
		t.Fatalf("recorded %d call-backs", n)
	}
}

func TestCallbackOwners(t *testing.T) {
	t.Parallel()
	f, _ := callbackFixture(t)
	// bob (every owner) records one for globex and one for emma.
	bob := f.signedIn("bob")
	for _, company := range []string{"globex", "emma"} {
		form := goodForm()
		form.Set("company", company)
		form.Set("note", "for "+company)
		if p := bob.postCallback(form); p.code != http.StatusSeeOther {
			t.Fatalf("bob for %s: %d %.300s", company, p.code, p.body)
		}
	}
	// alice (emma only) chooses among her companies and sees only emma's.
	p := f.signedIn("alice").do("GET", "/callbacks", nil, nil)
	if !strings.Contains(p.body, `<select id="company"`) || !strings.Contains(p.body, `<option value="emma"`) || strings.Contains(p.body, `value="globex"`) {
		t.Fatalf("alice's company choice: %.3000s", p.body)
	}
	if !strings.Contains(p.body, "for emma") || strings.Contains(p.body, "for globex") {
		t.Fatalf("alice's recent call-backs: %.3000s", p.body)
	}
}

func TestCallbackEscaped(t *testing.T) {
	t.Parallel()
	f, _ := callbackFixture(t)
	c := f.signedIn("alice")
	form := goodForm()
	form.Set("note", `<script>alert(1)</script>"><img src=x>`)
	p := c.postCallback(form)
	p = c.do("GET", p.loc, nil, nil)
	if strings.Contains(p.body, "<script>alert") || strings.Contains(p.body, "<img src=x>") || !strings.Contains(p.body, "&lt;script&gt;alert(1)&lt;/script&gt;") {
		t.Fatalf("note not escaped: %.3000s", p.body)
	}
	// A refused form keeps what was typed, escaped.
	form.Set("vendor", `"><script>x</script>`)
	p = c.postCallback(form)
	if strings.Contains(p.body, "<script>x") || !strings.Contains(p.body, "&#34;&gt;&lt;script&gt;x&lt;/script&gt;") {
		t.Fatalf("vendor not escaped: %.3000s", p.body)
	}
}

func TestCallbackFailsClosed(t *testing.T) {
	t.Parallel()
	t.Run("receipt log fails", func(t *testing.T) {
		t.Parallel()
		f, sk := callbackFixture(t)
		c := f.signedIn("alice")
		f.log.mu.Lock()
		f.log.fail = true
		f.log.mu.Unlock()
		p := c.postCallback(goodForm())
		if p.code != http.StatusInternalServerError || !strings.Contains(p.body, "does not count") {
			t.Fatalf("%d %.300s", p.code, p.body)
		}
		if n := len(sk.entries()); n != 0 {
			t.Fatalf("a call-back was recorded without its receipt")
		}
	})
	t.Run("sink fails", func(t *testing.T) {
		t.Parallel()
		f, sk := callbackFixture(t)
		sk.broken = true
		p := f.signedIn("alice").postCallback(goodForm())
		if p.code != http.StatusInternalServerError || strings.Contains(p.body, "10.0.0.7") {
			t.Fatalf("%d %.300s", p.code, p.body)
		}
		if len(f.log.all("emma")) != 0 || len(sk.entries()) != 0 {
			t.Fatal("recorded")
		}
	})
}

func TestCallbackFormAbsentWithoutSink(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	c := f.signedIn("alice")
	if p := c.do("GET", "/callbacks", nil, nil); p.code != http.StatusNotFound {
		t.Fatalf("GET /callbacks without a sink: %d", p.code)
	}
	if p := c.do("GET", "/requests", nil, nil); strings.Contains(p.body, "/callbacks") {
		t.Fatal("the list links a call-back form that does not exist")
	}
}
