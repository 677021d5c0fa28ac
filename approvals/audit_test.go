package approvals_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/csv"
	"html"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// The audit view reads memLog as a store: approvals.AuditLog.

func (l *memLog) Owners(context.Context) ([]intent.Owner, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []intent.Owner
	for o := range l.chains {
		out = append(out, o)
	}
	return out, nil
}

func (l *memLog) Receipts(_ context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.chains[owner]
	if !ok {
		return nil, receipt.ErrNotFound
	}
	out := []receipt.Receipt{}
	for _, r := range c {
		if r.Seq >= from && (limit == 0 || len(out) < limit) {
			out = append(out, r)
		}
	}
	return out, nil
}

// Page reads every receipt: a plain scan in the order of the index.
func (l *memLog) Page(ctx context.Context, q state.ReceiptQuery) (state.ReceiptPage, error) {
	p, err := state.PlanOf(q)
	if err != nil {
		return state.ReceiptPage{}, err
	}
	l.mu.Lock()
	var all []receipt.Receipt
	for _, c := range l.chains {
		all = append(all, c...)
	}
	l.mu.Unlock()
	slices.SortFunc(all, func(a, b receipt.Receipt) int { return state.KeyOf(b).Compare(state.KeyOf(a)) })
	if p.Back {
		slices.Reverse(all)
	}
	var out []receipt.Receipt
	for _, r := range all {
		if len(out) <= p.Limit && p.Beyond(state.KeyOf(r)) && p.Keeps(state.EntryOf(r)) {
			out = append(out, r)
		}
	}
	return p.Finish(out), nil
}

func (l *memLog) Checkpoints(_ context.Context, owner intent.Owner) ([]receipt.Checkpoint, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]receipt.Checkpoint{}, l.cps[owner]...), nil
}

// checkpoint signs the owner's current head with the test checkpoint key.
func (l *memLog) checkpoint(t *testing.T, owner intent.Owner) {
	t.Helper()
	c := l.all(owner)
	cp, err := receipt.SignCheckpoint(receipt.NewEd25519Signer("cp", checkpointKey), c[len(c)-1], t0)
	if err != nil {
		t.Fatal(err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.cps == nil {
		l.cps = map[intent.Owner][]receipt.Checkpoint{}
	}
	l.cps[owner] = append(l.cps[owner], cp)
}

var checkpointKey = key(21)

func checkpointVerifier() receipt.Verifier {
	return receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{"cp": checkpointKey.Public().(ed25519.PublicKey)})
}

// decision appends a gateway decision to owner's chain: a bill payment of
// amount (minor units, EUR) to vendor, executed when verdict is allow.
func (f *fixture) decision(owner intent.Owner, at time.Time, action, vendor, vendorName string, amount intent.Amount, verdict intent.Verdict) receipt.Receipt {
	f.t.Helper()
	r := receipt.Receipt{
		Owner: owner, Time: at, MandateID: "m-" + string(owner), Action: intent.Action(action),
		Sent: `{"vendor":"` + vendorName + `","amount":"` + intent.FormatAmount(amount, 2) + `"}`,
		Args: intent.Args{"vendor": intent.Str(vendor), "iban": intent.Str("DE89370400440532013000"), "amount": intent.AmountValue(amount, 2)},
		Resolved: []intent.Resolved{
			{Param: "vendor", Sent: vendorName, Value: vendor, Provenance: intent.Provenance{Source: "registry:vendors", RecordID: "res.partner/" + vendor, Version: "4", At: t0.Add(-90 * 24 * time.Hour)}},
			{Param: "iban", Sent: "DE89 3704 0044 0532 0130 00", Value: "DE89370400440532013000", Provenance: intent.Provenance{Source: "registry:vendor_bank_accounts", RecordID: "res.partner.bank/17", Version: "2"}},
		},
		Facts:    map[string]intent.Value{"vendor_name": intent.Str(vendorName), "budget_currency": intent.Str("EUR"), "iban_current": intent.Bool(true)},
		Verdict:  verdict,
		Policies: []string{"ap.pay.permit"},
		Result:   receipt.ResultNotExecuted, Operation: strings.Repeat("ab", 32),
	}
	if verdict == intent.Allow {
		r.Result, r.Output = receipt.ResultExecuted, "payment 17 posted"
		r.Approvals = []receipt.Evidence{{ID: "ap-1", Approver: "carol", Level: "confirm", IssuedAt: at.Add(-time.Minute)}}
	} else {
		r.Code, r.Message = intent.CodeApprovalRequired, "needs approval"
	}
	stored, err := f.log.Append(context.Background(), r)
	if err != nil {
		f.t.Fatal(err)
	}
	return stored
}

// auditFixture has two owners, emma and bob, with alice approving for emma
// only, bob for bob only and carol for every owner.
func auditFixture(t *testing.T) *fixture {
	t.Helper()
	f := newFixture(t, func(c *approvals.Config) {
		c.Approvers[0].Owners = []intent.Owner{"emma"}
		c.Approvers[1].Owners = []intent.Owner{"bob"}
	})
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log, Verifier: checkpointVerifier()}); err != nil {
		t.Fatal(err)
	}
	day := t0.Add(-48 * time.Hour)
	f.decision("emma", day, "ap.pay_bill", "V-0042", "ACME Supplies GmbH", 1250000, intent.Allow)
	f.decision("emma", day.Add(time.Hour), "ap.pay_bill", "V-0043", "Papierwerk AG", 90000, intent.StepUp)
	f.decision("emma", t0, "ap.pay_bill", "V-0044", "=HYPERLINK(\"http://evil\")", 5000, intent.Deny)
	f.decision("bob", day, "ap.pay_bill", "V-0099", "Bob Secret Vendor", 777700, intent.Allow)
	return f
}

