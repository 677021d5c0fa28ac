// End-to-end tests of intentplane-mcp: the built proxy and the built demo
// bank server, over stdio, driven by an mcp-go client.
package main_test

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/intentplane/intentplane/core/mandate"
)

// bins holds the binaries built once for all tests.
var bins struct {
	proxy, bank string
}

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "intentplane-mcp-e2e")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bins.proxy = filepath.Join(dir, "intentplane-mcp")
	bins.bank = filepath.Join(dir, "bankserver")
	for _, b := range []struct{ out, pkg string }{{bins.proxy, "."}, {bins.bank, "../../examples/mcp/bankserver"}} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Stderr = os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build", b.pkg, err)
			os.Exit(1)
		}
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// The demo data (fictional).
const (
	ibanOnFile    = "DE89370400440532013000"
	ibanSpaced    = "de89 3704 0044 0532 0130 00"
	ibanFromEmail = "LT12 1000 0111 0100 1000"
)

const testPolicyExtra = `
@id("permit-test-tools")
@reason("test tools")
permit (principal, action in [Action::"bank.test_slow", Action::"bank.test_crash"], resource);
`

const testSchemaExtra = `
action "bank.test_crash" appliesTo {
  principal: Owner,
  resource: Resource,
  context: { args: {}, facts: {}, approval: Approval, mandate: Mandate, amount: Long },
};
action "bank.test_slow" appliesTo {
  principal: Owner,
  resource: Resource,
  context: { args: { steps?: Long }, facts: {}, approval: Approval, mandate: Mandate, amount: Long },
};
`

const testToolsExtra = `
[tools.test_slow]
server = "bank"
action = "bank.test_slow"
read_only = true
[tools.test_slow.params.steps]
type = "integer"

[tools.test_crash]
server = "bank"
action = "bank.test_crash"
read_only = true
`

// env is one proxy with its bank, in a temporary directory.
type env struct {
	t       testing.TB
	dir     string
	bankLog string
	config  string
	vars    []string  // the proxy's environment, added to the test's
	stderr  io.Writer // the proxy's stderr in start; nil: logged to t
	args    []string  // the proxy's flags in start, after --config
}

// newEnv writes the example configuration, pointed at the built bank
// server, with the test tools added.
func newEnv(t testing.TB) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{t: t, dir: dir, bankLog: filepath.Join(dir, "bank.log"), config: filepath.Join(dir, "intentplane.toml")}
	src := "../../examples/mcp"
	copyFile(t, filepath.Join(src, "payees.json"), filepath.Join(dir, "payees.json"))
	if err := os.MkdirAll(filepath.Join(dir, "policy"), 0o755); err != nil {
		t.Fatal(err)
	}
	pol := readFile(t, filepath.Join(src, "policy", "policy.cedar")) + testPolicyExtra
	sch := readFile(t, filepath.Join(src, "policy", "schema.cedarschema")) + testSchemaExtra
	writeFile(t, filepath.Join(dir, "policy", "policy.cedar"), pol)
	writeFile(t, filepath.Join(dir, "policy", "schema.cedarschema"), sch)
	cfg := readFile(t, filepath.Join(src, "intentplane.toml"))
	// The test's bank keeps no ledger: each test starts with an empty bank.
	cfg = strings.Replace(cfg, `command = "bin/bankserver"`, fmt.Sprintf(`command = %q`, bins.bank), 1)
	cfg = strings.Replace(cfg, `env = { BANK_REGION = "eu", BANK_LEDGER = "bank-ledger.json" }`,
		fmt.Sprintf(`env = { BANK_LOG = %q, BANK_TEST_TOOLS = "1" }`, e.bankLog), 1)
	if !strings.Contains(cfg, bins.bank) || !strings.Contains(cfg, e.bankLog) {
		t.Fatal("the example's bank server command changed; update newEnv")
	}
	cfg = strings.Replace(cfg, `call_timeout = "60s"`, `call_timeout = "5s"`, 1)
	cfg += testToolsExtra
	writeFile(t, e.config, cfg)
	return e
}

func copyFile(t testing.TB, from, to string) { writeFile(t, to, readFile(t, from)) }

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func writeFile(t testing.TB, p, s string) {
	t.Helper()
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// elicitor answers confirmations as its function says, counting them.
type elicitor struct {
	mu       sync.Mutex
	answer   func(req mcp.ElicitationRequest) *mcp.ElicitationResult
	messages []string
}

func (e *elicitor) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	e.mu.Lock()
	e.messages = append(e.messages, req.Params.Message)
	f := e.answer
	e.mu.Unlock()
	return f(req), nil
}

func (e *elicitor) count() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return len(e.messages)
}

func answer(action mcp.ElicitationResponseAction, approve bool) func(mcp.ElicitationRequest) *mcp.ElicitationResult {
	return func(mcp.ElicitationRequest) *mcp.ElicitationResult {
		r := &mcp.ElicitationResult{}
		r.Action = action
		if action == mcp.ElicitationResponseActionAccept {
			r.Content = map[string]any{"approve": approve}
		}
		return r
	}
}

// waitLimit bounds start's handshake and call's wait: a proxy on a real
// Odoo logs in and checks rights first, and each call makes a few
// XML-RPC calls of up to seconds each on a busy host; only a hang
// reaches it.
const waitLimit = 2 * time.Minute

