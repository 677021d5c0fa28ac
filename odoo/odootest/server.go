// Package odootest is a fake Odoo server, 17 by default and 18 or 19
// (SetVersion) with those versions' fields, states and faults, speaking
// XML-RPC (/xmlrpc/2/common, /object and /db) over httptest, for the
// connector's tests; as Odoo 19 it also speaks JSON-2 (/json/2, with API
// keys; see json2.go) and answers GET /web/version, and its XML-RPC can be
// turned off (SetXMLRPC). It behaves like the real ones on what package
// odoo uses, as measured in ../shared/odoo17-api.md and
// ../shared/odoo18-19-api.md: int fault codes with Odoo's
// strings (1 with a traceback, 2 user errors, 3 Access Denied, 4 access
// errors), False for empty values, many2one pairs, UTC datetimes as
// 'YYYY-MM-DD HH:MM:SS', HTTP 200 and Connection: close on every answer,
// access rights per group, the payment wizard (which pays whatever account
// it is given, trusted or not), the "cannot marshal None" fault after a
// commit, and domains on fields that are not stored, which match every
// record. It also serves GET /web/login?db=NAME as Odoo 17 does for a
// request without a session: a 302 redirect setting the cookie
// session_id of a new session that names the database (no user), and it
// counts the requests for which Odoo would list its databases (see
// Listings).
//
// It only ever holds fictional data. It imports the standard library
// only.
package odootest

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Server is a fake Odoo (17, 18 or 19: SetVersion). Calls are serialized: each runs as one
// transaction, and a fault rolls back everything the call did (except
// the None fault, which comes after the commit). Safe for concurrent use.
type Server struct {
	// URL is the server's base URL, e.g. "http://127.0.0.1:34567".
	URL string

	srv      *httptest.Server
	master   string
	version  int // the Odoo major version served: 17, 18 or 19 (SetVersion)
	calls    atomic.Int64
	listings atomic.Int64

	mu      sync.Mutex
	dbs     map[string]*db
	now     func() time.Time
	lose    map[string]int // "model.method" → calls whose answer is lost after the commit
	answers map[string]string
	stalls  map[string]stall // "model.method" → the next call waits, then is cut off
	reads   []Read
	// sessions maps a session id to the database it names; cookies the
	// session ids requests carried, in order.
	sessions map[string]string
	cookies  []string
	j2       json2State // JSON-2 and the web sessions that make API keys (json2.go)
	noXMLRPC bool       // /xmlrpc/2 answers 404 (SetXMLRPC)
}

// stall is a call Stall holds: arrived is closed when it comes, release
// when the test lets it end.
type stall struct{ arrived, release chan struct{} }

// Read is a search_read or search the server answered.
type Read struct {
	// UID is the caller's user id (2 is the administrator); Model the
	// model searched.
	UID   int64
	Model string
	// Domain is the domain searched; Limit the limit asked, 0 if none.
	Domain []any
	Limit  int64
	// Fields are the fields asked for (nil if none were named); Names
	// is whether each many2one came with its display name (the keyword
	// load absent or "_classic_read"), which Odoo computes for it.
	Fields []string
	Names  bool
}

// Reads returns the searches answered so far, in order.
func (s *Server) Reads() []Read {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.reads)
}