func csvRows(t *testing.T, body string) [][]string {
	t.Helper()
	rows, err := csv.NewReader(strings.NewReader(body)).ReadAll()
	if err != nil {
		t.Fatalf("export is not CSV: %v\n%s", err, body)
	}
	return rows
}

func TestAuditScope(t *testing.T) {
	f := auditFixture(t)
	alice := f.signedIn("alice")
	p := alice.do("GET", "/audit", nil, nil)
	if p.code != http.StatusOK || !strings.Contains(p.body, "ACME Supplies GmbH") || !strings.Contains(p.body, "3 decisions") {
		t.Fatalf("alice's audit list: %d %.2000s", p.code, p.body)
	}
	if strings.Contains(p.body, "Bob Secret Vendor") || strings.Contains(p.body, ">bob<") {
		t.Fatal("alice, approver for emma, sees bob's decisions in the list")
	}
	if p := alice.do("GET", "/audit/decision?owner=bob&seq=1", nil, nil); p.code != http.StatusNotFound || strings.Contains(p.body, "Bob Secret") {
		t.Fatalf("alice opens bob's decision by id: %d", p.code)
	}
	if p := alice.do("GET", "/audit/decision?owner=emma&seq=1", nil, nil); p.code != http.StatusOK || !strings.Contains(p.body, "ACME Supplies GmbH") {
		t.Fatalf("alice opens emma's decision: %d", p.code)
	}
	p = alice.do("GET", "/audit.csv", nil, nil)
	if p.code != http.StatusOK || strings.Contains(p.body, "bob") || strings.Contains(p.body, "Bob Secret") {
		t.Fatalf("alice's export holds bob's decisions: %d\n%s", p.code, p.body)
	}
	if rows := csvRows(t, p.body); len(rows) != 4 {
		t.Fatalf("alice's export has %d rows, want a header and 3", len(rows))
	}
	// Filters never widen the scope.
	if p := alice.do("GET", "/audit.csv?payee=V-0099", nil, nil); len(csvRows(t, p.body)) != 1 {
		t.Fatalf("a filter for bob's vendor found rows: %s", p.body)
	}
	// bob sees only bob's; carol (every owner) sees both.
	if p := f.signedIn("bob").do("GET", "/audit", nil, nil); !strings.Contains(p.body, "Bob Secret Vendor") || strings.Contains(p.body, "ACME") {
		t.Fatalf("bob's list: %.1500s", p.body)
	}
	if p := f.signedIn("carol").do("GET", "/audit.csv", nil, nil); len(csvRows(t, p.body)) != 5 {
		t.Fatalf("carol's export: %s", p.body)
	}
	// Signed out: nothing.
	if p := f.client().do("GET", "/audit.csv", nil, nil); p.code != http.StatusSeeOther {
		t.Fatalf("signed-out export: %d", p.code)
	}
}

