package odoo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/kolo/xmlrpc"
)

// maxAnswer is the largest answer body read, in bytes.
const maxAnswer = 32 << 20

// transport makes XML-RPC calls to one Odoo server. It holds no
// credentials: they are arguments of each call, and redact removes them
// from every message it returns.
type transport struct {
	base    string // scheme://host[:port][/path], no user info, no trailing slash
	hc      *http.Client
	timeout time.Duration
	log     *slog.Logger
	secrets []string
	calls   atomic.Int64
}

func newTransport(rawURL string, hc *http.Client, timeout time.Duration, log *slog.Logger) (*transport, error) {
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("odoo: the URL must be http:// or https:// with a host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("odoo: the URL must not carry user info, a query or a fragment")
	}
	if hc == nil {
		hc = &http.Client{}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &transport{base: strings.TrimRight(u.String(), "/"), hc: hc, timeout: timeout, log: log}, nil
}

// redact removes every secret the connector holds from s.
func (t *transport) redact(s string) string {
	for _, p := range t.secrets {
		if p != "" {
			s = strings.ReplaceAll(s, p, "***")
		}
	}
	return s
}

// call calls service.method with args and decodes the answer into a
// generic value: int64, float64, bool, string, []any, map[string]any. what
// names the call in errors and logs ("res.partner.search_read"); it never
// holds an argument. A fault is returned as *Fault.
func (t *transport) call(ctx context.Context, service, what, method string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	body, err := xmlrpc.EncodeMethodCall(method, args...)
	if err != nil {
		return nil, fmt.Errorf("odoo: %s %s: encoding the call: %w", service, what, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+"/xmlrpc/2/"+service, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("odoo: %s %s: %w", service, what, err)
	}
	req.Header.Set("Content-Type", "text/xml")
	start := time.Now()
	t.calls.Add(1)
	resp, err := t.hc.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			t.log.DebugContext(ctx, "odoo call", "service", service, "call", what, "err", "timeout or cancelled")
		}
		var oe *net.OpError
		notSent := errors.As(err, &oe) && oe.Op == "dial"
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // url.Error repeats the URL; the base URL holds no secret, but keep messages short
		}
		if notSent {
			return nil, fmt.Errorf("%w: %w: %s %s: %s", ErrNetwork, ErrNotSent, service, what, t.redact(err.Error()))
		}
		return nil, fmt.Errorf("%w: %s %s: %s", ErrNetwork, service, what, t.redact(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("%w: %s %s: reading the answer: %s", ErrNetwork, service, what, t.redact(err.Error()))
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s %s: HTTP %d", ErrNetwork, service, what, resp.StatusCode)
	}
	if len(raw) > maxAnswer {
		return nil, fmt.Errorf("%w: %s %s: answer larger than %d bytes", ErrBadAnswer, service, what, maxAnswer)
	}
	v, err := decodeAnswer(raw)
	var f *Fault
	if errors.As(err, &f) {
		f.Call = service + " " + what
		f.Message = t.redact(f.Message)
	} else if err != nil {
		err = fmt.Errorf("%s %s: %w", service, what, err)
	}
	t.log.DebugContext(ctx, "odoo call", "service", service, "call", what, "duration", time.Since(start), "fault", faultCode(err))
	return v, err
}

func faultCode(err error) int {
	var f *Fault
	if errors.As(err, &f) {
		return f.Code
	}
	return 0
}

// decodeAnswer decodes an XML-RPC methodResponse: its single value, or a
// *Fault. Anything else is an error wrapping ErrBadAnswer; it never
// panics.
func decodeAnswer(raw []byte) (v any, err error) {
	defer func() {
		if r := recover(); r != nil {
			v, err = nil, fmt.Errorf("%w: undecodable answer", ErrBadAnswer)
		}
	}()
	if !bytes.Contains(raw, []byte("<methodResponse")) {
		return nil, fmt.Errorf("%w: not an XML-RPC answer", ErrBadAnswer)
	}
	resp := xmlrpc.Response(raw)
	if ferr := resp.Err(); ferr != nil {
		var xf xmlrpc.FaultError
		if !errors.As(ferr, &xf) {
			return nil, fmt.Errorf("%w: undecodable fault", ErrBadAnswer)
		}
		return nil, &Fault{Code: xf.Code, Message: lastLine(xf.String)}
	}
	if !bytes.Contains(raw, []byte("<params>")) || !bytes.Contains(raw, []byte("<value")) {
		return nil, fmt.Errorf("%w: an answer without a value", ErrBadAnswer)
	}
	if err := resp.Unmarshal(&v); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadAnswer, err)
	}
	return v, nil
}
