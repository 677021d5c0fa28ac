package scenarios_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"html"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passcode"
	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/internal/testclock"
	"github.com/intentplane/intentplane/store/mem"
)

// fidelityApprovers are the approval page's people in the fidelity test.
var fidelityApprovers = sync.OnceValue(func() []approvals.Approver {
	var as []approvals.Approver
	for i, name := range []string{"alice", "bob"} {
		h, err := passcode.Hash(name+"-passcode-12", passcode.Params{LogN: 4, R: 1}, nil)
		if err != nil {
			panic(err)
		}
		seed := make([]byte, ed25519.SeedSize)
		seed[0] = byte(i + 1)
		as = append(as, approvals.Approver{Name: name, Passcode: h, Key: ed25519.NewKeyFromSeed(seed)})
	}
	return as
})

// Agent spellings the fidelity test draws from: the record's own, other
// spellings of it, another record's, look-alikes and an attacker's
// account.
var (
	fidelityVendors = []string{"ACME Supplies", "acme supplies", "ACME  SUPPLIES", "ACME Suppl1es", "Globex Parts", "ACME Supplies GmbH"}
	fidelityBills   = []string{"INV-2290", "inv 2290", "INV-2291", "BILL/2026/11/0002", "INV-229O", "INV-7001", "INV-2187"}
	fidelityIBANs   = []string{"DE89 3704 0044 0532 0130 00", "de89370400440532013000", "IBAN DE89370400440532013000",
		"LT12 1000 0111 0100 1000", "NL91 ABNA 0417 1643 00", "DE89 3704 0044 0532 0130 01"}
	fidelityAmounts    = []string{"850.00", "850", "2400.00", "2,400.00", "1200.00", "2399.99", "0.01", "99999.00"}
	fidelityCurrencies = []string{"EUR", "eur", "USD", ""}
	fidelityParams     = []string{"vendor", "bill", "iban", "amount", "currency"}
	fidelityPools      = map[string][]string{"vendor": fidelityVendors, "bill": fidelityBills, "iban": fidelityIBANs,
		"amount": fidelityAmounts, "currency": fidelityCurrencies}
)

// TestApprovalFidelity is issue 25's approval fidelity, as a property over
// the agent's values: for any ap.pay_bill an agent sends (its vendor, bill,
// account, amount and currency drawn from the records' own spellings,
// other spellings, other records, look-alikes and an attacker's account),
// when the gateway asks a person, what the approval page shows that person
// (the vendor, the bill, the account, the amount with its currency) is
// what executes once they approve: the payment the ERP then holds is to
// that vendor's that account, for that bill, of that amount in that
// currency. The oracle is the ERP's own record of the payment, never the
// page's or the gateway's account of it.
func TestApprovalFidelity(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(25, 2026))
	asked, executed := 0, 0
	for i := range 120 {
		args := map[string]any{}
		for _, k := range fidelityParams { // in order: the draws are the seed's
			args[k] = pick(r, fidelityPools[k])
		}
		if r.IntN(2) == 0 {
			// Half the cases spell the bill above the confirmation
			// threshold its own ways, so that the page is reached often;
			// one value at a time is then drawn from everything.
			args["vendor"], args["bill"], args["iban"] = pick(r, fidelityVendors[:3]), pick(r, []string{"INV-2291", "inv-2291", "BILL/2026/11/0002"}), pick(r, fidelityIBANs[:3])
			args["amount"], args["currency"] = pick(r, []string{"2400.00", "2400", "2,400.00", "1200.00"}), pick(r, []string{"EUR", "eur"})
			k := fidelityParams[r.IntN(len(fidelityParams))]
			args[k] = pick(r, fidelityPools[k])
		}
		a, e := fidelityCase(t, apFidelity(t), ap.ActionPayBill, args)
		asked, executed = asked+a, executed+e
		if t.Failed() {
			t.Fatalf("case %d: %v", i, args)
		}
	}
	// The draws must reach the page and execution, or the property was
	// never exercised.
	if asked < 5 || executed < 5 {
		t.Fatalf("%d cases asked a person and %d executed after approval; the draws do not exercise the page", asked, executed)
	}
	t.Logf("120 cases: %d asked a person on the page, %d executed after approval", asked, executed)
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// fidelityPack is one pack's side of the fidelity test: its pack and
// phraser on fresh books, the mandate's owner and scope, and the check of
// what executed against what the page showed, read from the books.
type fidelityPack struct {
	pack    gateway.Pack
	phraser approval.Phraser
	owner   intent.Owner
	scope   []intent.Action
	start   time.Time
	params  []string // the arguments the page must show as values
	check   func(t *testing.T, d gateway.Decision, shown fidelityShown)
}

