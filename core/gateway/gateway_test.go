package gateway_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/fstest"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/gateway/gatewaytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/store/mem"
)

// The tests run the shared "pay" test pack (core/gateway/gatewaytest)
// with an executor that records what it was asked to do.

type executed struct {
	mu   sync.Mutex
	ops  []intent.Operation
	n    int                       // operations executed
	keep bool                      // keep each operation in ops; false counts them only
	hook func(op intent.Operation) // called before executing; set before use
	fail func() error              // the error of this call, if not nil; called under mu; set before use
}

func (e *executed) Execute(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
	if e.hook != nil {
		e.hook(op)
	}
	if op.Args["memo"].Str == "explode" {
		return gateway.Result{}, gateway.Visible("the bank refused the memo", fmt.Errorf("upstream 10.0.0.7: %w", gateway.ErrNotExecuted))
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.fail != nil {
		if err := e.fail(); err != nil {
			return gateway.Result{}, err
		}
	}
	e.n++
	if e.keep {
		e.ops = append(e.ops, op)
	}
	return gateway.Result{Output: `{"ok":true,"n":` + strconv.Itoa(e.n) + `}`}, nil
}

type world struct {
	t         *testing.T
	gw        *gateway.Gateway
	pack      gateway.Pack
	store     *mem.Store
	exec      *executed
	now       time.Time
	issuer    ed25519.PrivateKey
	approvers map[string]ed25519.PrivateKey
}

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func newWorld(t *testing.T) *world {
	t.Helper()
	w := &world{t: t, exec: &executed{keep: true}, now: t0}
	w.store = mem.New(func() time.Time { return w.now }) // the gateway's clock: nonces expire by it
	issuerPub, issuerPriv := gatewaytest.KeyPair(1)
	alicePub, alicePriv := gatewaytest.KeyPair(2)
	bobPub, bobPriv := gatewaytest.KeyPair(3)
	w.issuer = issuerPriv
	w.approvers = map[string]ed25519.PrivateKey{"alice": alicePriv, "bob": bobPriv}
	// The registry's records are built once, as a database would hold them;
	// the lookup itself is what BenchmarkDecide measures.
	db := map[intent.Owner]map[string]resolve.Record{
		"emma": {
			"GB29": {ID: "ben-1", Value: "GB29", Attrs: map[string]intent.Value{"trusted": intent.Bool(true)}},
			"XX00": {ID: "ben-2", Value: "XX00", Attrs: map[string]intent.Value{"trusted": intent.Bool(false)}},
		},
		"bob": {"BOB1": {ID: "ben-9", Value: "BOB1", Attrs: map[string]intent.Value{"trusted": intent.Bool(true)}}},
	}
	beneficiaries := resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
		if r, ok := db[owner][v]; ok {
			return r, nil
		}
		return resolve.Record{}, resolve.ErrNoMatch
	})
	var err error
	w.pack, err = gatewaytest.Pack(gatewaytest.Options{Executor: w.exec, Beneficiaries: beneficiaries, Exclusive: true})
	if err != nil {
		t.Fatal(err)
	}
	w.gw, err = gateway.New(gateway.Config{
		Audience:  "intentplane-test",
		Issuers:   mandate.StaticKeys{"bank-app": issuerPub},
		Approvers: approval.StaticKeys{"alice": alicePub, "bob": bobPub},
		Now:       func() time.Time { return w.now },
	}, w.store, w.pack)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *world) mandate(owner intent.Owner, budget intent.Amount, scope ...intent.Action) string {
	w.t.Helper()
	if len(scope) == 0 {
		scope = []intent.Action{"pay.send", "pay.balance"}
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-" + string(owner), Issuer: "bank-app", Audience: "intentplane-test", Owner: owner,
		Scope: scope, Budget: intent.Money{Currency: "EUR", Amount: budget},
		Claims: map[string][]string{"payees": {"CH93 0076"}}, Mode: mandate.ModeKnownCounterparties,
		NotBefore: t0, Expiry: t0.Add(time.Hour),
	}, "bank-app", w.issuer)
	if err != nil {
		w.t.Fatal(err)
	}
	return tok
}

func (w *world) decide(tok, body string, as ...approval.Approval) gateway.Decision {
	w.t.Helper()
	d, err := w.gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: []byte(body), Approvals: as})
	if err != nil {
		w.t.Fatalf("Decide: %v", err)
	}
	return d
}

