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