// apFidelity is the AP pack on a fresh demo ERP.
func apFidelity(t *testing.T) fidelityPack {
	clk := testclock.New(apStart)
	books := ap.DemoERP(clk.Now)
	pack, err := ap.NewPack(books, ap.Config{Callbacks: &ap.CallbackMem{}, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	return fidelityPack{pack: pack, phraser: ap.Phraser(), owner: ap.DemoCompany, scope: apActions, start: apStart,
		params: []string{"vendor", "bill", "iban"},
		check:  func(t *testing.T, d gateway.Decision, shown fidelityShown) { checkShownExecuted(t, books, d, shown) }}
}

// fidelityCase decides one proposal of action with args on fp's fresh
// books; when the gateway asks, it has the request approved on the page,
// by as many people as its level needs, after reading what the page
// shows, and checks that what executed is that. It returns whether a
// person was asked and whether the operation then executed.
func fidelityCase(t *testing.T, fp fidelityPack, action intent.Action, args map[string]any) (asked, executed int) {
	t.Helper()
	ctx := context.Background()
	clk := testclock.New(fp.start)
	st := mem.New(clk.Now)
	var h http.Handler
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	defer ts.Close()
	page, err := approvals.New(approvals.Config{BaseURL: ts.URL, Now: clk.Now, Approvers: fidelityApprovers(),
		Phrasers: []approval.Phraser{fp.phraser}}, st, st)
	if err != nil {
		t.Fatal(err)
	}
	h = page.Handler()
	issuerPub, issuer, _ := ed25519.GenerateKey(nil)
	gw, err := gateway.New(gateway.Config{Audience: "intentplane-test", Issuers: mandate.StaticKeys{"finance": issuerPub},
		Approvers: page.Keys(), Now: clk.Now}, st, fp.pack)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mandate.Issue(mandate.Mandate{ID: "m-fidelity", Issuer: "finance", Audience: "intentplane-test", Owner: fp.owner,
		Scope: fp.scope, Budget: intent.Money{Currency: "EUR", Amount: 5000000}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: fp.start, Expiry: fp.start.Add(8 * time.Hour)}, "finance", issuer)
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(map[string]any{"action": action, "args": args})
	if err != nil {
		t.Fatal(err)
	}
	d, err := gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != intent.StepUp {
		return 0, 0
	}
	tk, err := page.Request(ctx, approval.Request{Operation: *d.Operation, Hash: d.OperationHash, Level: d.Level,
		Resolved: d.Resolved, Reason: d.Refusal.Message, Facts: d.Facts, Policies: d.Policies, Currency: d.Currency})
	if err != nil {
		t.Fatalf("the page refused the gateway's request: %v", err)
	}
	need := 1
	if d.Level == intent.LevelFourEyes {
		need = 2
	}
	var shown fidelityShown
	for _, a := range fidelityApprovers()[:need] {
		shown = approveOnPage(t, ts.URL, tk.ID, a.Name, fp.params)
	}
	out, err := page.Outcome(ctx, tk.ID)
	if err != nil || out.Status != approvals.StatusApproved {
		t.Fatalf("after %d approvals: %+v, %v", need, out, err)
	}
	d, err = gw.Decide(ctx, gateway.Request{Mandate: tok, Proposal: body, Approvals: out.Approvals})
	if err != nil {
		t.Fatal(err)
	}
	if !d.Executed {
		// Approved and still refused (the budget, a hold): nothing
		// executed, so nothing can differ from the page.
		return 1, 0
	}
	fp.check(t, d, shown)
	return 1, 1
}

// fidelityShown is what the request page shows of a payment: its amount,
// its sentence, and each value by parameter.
type fidelityShown struct {
	amount, summary string
	values          map[string]string
}

var (
	csrfRE    = regexp.MustCompile(`name="csrf" value="([^"]+)"`)
	opRE      = regexp.MustCompile(`name="operation" value="([0-9a-f]{64})"`)
	amountRE  = regexp.MustCompile(`id="amount-amount">([^<]*)<`)
	summaryRE = regexp.MustCompile(`<h1 id="summary">([^<]*)</h1>`)
)

func valueShown(t *testing.T, page, param string) string {
	t.Helper()
	m := regexp.MustCompile(`id="value-` + param + `"><span class="name">([^<]*)</span>`).FindStringSubmatch(page)
	if m == nil {
		t.Fatalf("the page shows no %s", param)
	}
	return html.UnescapeString(m[1])
}

// approveOnPage signs in as name, reads the request page and approves it
// with its form, returning what the page showed.
func approveOnPage(t *testing.T, base, id, name string, params []string) fidelityShown {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	get := func(path string) string {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return string(b)
	}
	post := func(path string, form url.Values) int {
		resp, err := c.PostForm(base+path, form)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	first := func(re *regexp.Regexp, page, what string) string {
		m := re.FindStringSubmatch(page)
		if m == nil {
			t.Fatalf("no %s on the page: %.400s", what, page)
		}
		return html.UnescapeString(m[1])
	}
	login := get("/login")
	if code := post("/login", url.Values{"csrf": {first(csrfRE, login, "csrf")}, "approver": {name}, "passcode": {name + "-passcode-12"}}); code != http.StatusSeeOther {
		t.Fatalf("sign-in of %s: %d", name, code)
	}
	page := get("/requests/" + id)
	shown := fidelityShown{amount: first(amountRE, page, "amount"), summary: first(summaryRE, page, "summary"), values: map[string]string{}}
	for _, p := range params {
		shown.values[p] = valueShown(t, page, p)
	}
	form := url.Values{"csrf": {first(csrfRE, page, "csrf")}, "operation": {first(opRE, page, "operation")}}
	if code := post("/requests/"+id+"/approve", form); code >= 400 {
		t.Fatalf("approval by %s: %d", name, code)
	}
	return shown
}

// checkShownExecuted compares what the page showed with the payment the
// ERP holds for the executed operation.
func checkShownExecuted(t *testing.T, books *erp.Mem, d gateway.Decision, shown fidelityShown) {
	t.Helper()
	ctx := context.Background()
	billID := d.Operation.Args["bill"].Str
	ps, err := books.Payments(ctx, ap.DemoCompany, erp.PaymentQuery{Bill: billID})
	if err != nil {
		t.Fatal(err)
	}
	var paid *erp.Payment
	for i := range ps {
		if ps[i].Key != "" { // made through the gateway, not by hand before
			paid = &ps[i]
		}
	}
	if paid == nil {
		t.Fatalf("executed, and the ERP holds no payment of bill %s", billID)
	}
	bills, err := books.Bills(ctx, ap.DemoCompany, erp.BillQuery{ID: paid.Bill})
	if err != nil || len(bills) != 1 {
		t.Fatalf("the paid bill: %v, %v", bills, err)
	}
	vendors, err := books.Vendors(ctx, ap.DemoCompany, erp.VendorQuery{ID: paid.Vendor})
	if err != nil || len(vendors) != 1 {
		t.Fatalf("the paid vendor: %v, %v", vendors, err)
	}
	accounts, err := books.BankAccounts(ctx, ap.DemoCompany, erp.BankAccountQuery{ID: paid.BankAccount})
	if err != nil || len(accounts) != 1 {
		t.Fatalf("the account paid: %v, %v", accounts, err)
	}
	if !sameAmount(shown.amount, paid.Amount) {
		t.Errorf("the page showed %q; the ERP paid %s %s", shown.amount, paid.Amount.Decimal(), paid.Amount.Currency)
	}
	if !strings.Contains(shown.values["vendor"], vendors[0].Name) {
		t.Errorf("the page showed the vendor %q; the ERP paid %s", shown.values["vendor"], vendors[0].Name)
	}
	if !strings.Contains(shown.values["bill"], bills[0].Ref) && !strings.Contains(shown.values["bill"], bills[0].Name) {
		t.Errorf("the page showed the bill %q; the ERP paid %s (%s)", shown.values["bill"], bills[0].Ref, bills[0].Name)
	}
	if normalize.FormatIBAN(accounts[0].Sanitized) != shown.values["iban"] && accounts[0].Sanitized != erp.Sanitize(shown.values["iban"]) {
		t.Errorf("the page showed the account %q; the ERP paid %s", shown.values["iban"], accounts[0].Number)
	}
	if !strings.Contains(shown.summary, vendors[0].Name) || !strings.Contains(strings.ReplaceAll(shown.summary, " ", ""), accounts[0].Sanitized) {
		t.Errorf("the page's sentence %q does not name the vendor %s and the account %s paid", shown.summary, vendors[0].Name, accounts[0].Sanitized)
	}
}

// sameAmount reports whether text, as the page writes an amount ("2,400.00
// EUR"), is m.
func sameAmount(text string, m intent.Money) bool {
	num, cur, ok := strings.Cut(strings.TrimSpace(text), " ")
	if !ok || cur != m.Currency {
		return false
	}
	a, err := intent.ParseAmount(strings.ReplaceAll(num, ",", ""), m.Exponent())
	return err == nil && a == m.Amount
}

// TestApprovalFidelityBanking is TestApprovalFidelity for
// banking.send_money: the recipient's account and the amount the page
// shows are the transaction the bank then holds.
func TestApprovalFidelityBanking(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(25, 2027))
	recipients := []string{bankFriend, "gb29 nwbk 6016 1331 9268 19", "GB29 NWBK 6016 1331 9268 18", bankAttacker, "IBAN GB29NWBK60161331926819"}
	amounts := []string{"1500.00", "1,500.00", "2000", "5.00", "999.99", "12000.00", "1500.001"}
	asked, executed := 0, 0
	for i := range 60 {
		args := map[string]any{"recipient": pick(r, recipients), "amount": pick(r, amounts), "subject": pick(r, []string{"Car", "rent", "INV-1"}), "date": "2022-04-01"}
		a, e := fidelityCase(t, bankingFidelity(t), banking.ActionSendMoney, args)
		asked, executed = asked+a, executed+e
		if t.Failed() {
			t.Fatalf("case %d: %v", i, args)
		}
	}
	if asked < 5 || executed < 5 {
		t.Fatalf("%d cases asked a person and %d executed after approval; the draws do not exercise the page", asked, executed)
	}
	t.Logf("60 cases: %d asked a person on the page, %d executed after approval", asked, executed)
}

// bankingFidelity is the banking pack over a fresh bank holding emma's
// account and one past recipient.
func bankingFidelity(t *testing.T) fidelityPack {
	bank := banking.NewMem()
	err := bank.Open(bankOwner, banking.Account{IBAN: "DE89370400440532013000", Balance: 5000000,
		Transactions: []banking.Transaction{{ID: 1, Sender: "me", Recipient: bankFriend, Amount: 20000, Subject: "New year gift", Date: "2022-02-12"}}})
	if err != nil {
		t.Fatal(err)
	}
	pack, err := banking.NewPack(bank)
	if err != nil {
		t.Fatal(err)
	}
	return fidelityPack{pack: pack, phraser: banking.Phraser(), owner: bankOwner, scope: []intent.Action{banking.ActionSendMoney},
		start: time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC), params: []string{"recipient"},
		check: func(t *testing.T, d gateway.Decision, shown fidelityShown) {
			acct, err := bank.Account(bankOwner)
			if err != nil || len(acct.Transactions) < 2 {
				t.Fatalf("executed, and the bank holds %d transactions (%v)", len(acct.Transactions), err)
			}
			tx := acct.Transactions[len(acct.Transactions)-1]
			if normalize.FormatIBAN(tx.Recipient) != shown.values["recipient"] && tx.Recipient != erp.Sanitize(shown.values["recipient"]) {
				t.Errorf("the page showed the recipient %q; the bank sent to %s", shown.values["recipient"], tx.Recipient)
			}
			if !sameAmount(shown.amount, intent.Money{Currency: "EUR", Amount: intent.Amount(tx.Amount)}) {
				t.Errorf("the page showed %q; the bank sent %d cents", shown.amount, tx.Amount)
			}
		}}
}