func (w *world) approve(who string, d gateway.Decision) approval.Approval {
	w.t.Helper()
	a, err := approval.Sign(approval.Approval{
		ID: who + "-" + d.OperationHash.String()[:8], Operation: d.OperationHash, MandateID: d.Operation.MandateID,
		Approver: who, IssuedAt: w.now, ExpiresAt: w.now.Add(5 * time.Minute),
	}, w.approvers[who])
	if err != nil {
		w.t.Fatal(err)
	}
	return a
}

func send(recipient, amount string) string {
	return fmt.Sprintf(`{"action":"pay.send","args":{"recipient":%q,"amount":%q}}`, recipient, amount)
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	emma := w.mandate("emma", 500000)
	tests := []struct {
		name    string
		tok     string
		body    string
		code    intent.Code
		mention string
	}{
		{"malformed", emma, `{"action":"pay.send","args":{},"approved":true}`, intent.CodeMalformed, `unknown key "approved"`},
		{"no mandate", "", send("GB29", "1.00"), intent.CodeMandateInvalid, "mandate"},
		{"forged mandate", emma[:len(emma)-4] + "AAAA", send("GB29", "1.00"), intent.CodeMandateInvalid, "mandate"},
		{"out of scope", w.mandate("emma", 500000, "pay.balance"), send("GB29", "1.00"), intent.CodeOutOfScope, "not part of what the user authorised"},
		{"unknown action in scope", w.mandate("emma", 1, "pay.delete"), `{"action":"pay.delete","args":{}}`, intent.CodeUnknownAction, "does not exist"},
		{"bad argument", emma, `{"action":"pay.send","args":{"recipient":"GB29","amount":"1.001"}}`, intent.CodeBadArgument, "more than 2 decimals"},
		{"attacker account", emma, send("US133000000121212121212", "1.00"), intent.CodeNotTrusted, "US133000000121212121212"},
		{"another owner's beneficiary", emma, send("BOB1", "1.00"), intent.CodeNotTrusted, "BOB1"},
		{"look-alike", emma, send("GB2\u0417", "1.00"), intent.CodeBadArgument, "non-ASCII"},
		{"untrusted account", emma, send("XX00", "1.00"), intent.CodePolicyDenied, "not trusted"},
		{"budget", emma, send("GB29", "5000.01"), intent.CodeBudgetExceeded, "5000.01 EUR exceeds"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := w.decide(tt.tok, tt.body)
			if d.Verdict != intent.Deny || d.Refusal == nil || d.Refusal.Code != tt.code {
				t.Fatalf("verdict %s refusal %+v, want deny %s", d.Verdict, d.Refusal, tt.code)
			}
			if !strings.Contains(d.Refusal.Message, tt.mention) {
				t.Errorf("message %q does not mention %q", d.Refusal.Message, tt.mention)
			}
			if d.Executed || d.Receipt.Seq == 0 || d.Receipt.Code != tt.code || d.Receipt.Result != "not_executed" {
				t.Errorf("receipt %+v: want a stored not_executed receipt with code %s", d.Receipt, tt.code)
			}
		})
	}
	if len(w.exec.ops) != 0 {
		t.Fatalf("%d operations executed, want none", len(w.exec.ops))
	}
	if strings.Contains(w.decide(emma, send("BOB1", "1.00")).Refusal.Message, "ben-9") {
		t.Fatal("refusal leaks another owner's record id")
	}
}

func TestAllowSubstitutesTrustedValue(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 500000)
	d := w.decide(tok, send("gb 29", "12.50"))
	if d.Verdict != intent.Allow || !d.Executed {
		t.Fatalf("verdict %s refusal %+v, want allow", d.Verdict, d.Refusal)
	}
	if d.Output != `{"ok":true,"n":1}` || !strings.HasPrefix(d.Receipt.Output, "sha256:") {
		t.Fatalf("output %q, receipt output %q: the receipt must keep only a digest", d.Output, d.Receipt.Output)
	}
	op := w.exec.ops[0]
	if op.Args["recipient"].Str != "GB29" || op.Args["amount"].Int != 1250 || op.Owner != "emma" {
		t.Fatalf("executed %+v, want recipient GB29 amount 1250 for emma", op.Args)
	}
	if got := d.Resolved[0]; got.Sent != "gb 29" || got.Provenance.Source != "registry:beneficiaries" || got.Provenance.RecordID != "ben-1" {
		t.Fatalf("resolved %+v", got)
	}
	// From the mandate's claim, spelled differently.
	if d := w.decide(tok, send("ch930076", "1.00")); d.Verdict != intent.Allow || w.exec.ops[1].Args["recipient"].Str != "CH930076" {
		t.Fatalf("mandate payee: %s %+v", d.Verdict, d.Refusal)
	}
	// Exactly once: the same operation again is refused, budget untouched.
	if d := w.decide(tok, send("GB29", "12.50")); d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeReplayed {
		t.Fatalf("replayed operation: %s %+v", d.Verdict, d.Refusal)
	}
	u, _ := w.store.Usage(context.Background(), "m-emma")
	if u.Committed != 1350 || u.Reserved != 0 {
		t.Fatalf("usage %+v, want 13.50 committed", u)
	}
	// Read-only actions may repeat.
	for range 2 {
		if d := w.decide(tok, `{"action":"pay.balance","args":{}}`); d.Verdict != intent.Allow {
			t.Fatalf("read: %s %+v", d.Verdict, d.Refusal)
		}
	}
}