// NewServer starts a fake Odoo with no database, whose master password is
// master. Close it when done.
func NewServer(master string) *Server {
	s := &Server{master: master, version: 17, dbs: map[string]*db{}, now: time.Now, lose: map[string]int{}, answers: map[string]string{},
		sessions: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Versions are the Odoo major versions the fake serves (SetVersion).
var Versions = []int{17, 18, 19}

// SetVersion makes the server behave as Odoo major version 17 (the
// default), 18 or 19, as measured in ../shared/odoo17-api.md and
// ../shared/odoo18-19-api.md: what common.version answers, and the
// models, fields, states and faults of the databases created afterwards.
// Call it before creating a database. It panics on another version.
func (s *Server) SetVersion(major int) {
	if !slices.Contains(Versions, major) {
		panic(fmt.Sprintf("odootest: Odoo %d is not served (17, 18 or 19)", major))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.version = major
}

// SetXMLRPC turns the XML-RPC endpoints (/xmlrpc/2/...) off (they then
// answer 404, as on a server that removed them: Odoo 19 behind a proxy
// that blocks them, or Odoo 22, which is to drop them) or on again (the
// default). The administrator's calls (provision.Admin) go over XML-RPC: turn
// it off once the database is set up.
func (s *Server) SetXMLRPC(on bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.noXMLRPC = !on
}

// webVersion serves GET /web/version as Odoo 19 does (JSON, without
// login; a request that names no database lists them); before 19 it is
// not there (404).
func (s *Server) webVersion(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	major := s.version
	s.mu.Unlock()
	if major < 19 || r.Method != http.MethodGet {
		http.NotFound(w, r)
		return
	}
	s.calls.Add(1)
	if r.Header.Get("X-Odoo-Database") == "" {
		s.listings.Add(1)
	}
	version, info := serverVersion(major)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(map[string]any{"version_info": info, "version": version})
}

// serverVersion is what common.version answers for each major version,
// as the real servers measured answered it.
func serverVersion(major int) (version string, info []any) {
	switch major {
	case 18:
		return "18.0-20250506", []any{18, 0, 0, "final", 0, ""}
	case 19:
		return "19.0", []any{19, 0, 0, "final", 0, ""}
	}
	return "17.0-20240709", []any{17, 0, 0, "final", 0, ""}
}

// Close shuts the server down.
func (s *Server) Close() { s.srv.Close() }

// Calls returns the number of XML-RPC and JSON-2 calls served so far.
func (s *Server) Calls() int64 { return s.calls.Load() }

// Listings returns the number of requests so far for which Odoo lists
// its databases, opening a new PostgreSQL connection to do so: those
// whose cookie names no session of an existing database and, on Odoo 19,
// that have no X-Odoo-Database header
// (odoo.http.Request._get_session_and_dbname).
func (s *Server) Listings() int64 { return s.listings.Load() }

// Cookies returns the session ids that the XML-RPC calls carried, in
// order, "" for a call without one.
func (s *Server) Cookies() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.cookies)
}

// session notes the session the request r carries and counts a database
// listing unless it names an existing database. It returns the session
// id, "" if none.
func (s *Server) session(r *http.Request) string {
	sid := ""
	if c, err := r.Cookie("session_id"); err == nil {
		sid = c.Value
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	named := s.version >= 19 && r.Header.Get("X-Odoo-Database") != "" // Odoo 19 reads the header
	if name, ok := s.sessions[sid]; (!ok || s.dbs[name] == nil) && !named {
		s.listings.Add(1)
	}
	return sid
}

// login serves GET /web/login?db=NAME for a request without a session of
// a database, as Odoo 17's web module does (ensure_db): a new session
// naming the database, whatever it is (Odoo checks it against its
// dbfilter only), and a redirect to the same URL. With a session of a
// database it would render the login form: answered 200 here.
func (s *Server) login(w http.ResponseWriter, r *http.Request) {
	sid := s.session(r)
	name := strings.TrimSpace(r.URL.Query().Get("db"))
	s.mu.Lock()
	_, has := s.sessions[sid]
	if has || name == "" {
		s.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		_, _ = w.Write([]byte("<!DOCTYPE html><html><body>login</body></html>"))
		return
	}
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	sid = hex.EncodeToString(b)
	s.sessions[sid] = name
	s.mu.Unlock()
	http.SetCookie(w, &http.Cookie{Name: "session_id", Value: sid, Path: "/", MaxAge: 604800, HttpOnly: true})
	http.Redirect(w, r, r.URL.RequestURI(), http.StatusFound)
}

// SetNow sets the server's clock (create_date, write_date, today); nil
// means time.Now.
func (s *Server) SetNow(now func() time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if now == nil {
		now = time.Now
	}
	s.now = now
}

// LoseAnswer makes the next n calls of model.method run and commit, and
// then close the connection without an answer, as when the network fails
// after the server did its work.
func (s *Server) LoseAnswer(model, method string, n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lose[model+"."+method] = n
}

// Stall makes the next call of model.method wait, before it runs, until
// release is called, and then end without running, its connection closed
// with no answer: a request cut off before Odoo ran it, as when the
// process that sent it is killed. arrived is closed when the call comes.
func (s *Server) Stall(model, method string) (arrived <-chan struct{}, release func()) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := stall{arrived: make(chan struct{}), release: make(chan struct{})}
	if s.stalls == nil {
		s.stalls = map[string]stall{}
	}
	s.stalls[model+"."+method] = st
	var once sync.Once
	return st.arrived, func() { once.Do(func() { close(st.release) }) }
}

// stalled waits out the Stall of the call's model.method, if any, and
// reports whether the call was cut off.
func (s *Server) stalled(service, method string, params []any) bool {
	if service != "object" || method != "execute_kw" || len(params) < 5 {
		return false
	}
	m, _ := params[3].(string)
	f, _ := params[4].(string)
	s.mu.Lock()
	st, ok := s.stalls[m+"."+f]
	delete(s.stalls, m+"."+f)
	s.mu.Unlock()
	if !ok {
		return false
	}
	close(st.arrived)
	<-st.release
	return true
}

// Answer makes every later call of model.method answer body (a whole
// methodResponse document) instead of running, to test how the client
// takes bad answers. An empty body removes the override.
func (s *Server) Answer(model, method, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if body == "" {
		delete(s.answers, model+"."+method)
		return
	}
	s.answers[model+"."+method] = body
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Connection", "close")
	if r.Method == http.MethodGet && r.URL.Path == "/web/login" {
		s.login(w, r)
		return
	}
	if r.URL.Path == "/web/version" {
		s.webVersion(w, r)
		return
	}
	if r.URL.Path == "/json/2" || strings.HasPrefix(r.URL.Path, "/json/2/") {
		s.serveJSON2(w, r)
		return
	}
	if r.URL.Path == "/web/session/authenticate" || strings.HasPrefix(r.URL.Path, "/web/dataset/call_kw/") {
		s.serveWeb(w, r)
		return
	}
	if r.Method != http.MethodPost {
		http.Error(w, "405 Method Not Allowed", http.StatusMethodNotAllowed)
		return
	}
	s.mu.Lock()
	off := s.noXMLRPC
	s.mu.Unlock()
	if off && strings.HasPrefix(r.URL.Path, "/xmlrpc/") {
		http.NotFound(w, r)
		return
	}
	s.calls.Add(1)
	sid := s.session(r)
	s.mu.Lock()
	s.cookies = append(s.cookies, sid)
	s.mu.Unlock()
	service, ok := strings.CutPrefix(r.URL.Path, "/xmlrpc/2/")
	method, params, err := decodeCall(http.MaxBytesReader(w, r.Body, 8<<20))
	var out []byte
	lost := false
	switch {
	case !ok:
		http.NotFound(w, r)
		return
	case err != nil:
		out = encodeFault(1, traceback("xml.parsers.expat.ExpatError: "+err.Error()).msg)
	case s.stalled(service, method, params):
		lost = true
	default:
		out, lost = s.run(service, method, params)
	}
	if lost {
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
				return
			}
		}
	}
	w.Header().Set("Content-Type", "text/xml; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
}

