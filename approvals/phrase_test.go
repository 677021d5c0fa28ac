package approvals_test

import (
	"html"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// acmeRequest is issue 25's payment as the ap pack's step-up submits it:
// ids that execute, the agent's names for them, and the facts on file.
// sent is the vendor as the agent wrote it.
func acmeRequest(t *testing.T, sent string) approval.Request {
	t.Helper()
	op := intent.Operation{
		Action: "ap.pay_bill", MandateID: "m-b40fbbee", Owner: "emma",
		Args: intent.Args{"vendor": intent.Str("1"), "bill": intent.Str("5"), "iban": intent.Str("DE89370400440532013000"),
			"amount": intent.AmountValue(240000, 2), "currency": intent.Str("EUR")},
	}
	h, err := op.Hash()
	if err != nil {
		t.Fatal(err)
	}
	return approval.Request{
		Operation: op, Hash: h, Level: intent.LevelConfirm, Policies: []string{"confirm-above-threshold"},
		Reason: "This operation needs a person's confirmation before it can execute: payments above the company's confirmation threshold need a person's confirmation. Nothing was done yet. A person must approve this exact operation (" + h.String()[:16] + ") on the approval channel; any change to it needs a new approval.",
		Facts: map[string]intent.Value{
			"vendor_name": intent.Str("ACME Supplies"), "bill_ref": intent.Str("INV-2291"), "bill_number": intent.Str("BILL/2026/11/0002"),
			"bill_due": intent.Str("2026-12-15"), "amount_company": intent.Int(240000), "confirm_above": intent.Int(100000),
			"bill_residual": intent.Int(240000), "iban_country": intent.Str("DE"), "bill_already_paid": intent.Bool(false),
		},
		Resolved: []intent.Resolved{
			{Param: "vendor", Sent: sent, Value: "1", Provenance: intent.Provenance{Source: "registry:vendors", RecordID: "1"}},
			{Param: "bill", Sent: "INV-2291", Value: "5", Provenance: intent.Provenance{Source: "registry:bills", RecordID: "5"}},
			{Param: "iban", Sent: "DE89 3704 0044 0532 0130 00", Value: "DE89370400440532013000",
				Provenance: intent.Provenance{Source: "registry:bank_accounts", RecordID: "3", At: time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC)}},
		},
	}
}

// acmePhraser phrases acmeRequest as the ap pack does (ap.Phraser is
// tested in package ap; the page does not import packs).
var acmePhraser = approval.PhraserFunc(func(r approval.Request) (approval.Phrase, bool) {
	if r.Operation.Action != "ap.pay_bill" {
		return approval.Phrase{}, false
	}
	return approval.Phrase{
		Summary: "Pay 2,400.00 EUR to ACME Supplies for bill INV-2291 (BILL/2026/11/0002, due 15 Dec 2026), to DE89 3704 0044 0532 0130 00, the account on file since 3 Mar 2025",
		Why:     []string{"The payment is above the 1,000.00 EUR confirmation threshold."},
		Labels:  map[string]string{"vendor": "Vendor", "bill": "Bill", "iban": "Bank account", "amount": "Amount", "currency": "Currency"},
		Names:   map[string][]string{"vendor": {r.Facts["vendor_name"].Str}, "bill": {"INV-2291", "BILL/2026/11/0002"}},
		Sections: []approval.Section{{Title: "The bill", Facts: []approval.Fact{{Label: "Due", Value: "15 Dec 2026"}}},
			{Title: "Bank account", Facts: []approval.Fact{{Label: "Bank's country", Value: "Germany (DE)"}}}},
		Currency: "EUR",
	}, true
})

// lead returns what the page shows outside its Details disclosure, form
// fields left out (the approve form carries the operation hash, unseen).
func lead(body string) string {
	if i := strings.Index(body, `<details id="details">`); i >= 0 {
		j := strings.Index(body[i:], "</details>")
		body = body[:i] + body[i+j:]
	}
	return inputTag.ReplaceAllString(body, "")
}

var inputTag = regexp.MustCompile(`<input [^>]*>`)