func TestAuditFilters(t *testing.T) {
	f := auditFixture(t)
	c := f.signedIn("carol")
	count := func(q string) int {
		t.Helper()
		p := c.do("GET", "/audit.csv?"+q, nil, nil)
		if p.code != http.StatusOK {
			t.Fatalf("%s: %d %s", q, p.code, p.body)
		}
		return len(csvRows(t, p.body)) - 1
	}
	for q, want := range map[string]int{
		"":                              4,
		"verdict=allow":                 2,
		"verdict=step_up":               1,
		"action=ap.pay_bill":            4,
		"action=ap.change":              0,
		"from=2026-11-30":               1,
		"to=2026-11-28":                 3,
		"from=2026-11-28&to=2026-11-28": 3,
		"payee=V-0043":                  1,
		"payee=v-0043":                  0, // the id exactly
		"payee=Papierwerk%20AG":         0, // an id, not a name
		"result=executed":               2,
		"result=not_executed":           2,
		"result=failed":                 0,
		"payee=V-0042":                  1,
		"min=12500.00":                  1,
		"min=900&max=7777":              2,
		"max=50":                        1,
		"min=50.00&max=50.00":           1,
		"verdict=deny&payee=V-0042":     0,
		"verdict=allow&payee=V-0042":    1,
		"action=ap.pay_bill&min=900":    3,
	} {
		if got := count(q); got != want {
			t.Errorf("%q: %d decisions, want %d", q, got, want)
		}
	}
	for _, q := range []string{"from=30.11.2026", "verdict=maybe", "result=done", "min=1,000", "max=-5", "min=1e3", "c=not-a-cursor"} {
		if p := c.do("GET", "/audit?"+q, nil, nil); p.code != http.StatusBadRequest || !strings.Contains(p.body, `id="error"`) {
			t.Errorf("%q: %d, want 400 with the error shown", q, p.code)
		}
	}
}

func TestAuditCSVNeutralisesFormulas(t *testing.T) {
	f := auditFixture(t)
	p := f.signedIn("alice").do("GET", "/audit.csv?verdict=deny", nil, nil)
	if !strings.Contains(p.hdr.Get("Content-Type"), "text/csv") || !strings.Contains(p.hdr.Get("Content-Disposition"), "attachment") {
		t.Fatalf("headers %v", p.hdr)
	}
	if !strings.Contains(p.body, "\r\n") {
		t.Fatal("rows are not CRLF-terminated (RFC 4180)")
	}
	rows := csvRows(t, p.body)
	if len(rows) != 2 {
		t.Fatalf("rows %q", rows)
	}
	payee := rows[1][slices.Index(rows[0], "payee")]
	if !strings.HasPrefix(payee, `'=HYPERLINK("http://evil")`) {
		t.Fatalf("a formula reached the export: %q", payee)
	}
	for _, cell := range rows[1] {
		if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
			t.Fatalf("cell %q would run as a formula", cell)
		}
	}
}

func TestAuditChainStatus(t *testing.T) {
	f := auditFixture(t)
	c := f.signedIn("carol")
	p := c.do("GET", "/audit", nil, nil)
	if !strings.Contains(p.body, "not anchored") {
		t.Fatalf("a chain without checkpoint: %.3000s", p.body)
	}
	f.log.checkpoint(t, "emma")
	p = c.do("GET", "/audit", nil, nil)
	if !strings.Contains(p.body, "anchored by a signed checkpoint at #3") {
		t.Fatalf("a checkpointed chain: %.3000s", p.body)
	}
	// Edit emma's first receipt in place (its amount), keeping its hash.
	// The panel verified it before and does not read it again, and says
	// so; `intentplane receipts verify` (receipt.Verify over the chain)
	// still finds it; a page that starts afresh (a restart) reads the
	// chain whole and says it is broken.
	f.log.mu.Lock()
	f.log.chains["emma"][0].Args["amount"] = intent.AmountValue(1, 2)
	stored := slices.Clone(f.log.chains["emma"])
	f.log.mu.Unlock()
	p = c.do("GET", "/audit", nil, nil)
	if !strings.Contains(p.body, "#3 is still the receipt verified at") || !strings.Contains(p.body, "receipts before it are not read again") {
		t.Fatalf("the panel does not say what it checked: %.3000s", p.body)
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, stored); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(&buf, nil); err == nil || !strings.Contains(err.Error(), "edited") {
		t.Fatalf("receipts verify of the edited chain: %v", err)
	}
	// The head the panel verified, edited: broken, on every later load.
	f.log.mu.Lock()
	f.log.chains["emma"][2].Message = "nothing to see"
	f.log.mu.Unlock()
	for range 2 {
		if p := c.do("GET", "/audit", nil, nil); !strings.Contains(p.body, "BROKEN: receipt #3 is not the one verified before") &&
			!strings.Contains(p.body, "BROKEN: receipt #3 does not hash to its hash") {
			t.Fatalf("an edited verified head: %.3000s", p.body)
		}
	}
	if p := c.do("GET", "/audit/decision?owner=emma&seq=2", nil, nil); !strings.Contains(p.body, "BROKEN") {
		t.Fatalf("the decision page of a broken chain: %.2000s", p.body)
	}
	f.restart(nil)
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log, Verifier: checkpointVerifier()}); err != nil {
		t.Fatal(err)
	}
	if p := f.signedIn("carol").do("GET", "/audit", nil, nil); !strings.Contains(p.body, "BROKEN") || !strings.Contains(p.body, "edited") {
		t.Fatalf("a fresh page, an edited chain: %.3000s", p.body)
	}
}

