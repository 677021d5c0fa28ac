package mcpproxy

import (
	"bytes"
	"io"
	"strings"
	"testing"
	"time"
)

// TestLineLimiter: oversized lines and requests whose answer could not be
// matched are dropped; a request waits for room in the in-flight budget
// until the answer with its id is written.
func TestLineLimiterInFlight(t *testing.T) {
	t.Parallel()
	fl := newInflight(100)
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"x":"` + strings.Repeat("a", 40) + `"}}` + "\n"
	in := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		`{"jsonrpc":"2.0","method":"tools/call","params":{}}`,
		`{"jsonrpc":"2.0","id":1.5,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`not json`,
		`{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":"` + strings.Repeat("x", 300) + `"}}`,
	}, "\n") + "\n" + big
	pr, pw := io.Pipe()
	go func() { _, _ = io.WriteString(pw, in); _ = pw.Close() }()
	l := &lineLimiter{r: pr, max: 200, fl: fl}
	out := make(chan string, 1)
	go func() { b, _ := io.ReadAll(l); out <- string(b) }()
	select {
	case got := <-out:
		t.Fatalf("the last request passed although the budget was full: %q", got)
	case <-time.After(200 * time.Millisecond):
	}
	w := responseWatcher{w: io.Discard, fl: fl}
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":"a","result":{}}` + "\n"))
	got := <-out
	want := strings.Join([]string{
		`{"jsonrpc":"2.0","id":"a","method":"ping"}`,
		strings.TrimSuffix(badLine, "\n"),
		strings.TrimSuffix(badLine, "\n"),
		`{"jsonrpc":"2.0","id":7,"result":{}}`,
		`not json`,
		"\x00oversized message",
	}, "\n") + "\n" + big
	if got != want {
		t.Fatalf("got\n%q\nwant\n%q", got, want)
	}
	if fl.used != len(big) {
		t.Fatalf("in flight %d, want %d", fl.used, len(big))
	}
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"method":"elicitation/create","params":{}}` + "\n"))
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}` + "\n"))
	if fl.used != 0 || len(fl.held) != 0 {
		t.Fatalf("in flight after the answers: %d %v", fl.used, fl.held)
	}
}

func TestResponseID(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		msg, want string
		ok        bool
	}{
		{`{"jsonrpc":"2.0","id":12,"result":{"content":[]}}`, "n12", true},
		{`{"result":{"a":[1,2]},"id":"x\u0041"}`, "sxA", true},
		{`{"jsonrpc":"2.0","id":3,"method":"elicitation/create"}`, "", false},
		{`{"jsonrpc":"2.0","method":"notifications/progress"}`, "", false},
		{`{"jsonrpc":"2.0","id":null,"error":{}}`, "", false},
	} {
		got, ok := responseID([]byte(tc.msg))
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: %q %v, want %q %v", tc.msg, got, ok, tc.want, tc.ok)
		}
	}
	var buf bytes.Buffer
	_, _ = responseWatcher{w: &buf, fl: newInflight(1)}.Write([]byte("x\n"))
	if buf.String() != "x\n" {
		t.Fatal("output not passed on")
	}
}