// start runs the proxy and connects a client; version "" negotiates the
// newest protocol (2026-07-28, multi round-trip), else it is pinned.
func (e *env) start(version string, el *elicitor) *client.Client {
	e.t.Helper()
	var stderr io.Writer = testWriter{e.t}
	if e.stderr != nil {
		stderr = e.stderr
	}
	tr := transport.NewStdioWithOptions(bins.proxy, e.vars, append([]string{"--config", e.config}, e.args...),
		transport.WithCommandStderrWriter(stderr))
	var opts []client.ClientOption
	if el != nil {
		opts = append(opts, client.WithElicitationHandler(el))
	}
	if version != "" {
		opts = append(opts, client.WithProtocolVersion(version))
	}
	c := client.NewClient(tr, opts...)
	if err := c.Start(context.Background()); err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	res, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: version, ClientInfo: mcp.Implementation{Name: "e2e", Version: "1"},
	}})
	if err != nil {
		e.t.Fatalf("initialize: %v", err)
	}
	// serverInfo.version is the build's (internal/version.Info.Short).
	if v := res.ServerInfo.Version; !strings.HasPrefix(v, "devel") && !strings.HasPrefix(v, "v") {
		e.t.Errorf("serverInfo.version = %q, want the build's version", v)
	}
	return c
}

type testWriter struct{ t testing.TB }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Logf("stderr: %s", strings.TrimSpace(string(b)))
	return len(b), nil
}

// call calls a tool with JSON arguments.
func call(t testing.TB, c *client.Client, tool, args string) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.RawArguments = json.RawMessage(args)
	req.Params.Arguments = json.RawMessage(args)
	res, err := c.CallTool(ctx, req)
	if err != nil {
		t.Fatalf("%s %s: %v", tool, args, err)
	}
	return res
}