// run serves one call under the server's lock; a panic becomes fault 1,
// as an unexpected Python exception would.
func (s *Server) run(service, method string, params []any) (out []byte, lost bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	defer func() {
		if r := recover(); r != nil {
			out, lost = encodeFault(1, traceback(fmt.Sprintf("RuntimeError: %v", r)).msg), false
		}
	}()
	key := ""
	if service == "object" && method == "execute_kw" && len(params) >= 5 {
		m, _ := params[3].(string)
		f, _ := params[4].(string)
		key = m + "." + f
	}
	if body, ok := s.answers[key]; ok {
		return []byte(body), false
	}
	if f, _ := argAt(params, 4).(string); key != "" && (f == "search_read" || f == "search") {
		uid, _ := params[1].(int64)
		args, _ := argAt(params, 5).([]any)
		kw, _ := argAt(params, 6).(map[string]any)
		domain, _ := argAt(args, 0).([]any)
		if domain == nil {
			domain, _ = kw["domain"].([]any)
		}
		limit, _ := kw["limit"].(int64)
		var fields []string
		asked, _ := kw["fields"].([]any)
		for _, f := range asked {
			fields = append(fields, str(f))
		}
		s.reads = append(s.reads, Read{UID: uid, Model: str(params[3]), Domain: domain, Limit: limit, Fields: fields,
			Names: kw["load"] == nil || kw["load"] == "_classic_read"})
	}
	v, f := s.dispatch(service, method, params)
	var err error
	switch {
	case f != nil:
		out = encodeFault(f.code, f.msg)
	case v == (none{}):
		out = encodeFault(1, traceback("TypeError: cannot marshal None unless allow_none is enabled").msg)
	default:
		if out, err = encodeResponse(v); err != nil {
			out = encodeFault(1, traceback("TypeError: "+err.Error()).msg)
		}
	}
	if n := s.lose[key]; n > 0 {
		s.lose[key] = n - 1
		lost = true
	}
	return out, lost
}

func (s *Server) dispatch(service, method string, p []any) (any, *fault) {
	switch service {
	case "common":
		return s.common(method, p)
	case "db":
		if s.j2.noDBService {
			return nil, traceback("KeyError: 'db'")
		}
		return s.dbService(method, p)
	case "object":
		if method != "execute_kw" && method != "execute" {
			return nil, traceback("KeyError: 'Method not found: " + method + "'")
		}
		return s.object(method, p)
	}
	return nil, traceback(fmt.Sprintf("KeyError: '%s'", service))
}