func TestAuditDecisionPage(t *testing.T) {
	f := auditFixture(t)
	p := f.signedIn("alice").do("GET", "/audit/decision?"+url.Values{"owner": {"emma"}, "seq": {"1"}}.Encode(), nil, nil)
	for _, want := range []string{
		"ACME Supplies GmbH",            // payee name and what the agent sent
		"DE89 3704 0044 0532 0130 00",   // the IBAN that executed, grouped
		"registry:vendor_bank_accounts", // its provenance
		"res.partner.bank/17",
		"iban_current",      // a fact
		"ap.pay.permit",     // the policy
		"carol",             // the approval
		"payment 17 posted", // the result
		"12,500.00",
	} {
		if !strings.Contains(p.body, want) {
			t.Errorf("decision page lacks %q", want)
		}
	}
	// The vendor's name resolved to its id differs; the IBAN spelt with
	// spaces does not.
	if n := strings.Count(p.body, `class="differs"`); n != 1 {
		t.Errorf("%d values shown as differing, want 1 (the vendor's name for its id)", n)
	}
	for _, q := range []string{"owner=emma&seq=9", "owner=emma&seq=0", "owner=emma&seq=x", "owner=nobody&seq=1", "seq=1"} {
		if p := f.signedIn("alice").do("GET", "/audit/decision?"+q, nil, nil); p.code != http.StatusNotFound {
			t.Errorf("%q: %d", q, p.code)
		}
	}
}

func TestAuditOff(t *testing.T) {
	f := newFixture(t, nil)
	c := f.signedIn("alice")
	for _, path := range []string{"/audit", "/audit.csv", "/audit/decision?owner=emma&seq=1"} {
		if p := c.do("GET", path, nil, nil); p.code != http.StatusNotFound {
			t.Errorf("%s without EnableAudit: %d", path, p.code)
		}
	}
	if err := f.srv.EnableAudit(approvals.AuditConfig{}); err == nil {
		t.Error("EnableAudit without a log")
	}
}

func TestExecutionShownAfterApproval(t *testing.T) {
	f := auditFixture(t)
	p := pending(t, 150000, "", intent.LevelConfirm)
	tk := f.request(p)
	alice := f.signedIn("alice")
	if r := alice.decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("approve: %d", r.code)
	}
	page := alice.do("GET", "/requests/"+tk.ID, nil, nil)
	if !strings.Contains(page.body, "not executed yet") {
		t.Fatalf("before execution: %.3000s", page.body)
	}
	// Another operation executing changes nothing.
	f.decision("emma", t0, "pay.send", "V-1", "Other", 100, intent.Allow)
	if page := alice.do("GET", "/requests/"+tk.ID, nil, nil); !strings.Contains(page.body, "not executed yet") {
		t.Fatal("another operation's execution is shown as this one's")
	}
	// The front door executes it: the gateway's receipt names the hash.
	if _, err := f.log.Append(context.Background(), receipt.Receipt{Owner: "emma", Time: t0, Action: "pay.send", Verdict: intent.Allow,
		Operation: p.Hash.String(), Result: receipt.ResultExecuted, Output: "transfer 991 sent"}); err != nil {
		t.Fatal(err)
	}
	page = alice.do("GET", "/requests/"+tk.ID, nil, nil)
	if !strings.Contains(page.body, "Executed") || !strings.Contains(page.body, "transfer 991 sent") {
		t.Fatalf("after execution: %.3000s", page.body)
	}
}

// refusedUnresolved appends to owner's chain the receipt of an ap.pay_bill
// refused before resolution: its args are what the agent sent, nothing is
// resolved and no fact was read.
func (f *fixture) refusedUnresolved(owner intent.Owner, at time.Time, vendor, iban, message string) {
	f.t.Helper()
	r := receipt.Receipt{
		Owner: owner, Time: at, MandateID: "m-" + string(owner), Action: "ap.pay_bill",
		Sent:    `{"vendor":"` + vendor + `","iban":"` + iban + `","amount":"900.00"}`,
		Args:    intent.Args{"vendor": intent.Str(vendor), "iban": intent.Str(iban), "amount": intent.AmountValue(90000, 2)},
		Verdict: intent.Deny, Code: intent.CodeNotTrusted, Message: message, Result: receipt.ResultNotExecuted,
	}
	if _, err := f.log.Append(context.Background(), r); err != nil {
		f.t.Fatal(err)
	}
}

// payeeCells returns the payee column of the export at query q, by seq.
func payeeCells(t *testing.T, c *client, q string) map[string]string {
	t.Helper()
	return exportColumn(t, c, q, "payee")
}

// exportColumn returns the column named col of the export at query q, by
// seq.
func exportColumn(t *testing.T, c *client, q, col string) map[string]string {
	t.Helper()
	rows := csvRows(t, c.do("GET", "/audit.csv?"+q, nil, nil).body)
	out := map[string]string{}
	for _, row := range rows[1:] {
		out[row[slices.Index(rows[0], "seq")]] = row[slices.Index(rows[0], col)]
	}
	return out
}