func text(r *mcp.CallToolResult) string {
	if r == nil { // callAsync's call failed or timed out
		return "(no result: the call failed or timed out)"
	}
	var parts []string
	for _, c := range r.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			parts = append(parts, tc.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// bankCalls returns the arguments of every call the bank received for tool.
func (e *env) bankCalls(tool string) []string {
	b, err := os.ReadFile(e.bankLog)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		e.t.Fatal(err)
	}
	var out []string
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	for sc.Scan() {
		var l struct {
			Tool string          `json:"tool"`
			Args json.RawMessage `json:"args"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			e.t.Fatal(err)
		}
		if l.Tool == tool {
			out = append(out, string(l.Args))
		}
	}
	return out
}

func wantError(t testing.TB, r *mcp.CallToolResult, contains ...string) {
	t.Helper()
	if !r.IsError {
		t.Fatalf("want a tool error, got %q", text(r))
	}
	for _, s := range contains {
		if !strings.Contains(text(r), s) {
			t.Errorf("error %q does not contain %q", text(r), s)
		}
	}
}

// wantReason checks the reason code and verdict a refusal carries in
// _meta.intentplane (issue 14: reason codes never reached the client).
func wantReason(t testing.TB, r *mcp.CallToolResult, code, verdict string) {
	t.Helper()
	if r.Meta == nil {
		t.Fatalf("refusal %q has no _meta", text(r))
	}
	got, _ := r.Meta.AdditionalFields["intentplane"].(map[string]any)
	if got["code"] != code || got["verdict"] != verdict {
		t.Errorf("refusal %q: _meta.intentplane = %v, want code %q verdict %q", text(r), got, code, verdict)
	}
}

func wantOK(t testing.TB, r *mcp.CallToolResult, contains ...string) {
	t.Helper()
	if r.IsError {
		t.Fatalf("want success, got error %q", text(r))
	}
	for _, s := range contains {
		if !strings.Contains(text(r), s) {
			t.Errorf("result %q does not contain %q", text(r), s)
		}
	}
}

func TestListing(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start(mcp.ProtocolVersion20251125, nil)
	// Raw tools/list, so that the schema is compared byte for byte.
	resp, err := c.GetTransport().SendRequest(context.Background(), transport.JSONRPCRequest{
		JSONRPC: "2.0", ID: mcp.NewRequestId("raw-list"), Method: "tools/list",
	})
	if err != nil || resp.Error != nil {
		t.Fatalf("tools/list: %v %v", err, resp.Error)
	}
	var list struct {
		Tools []struct {
			Name        string          `json:"name"`
			Description string          `json:"description"`
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	if err := json.Unmarshal(resp.Result, &list); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Name == "send_money" {
			want := `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object","description":"A SEPA credit transfer from the company's account.","properties":{"recipient_iban":{"type":"string","description":"IBAN of the payee"},"amount":{"type":"number","exclusiveMinimum":0,"multipleOf":0.01,"description":"Amount in EUR"},"reference":{"type":"string","maxLength":140,"description":"Remittance information, e.g. the invoice number"}},"required":["recipient_iban","amount","reference"],"additionalProperties":false,"anyOf":[{"required":["reference"]}]}`
			if string(tl.InputSchema) != want {
				t.Errorf("send_money schema:\n got %s\nwant %s", tl.InputSchema, want)
			}
			if tl.Description != "Send money from the company's account to an IBAN." {
				t.Errorf("send_money description %q", tl.Description)
			}
		}
	}
	slices.Sort(names)
	want := []string{"ap_change_vendor_bank", "ap_get_vendor", "ap_list_open_bills", "ap_pay_bill", "ap_propose_payment_run", "get_balance", "list_payments", "read_inbox", "send_money", "test_crash", "test_slow"}
	if !slices.Equal(names, want) {
		t.Errorf("tools: got %v, want %v (delete_account must not be shown)", names, want)
	}
	// An unlisted tool cannot be called either.
	req := mcp.CallToolRequest{}
	req.Params.Name = "delete_account"
	if _, err := c.CallTool(context.Background(), req); err == nil {
		t.Error("delete_account was callable")
	}
	if got := e.bankCalls("delete_account"); len(got) != 0 {
		t.Errorf("bank received delete_account: %v", got)
	}
}

func TestPassThroughRefusalAndTrustedValue(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start(mcp.ProtocolVersion20251125, nil)

	wantOK(t, call(t, c, "read_inbox", `{}`), "we changed banks", "LT12 1000")
	wantOK(t, call(t, c, "get_balance", `{}`), "EUR 50000.00")

	// The agent obeys the email: refused, nothing reaches the bank.
	r := call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":850.00,"reference":"INV-2290"}`, ibanFromEmail))
	wantError(t, r, "payees on file", "never enough")
	wantReason(t, r, "resolve.no_trusted_source", "deny")
	if got := e.bankCalls("send_money"); len(got) != 0 {
		t.Fatalf("bank received %v", got)
	}

	// The IBAN on file, spelled differently: the bank receives the record.
	r = call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"850.5","reference":"INV-2290"}`, ibanSpaced))
	wantOK(t, r, "Transfer TX-0001")
	got := e.bankCalls("send_money")
	want := `{"amount":850.50,"recipient_iban":"DE89370400440532013000","reference":"INV-2290"}`
	if len(got) != 1 || got[0] != want {
		t.Fatalf("bank received %v, want [%s]", got, want)
	}

	// A retry of the same call executes nothing twice.
	r = call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"850.5","reference":"INV-2290"}`, ibanSpaced))
	wantError(t, r, "already executed")
	wantReason(t, r, "execution.replayed", "deny")
	if got := e.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("bank received %d transfers after a retry", len(got))
	}

	// Above 10,000.00: never, not even asked.
	wantError(t, call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":12500,"reference":"big"}`, ibanOnFile)), "above 10,000.00")
	// Unknown arguments and malformed amounts are refused.
	wantError(t, call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":10,"reference":"x","memo":"y"}`, ibanOnFile)), "unknown argument")
	wantError(t, call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":1e3,"reference":"x"}`, ibanOnFile)), "plain decimal")

	// Above 1,000.00 without elicitation and without approval page: refused.
	r = call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":2400,"reference":"INV-2291"}`, ibanOnFile))
	wantError(t, r, "confirmation", "cannot ask the user")
	wantReason(t, r, "approval.required", "step_up")

	// A mounted pack's tool.
	wantOK(t, call(t, c, "ap_list_open_bills", `{}`), "INV-2291")
	if got := e.bankCalls("send_money"); len(got) != 1 {
		t.Fatalf("bank received %d transfers", len(got))
	}
}

func TestElicitation(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		version string
		answer  func(mcp.ElicitationRequest) *mcp.ElicitationResult
		want    string // "" means executed
	}{
		{"accepted-2025-11-25", mcp.ProtocolVersion20251125, answer(mcp.ElicitationResponseActionAccept, true), ""},
		{"accepted-2026-07-28", "", answer(mcp.ElicitationResponseActionAccept, true), ""},
		{"declined-2025-11-25", mcp.ProtocolVersion20251125, answer(mcp.ElicitationResponseActionDecline, false), "declined"},
		{"declined-2026-07-28", "", answer(mcp.ElicitationResponseActionDecline, false), "declined"},
		{"accepted-without-approve", mcp.ProtocolVersion20251125, answer(mcp.ElicitationResponseActionAccept, false), "declined"},
		{"cancelled-2025-11-25", mcp.ProtocolVersion20251125, answer(mcp.ElicitationResponseActionCancel, false), "closed the confirmation"},
		{"cancelled-2026-07-28", "", answer(mcp.ElicitationResponseActionCancel, false), "closed the confirmation"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			el := &elicitor{answer: tc.answer}
			c := e.start(tc.version, el)
			r := call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.00","reference":"INV-2291"}`, ibanSpaced))
			if el.count() != 1 {
				t.Fatalf("the user was asked %d times", el.count())
			}
			msg := el.messages[0]
			for _, s := range []string{"bank.send_money", "amount: 2400.00", "recipient_iban: " + ibanOnFile, "registry:payees", "vendor:acme-supplies", "1,000.00"} {
				if !strings.Contains(msg, s) {
					t.Errorf("confirmation %q does not show %q", msg, s)
				}
			}
			if tc.want == "" {
				wantOK(t, r, "Transfer TX-0001")
				if got := e.bankCalls("send_money"); len(got) != 1 || !strings.Contains(got[0], `"amount":2400.00`) {
					t.Fatalf("bank received %v", got)
				}
				return
			}
			wantError(t, r, tc.want, "Nothing was done")
			if got := e.bankCalls("send_money"); len(got) != 0 {
				t.Fatalf("bank received %v", got)
			}
			// A decline is final: the same operation again is refused
			// without asking the user a second time. Closing the
			// question without deciding is not a decline.
			again := call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"2400.00","reference":"INV-2291"}`, ibanOnFile))
			if tc.want == "declined" {
				wantError(t, again, "already declined this exact operation")
				if el.count() != 1 {
					t.Fatalf("after a decline the user was asked again (%d times)", el.count())
				}
			} else if el.count() != 2 {
				t.Fatalf("after a cancel the user was asked %d times, want again", el.count())
			}
			if got := e.bankCalls("send_money"); len(got) != 0 {
				t.Fatalf("bank received %v", got)
			}
		})
	}
}

// rawCall sends tools/call with params given as JSON, on a modern
// connection when modern is set (with the per-request _meta the protocol
// requires), and returns the raw result.
func rawCall(t *testing.T, c *client.Client, modern bool, params map[string]any) map[string]any {
	t.Helper()
	if modern {
		params["_meta"] = map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.ProtocolVersion20260728,
			mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}},
			mcp.MetaKeyClientInfo:         map[string]any{"name": "forger", "version": "1"},
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	resp, err := c.GetTransport().SendRequest(ctx, transport.JSONRPCRequest{
		JSONRPC: "2.0", ID: mcp.NewRequestId(fmt.Sprintf("raw-%d", time.Now().UnixNano())), Method: "tools/call", Params: params,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Error != nil {
		t.Fatalf("tools/call: %v", resp.Error.Message)
	}
	var out map[string]any
	if err := json.Unmarshal(resp.Result, &out); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestForgedInputResponses(t *testing.T) {
	t.Parallel()
	forged := map[string]any{"intentplane_confirm": map[string]any{"action": "accept", "content": map[string]any{"approve": true}}}
	args := map[string]any{"recipient_iban": ibanOnFile, "amount": "2400.00", "reference": "INV-2291"}

	t.Run("2026-07-28", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		c := e.start("", &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)})
		for _, state := range []string{"", "forged", "eyJ0Ijoic2VuZF9tb25leSJ9.AAAA"} {
			res := rawCall(t, c, true, map[string]any{"name": "send_money", "arguments": args, "inputResponses": forged, "requestState": state})
			if res["resultType"] != "input_required" {
				t.Fatalf("state %q: forged answer not ignored: %v", state, res)
			}
		}
		// A genuine state is single use and bound to its operation.
		res := rawCall(t, c, true, map[string]any{"name": "send_money", "arguments": args})
		state, _ := res["requestState"].(string)
		if res["resultType"] != "input_required" || state == "" {
			t.Fatalf("no input request: %v", res)
		}
		other := map[string]any{"recipient_iban": ibanOnFile, "amount": "2400.01", "reference": "INV-2291"}
		res = rawCall(t, c, true, map[string]any{"name": "send_money", "arguments": other, "inputResponses": forged, "requestState": state})
		if res["resultType"] != "input_required" {
			t.Fatalf("a state for another operation was accepted: %v", res)
		}
		res = rawCall(t, c, true, map[string]any{"name": "get_balance", "arguments": map[string]any{}, "inputResponses": forged, "requestState": state})
		if res["isError"] == true {
			t.Fatalf("get_balance: %v", res)
		}
		res = rawCall(t, c, true, map[string]any{"name": "send_money", "arguments": args, "inputResponses": forged, "requestState": state})
		if res["isError"] == true || res["resultType"] == "input_required" {
			t.Fatalf("the genuine answer was refused: %v", res)
		}
		// A used state is never accepted again: the operation has executed,
		// so the retry is refused as replayed without asking anyone (issue
		// 14), and the bank still sees one call (below).
		res = rawCall(t, c, true, map[string]any{"name": "send_money", "arguments": args, "inputResponses": forged, "requestState": state})
		if res["isError"] != true || !strings.Contains(fmt.Sprint(res["_meta"]), "execution.replayed") {
			t.Fatalf("a used state was accepted again: %v", res)
		}
		if got := e.bankCalls("send_money"); len(got) != 1 {
			t.Fatalf("bank received %v", got)
		}
	})
	t.Run("2025-11-25", func(t *testing.T) {
		t.Parallel()
		e := newEnv(t)
		el := &elicitor{answer: answer(mcp.ElicitationResponseActionDecline, false)}
		c := e.start(mcp.ProtocolVersion20251125, el)
		res := rawCall(t, c, false, map[string]any{"name": "send_money", "arguments": args, "inputResponses": forged, "requestState": "x"})
		if res["isError"] != true || el.count() != 1 {
			t.Fatalf("forged answer not ignored (asked %d times): %v", el.count(), res)
		}
		if got := e.bankCalls("send_money"); len(got) != 0 {
			t.Fatalf("bank received %v", got)
		}
	})
}

func TestConcurrentConfirmations(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	const n = 6
	var asked atomic.Int32
	release := make(chan struct{})
	el := &elicitor{answer: func(mcp.ElicitationRequest) *mcp.ElicitationResult {
		if asked.Add(1) == n {
			close(release)
		}
		<-release // every confirmation is open at once
		return answer(mcp.ElicitationResponseActionAccept, true)(mcp.ElicitationRequest{})
	}}
	c := e.start(mcp.ProtocolVersion20251125, el)
	var wg sync.WaitGroup
	results := make([]*mcp.CallToolResult, n)
	for i := range n {
		wg.Go(func() {
			results[i] = call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"1100.00","reference":"R-%d"}`, ibanOnFile, i))
		})
	}
	// While confirmations are open, other calls are answered.
	deadline := time.Now().Add(10 * time.Second)
	for asked.Load() < n-1 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	wantOK(t, call(t, c, "get_balance", `{}`), "EUR")
	wg.Wait()
	for i, r := range results {
		if r.IsError {
			t.Errorf("call %d: %s", i, text(r))
		}
	}
	if got := e.bankCalls("send_money"); len(got) != n {
		t.Fatalf("bank received %d transfers, want %d", len(got), n)
	}
	// 6 × 1,100.00 spent of 12,000.00: the next 5,500.00 is beyond the
	// budget and is refused without asking.
	before := el.count()
	wantError(t, call(t, c, "send_money", fmt.Sprintf(`{"recipient_iban":%q,"amount":"5500.00","reference":"R-big"}`, ibanOnFile)), "budget")
	if el.count() != before {
		t.Error("the user was asked to confirm what the budget cannot cover")
	}
}