// TestRequestPageLeadsWithPhrase (issue 25): the page leads with the pack's
// sentence and why a person is asked; an id in front of the name on file
// is no difference; minor units, kinds, the action's code, the mandate,
// the operation hash and the gateway's message to the agent are only in
// Details.
func TestRequestPageLeadsWithPhrase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *approvals.Config) { c.Phrasers = []approval.Phraser{acmePhraser} })
	p := acmeRequest(t, "ACME Supplies")
	tk := f.request(p)
	body := html.UnescapeString(f.signedIn("alice").do("GET", "/requests/"+tk.ID, nil, nil).body)
	top := lead(body)
	for _, want := range []string{
		`<h1 id="summary">Pay 2,400.00 EUR to ACME Supplies for bill INV-2291 (BILL/2026/11/0002, due 15 Dec 2026), to DE89 3704 0044 0532 0130 00, the account on file since 3 Mar 2025</h1>`,
		"<li>The payment is above the 1,000.00 EUR confirmation threshold.</li>",
		`<strong class="amount" id="amount-amount">2,400.00 EUR</strong>`,
		`<span class="name">ACME Supplies</span> <small class="id">id 1</small>`,
		`<span class="name">INV-2291</span> <small class="id">id 5</small>`,
		"on file since 3 Mar 2025", "Bank's country", "Germany (DE)",
		"Reject</strong> asks you why, then is final",
	} {
		if !strings.Contains(top, want) {
			t.Errorf("the page's lead lacks %q", want)
		}
	}
	for _, not := range []string{"differs", "Not what the assistant asked for", "minor units", "ap.pay_bill", "m-b40fbbee", p.Hash.String(),
		"Nothing was done yet", "approval channel", "set unknown", "<th scope=\"col\">Kind</th>", "240000"} {
		if strings.Contains(top, not) {
			t.Errorf("the page's lead shows %q", not)
		}
	}
	// The auditor's view keeps all of it.
	for _, want := range []string{"ap.pay_bill", "m-b40fbbee", p.Hash.String(), "registry:bank_accounts", "amount_company", "2400.00", "Nothing was done yet"} {
		if !strings.Contains(body, want) {
			t.Errorf("Details lack %q", want)
		}
	}
	if strings.Contains(body, "minor units") {
		t.Error("the page speaks of minor units")
	}
}

// TestRequestPageDiffersOnlyWhenAskedOtherwise: the value that executes is
// marked as differing only where the agent asked for something else than
// the record, by id or by any name on file.
func TestRequestPageDiffersOnlyWhenAskedOtherwise(t *testing.T) {
	t.Parallel()
	f := newFixture(t, func(c *approvals.Config) { c.Phrasers = []approval.Phraser{acmePhraser} })
	for _, tc := range []struct {
		name, sent string
		differs    bool
	}{
		{"name on file", "ACME Supplies", false},
		{"case and spacing", " acme  supplies", false},
		{"id", "1", false},
		{"another name", "Globex Parts", true},
		{"look-alike", "ACME Suppl\u0456es", true}, // Cyrillic і
		{"invisible character", "ACME\u200b Supplies", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tk := f.request(acmeRequest(t, tc.sent))
			top := lead(f.signedIn("bob").do("GET", "/requests/"+tk.ID, nil, nil).body)
			if got := strings.Contains(top, "Not what the assistant asked for"); got != tc.differs {
				t.Errorf("agent sent %q: differs shown %v, want %v", tc.sent, got, tc.differs)
			}
		})
	}
}

// TestRequestPageWithoutPhraser: without a pack's phrasing (none, none
// for the action, or one that panics) the page writes the sentence from
// the arguments and names the level.
func TestRequestPageWithoutPhraser(t *testing.T) {
	t.Parallel()
	panicky := approval.PhraserFunc(func(approval.Request) (approval.Phrase, bool) { panic("bug in a pack") })
	f := newFixture(t, func(c *approvals.Config) { c.Phrasers = []approval.Phraser{panicky, acmePhraser} })
	tk := f.request(pending(t, 150000, "rent", intent.LevelConfirm))
	pg := f.signedIn("alice").do("GET", "/requests/"+tk.ID, nil, nil)
	if pg.code != http.StatusOK {
		t.Fatalf("status %d", pg.code)
	}
	top := lead(pg.body)
	if !strings.Contains(top, `<h1 id="summary">pay.send: 1,500.00 EUR to GB29</h1>`) || !strings.Contains(top, "One person must confirm it.") {
		t.Errorf("lead without phrasing: %.3000s", top)
	}
}