func TestAuditPayeeNotResolvedIsAsSent(t *testing.T) {
	f := auditFixture(t)
	f.refusedUnresolved("emma", t0.Add(time.Minute), "ACME Supplies", "GB54 MIDL 4000 0000 0000 00", "the iban matches no account on file")
	c := f.signedIn("alice")
	const asSent = `as sent: "ACME Supplies", "GB54 MIDL 4000 0000 0000 00"`
	cells := payeeCells(t, c, "")
	if cells["4"] != asSent {
		t.Errorf("export: the refused decision's payee is %q, want %q", cells["4"], asSent)
	}
	if cells["1"] != "ACME Supplies GmbH (V-0042)" {
		t.Errorf("export: the executed decision's payee is %q, want the name on file with its id", cells["1"])
	}
	list := html.UnescapeString(c.do("GET", "/audit", nil, nil).body)
	if !strings.Contains(list, "<td>"+asSent+"</td>") || strings.Contains(list, "ACME Supplies (GB54") {
		t.Errorf("the list shows the agent's text as on file: %.4000s", list)
	}
	if !strings.Contains(list, "<td>ACME Supplies GmbH (V-0042)</td>") {
		t.Errorf("the list lacks the executed payee with its id: %.4000s", list)
	}
	page := html.UnescapeString(c.do("GET", "/audit/decision?owner=emma&seq=4", nil, nil).body)
	if !strings.Contains(page, asSent) {
		t.Errorf("the decision page's payee: %.4000s", page)
	}
	// Its arguments are the agent's text, not what executed.
	if !strings.Contains(page, `<h2 id="args-title">Arguments as the agent sent them (not resolved, nothing executed)</h2>`) || strings.Contains(page, "What executed") {
		t.Errorf("the refused decision's arguments are titled as what executed: %.4000s", page)
	}
	if executed := c.do("GET", "/audit/decision?owner=emma&seq=1", nil, nil).body; !strings.Contains(executed, `<h2 id="args-title">What executed</h2>`) {
		t.Errorf("the executed decision's arguments are not titled what executed: %.4000s", executed)
	}
	// The filter by payee matches the id on file, never the agent's
	// text: a refusal before resolution has no payee on file.
	for q, want := range map[string][]string{
		"payee=ACME%20Supplies":                       {},
		"payee=GB54%20MIDL%204000%200000%200000%2000": {},
		"payee=V-0042":                                {"1"},
		"payee=V-0043":                                {"2"},
	} {
		if got := slices.Sorted(maps.Keys(payeeCells(t, c, q))); !slices.Equal(got, want) {
			t.Errorf("%s: seqs %v, want %v", q, got, want)
		}
	}
}

func TestAuditInvisibleCharactersShown(t *testing.T) {
	f := auditFixture(t)
	f.refusedUnresolved("emma", t0.Add(time.Minute), "ACME\u202eHBmG seilppuS", "GB54\u200bMIDL40000000000000", "refused: \u202egnp.exe\u2066 \u00ad\ufeff\x1b[31m")
	c := f.signedIn("alice")
	p := c.do("GET", "/audit.csv", nil, nil)
	for _, r := range p.body {
		if unicode.Is(unicode.Cf, r) || r == 0x1b {
			t.Fatalf("the export holds %U unescaped:\n%s", r, p.body)
		}
	}
	rows := csvRows(t, p.body)
	last := rows[len(rows)-1]
	if got, want := last[slices.Index(rows[0], "payee")], `as sent: "ACME[U+202E]HBmG seilppuS", "GB54[U+200B]MIDL40000000000000"`; got != want {
		t.Errorf("payee cell %q, want %q", got, want)
	}
	if got, want := last[slices.Index(rows[0], "message")], "refused: [U+202E]gnp.exe[U+2066] [U+00AD][U+FEFF][U+001B][31m"; got != want {
		t.Errorf("message cell %q, want %q", got, want)
	}
	list := html.UnescapeString(c.do("GET", "/audit", nil, nil).body)
	if strings.ContainsAny(list, "\u202e\u200b") || !strings.Contains(list, `<td>as sent: "ACME[U+202E]HBmG seilppuS", "GB54[U+200B]MIDL40000000000000"</td>`) {
		t.Errorf("the list's payee column: %.4000s", list)
	}
}

// amountCells returns the amount column of the export, by seq.
func amountCells(t *testing.T, c *client) map[string]string {
	t.Helper()
	return exportColumn(t, c, "", "amount")
}

