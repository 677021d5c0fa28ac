package main_test

import (
	"bufio"
	"fmt"
	"io"
	"os/exec"
	"strings"
	"testing"
	"time"
)

// rawSession drives a proxy's stdin by hand, one JSON-RPC line at a time.
type rawSession struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
}

// startRaw starts the proxy of e with args added and initializes a
// session; stderr receives the proxy's log.
func (e *env) startRaw(t *testing.T, stderr io.Writer, args ...string) *rawSession {
	t.Helper()
	cmd := exec.Command(bins.proxy, append([]string{"--config", e.config}, args...)...)
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = in.Close(); _ = cmd.Wait() })
	s := &rawSession{t: t, in: in, lines: make(chan string, 16)}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	s.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`, `"id":"init"`)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`, "")
	return s
}

// send writes line and, unless want is empty, returns the first answer
// containing want (skipping notifications).
func (s *rawSession) send(line, want string) string {
	s.t.Helper()
	if _, err := io.WriteString(s.in, line+"\n"); err != nil {
		s.t.Fatal(err)
	}
	for want != "" {
		select {
		case l, ok := <-s.lines:
			if !ok {
				s.t.Fatalf("the proxy stopped before answering %s", want)
			}
			if strings.Contains(l, want) {
				return l
			}
		case <-time.After(20 * time.Second):
			s.t.Fatalf("no answer containing %s", want)
		}
	}
	return ""
}

// TestDuplicateKeysRefused: a tools/call whose arguments give "iban"
// twice is answered with a JSON-RPC error carrying its id, and nothing
// reaches the bank: mcp-go would have kept the last value while a log or
// a reviewer reads the first (issue 14).
func TestDuplicateKeysRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.startRaw(t, testWriter{t})
	got := s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":41,"method":"tools/call","params":{"name":"send_money","arguments":{"recipient_iban":%q,"amount":850,"reference":"INV-2290","recipient_iban":%q}}}`, ibanOnFile, ibanFromEmail), `"id":41`)
	for _, want := range []string{`"code":-32602`, `the key \"recipient_iban\" twice`, "params.arguments", "Nothing was done"} {
		if !strings.Contains(got, want) {
			t.Errorf("answer %s lacks %s", got, want)
		}
	}
	// The session goes on, and the same call without the duplicate is
	// decided as usual.
	got = s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":42,"method":"tools/call","params":{"name":"send_money","arguments":{"recipient_iban":%q,"amount":850,"reference":"INV-2290"}}}`, ibanOnFile), `"id":42`)
	if strings.Contains(got, `"error"`) || strings.Contains(got, `"isError":true`) {
		t.Fatalf("the call without the duplicate: %s", got)
	}
	if calls := e.bankCalls("send_money"); len(calls) != 1 || strings.Contains(calls[0], "LT12") {
		t.Errorf("the bank received %q, want the one call to the IBAN on file", calls)
	}
}

// TestMalformedArgumentsAdvice: arguments larger than a proposal may be
// (64 KiB; a message may be 1 MiB), or not valid UTF-8, are refused (proposal.malformed) with
// advice the client can follow, about the arguments it sent; not the
// gateway's advice to send "action" and "args", which the proxy writes
// itself. Nothing reaches the bank.
func TestMalformedArgumentsAdvice(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	s := e.startRaw(t, testWriter{t})
	for id, reference := range map[int]string{
		51: `"` + strings.Repeat("x", 70_000) + `"`,
		52: "\"INV-2290 \xff\"", // not UTF-8
	} {
		args := fmt.Sprintf(`{"recipient_iban":%q,"amount":850,"reference":%s}`, ibanOnFile, reference)
		got := s.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"send_money","arguments":%s}}`, id, args), fmt.Sprintf(`"id":%d`, id))
		for _, want := range []string{"proposal.malformed", "Nothing was done", "the tool call's arguments"} {
			if !strings.Contains(got, want) {
				t.Errorf("answer %.300s lacks %q", got, want)
			}
		}
		if strings.Contains(got, `only \"action\" and \"args\"`) {
			t.Errorf("answer %.300s asks the client for \"action\" and \"args\"", got)
		}
	}
	if calls := e.bankCalls("send_money"); len(calls) != 0 {
		t.Errorf("the bank received %q", calls)
	}
}