func TestStepUpAndApprovals(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 5000000)
	body := send("GB29", "1500.00")
	d := w.decide(tok, body)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || d.Refusal.Code != intent.CodeApprovalRequired || d.Executed {
		t.Fatalf("want step-up confirm, got %s %s %+v", d.Verdict, d.Level, d.Refusal)
	}
	if !strings.Contains(d.Refusal.Message, "1,000.00") {
		t.Errorf("step-up message does not give the policy's reason: %q", d.Refusal.Message)
	}
	u, _ := w.store.Usage(context.Background(), "m-emma")
	if u.Reserved != 0 {
		t.Fatal("a step-up holds a reservation")
	}

	alice := w.approve("alice", d)
	// The approval does not cover one cent more.
	if d2 := w.decide(tok, send("GB29", "1500.01"), alice); d2.Refusal == nil || d2.Refusal.Code != intent.CodeApprovalInvalid {
		t.Fatalf("approval reused for another amount: %s %+v", d2.Verdict, d2.Refusal)
	}
	ok := w.decide(tok, body, alice)
	if ok.Verdict != intent.Allow || !ok.Executed || len(ok.Receipt.Approvals) != 1 || ok.Receipt.Approvals[0].Level != "confirm" {
		t.Fatalf("approved operation: %s %+v", ok.Verdict, ok.Refusal)
	}
	// The approval is single use, even for an identical new operation.
	if again := w.decide(tok, body, alice); again.Refusal == nil || again.Refusal.Code != intent.CodeApprovalInvalid {
		t.Fatalf("approval replay: %s %+v", again.Verdict, again.Refusal)
	}

	// Four eyes: one approver is not enough, the same one twice neither.
	huge := send("GB29", "20000.00")
	d = w.decide(tok, huge)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelFourEyes {
		t.Fatalf("want four_eyes, got %s %s", d.Verdict, d.Level)
	}
	a1 := w.approve("alice", d)
	if one := w.decide(tok, huge, a1); one.Verdict != intent.StepUp || one.Level != intent.LevelFourEyes {
		t.Fatalf("one approver: %s %s", one.Verdict, one.Level)
	}
	a2 := a1
	a2.ID = "alice-again"
	a2, _ = approval.Sign(a2, w.approvers["alice"])
	if twice := w.decide(tok, huge, a1, a2); twice.Refusal == nil || twice.Refusal.Code != intent.CodeApprovalInvalid {
		t.Fatalf("same approver twice: %s %+v", twice.Verdict, twice.Refusal)
	}
	w.now = w.now.Add(time.Minute)
	d = w.decide(tok, huge)
	both := w.decide(tok, huge, w.approve("alice", d), w.approve("bob", d))
	if both.Verdict != intent.Allow || len(both.Receipt.Approvals) != 2 || both.Receipt.Approvals[1].Level != "four_eyes" {
		t.Fatalf("two approvers: %s %+v %+v", both.Verdict, both.Refusal, both.Receipt.Approvals)
	}
	// Expired approval.
	d = w.decide(tok, send("GB29", "1600.00"))
	late := w.approve("alice", d)
	w.now = w.now.Add(6 * time.Minute)
	if exp := w.decide(tok, send("GB29", "1600.00"), late); exp.Refusal == nil || exp.Refusal.Code != intent.CodeApprovalInvalid {
		t.Fatalf("expired approval: %s %+v", exp.Verdict, exp.Refusal)
	}
}