func TestLeadingID(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"x":[[[`: "7",
		`{"jsonrpc":"2.0","id":"a b","params":`:                           `"a b"`,
		`{"jsonrpc":"2.0","params":{"x":1},"id":-3}`:                      "-3",
		`{"jsonrpc":"2.0","params":[[[[`:                                  "",
		`{"jsonrpc":"2.0","id":1.5}`:                                      "",
		`{"jsonrpc":"2.0","id":{"a":1}}`:                                  "",
		`[1,2]`:                                                           "",
		`not json`:                                                        "",
	} {
		got, ok := leadingID([]byte(in))
		if ok != (want != "") || string(got) != want {
			t.Errorf("leadingID(%s) = %s, %v; want %q", in, got, ok, want)
		}
	}
}

// TestDuplicateKeys: a tools/call whose arguments (or any object in it)
// give a key twice is answered with an error carrying its id and never
// passed on; the same key in different objects is not a duplicate (issue
// 14: mcp-go keeps the last of two "iban" values).
func TestDuplicateKeys(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, line string
		want       string // "" when passed on
	}{
		{"arguments", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pay","arguments":{"iban":"DE89370400440532013000","amount":1,"iban":"LT121000011101001000"}}}`,
			`{"error":{"code":-32602,"message":"The message gives the key \"iban\" twice in one object (at params.arguments), so it was not read: each key must be given once. Nothing was done."},"id":7,"jsonrpc":"2.0"}`},
		{"escaped", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"pay","arguments":{"iban":"A","\u0069ban":"B"}}}`,
			`{"error":{"code":-32602,"message":"The message gives the key \"iban\" twice in one object (at params.arguments), so it was not read: each key must be given once. Nothing was done."},"id":"x","jsonrpc":"2.0"}`},
		{"nested", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"pay","arguments":{"lines":[{"a":1},{"a":1,"a":2}]}}}`,
			`{"error":{"code":-32602,"message":"The message gives the key \"a\" twice in one object (at params.arguments.lines[1]), so it was not read: each key must be given once. Nothing was done."},"id":8,"jsonrpc":"2.0"}`},
		{"tool name", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"read","arguments":{},"name":"pay"}}`,
			`{"error":{"code":-32602,"message":"The message gives the key \"name\" twice in one object (at params), so it was not read: each key must be given once. Nothing was done."},"id":9,"jsonrpc":"2.0"}`},
		{"top level", `{"jsonrpc":"2.0","id":10,"method":"tools/call","method":"tools/call","params":{}}`,
			`{"error":{"code":-32600,"message":"The message gives the key \"method\" twice in one object (at the message), so it was not read: each key must be given once. Nothing was done."},"id":10,"jsonrpc":"2.0"}`},
		// encoding/json fills a struct field from a key of any case: mcp-go
		// would call with the last "Arguments" while a reader of
		// "arguments" sees the first (found by the trial of issue 14).
		{"arguments in another case", `{"jsonrpc":"2.0","id":13,"method":"tools/call","params":{"name":"pay","arguments":{"amount":3},"Arguments":{"amount":4}}}`,
			`{"error":{"code":-32602,"message":"The message gives the key \"Arguments\" twice in one object (at params), so it was not read: each key must be given once. Nothing was done."},"id":13,"jsonrpc":"2.0"}`},
		{"arguments with a long s", `{"jsonrpc":"2.0","id":14,"method":"tools/call","params":{"name":"pay","arguments":{"amount":3},"argument\u017f":{"amount":4}}}`,
			`{"error":{"code":-32602,"message":"The message gives the key \"argumentſ\" twice in one object (at params), so it was not read: each key must be given once. Nothing was done."},"id":14,"jsonrpc":"2.0"}`},
		{"name in capitals", `{"jsonrpc":"2.0","id":15,"method":"tools/call","params":{"name":"read","NAME":"pay","arguments":{}}}`,
			`{"error":{"code":-32602,"message":"The message gives the key \"NAME\" twice in one object (at params), so it was not read: each key must be given once. Nothing was done."},"id":15,"jsonrpc":"2.0"}`},
		{"case matters in arguments", `{"jsonrpc":"2.0","id":16,"method":"tools/call","params":{"name":"pay","arguments":{"iban":"A","IBAN":"B"}}}`, ""},
		{"same key in two objects", `{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"pay","arguments":{"a":{"x":1},"b":{"x":1}}}}`, ""},
		{"not a call", `{"jsonrpc":"2.0","id":12,"method":"ping","params":{"a":1,"a":2}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantAnswer(t, tc.line, tc.want)
		})
	}
}

// TestNumbersOutOfRange: a tools/call holding a number that mcp-go could
// not decode (beyond a float64) is answered with the proxy's own short
// error, naming where it is and the rule, quoting only the number's start;
// a number in range passes (the contract decides on it).
func TestNumbersOutOfRange(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("9", 5000)
	for _, tc := range []struct {
		name, line string
		want       string // "" when passed on
	}{
		{"1e400", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"ap_pay_bill","arguments":{"vendor":"ACME Supplies","amount":1e400}}}`,
			`{"error":{"code":-32602,"message":"The value at params.arguments.amount is a number out of range (1e400): a JSON number must fit a 64-bit float, so the message was not read; give an amount as a decimal string such as \"1250.00\". Nothing was done."},"id":7,"jsonrpc":"2.0"}`},
		{"5000 digits", `{"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"ap_pay_bill","arguments":{"amount":` + long + `}}}`,
			`{"error":{"code":-32602,"message":"The value at params.arguments.amount is a number out of range (999999999999999999999999… (5000 characters)): a JSON number must fit a 64-bit float, so the message was not read; give an amount as a decimal string such as \"1250.00\". Nothing was done."},"id":"x","jsonrpc":"2.0"}`},
		{"in a list", `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"pay","arguments":{"lines":[1,-1e309]}}}`,
			`{"error":{"code":-32602,"message":"The value at params.arguments.lines[1] is a number out of range (-1e309): a JSON number must fit a 64-bit float, so the message was not read; give an amount as a decimal string such as \"1250.00\". Nothing was done."},"id":8,"jsonrpc":"2.0"}`},
		{"in range", `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"pay","arguments":{"amount":1e300,"tiny":1e-400}}}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			wantAnswer(t, tc.line, tc.want)
		})
	}
}

// wantAnswer feeds line to a lineLimiter and checks that it is answered
// with want, never passed on, or passed on as is when want is "".
func wantAnswer(t *testing.T, line, want string) {
	t.Helper()
	var replies []string
	l := &lineLimiter{r: strings.NewReader(line + "\n"), max: 1 << 20, reply: func(b []byte) { replies = append(replies, string(b)) }}
	got, err := io.ReadAll(l)
	if err != nil {
		t.Fatal(err)
	}
	if want == "" {
		if string(got) != line+"\n" || len(replies) != 0 {
			t.Fatalf("passed on %q, replied %q; want the line passed on", got, replies)
		}
		return
	}
	if len(got) != 0 {
		t.Errorf("passed on %q", got)
	}
	if len(replies) != 1 || replies[0] != want+"\n" {
		t.Errorf("replies %q\nwant %q", replies, want)
	}
}

func FuzzDuplicateKey(f *testing.F) {
	f.Add([]byte(`{"a":1,"b":{"a":[{"a":1,"a":2}]}}`))
	f.Add([]byte(`{"a":1,"\u0061":2}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		k, at, dup := duplicateKey(b)
		if dup && at == "" {
			t.Fatalf("duplicate %q without a place", k)
		}
	})
}

// BenchmarkDuplicateKey measures the duplicate-key check on a typical
// tools/call line and on one with a 100 KiB argument.
func BenchmarkDuplicateKey(b *testing.B) {
	for _, bc := range []struct{ name, line string }{
		{"call", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_money","arguments":{"recipient_iban":"DE89370400440532013000","amount":850,"reference":"INV-2290"},"_meta":{"progressToken":"p"}}}`},
		{"100KiB", `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"send_money","arguments":{"reference":"` + strings.Repeat("x", 100<<10) + `"}}}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			line := []byte(bc.line)
			b.SetBytes(int64(len(line)))
			for b.Loop() {
				if _, _, dup := duplicateKey(line); dup {
					b.Fatal("duplicate")
				}
			}
		})
	}
}