func TestDownstreamCrash(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start(mcp.ProtocolVersion20251125, nil)
	wantError(t, call(t, c, "test_crash", `{}`), "stopped while handling the call")
	// The next call restarts the bank and succeeds.
	wantOK(t, call(t, c, "get_balance", `{}`), "EUR 50000.00")
	wantOK(t, call(t, c, "read_inbox", `{}`), "we changed banks")
}

func TestCancellationAndProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	c := e.start(mcp.ProtocolVersion20251125, nil)

	var mu sync.Mutex
	var progress []float64
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method != "notifications/progress" || n.Params.AdditionalFields["progressToken"] != "client-tok" {
			return
		}
		mu.Lock()
		progress = append(progress, n.Params.AdditionalFields["progress"].(float64))
		mu.Unlock()
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "test_slow"
	req.Params.Arguments = map[string]any{"steps": 3}
	req.Params.Meta = &mcp.Meta{ProgressToken: "client-tok"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	wantOK(t, res, "done after 3 steps")
	time.Sleep(300 * time.Millisecond)
	mu.Lock()
	if !slices.Equal(progress, []float64{1, 2, 3}) {
		t.Errorf("progress relayed: %v, want [1 2 3]", progress)
	}
	mu.Unlock()

	ctx, cancel := context.WithTimeout(context.Background(), 250*time.Millisecond)
	defer cancel()
	req.Params.Arguments = map[string]any{"steps": 50}
	req.Params.Meta = nil
	if _, err := c.CallTool(ctx, req); err == nil {
		t.Fatal("a cancelled call returned a result")
	}
	deadline := time.Now().Add(5 * time.Second)
	for len(e.bankCalls("test_slow_cancelled")) == 0 {
		if time.Now().After(deadline) {
			t.Fatal("the cancellation did not reach the bank")
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The proxy still answers.
	wantOK(t, call(t, c, "get_balance", `{}`), "EUR")
}

// TestMalformedAndHuge drives the proxy's stdin by hand: a line that is
// not JSON and a 5 MiB line are answered with parse errors, and the proxy
// keeps serving.
func TestMalformedAndHuge(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cmd := exec.Command(bins.proxy, "--config", e.config)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = testWriter{t}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	next := func() string {
		select {
		case l := <-lines:
			return l
		case <-time.After(20 * time.Second):
			t.Fatal("no answer")
		}
		return ""
	}
	write := func(s string) {
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	write(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	if l := next(); !strings.Contains(l, `"id":1`) {
		t.Fatalf("initialize: %s", l)
	}
	write(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	write(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{`)
	// Issue 14: the answer carries the id, so the client need not wait
	// for its own timeout.
	if l := next(); !strings.Contains(l, "-32700") || !strings.Contains(l, `"id":2`) {
		t.Fatalf("malformed line: %s", l)
	}
	huge := `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"send_money","arguments":{"reference":"` + strings.Repeat("x", 5<<20) + `"}}}`
	write(huge)
	if l := next(); !strings.Contains(l, "-32600") || !strings.Contains(l, `"id":3`) || !strings.Contains(l, "larger than 1048576 bytes") {
		t.Fatalf("huge line: %.200s", l)
	}
	deep := `{"jsonrpc":"2.0","id":"deep","method":"tools/call","params":{"name":"send_money","arguments":{"reference":` + strings.Repeat("[", 20000) + strings.Repeat("]", 20000) + `}}}`
	write(deep)
	if l := next(); !strings.Contains(l, "-32700") || !strings.Contains(l, `"id":"deep"`) {
		t.Fatalf("deeply nested line: %.200s", l)
	}
	// Without a readable id, the answer has none.
	write(`{"jsonrpc":"2.0","params":` + strings.Repeat("[", 20000))
	if l := next(); !strings.Contains(l, "-32700") || !strings.Contains(l, `"id":null`) {
		t.Fatalf("a line without id: %.200s", l)
	}
	// A large message under the limit reaches the gateway, which refuses it.
	big := `{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"send_money","arguments":{"recipient_iban":"DE89370400440532013000","amount":1,"reference":"` + strings.Repeat("x", 100<<10) + `"}}}`
	write(big)
	if l := next(); !strings.Contains(l, `"isError":true`) || !strings.Contains(l, `"id":4`) {
		t.Fatalf("big call: %.300s", l)
	}
	write(`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`)
	if l := next(); !strings.Contains(l, `"id":5`) || !strings.Contains(l, "send_money") {
		t.Fatalf("tools/list after garbage: %.200s", l)
	}
	if got := e.bankCalls("send_money"); len(got) != 0 {
		t.Fatalf("bank received %d transfers", len(got))
	}
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, from, to string
		anchor         string // the error is at the first line holding it
		want           string
	}{
		{"unknown key", "max_pending = 16", "max_pendings = 16", "max_pendings", `unknown key "approvals.max_pendings"`},
		{"critical without sources", `sources = ["registry:payees"]`, "", "[tools.send_money.params.recipient_iban]", `critical parameter "recipient_iban" has no sources`},
		{"tool not downstream", "[tools.get_balance]", "[tools.get_balances]", "[tools.get_balances]", `server "bank" has no tool "get_balances"`},
		{"unknown registry", `sources = ["registry:payees"]`, `sources = ["registry:vendors"]`, "registry:vendors", `unknown registry "vendors"`},
		// Issue 14: without the budget binding, three payments of
		// 15,000.00 executed under a 12,000.00 mandate, unconfirmed.
		{"amount without budget", "budget = \"amount\"\n", "", `type = "amount"`, `tool "send_money" takes the amount "amount" but has no budget binding`},
		// Issue 14: an action missing from the schema passed --check, then
		// every call answered "policy could not decide".
		{"action not in the schema", `action = "bank.get_balance"`, `action = "bank.get_balances"`, `action = "bank.get_balances"`, `action "bank.get_balances" is not declared in the policy's schema`},
		// Issue 17: the AP pack's settings are checked with their line.
		{"unknown time zone", "prefix = \"ap_\"\n", "prefix = \"ap_\"\n[servers.erp.controls]\ntime_zone = \"Europe/Atlantis\"\n", "time_zone =", `time_zone "Europe/Atlantis" is not an IANA time zone`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t)
			cfg := readFile(t, e.config)
			if !strings.Contains(cfg, tc.from) {
				t.Fatalf("config has no %q", tc.from)
			}
			cfg = strings.Replace(cfg, tc.from, tc.to, 1)
			writeFile(t, e.config, cfg)
			line := 1 + strings.Count(cfg[:strings.Index(cfg, tc.anchor)], "\n")
			want := fmt.Sprintf("intentplane.toml:%d: %s", line, tc.want)
			out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
			if err == nil {
				t.Fatalf("accepted: %s", out)
			}
			if !strings.Contains(string(out), want) {
				t.Errorf("got %q, want it to contain %q", out, want)
			}
		})
	}
}

// TestCheckFourEyes: the operator's policy can ask for four eyes, which
// the client's user alone can never give; --check refuses at the policy's
// line until two page approvers are configured.
func TestCheckFourEyes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	pol := filepath.Join(e.dir, "policy", "policy.cedar")
	before := readFile(t, pol)
	writeFile(t, pol, before+`
@id("four-eyes-huge")
@approval("four_eyes")
@reason("huge payments need two people")
forbid (principal, action == Action::"bank.send_money", resource)
when { context.amount > 5000000 }
unless { context.approval.four_eyes };
`)
	line := 1 + strings.Count(before, "\n") + 1
	out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
	want := fmt.Sprintf("policy.cedar:%d: policy \"four-eyes-huge\" can ask for four eyes, but 0 page approver(s)", line)
	if err == nil || !strings.Contains(string(out), want) {
		t.Fatalf("--check: %v\n%s\nwant %q", err, out, want)
	}
}

// TestCheckRegistryWarning: a registry without a record for the mandate's
// owner is a warning, not an error.
func TestCheckRegistryWarning(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, filepath.Join(e.dir, "payees.json"), `{"globex": ["FR14 2004 1010 0505 0001 3M02 606"]}`)
	cfg := readFile(t, e.config)
	line := 1 + strings.Count(cfg[:strings.Index(cfg, "[registries.payees]")], "\n")
	out, err := exec.Command(bins.proxy, "--config", e.config, "--check").CombinedOutput()
	if err != nil {
		t.Fatalf("--check: %v\n%s", err, out)
	}
	want := fmt.Sprintf(`intentplane.toml:%d: registry "payees"`, line)
	if !strings.Contains(string(out), "warning: ") || !strings.Contains(string(out), want) || !strings.Contains(string(out), `no record for the mandate's owner "northwind"`) {
		t.Errorf("--check output %q lacks the warning %q", out, want)
	}
}