func TestExecutorFailureReleasesBudget(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 1000)
	d := w.decide(tok, `{"action":"pay.send","args":{"recipient":"GB29","amount":"10.00","memo":"explode"}}`)
	if d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeExecutionRefused || d.Receipt.Result != receipt.ResultNotExecuted {
		t.Fatalf("got %s %+v result %s", d.Verdict, d.Refusal, d.Receipt.Result)
	}
	if !strings.Contains(d.Refusal.Message, "the bank refused the memo") || strings.Contains(d.Refusal.Message, "10.0.0.7") {
		t.Fatalf("refusal %q: want the visible message and no internal detail", d.Refusal.Message)
	}
	if d := w.decide(tok, send("GB29", "10.00")); d.Verdict != intent.Allow {
		t.Fatalf("budget was not released after a certain non-execution: %+v", d.Refusal)
	}
}

func TestMandateExpiryAfterCaching(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 1000)
	if d := w.decide(tok, `{"action":"pay.balance","args":{}}`); d.Verdict != intent.Allow {
		t.Fatalf("%+v", d.Refusal)
	}
	w.now = t0.Add(2 * time.Hour)
	if d := w.decide(tok, `{"action":"pay.balance","args":{}}`); d.Refusal == nil || d.Refusal.Code != intent.CodeMandateExpired {
		t.Fatalf("expired mandate still accepted from the cache: %s %+v", d.Verdict, d.Refusal)
	}
}

// TestConcurrentSameOperation: many concurrent identical requests execute
// exactly once.
func TestConcurrentSameOperation(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 100000)
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.decide(tok, send("GB29", "7.00"))
		}()
	}
	wg.Wait()
	if len(w.exec.ops) != 1 {
		t.Fatalf("%d executions of one operation, want 1", len(w.exec.ops))
	}
}

func TestReceiptsVerify(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 100000)
	w.decide(tok, send("GB29", "1.00"))
	w.decide(tok, send("US13", "1.00"))
	w.decide(tok, `{"bad json`)
	w.decide("not a mandate", send("GB29", "1.00"))
	rs, err := w.store.Receipts(context.Background(), "emma", 1, 0)
	if err != nil || len(rs) != 3 || rs[2].Sent != `{"bad json` || rs[2].Code != intent.CodeMalformed {
		t.Fatalf("emma has %d receipts (%v), want 3, the last the malformed proposal", len(rs), err)
	}
	anon, _ := w.store.Receipts(context.Background(), "", 1, 0)
	if len(anon) != 1 || anon[0].Code != intent.CodeMandateInvalid {
		t.Fatalf("a proposal without a genuine mandate goes to the chain of no owner: %+v", anon)
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, append(rs, anon...)); err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.Verify(&buf, nil); err != nil {
		t.Fatalf("receipts do not verify: %v", err)
	}
}

func TestNewRefusesBadPolicy(t *testing.T) {
	t.Parallel()
	_, err := gateway.New(gateway.Config{Audience: "a", Issuers: mandate.StaticKeys{}}, mem.New(nil), gateway.Pack{
		Name:     "pay",
		Policies: fstest.MapFS{"policy.cedar": {Data: []byte("permit (principal, action, resource) when { context.nope };")}, "schema.cedarschema": {Data: []byte(gatewaytest.Schema)}},
		Executor: &executed{},
	})
	if err == nil || !strings.Contains(err.Error(), "policy.cedar:1") {
		t.Fatalf("New with a broken policy = %v, want an error naming policy.cedar:1", err)
	}
}

// TestExclusiveRecord: while one operation on a record is between its
// context read and its execution, another operation on it is refused; other
// records are not blocked, and the record is free again afterwards.
func TestExclusiveRecord(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	release := make(chan struct{})
	entered := make(chan struct{})
	w.exec.hook = func(op intent.Operation) {
		if op.Args["amount"].Int == 100 {
			close(entered)
			<-release
		}
	}
	tok := w.mandate("emma", 100000)
	done := make(chan gateway.Decision)
	go func() { done <- w.decide(tok, send("GB29", "1.00")) }()
	<-entered
	second := w.decide(tok, send("gb29", "2.00"))
	if second.Refusal == nil || second.Refusal.Code != intent.CodeInFlight {
		t.Fatalf("concurrent operation on the same record: %s %+v", second.Verdict, second.Refusal)
	}
	if other := w.decide(tok, send("CH930076", "2.00")); other.Verdict != intent.Allow {
		t.Fatalf("another record was blocked: %s %+v", other.Verdict, other.Refusal)
	}
	close(release)
	if first := <-done; first.Verdict != intent.Allow {
		t.Fatalf("first: %s %+v", first.Verdict, first.Refusal)
	}
	if after := w.decide(tok, send("GB29", "2.00")); after.Verdict != intent.Allow {
		t.Fatalf("after the first finished: %s %+v", after.Verdict, after.Refusal)
	}
}

