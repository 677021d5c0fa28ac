package rpc

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
	"sync"
	"sync/atomic"
	"time"

	"github.com/kolo/xmlrpc"
)

// maxAnswer is the largest answer body read, in bytes.
const maxAnswer = 32 << 20

// Transport makes XML-RPC and JSON-2 calls to one Odoo server. It holds
// no credentials: they are arguments of each call (see Session), and
// every message it returns has Options.Secrets removed. It is safe for
// concurrent use.
type Transport struct {
	baseURL string // scheme://host[:port][/path], no user info, no trailing slash
	hc      *http.Client
	timeout time.Duration
	log     *slog.Logger
	secrets []string
	ncalls  atomic.Int64

	// db, if set (UseDatabase), is the database whose session the
	// common and object calls carry (see dbSession).
	db  string
	now func() time.Time
	smu sync.Mutex
	sid string    // the session's id, "" if none
	due time.Time // when to ask for a session (again); zero: at the next call

	vmu   sync.Mutex
	ver   Version      // the server's, once read (version)
	major atomic.Int64 // ver.Major once read, for call (which version's lock may be held)

	// header, if set, is the database the X-Odoo-Database header of the
	// common, object and JSON-2 calls names (see dbHeader).
	header string
	// mode is the transport configured: TransportAuto, TransportXMLRPC
	// or TransportJSON2 (see json2).
	mode string
}

// Odoo 19 takes the database of a request from the X-Odoo-Database
// header, read by odoo.http.Request._get_session_and_dbname: without it
// (and without a session cookie) Odoo lists its databases on every
// request, over a new PostgreSQL connection. Measured on the real 19
// (../shared/odoo18-19-api.md §4): search_read 54 ms without the header,
// 13 ms with it. Odoo 17 and 18 ignore the header (18: 66 ms with it, 74
// ms without, at load 8) but take the session cookie (dbSession; on 18,
// 17 ms with it, measured in the same run); 19 refuses a request whose
// cookie and header name different databases (403). So every common and
// object call carries the header, and the cookie only once the server is
// known to be 17 or 18. The db service never carries either: it creates,
// copies and drops databases.

// Odoo 17 finds the database of a request in the browser session its
// cookie names; without one (an XML-RPC client sends none) it lists the
// server's databases on every request, and it never keeps its connection
// to PostgreSQL's "postgres" database in its pool: each call opens a new
// PostgreSQL connection before it does any work. Measured on a 2-core
// machine under load (tiny search_read, 40 calls each, in one run):
// median 325 ms without the cookie, 75 ms with it; common.version 230 ms
// and 28 ms. A session that names the database, and no user, avoids
// that: Odoo's /web/login?db=NAME sets the session's database and
// answers a redirect with the cookie. The XML-RPC calls still name their
// database and authenticate with uid and password each time; the cookie
// only spares Odoo the database list. The session carries no user and no
// right, so it is no credential.
const (
	// sessionRenewal is how often the session is asked for again. Odoo
	// deletes a session a week (its sessions.max_inactivity_seconds)
	// after it was last saved, and the XML-RPC routes never save it; a
	// lost session only makes the calls slow again (Odoo falls back to
	// the database list).
	sessionRenewal = time.Hour
	// sessionRetry is how long after a failed attempt (a server without
	// the web module, a proxy that refuses GET) it is tried again.
	sessionRetry = 10 * time.Minute
	// sessionTimeout bounds the request for a session: a server slow to
	// give one delays the call that asks for it by at most this.
	sessionTimeout = 5 * time.Second
)

// UseDatabase makes the common and object calls carry a session of
// database db (see dbSession), asked for at the first such call and
// renewed hourly; now is the clock that times the renewal.
func (t *Transport) UseDatabase(db string, now func() time.Time) {
	t.smu.Lock()
	defer t.smu.Unlock()
	t.db, t.now = db, now
}

// dbSession returns the id of the session of t.db the call should carry,
// "" for none, asking Odoo for a new one first when one is due. A failure
// is not an error: the calls then go without a session, as before, and
// it is tried again an hour later. The request for a session is not an
// XML-RPC call and Calls does not count it.
func (t *Transport) dbSession(ctx context.Context) string {
	t.smu.Lock()
	defer t.smu.Unlock()
	if t.db == "" {
		return ""
	}
	now := t.now()
	if !t.due.IsZero() && now.Before(t.due) {
		return t.sid
	}
	if sid, err := t.askSession(ctx); err != nil {
		t.log.DebugContext(ctx, "odoo session", "err", t.redact(err.Error()))
		t.due = now.Add(sessionRetry) // keep the old session, if any: it may still be valid
	} else {
		t.sid, t.due = sid, now.Add(sessionRenewal)
	}
	return t.sid
}

