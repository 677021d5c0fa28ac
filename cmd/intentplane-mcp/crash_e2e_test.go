package main_test

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/erp"
	"github.com/intentplane/intentplane/odoo/provision"
)

// rawProxy is the built proxy on stdio, spoken to in raw JSON-RPC, so that
// the test can kill it (kill -9) at any point.
type rawProxy struct {
	t      *testing.T
	cmd    *exec.Cmd
	in     io.WriteCloser
	lines  chan string
	stderr *lockedBuffer
}

// waitLog returns the proxy's stderr once it holds every one of wants, or
// as it is after waitLimit.
func (p *rawProxy) waitLog(wants ...string) string {
	deadline := time.Now().Add(waitLimit)
	for {
		log := p.stderr.String()
		missing := slices.ContainsFunc(wants, func(w string) bool { return !strings.Contains(log, w) })
		if !missing || time.Now().After(deadline) {
			return log
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func startRaw(t *testing.T, e *odooEnv) *rawProxy {
	t.Helper()
	p := &rawProxy{t: t, cmd: exec.Command(bins.proxy, "--config", e.config), lines: make(chan string, 64), stderr: &lockedBuffer{t: t}}
	p.cmd.Dir, p.cmd.Env, p.cmd.Stderr = e.dir, append(os.Environ(), e.passEnv...), p.stderr
	var err error
	if p.in, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	out, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.cmd.Process.Kill(); _ = p.cmd.Wait() })
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			p.lines <- sc.Text()
		}
		close(p.lines)
	}()
	p.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`)
	p.answer(1)
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return p
}

func (p *rawProxy) send(line string) {
	p.t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		p.t.Fatal(err)
	}
}

// answer returns the response to request id.
func (p *rawProxy) answer(id int) string {
	p.t.Helper()
	timeout := time.After(waitLimit)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				p.t.Fatalf("the proxy exited before answering %d; stderr:\n%s", id, p.stderr.String())
			}
			if strings.Contains(l, fmt.Sprintf(`"id":%d,`, id)) || strings.HasSuffix(l, fmt.Sprintf(`"id":%d}`, id)) {
				return l
			}
		case <-timeout:
			p.t.Fatalf("no answer to %d", id)
		}
	}
}

func (p *rawProxy) pay(id int, args string) {
	p.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ap_pay_bill","arguments":%s}}`, id, args))
}

// TestKillDuringPayment: the proxy is killed (kill -9) while its payment's
// call to Odoo is under way, before Odoo ran it (found by a new-user
// trial). At restart, reconciliation releases the payment, gives its nonce
// back and logs it with the mandate, and each running total's share with
// its name and printable key (no NUL byte). The retry is refused while the
// killed decision's hold on the vendor lasts, and the refusal says so
// truly (when the hold ends, in UTC), not that another operation is under
// way nor that the payment executed; Odoo shows no payment.
func TestKillDuringPayment(t *testing.T) {
	t.Parallel()
	e := newOdooEnv(t)
	writeFile(t, e.config, e.template+"\n[store]\nkind = \"embedded\"\npath = \"intentplane.db\"\n")
	args := fmt.Sprintf(`{"vendor":"ACME Supplies","bill":"INV-2290","iban":%q,"amount":"850.00","currency":"EUR"}`, ibanOnFile)

	p := startRaw(t, e)
	arrived, release := e.srv.Stall("account.payment.register", "action_create_payments")
	defer release()
	p.pay(2, args)
	select {
	case <-arrived:
	case <-time.After(waitLimit):
		t.Fatalf("the payment never reached Odoo; stderr:\n%s", p.stderr.String())
	}
	if err := p.cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = p.cmd.Wait()
	release() // the request dies with its process: Odoo never runs it

	p = startRaw(t, e)
	// The start-up log is read once reconciliation has logged its last
	// share (the proxy is not asked anything before: it logs as it starts).
	wants := []string{"reconciled a reservation left open by a crash", "outcome=released", "nonce given back", "mandate=", "total=", "total_key="}
	log := p.waitLog(wants...)
	for _, want := range wants {
		if !strings.Contains(log, want) {
			t.Errorf("the start-up log lacks %q:\n%s", want, log)
		}
	}
	if strings.Contains(log, `\x00`) || strings.Contains(log, "\x00") {
		t.Errorf("the start-up log holds a NUL byte:\n%s", log)
	}

	p.pay(3, args)
	got := p.answer(3)
	for _, want := range []string{"execution.in_flight", "held by another decision", "has not finished", " UTC"} {
		if !strings.Contains(got, want) {
			t.Errorf("the retry's answer lacks %q: %s", want, got)
		}
	}
	for _, bad := range []string{"is under way", "already executed", "execution.replayed"} {
		if strings.Contains(got, bad) {
			t.Errorf("the retry's answer says %q: %s", bad, got)
		}
	}
	if b := e.bill(t, provision.DemoBill); b.PaymentState != erp.NotPaid {
		t.Errorf("INV-2290 is %s after a payment cut off before Odoo ran it", b.PaymentState)
	}
}