// secretWorld is a gateway whose one action takes a sensitive argument and
// whose executor panics on demand.
func secretWorld(t *testing.T) (*world, string) {
	t.Helper()
	w := newWorld(t)
	issuerPub, _ := gatewaytest.KeyPair(1)
	setPw, err := contract.New(contract.Contract{Action: "acct.set_password", Params: []contract.Parameter{
		{Name: "password", Type: contract.String(64), Required: true, Critical: true, Sensitive: true, Sources: []contract.Source{contract.FromMandate("new_password")}},
		{Name: "panic", Type: contract.Bool()},
	}})
	if err != nil {
		t.Fatal(err)
	}
	exec := gateway.ExecutorFunc(func(ctx context.Context, op intent.Operation, h intent.OperationHash) (gateway.Result, error) {
		if op.Args["panic"].Bool {
			panic("executor bug")
		}
		return gateway.Result{Output: "password changed", Summary: "changed"}, nil
	})
	const schemaText = `entity Owner; entity Resource;
type Approval = { confirm: Bool, four_eyes: Bool }; type Mandate = { mode: String };
action "acct.set_password" appliesTo { principal: Owner, resource: Resource,
  context: { args: { password: String, panic?: Bool }, facts: {}, approval: Approval, mandate: Mandate, amount: Long } };`
	w.gw, err = gateway.New(gateway.Config{Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuerPub}, Now: func() time.Time { return w.now }},
		w.store, gateway.Pack{
			Name: "acct", Contracts: []*contract.Contract{setPw}, Executor: exec,
			Policies: fstest.MapFS{
				"policy.cedar":       {Data: []byte(`@id("any") permit (principal, action, resource);`)},
				"schema.cedarschema": {Data: []byte(schemaText)},
			},
		})
	if err != nil {
		t.Fatal(err)
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID: "m-pw", Issuer: "bank-app", Audience: "intentplane-test", Owner: "emma",
		Scope: []intent.Action{"acct.set_password"}, Budget: intent.Money{Currency: "EUR"},
		Claims: map[string][]string{"new_password": {"S3cret-Emma!"}}, Mode: mandate.ModeStrict,
		NotBefore: t0, Expiry: t0.Add(time.Hour),
	}, "bank-app", w.issuer)
	if err != nil {
		t.Fatal(err)
	}
	return w, tok
}

// TestSensitiveArgumentsStayOutOfReceipts: a password reaches the executor
// but never the append-only chain (found in review).
func TestSensitiveArgumentsStayOutOfReceipts(t *testing.T) {
	t.Parallel()
	w, tok := secretWorld(t)
	for _, body := range []string{
		`{"action":"acct.set_password","args":{"password":"S3cret-Emma!"}}`,
		`{"action":"acct.set_password","args":{"password":"Wr0ng-Guess"}}`,
		`{"action":"acct.set_password","args":{"password":"Wr0ng-Guess","extra":1}}`,
	} {
		d := w.decide(tok, body)
		b, err := intent.Canonical(map[string]any{"sent": d.Receipt.Sent, "args": d.Receipt.Args, "msg": d.Receipt.Message})
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range d.Receipt.Resolved {
			b = append(b, r.Sent+r.Value...)
		}
		if strings.Contains(string(b), "S3cret") || strings.Contains(string(b), "Wr0ng") {
			t.Errorf("receipt of %s keeps the password: %s", body, b)
		}
		if !strings.Contains(d.Receipt.Sent, `"password":"sha256:`) {
			t.Errorf("receipt Sent %q does not keep the password's digest", d.Receipt.Sent)
		}
	}
}