// TestAuditAmountInItsOwnCurrency: a USD bill paid under a mandate whose
// only budget is in EUR is refused by the policy, but its facts name the
// main budget's currency (EUR), as on Odoo 17 on 2 December 2026; the
// audit must show the amount in the currency the operation names, never
// "3,000.00 EUR" for 3,000.00 USD. An approval's receipt, which has no
// facts, shows the currency of its operation too.
func TestAuditAmountInItsOwnCurrency(t *testing.T) {
	f := auditFixture(t)
	usd := receipt.Receipt{
		Owner: "emma", Time: t0.Add(time.Minute), MandateID: "m-emma", Action: "ap.pay_bill",
		Args: intent.Args{"vendor": intent.Str("V-0042"), "bill": intent.Str("46"), "currency": intent.Str("USD"),
			"iban": intent.Str("DE89370400440532013000"), "amount": intent.AmountValue(300000, 2)},
		Facts:   map[string]intent.Value{"vendor_name": intent.Str("ACME Supplies GmbH"), "budget_currency": intent.Str("EUR"), "bill_currency": intent.Str("USD")},
		Verdict: intent.Deny, Code: "policy.denied", Message: "the bill is in USD, a currency the user authorised no budget in", Result: receipt.ResultNotExecuted,
	}
	approval := receipt.Receipt{
		Owner: "emma", Time: t0.Add(2 * time.Minute), MandateID: "m-emma", Action: "ap.pay_bill",
		Args: intent.Args{"vendor": intent.Str("V-0042"), "bill": intent.Str("40"), "currency": intent.Str("EUR"),
			"iban": intent.Str("DE89370400440532013000"), "amount": intent.AmountValue(590000, 2)},
		Verdict: intent.StepUp, Code: intent.CodeApprovalRequired, Result: receipt.ResultNotExecuted,
	}
	for _, r := range []receipt.Receipt{usd, approval} {
		if _, err := f.log.Append(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	c := f.signedIn("alice")
	cells := amountCells(t, c)
	if cells["4"] != "3,000.00 USD" {
		t.Errorf("export: the USD payment's amount is %q, want %q", cells["4"], "3,000.00 USD")
	}
	if cells["5"] != "5,900.00 EUR" {
		t.Errorf("export: the approval's amount is %q, want %q", cells["5"], "5,900.00 EUR")
	}
	if cells["1"] != "12,500.00 EUR" {
		t.Errorf("export: a payment without a currency argument is %q, want its budget's currency", cells["1"])
	}
	if page := c.do("GET", "/audit/decision?owner=emma&seq=4", nil, nil).body; strings.Contains(page, "3,000.00 EUR") || !strings.Contains(page, "3,000.00 USD") {
		t.Errorf("the decision page shows the USD amount in another currency: %.4000s", page)
	}
}

// TestAuditSecondAmountNamed: an instalment of ap.pay_bill carries the
// bill's residual as a second amount argument; on Odoo 17 the export read
// "55.00 EUR, 55.00 EUR", two amounts an auditor cannot tell apart. The
// payment's amount comes first and any other amount is named.
func TestAuditSecondAmountNamed(t *testing.T) {
	f := auditFixture(t)
	r := receipt.Receipt{
		Owner: "emma", Time: t0.Add(time.Minute), MandateID: "m-emma", Action: "ap.pay_bill",
		Args: intent.Args{"vendor": intent.Str("V-0042"), "bill": intent.Str("11"), "currency": intent.Str("EUR"),
			"iban": intent.Str("DE89370400440532013000"), "amount": intent.AmountValue(5000, 2), "residual": intent.AmountValue(10500, 2)},
		Facts:   map[string]intent.Value{"vendor_name": intent.Str("ACME Supplies GmbH"), "budget_currency": intent.Str("EUR")},
		Verdict: intent.Deny, Code: "policy.denied", Message: "the residual given is not what the bill owes now", Result: receipt.ResultNotExecuted,
	}
	if _, err := f.log.Append(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	c := f.signedIn("alice")
	if got, want := amountCells(t, c)["4"], "50.00 EUR; residual 105.00 EUR"; got != want {
		t.Errorf("export: the instalment's amount is %q, want %q", got, want)
	}
}

// TestAuditApprovalReceiptsNamePayee: the receipts of a request and of its
// approvals carry the payee's name the approvers were shown, so that the
// audit lists them under the vendor's name on file and the payee filter
// finds them; on Odoo 17 they read a bare "15" and a search for the
// vendor's name missed every approval.
func TestAuditApprovalReceiptsNamePayee(t *testing.T) {
	f := auditFixture(t)
	p := pending(t, 590000, "", intent.LevelConfirm)
	p.Facts = map[string]intent.Value{"beneficiary_name": intent.Str("Umbrella Trading Ltd"), "iban_age_days": intent.Int(0)}
	tk := f.request(p)
	alice := f.signedIn("alice")
	if r := alice.decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("approve: %d", r.code)
	}
	cells := payeeCells(t, alice, "")
	if len(cells) < 5 {
		t.Fatalf("the request and its approval left no receipts: %v", cells)
	}
	for seq, payee := range cells {
		if seq >= "4" && payee != "Umbrella Trading Ltd (GB29)" {
			t.Errorf("export: receipt #%s's payee is %q, want the name shown to the approvers with its id", seq, payee)
		}
	}
	if got := payeeCells(t, alice, "payee=GB29"); len(got) != len(cells)-3 {
		t.Errorf("the payee filter finds %v of the request's receipts, want all %d", got, len(cells)-3)
	}
}

// TestRequestPageShowsHiddenCharactersInNames: a vendor renamed in Odoo to
// "Jane Contr\u202erotcartnoC\u202c Ltd" read "Jane ContrContractor Ltd" in
// a browser on the approval page: the name beside the trusted value and
// the reason showed the bidirectional override as is (only the facts
// table warned). Both show it as its code point, as the audit does.
func TestRequestPageShowsHiddenCharactersInNames(t *testing.T) {
	f := auditFixture(t)
	p := pending(t, 590000, "", intent.LevelConfirm)
	const name = "Jane Contr\u202erotcartnoC\u202c Ltd"
	p.Facts = map[string]intent.Value{"recipient_name": intent.Str(name)}
	p.Reason = "payments above 1,000.00 need a person to confirm (paid to " + name + " today 0.00 EUR)"
	tk := f.request(p)
	body := html.UnescapeString(f.signedIn("alice").do("GET", "/requests/"+tk.ID, nil, nil).body)
	const shown = "Jane Contr[U+202E]rotcartnoC[U+202C] Ltd"
	if !strings.Contains(body, `<span class="name">`+shown+`</span>`) {
		t.Errorf("the name beside the trusted value hides its characters: %.3000s", body)
	}
	if !strings.Contains(body, "(paid to "+shown+" today") {
		t.Errorf("the reason hides the name's characters: %.3000s", body)
	}
}

// hrefOf returns the URL of the link of class cls in body ("" if none).
func hrefOf(body, cls string) string {
	_, rest, ok := strings.Cut(body, `class="`+cls+`"`)
	if !ok {
		return ""
	}
	_, rest, _ = strings.Cut(rest, `href="`)
	u, _, _ := strings.Cut(rest, `"`)
	return html.UnescapeString(u)
}

// listSeqs returns the seqs of the decisions a list page shows, in order.
func listSeqs(body string) []string {
	var out []string
	for _, part := range strings.Split(body, `;seq=`)[1:] {
		n, _, _ := strings.Cut(part, `"`)
		out = append(out, n)
	}
	return out
}

// TestAuditPages: a long history is listed a page at a time, newest
// first; Older and Newer links walk it without a gap or a repeat, with a
// filter the index serves and with one it does not (the action); an
// altered link is refused with a way back.
func TestAuditPages(t *testing.T) {
	f := auditFixture(t)
	for i := range 230 {
		action := "ap.pay_bill"
		if i%3 == 0 {
			action = "ap.pay_credit"
		}
		f.decision("emma", t0.Add(time.Duration(i+1)*time.Minute), action, "V-0042", "ACME Supplies GmbH", 1000, intent.StepUp)
	}
	c := f.signedIn("alice")
	for _, tc := range []struct {
		query string
		want  int // decisions it selects
	}{{"", 233}, {"verdict=step_up", 231}, {"action=ap.pay_credit", 77}, {"action=ap.pay_bill&payee=V-0042", 154}} {
		var pages [][]string
		var all []string
		u := "/audit?" + tc.query
		for u != "" {
			p := c.do("GET", u, nil, nil)
			if p.code != http.StatusOK {
				t.Fatalf("%s: %d", u, p.code)
			}
			seqs := listSeqs(p.body)
			if len(seqs) > 100 {
				t.Fatalf("%s: a page of %d rows", u, len(seqs))
			}
			pages, all = append(pages, seqs), append(all, seqs...)
			if prev := hrefOf(p.body, "prev"); len(pages) > 1 {
				back := listSeqs(c.do("GET", prev, nil, nil).body)
				if !slices.Equal(back, pages[len(pages)-2]) {
					t.Errorf("%s: Newer from page %d shows %v, want %v", tc.query, len(pages), back, pages[len(pages)-2])
				}
			} else if prev != "" {
				t.Errorf("%s: the first page has a Newer link", tc.query)
			}
			u = hrefOf(p.body, "next")
		}
		seen := map[string]bool{}
		for _, s := range all {
			if seen[s] {
				t.Errorf("%s: #%s listed twice", tc.query, s)
			}
			seen[s] = true
		}
		if len(all) != tc.want || len(pages) != (tc.want+99)/100 {
			t.Errorf("%s: %d decisions on %d pages, want %d", tc.query, len(all), len(pages), tc.want)
		}
	}
	p := c.do("GET", "/audit", nil, nil)
	next := hrefOf(p.body, "next")
	bad := c.do("GET", strings.Replace(next, "c=", "c=A", 1), nil, nil)
	if bad.code != http.StatusBadRequest || !strings.Contains(bad.body, `id="error"`) || hrefOf(bad.body, "first") != "/audit" {
		t.Errorf("an altered page link: %d %.2000s", bad.code, bad.body)
	}
	if other := c.do("GET", next+"&verdict=allow", nil, nil); other.code != http.StatusBadRequest {
		t.Errorf("a page link with another filter: %d", other.code)
	}
}

// TestAuditExportStreamsEverything: the export holds every decision the
// filter keeps, oldest first, however many (read a page of the index at a
// time: here three pages and more).
func TestAuditExportStreamsEverything(t *testing.T) {
	f := auditFixture(t)
	for i := range 2600 {
		f.decision("emma", t0.Add(time.Duration(i+1)*time.Second), "ap.pay_bill", "V-0042", "ACME Supplies GmbH", 1000, intent.Allow)
	}
	c := f.signedIn("alice")
	rows := csvRows(t, c.do("GET", "/audit.csv", nil, nil).body)
	if len(rows) != 1+2603 {
		t.Fatalf("the export has %d rows, want a header and 2603", len(rows))
	}
	seq := slices.Index(rows[0], "seq")
	for i, row := range rows[1:] {
		if i > 0 && row[0] < rows[i][0] {
			t.Fatalf("row %d (%s) is older than the one before (%s)", i+1, row[0], rows[i][0])
		}
		if row[seq] == "" {
			t.Fatalf("row %d has no seq", i+1)
		}
	}
	if n := len(csvRows(t, c.do("GET", "/audit.csv?verdict=allow&payee=V-0042", nil, nil).body)); n != 1+2601 {
		t.Errorf("the filtered export has %d rows, want a header and 2601", n)
	}
}

// TestAuditLongChainNotReadWhole: a chain longer than MaxReceipts is shown
// with its head and left to `intentplane receipts verify`; its decisions
// are all listed and exported.
func TestAuditLongChainNotReadWhole(t *testing.T) {
	f := newFixture(t, nil)
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log, MaxReceipts: 20}); err != nil {
		t.Fatal(err)
	}
	for i := range 30 {
		f.decision("emma", t0.Add(time.Duration(i)*time.Minute), "ap.pay_bill", "V-0042", "ACME Supplies GmbH", 1000, intent.Deny)
	}
	c := f.signedIn("alice")
	p := c.do("GET", "/audit", nil, nil)
	if !strings.Contains(p.body, "the chain holds 30 receipts, more than the 20 the view verifies") || !strings.Contains(p.body, "30 decisions") {
		t.Errorf("a chain over MaxReceipts: %.3000s", p.body)
	}
	if n := len(csvRows(t, c.do("GET", "/audit.csv", nil, nil).body)); n != 31 {
		t.Errorf("the export has %d rows, want a header and 30", n)
	}
}