func str(v any) string {
	s, _ := v.(string)
	return s
}

func (s *Server) common(method string, p []any) (any, *fault) {
	switch method {
	case "version":
		v, info := serverVersion(s.version)
		return map[string]any{"server_version": v, "server_version_info": info,
			"server_serie": fmt.Sprintf("%d.0", s.version), "protocol_version": 1}, nil
	case "authenticate", "login":
		if len(p) < 3 {
			return nil, traceback("TypeError: authenticate() missing required positional arguments")
		}
		d := s.dbs[str(p[0])]
		if d == nil {
			return nil, traceback(fmt.Sprintf("psycopg2.OperationalError: connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  database \"%s\" does not exist", str(p[0])))
		}
		for _, u := range d.tables["res.users"] {
			if u.str("login") == str(p[1]) && s.credential(d, u, str(p[2])) {
				return u.id(), nil
			}
		}
		return false, nil
	}
	return nil, traceback("Exception: Method not found: " + method)
}

func (s *Server) dbService(method string, p []any) (any, *fault) {
	arg := func(i int) string {
		if i < len(p) {
			return str(p[i])
		}
		return ""
	}
	checkMaster := func() *fault {
		if arg(0) != s.master || s.master == "" {
			return &fault{3, "Access Denied"}
		}
		return nil
	}
	switch method {
	case "list":
		names := []any{}
		for n := range s.dbs {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b any) int { return strings.Compare(a.(string), b.(string)) })
		return names, nil
	case "server_version":
		v, _ := serverVersion(s.version)
		return v, nil
	case "db_exist":
		return s.dbs[arg(0)] != nil, nil
	case "create_database":
		if f := checkMaster(); f != nil {
			return nil, f
		}
		name := arg(1)
		if s.dbs[name] != nil {
			return nil, traceback(fmt.Sprintf("odoo.service.db.DatabaseExists: database '%s' already exists!", name))
		}
		login := arg(5)
		if login == "" {
			login = "admin"
		}
		s.dbs[name] = newDB(s, name, login, arg(4))
		return true, nil
	case "duplicate_database":
		if f := checkMaster(); f != nil {
			return nil, f
		}
		src := s.dbs[arg(1)]
		if src == nil {
			return nil, traceback(fmt.Sprintf("psycopg2.errors.InvalidCatalogName: database \"%s\" does not exist", arg(1)))
		}
		if s.dbs[arg(2)] != nil {
			return nil, traceback(fmt.Sprintf("odoo.service.db.DatabaseExists: database '%s' already exists!", arg(2)))
		}
		s.dbs[arg(2)] = src.clone(arg(2))
		return true, nil
	case "drop":
		if f := checkMaster(); f != nil {
			return nil, f
		}
		if s.dbs[arg(1)] == nil {
			return false, nil
		}
		delete(s.dbs, arg(1))
		return true, nil
	}
	return nil, traceback("KeyError: 'Method not found: " + method + "'")
}

// object serves execute_kw(db, uid, password, model, method, args, kw).
func (s *Server) object(method string, p []any) (any, *fault) {
	if len(p) < 5 {
		return nil, traceback("TypeError: execute_kw() missing required positional arguments")
	}
	d := s.dbs[str(p[0])]
	if d == nil {
		return nil, traceback(fmt.Sprintf("psycopg2.OperationalError: FATAL:  database \"%s\" does not exist", str(p[0])))
	}
	var uid int64
	switch u := p[1].(type) {
	case int64:
		uid = u
	case string:
		fmt.Sscan(u, &uid)
	}
	user, ok := d.tables["res.users"][uid]
	if !ok {
		return nil, missing("res.users", []int64{uid}, uid)
	}
	if !s.credential(d, user, str(p[2])) {
		return nil, &fault{3, "Access Denied"}
	}
	modelName, meth := str(p[3]), str(p[4])
	var args []any
	if len(p) > 5 {
		if l, ok := p[5].([]any); ok {
			args = l
		}
	}
	kw := map[string]any{}
	if len(p) > 6 {
		if m, ok := p[6].(map[string]any); ok {
			kw = m
		}
	}
	// Every call is a transaction: work on a copy, keep it unless a
	// fault; a read changes nothing and needs none.
	if isReadOnly(meth) || journaled(modelName, meth) {
		return s.inPlace(d, uid, modelName, meth, args, kw)
	}
	tx := d.clone(d.name)
	tx.uid = uid
	tx.now = s.now().UTC()
	v, f := tx.call(modelName, meth, args, kw)
	if f == nil {
		tx.uid = 0
		s.dbs[d.name] = tx
	}
	return v, f
}