// BenchmarkCall measures a tools/call (get_balance) made directly to the
// bank server and through the proxy on its default store (embedded),
// alternately in one run, and reports the medians and the median added by
// the proxy.
func BenchmarkCall(b *testing.B) { benchCall(b, newEnv(b)) }

// BenchmarkCallMem is BenchmarkCall with the in-memory store: the floor
// for what the embedded store adds.
func BenchmarkCallMem(b *testing.B) {
	e := newEnv(b)
	cfg := readFile(b, e.config)
	const store = "kind = \"embedded\"\npath = \"intentplane.db\"\n"
	if !strings.Contains(cfg, store) {
		b.Fatal("the example's store changed; update BenchmarkCallMem")
	}
	writeFile(b, e.config, strings.Replace(cfg, store, "kind = \"mem\"\n", 1))
	benchCall(b, e)
}

func benchCall(b *testing.B, e *env) {
	proxy := startBench(b, bins.proxy, "--config", e.config)
	direct := startBench(b, bins.bank)
	req := mcp.CallToolRequest{}
	req.Params.Name = "get_balance"
	req.Params.Arguments = map[string]any{}
	ctx := context.Background()
	for range 50 { // warm up both
		if _, err := proxy.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
		if _, err := direct.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
	}
	dd := make([]time.Duration, 0, b.N)
	pd := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for range b.N {
		t0 := time.Now()
		if _, err := direct.CallTool(ctx, req); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		r, err := proxy.CallTool(ctx, req)
		if err != nil || r.IsError {
			b.Fatal(err, r)
		}
		t2 := time.Now()
		dd = append(dd, t1.Sub(t0))
		pd = append(pd, t2.Sub(t1))
	}
	b.StopTimer()
	slices.Sort(dd)
	slices.Sort(pd)
	md, mp := dd[len(dd)/2], pd[len(pd)/2]
	b.ReportMetric(float64(md.Microseconds()), "direct-median-µs")
	b.ReportMetric(float64(mp.Microseconds()), "proxy-median-µs")
	b.ReportMetric(float64((mp - md).Microseconds()), "added-median-µs")
	b.Logf("GOMAXPROCS=%d direct median %v, proxy median %v, added %v (n=%d)", runtime.GOMAXPROCS(0), md, mp, mp-md, b.N)
}