// TestAuditChainIncremental: a chain the panel verified is verified again
// from its head on, MaxReceipts+1 at a time: five receipts appended since
// (read in two steps) are verified after it; a verified head edited since
// makes the chain broken.
func TestAuditChainIncremental(t *testing.T) {
	f := auditFixture(t)
	if err := f.srv.EnableAudit(approvals.AuditConfig{Log: f.log, MaxReceipts: 3}); err != nil {
		t.Fatal(err)
	}
	c := f.signedIn("carol")
	if p := c.do("GET", "/audit", nil, nil); !strings.Contains(p.body, "read whole at") {
		t.Fatalf("the first load: %.3000s", p.body)
	}
	for range 5 {
		if _, err := f.log.Append(context.Background(), receipt.Receipt{Owner: "emma", Time: t0, Action: "pay.send", Verdict: intent.Deny, Result: receipt.ResultNotExecuted}); err != nil {
			t.Fatal(err)
		}
	}
	if p := c.do("GET", "/audit", nil, nil); !strings.Contains(p.body, "#3 was still that receipt and #4 to #8 were verified after it") {
		t.Fatalf("two receipts appended: %.3000s", p.body)
	}
	f.log.mu.Lock()
	f.log.chains["emma"][7].Prev = f.log.chains["emma"][2].Hash
	f.log.mu.Unlock()
	if p := c.do("GET", "/audit", nil, nil); !strings.Contains(p.body, "BROKEN") {
		t.Fatalf("a receipt that does not link: %.3000s", p.body)
	}
}