// askSession asks Odoo for a session of t.db: GET /web/login?db=NAME,
// which answers a redirect and the cookie session_id of a session that
// names the database and no user. Redirects are not followed.
func (t *Transport) askSession(ctx context.Context) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, min(t.timeout, sessionTimeout))
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.baseURL+"/web/login?db="+url.QueryEscape(t.db), http.NoBody)
	if err != nil {
		return "", err
	}
	hc := *t.hc
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	hc.Jar = nil
	resp, err := hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	if resp.StatusCode < 300 || resp.StatusCode > 399 {
		return "", fmt.Errorf("odoo: asking for a session of the database: HTTP %d, not a redirect", resp.StatusCode)
	}
	for _, c := range resp.Cookies() {
		if c.Name == "session_id" && validSessionID(c.Value) {
			return c.Value, nil
		}
	}
	return "", errors.New("odoo: asking for a session of the database: no session cookie in the answer")
}

// dbHeader names the transport's database in req's X-Odoo-Database
// header, if it has one.
func (t *Transport) dbHeader(req *http.Request) {
	if t.header != "" {
		req.Header.Set("X-Odoo-Database", t.header)
	}
}

// validSessionID reports whether s can be an Odoo session id: 1 to 128
// ASCII letters, digits, - and _ (Odoo 17's are 40 hex digits).
func validSessionID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '-', c == '_':
		default:
			return false
		}
	}
	return true
}

// Options configures a Transport. The zero value of an optional field
// means the default stated on it.
type Options struct {
	// URL is the server's base URL, http:// or https:// with a host and
	// no user info, query or fragment; required.
	URL string
	// HTTPClient makes the calls; nil means a new http.Client.
	HTTPClient *http.Client
	// Timeout limits each call; zero means DefaultTimeout.
	Timeout time.Duration
	// Logger receives one debug record per call; nil means discard.
	Logger *slog.Logger
	// Mode is TransportAuto, TransportXMLRPC or TransportJSON2 (see
	// CheckTransport); it decides whether Session calls go over JSON-2.
	Mode string
	// Secrets are removed from every message the Transport returns or
	// logs: the passwords and keys its callers send.
	Secrets []string
	// Database, if set, is named in the X-Odoo-Database header of every
	// common, object and JSON-2 call (see dbHeader); "" names none.
	Database string
}

// NewTransport returns a Transport for o; it makes no call. It returns
// an error for a URL that is not http:// or https:// with a host, or
// that carries user info, a query or a fragment.
func NewTransport(o Options) (*Transport, error) {
	u, err := url.Parse(o.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, errors.New("odoo: the URL must be http:// or https:// with a host")
	}
	if u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, errors.New("odoo: the URL must not carry user info, a query or a fragment")
	}
	hc, timeout, log := o.HTTPClient, o.Timeout, o.Logger
	if hc == nil {
		hc = &http.Client{}
	}
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Transport{baseURL: strings.TrimRight(u.String(), "/"), hc: hc, timeout: timeout, log: log,
		mode: o.Mode, secrets: o.Secrets, header: o.Database}, nil
}

// Base returns the server's base URL as the calls use it: without a
// trailing slash.
func (t *Transport) Base() string { return t.baseURL }

// Calls returns the number of calls (XML-RPC, JSON-2 and GET
// /web/version: HTTP round trips) the Transport has made; the requests
// for a database session and those of a Web are not counted.
func (t *Transport) Calls() int64 { return t.ncalls.Load() }

// redact removes every secret of Options.Secrets from s.
func (t *Transport) redact(s string) string {
	for _, p := range t.secrets {
		if p != "" {
			s = strings.ReplaceAll(s, p, "***")
		}
	}
	return s
}

// Call calls service.method with args and decodes the answer into a
// generic value: int64, float64, bool, string, []any, map[string]any. what
// names the call in errors and logs ("res.partner.search_read"); it never
// holds an argument. A fault is returned as *Fault.
func (t *Transport) Call(ctx context.Context, service, what, method string, args ...any) (any, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	body, err := xmlrpc.EncodeMethodCall(method, args...)
	if err != nil {
		return nil, fmt.Errorf("odoo: %s %s: encoding the call: %w", service, what, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.baseURL+"/xmlrpc/2/"+service, bytes.NewReader(body))
	if err != nil {
		return nil, fmt.Errorf("odoo: %s %s: %w", service, what, err)
	}
	req.Header.Set("Content-Type", "text/xml")
	if service != "db" { // never for the database service: it creates, copies and drops databases
		t.dbHeader(req)
		if m := t.major.Load(); m != 0 && m < 19 {
			if sid := t.dbSession(ctx); sid != "" {
				req.AddCookie(&http.Cookie{Name: "session_id", Value: sid})
			}
		}
	}
	start := time.Now()
	t.ncalls.Add(1)
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