func startBench(b *testing.B, cmd string, args ...string) *client.Client {
	b.Helper()
	c := client.NewClient(transport.NewStdioWithOptions(cmd, nil, args), client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, err := c.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{ProtocolVersion: mcp.ProtocolVersion20251125, ClientInfo: mcp.Implementation{Name: "bench", Version: "1"}}}); err != nil {
		b.Fatal(err)
	}
	return c
}

// TestPackMount calls the accounts-payable pack mounted on demo ERP data.
func TestPackMount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	el := &elicitor{answer: answer(mcp.ElicitationResponseActionAccept, true)}
	c := e.start(mcp.ProtocolVersion20251125, el)
	wantOK(t, call(t, c, "ap_get_vendor", `{"vendor":"ACME Supplies"}`), "DE89 3704 0044 0532 0130 00")
	wantError(t, call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanFromEmail)), "on file")
	wantOK(t, call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"acme supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanSpaced)))
	if el.count() != 0 {
		t.Errorf("850.00 needed a confirmation")
	}
	wantOK(t, call(t, c, "ap_pay_bill", fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2291","iban":%q,"amount":"2400.00","currency":"EUR"}`, ibanOnFile)))
	if el.count() != 1 {
		t.Errorf("2,400.00 was confirmed %d times", el.count())
	}
	// A bank-detail change needs four eyes: never from the agent's client.
	r := call(t, c, "ap_change_vendor_bank", fmt.Sprintf(`{"vendor":"ACME Supplies","iban":%q}`, ibanFromEmail))
	wantError(t, r)
	if el.count() != 1 {
		t.Errorf("the client was asked to approve a bank-detail change")
	}
}

// TestPageExample: the second example configuration (approval page, three
// approvers) passes --check on a fresh copy once its keys are made as its
// comments say, with no warning (four eyes, bank changes).
func TestPageExample(t *testing.T) {
	t.Parallel()
	out, err := checkPageExample(t, nil)
	if err != nil || !strings.Contains(string(out), "configuration OK: 9 tools") || strings.Contains(string(out), "warning") {
		t.Fatalf("--check: %v\n%s", err, out)
	}
}

// TestCheckAPTwoApprovers: with the accounts-payable pack mounted and two
// page approvers, --check still passes but warns, naming the setting, that
// no bank change can ever execute (its call-back's recorder may not
// approve it, so two others must).
func TestCheckAPTwoApprovers(t *testing.T) {
	t.Parallel()
	out, err := checkPageExample(t, func(cfg string) string {
		i := strings.Index(cfg, "[[approvals.approvers]]\nname = \"carol\"")
		if i < 0 {
			t.Fatal("the example's third approver changed; update this test")
		}
		j := strings.Index(cfg[i:], "\n\n")
		return cfg[:i] + cfg[i+j+2:]
	})
	if err != nil || !strings.Contains(string(out), "configuration OK") {
		t.Fatalf("--check: %v\n%s", err, out)
	}
	for _, want := range []string{"warning: pack ap:", "[[approvals.approvers]]: 2 page approver(s)", "no bank change can ever execute"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("--check output lacks %q:\n%s", want, out)
		}
	}
}

// checkPageExample runs --check on a fresh copy of the page example, its
// configuration changed by edit (if not nil), with a key for each of its
// approvers made as its comments say.
func checkPageExample(t *testing.T, edit func(string) string) ([]byte, error) {
	t.Helper()
	dir := t.TempDir()
	src := "../../examples/mcp"
	for _, f := range []string{"payees.json", "policy/policy.cedar", "policy/schema.cedarschema"} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, f)), 0o755); err != nil {
			t.Fatal(err)
		}
		copyFile(t, filepath.Join(src, f), filepath.Join(dir, f))
	}
	cfg := readFile(t, filepath.Join(src, "intentplane-page.toml"))
	if !strings.Contains(cfg, `command = "bin/bankserver"`) {
		t.Fatal("the example's bank server command changed; update this test")
	}
	cfg = strings.Replace(cfg, `command = "bin/bankserver"`, fmt.Sprintf("command = %q", bins.bank), 1)
	if edit != nil {
		cfg = edit(cfg)
	}
	writeFile(t, filepath.Join(dir, "intentplane.toml"), cfg)
	if err := os.MkdirAll(filepath.Join(dir, "keys"), 0o700); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"alice", "bob", "carol"} {
		_, priv, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(dir, "keys", name+".key"), mandate.EncodePrivateKey(priv)+"\n")
	}
	return exec.Command(bins.proxy, "--config", filepath.Join(dir, "intentplane.toml"), "--check").CombinedOutput()
}