// TestSecretsOfUndecodedProposalsStayOutOfReceipts: a password in a
// proposal whose action is misspelled (no contract says which argument is
// secret) or that does not decode (a key given twice, data after the
// object) never reaches the chain either: the first keeps the action and
// the arguments' names with every value's digest, the others only the
// body's digest and size. Both were kept verbatim.
func TestSecretsOfUndecodedProposalsStayOutOfReceipts(t *testing.T) {
	t.Parallel()
	w, tok := secretWorld(t)
	for body, want := range map[string]string{
		`{"action":"acct.set_pasword","args":{"password":"S3cret-Emma!"}}`:                              `{"action":"acct.set_pasword","args":{"password":"sha256:`,
		`{"action":"acct.set_password","args":{"password":"S3cret-Emma!","password":"S3cret-Emma!"}}`:   "sha256:",
		`{"action":"acct.set_password","args":{"password":"S3cret-Emma!"}} {"password":"S3cret-Emma!"}`: "sha256:",
	} {
		d := w.decide(tok, body)
		if d.Verdict != intent.Deny {
			t.Fatalf("%s: %s, want a denial", body, d.Verdict)
		}
		got, err := w.store.Receipts(context.Background(), d.Receipt.Owner, d.Receipt.Seq, 1)
		if err != nil || len(got) != 1 {
			t.Fatalf("receipt %d not read back: %v", d.Receipt.Seq, err)
		}
		if sent := got[0].Sent; strings.Contains(sent, "S3cret") || !strings.HasPrefix(sent, want) {
			t.Errorf("receipt of %s keeps %q, want no password and a beginning %q", body, sent, want)
		}
	}
}

// TestPanicIsRefusedNotFatal: a panic in a pack's executor becomes a
// refusal with a receipt (found in review: one proposal could crash the
// gateway).
func TestPanicIsRefusedNotFatal(t *testing.T) {
	t.Parallel()
	w, tok := secretWorld(t)
	d := w.decide(tok, `{"action":"acct.set_password","args":{"password":"S3cret-Emma!","panic":true}}`)
	if d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeExecutionFailed || d.Receipt.Result != "failed" || d.Receipt.Seq == 0 {
		t.Fatalf("panic: %s %+v %+v", d.Verdict, d.Refusal, d.Receipt)
	}
}

// TestApproverScope: an approver of another owner cannot approve (found in
// review: approvals were not tied to an owner).
func TestApproverScope(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	issuerPub, _ := gatewaytest.KeyPair(1)
	alicePub, _ := gatewaytest.KeyPair(2)
	bobPub, _ := gatewaytest.KeyPair(3)
	var err error
	// Rebuild the gateway of the same world with a scope: alice approves for
	// emma only.
	w.gw, err = gateway.New(gateway.Config{
		Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuerPub},
		Approvers:     approval.StaticKeys{"alice": alicePub, "bob": bobPub},
		ApproverScope: func(approver string, owner intent.Owner) bool { return approver == "alice" && owner == "emma" },
		Now:           func() time.Time { return w.now },
	}, w.store, w.pack)
	if err != nil {
		t.Fatal(err)
	}
	tok := w.mandate("emma", 500000)
	body := send("GB29", "1500.00")
	d := w.decide(tok, body)
	if bad := w.decide(tok, body, w.approve("bob", d)); bad.Refusal == nil || bad.Refusal.Code != intent.CodeApprovalInvalid {
		t.Fatalf("approval by an approver of another owner: %s %+v", bad.Verdict, bad.Refusal)
	}
	if ok := w.decide(tok, body, w.approve("alice", d)); ok.Verdict != intent.Allow {
		t.Fatalf("approval by emma's approver: %s %+v", ok.Verdict, ok.Refusal)
	}
}

// TestDenialQuotesOnlyForbids: when a hard forbid and an approval guard
// both match, the final denial does not suggest that an approval could help
// (found in review).
func TestDenialQuotesOnlyForbids(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	d := w.decide(w.mandate("emma", 5000000), send("XX00", "1500.00"))
	if d.Verdict != intent.Deny || d.Refusal.Code != intent.CodePolicyDenied {
		t.Fatalf("%s %+v", d.Verdict, d.Refusal)
	}
	if strings.Contains(d.Refusal.Message, "confirm") || !strings.Contains(d.Refusal.Message, "not trusted") {
		t.Fatalf("message %q: want the forbid's reason only", d.Refusal.Message)
	}
	if diff := cmp.Diff([]string{"confirm-large", "untrusted-account"}, d.Policies); diff != "" {
		t.Errorf("determining policies (-want, +got):\n%s", diff)
	}
}

// TestInvalidTextFromSourceFailsClosed: a system of record that returns a
// string that is not UTF-8 stops the decision before execution, since the
// receipt could not record it (found in review: a payment executed and its
// receipt was then refused).
func TestInvalidTextFromSourceFailsClosed(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	w.pack.Registries = map[string]resolve.Registry{"beneficiaries": resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
		return resolve.Record{ID: "ben-\xff", Value: "GB29", Attrs: map[string]intent.Value{"trusted": intent.Bool(true)}}, nil
	})}
	issuerPub, _ := gatewaytest.KeyPair(1)
	var err error
	w.gw, err = gateway.New(gateway.Config{Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuerPub}, Now: func() time.Time { return w.now }}, w.store, w.pack)
	if err != nil {
		t.Fatal(err)
	}
	d := w.decide(w.mandate("emma", 100000), send("GB29", "1.00"))
	if d.Verdict != intent.Deny || d.Refusal.Code != intent.CodeContextFailed || d.Executed || len(w.exec.ops) != 0 {
		t.Fatalf("%s %+v executed=%v", d.Verdict, d.Refusal, d.Executed)
	}
}

// flakyStore fails the first n receipt appends.
type flakyStore struct {
	*mem.Store
	mu    sync.Mutex
	fails int
}

func (f *flakyStore) Append(ctx context.Context, r receipt.Receipt) (receipt.Receipt, error) {
	f.mu.Lock()
	fail := f.fails > 0
	f.fails--
	f.mu.Unlock()
	if fail {
		return receipt.Receipt{}, errors.New("database unavailable")
	}
	return f.Store.Append(ctx, r)
}

// TestReceiptOfExecutedOperationIsRetried: when the store fails right after
// an operation executed, the gateway retries the receipt (found in the
// PostgreSQL restart test: operations executed without a receipt).
func TestReceiptOfExecutedOperationIsRetried(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	fs := &flakyStore{Store: w.store, fails: 2}
	issuerPub, _ := gatewaytest.KeyPair(1)
	gw, err := gateway.New(gateway.Config{Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuerPub}, Now: func() time.Time { return w.now }}, fs, w.pack)
	if err != nil {
		t.Fatal(err)
	}
	d, err := gw.Decide(context.Background(), gateway.Request{Mandate: w.mandate("emma", 100000), Proposal: []byte(send("GB29", "1.00"))})
	if err != nil || !d.Executed || d.Receipt.Seq != 1 || d.Receipt.Result != "executed" {
		t.Fatalf("Decide = %v, executed %v, receipt %+v", err, d.Executed, d.Receipt)
	}
}

// TestConcurrentStepUpsDoNotExhaustBudget: checking that a step-up fits
// the budget holds nothing, so concurrent step-ups are not refused as over
// budget (found in review: 102 of 120 were). Two step-ups of 1,500.00 run
// at once against a budget of 2,999.99: each alone fits, so both must be
// asked for approval.
func TestConcurrentStepUpsDoNotExhaustBudget(t *testing.T) {
	t.Parallel()
	for round := range 30 {
		w := newWorld(t)
		tok := w.mandate("emma", 299999)
		var wg sync.WaitGroup
		codes := make(chan intent.Code, 2)
		for _, to := range []string{"GB29", "CH930076"} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				codes <- w.decide(tok, send(to, "1500.00")).Refusal.Code
			}()
		}
		wg.Wait()
		close(codes)
		for c := range codes {
			if c != intent.CodeApprovalRequired {
				t.Fatalf("round %d: a concurrent step-up got %s", round, c)
			}
		}
	}
}

// TestBudgetsPerCurrency: a mandate with a budget in EUR and one in USD
// spends each exactly, on its own account, under concurrent payments; a
// payment in a currency without a budget is refused naming the budgets
// (the same check runs on PostgreSQL in store/postgres).
func TestBudgetsPerCurrency(t *testing.T) {
	t.Parallel()
	if err := gatewaytest.PerCurrency(context.Background(), mem.New(nil), 8); err != nil {
		t.Fatal(err)
	}
}

// TestNewNeedsRandomness: the random part of lock-holder ids is read once,
// by New; a source that fails fails New rather than a decision.
func TestNewNeedsRandomness(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	issuerPub, _ := gatewaytest.KeyPair(1)
	_, err := gateway.New(gateway.Config{
		Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuerPub},
		Rand: iotest.ErrReader(errors.New("no entropy")),
	}, w.store, w.pack)
	if err == nil || !strings.Contains(err.Error(), "no entropy") {
		t.Errorf("New() with a failing Rand: error = %v, want the reader's", err)
	}
}