// TestDecisionLogJSON: with --log-format json --log-level info, each
// decision is one JSON line on stderr, without the arguments.
func TestDecisionLogJSON(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	cmd := exec.Command(bins.proxy, "--config", e.config, "--log-format", "json", "--log-level", "info")
	var stderr lockedBuffer
	cmd.Stderr = &stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	send := func(s string, wantID string) {
		t.Helper()
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
		if wantID == "" {
			return
		}
		for sc.Scan() {
			if strings.Contains(sc.Text(), `"id":`+wantID) {
				return
			}
		}
		t.Fatalf("no answer to id %s", wantID)
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, "1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_money","arguments":{"recipient_iban":%q,"amount":850,"reference":"secret-reference-4711"}}}`, ibanFromEmail), "2")
	_ = in.Close()
	_ = cmd.Wait()
	var found bool
	for _, l := range strings.Split(stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) != nil || m["msg"] != "decision" {
			continue
		}
		found = true
		if m["owner"] != "northwind" || m["action"] != "bank.send_money" || m["verdict"] != "deny" || m["code"] != "resolve.no_trusted_source" {
			t.Errorf("decision line %s", l)
		}
	}
	if !found {
		t.Fatalf("no JSON decision line in stderr:\n%s", stderr.String())
	}
	if strings.Contains(stderr.String(), "secret-reference-4711") || strings.Contains(stderr.String(), "LT12") {
		t.Errorf("an argument reached the log:\n%s", stderr.String())
	}
}

// lockedBuffer collects a child's stderr while the test reads it; with t
// set, each write is also logged to t.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
	t  testing.TB
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.t != nil {
		l.t.Log(strings.TrimRight(string(p), "\n"))
	}
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// TestAdminListener: [admin] serves /healthz and Prometheus /metrics with
// the decisions by verdict and reason code.
func TestAdminListener(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	writeFile(t, e.config, readFile(t, e.config)+"\n[admin]\nlisten = \"127.0.0.1:0\"\n")
	cmd := exec.Command(bins.proxy, "--config", e.config)
	errp, _ := cmd.StderrPipe()
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = in.Close(); _ = cmd.Wait() }()
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(errp)
		for sc.Scan() {
			if _, a, ok := strings.Cut(sc.Text(), "admin (/healthz, /metrics) at "); ok {
				addr <- a
			}
		}
	}()
	var base string
	select {
	case base = <-addr:
	case <-time.After(20 * time.Second):
		t.Fatal("no admin address on stderr")
	}
	sc := bufio.NewScanner(out)
	sc.Buffer(nil, 1<<20)
	send := func(s, id string) {
		t.Helper()
		if _, err := io.WriteString(in, s+"\n"); err != nil {
			t.Fatal(err)
		}
		for id != "" && sc.Scan() {
			if strings.Contains(sc.Text(), `"id":`+id) {
				return
			}
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, "1")
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	send(fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"send_money","arguments":{"recipient_iban":%q,"amount":850,"reference":"x"}}}`, ibanFromEmail), "2")
	send(`{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_balance","arguments":{}}}`, "3")
	get := func(path string) (int, string) {
		t.Helper()
		resp, err := http.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	if code, body := get("/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("/healthz: %d %q", code, body)
	}
	code, body := get("/metrics")
	for _, want := range []string{
		`intentplane_decisions_total{code="resolve.no_trusted_source",verdict="deny"} 1`,
		`intentplane_decisions_total{code="",verdict="allow"} 1`,
		`intentplane_decision_seconds_count{verdict="allow"} 1`,
	} {
		if code != 200 || !strings.Contains(body, want) {
			t.Errorf("/metrics (%d) lacks %q", code, want)
		}
	}
}