// TestVisibleContextFailure: a context provider's failure that trying
// again will not mend (a gateway.VisibleError) is refused with
// context.unavailable and the provider's words, not with "try again
// later"; any other failure is, without its detail. Either way nothing
// executes and the records held are given back.
func TestVisibleContextFailure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		err           error
		want, notWant []string
	}{
		{"visible", gateway.Visible("The payee has more records than one decision reads. Pay it elsewhere.", errors.New("erp: more than 2000 records at db-7")),
			[]string{"nothing was done; trying again will not change that. The payee has more records than one decision reads. Pay it elsewhere."},
			[]string{"Try again later", "db-7"}},
		{"wrapped visible", fmt.Errorf("pack: %w", gateway.Visible("Pay it elsewhere.", errors.New("db-7"))),
			[]string{"Pay it elsewhere."}, []string{"Try again later", "db-7", "pack:"}},
		{"transient", errors.New("dial tcp db-7:5432: connection refused"),
			[]string{"could not be read, so nothing was done. Try again later."}, []string{"db-7", "will not change"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			w := newWorld(t)
			fail := true
			w.pack.Context = append(w.pack.Context, gateway.ContextFunc(func(context.Context, gateway.FactQuery) (map[string]intent.Value, error) {
				if fail {
					return nil, c.err
				}
				return nil, nil
			}))
			issuerPub, _ := gatewaytest.KeyPair(1)
			var err error
			w.gw, err = gateway.New(gateway.Config{Audience: "intentplane-test", Issuers: mandate.StaticKeys{"bank-app": issuerPub}, Now: func() time.Time { return w.now }}, w.store, w.pack)
			if err != nil {
				t.Fatal(err)
			}
			tok := w.mandate("emma", 100000)
			d := w.decide(tok, send("GB29", "1.00"))
			if d.Verdict != intent.Deny || d.Refusal == nil || d.Refusal.Code != intent.CodeContextFailed || d.Executed || len(w.exec.ops) != 0 {
				t.Fatalf("%s %+v executed=%v", d.Verdict, d.Refusal, d.Executed)
			}
			for _, s := range c.want {
				if !strings.Contains(d.Refusal.Message, s) {
					t.Errorf("message %q lacks %q", d.Refusal.Message, s)
				}
			}
			for _, s := range c.notWant {
				if strings.Contains(d.Refusal.Message, s) {
					t.Errorf("message %q says %q", d.Refusal.Message, s)
				}
			}
			if d.Receipt.Seq == 0 || d.Receipt.Code != intent.CodeContextFailed || d.Receipt.Result != "not_executed" {
				t.Errorf("receipt %+v: want a stored not_executed receipt with code %s", d.Receipt, intent.CodeContextFailed)
			}
			fail = false // the records and the budget were given back
			if d := w.decide(tok, send("GB29", "1.00")); !d.Executed {
				t.Errorf("the same operation once the provider reads: %s %+v", d.Verdict, d.Refusal)
			}
		})
	}
}

// TestEvidenceChannel: the channel and the passkey assertion an approval
// was signed with reach the receipt of the operation it approves, byte for
// byte; a channel relabelled after signing is refused.
func TestEvidenceChannel(t *testing.T) {
	t.Parallel()
	w := newWorld(t)
	tok := w.mandate("emma", 5000000)
	body := send("GB29", "1500.00")
	d := w.decide(tok, body)
	pk := intent.Assertion{CredentialID: []byte{7}, AuthenticatorData: []byte{8}, ClientDataJSON: []byte(`{}`), Signature: []byte{9}}
	a := w.approve("alice", d)
	a.Channel, a.Passkey = receipt.ChannelPasskey, pk
	a, err := approval.Sign(a, w.approvers["alice"])
	if err != nil {
		t.Fatal(err)
	}
	relabelled := a
	relabelled.Channel = receipt.ChannelPage
	if r := w.decide(tok, body, relabelled); r.Refusal == nil || r.Refusal.Code != intent.CodeApprovalInvalid {
		t.Fatalf("relabelled channel: %s %+v, want approval_invalid", r.Verdict, r.Refusal)
	}
	ok := w.decide(tok, body, a)
	if ok.Verdict != intent.Allow || len(ok.Receipt.Approvals) != 1 {
		t.Fatalf("approved with a passkey: %s %+v", ok.Verdict, ok.Refusal)
	}
	ev := ok.Receipt.Approvals[0]
	if ev.Channel != receipt.ChannelPasskey || !ev.Passkey.Equal(pk) || ev.Run != "" || ok.Receipt.Version != receipt.Version3 {
		t.Fatalf("receipt evidence %+v (version %d), want channel passkey with the assertion", ev, ok.Receipt.Version)
	}
}
