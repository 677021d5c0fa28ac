package odootest

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file is the fake's JSON-2 API (Odoo 19's POST
// /json/2/<model>/<method>, addons/rpc/controllers/json2.py) with API
// keys, and the web client's flow that makes the first API key of a user
// (/web/session/authenticate, then call_kw of
// res.users.apikeys.description and res.users.identitycheck), as
// measured on a real Odoo 19 in ../shared/odoo18-19-api.md §3.

// notFoundNoDB is Odoo's 404 page for a request that names no database
// (odoo/http.py NOT_FOUND_NODB).
const notFoundNoDB = `<!DOCTYPE html>
<title>404 Not Found</title>
<h1>Not Found</h1>
<p>No database is selected and the requested URL was not found in the server-wide controllers.</p>
<p>Please verify the hostname, <a href=/web/login>login</a> and try again.</p>

<!-- Alternatively, use the X-Odoo-Database header. -->
`

// json2State is the fake's state for JSON-2 and the web sessions that
// make API keys; it is guarded by Server.mu.
type json2State struct {
	answers map[string]json2Answer // "model.method" → the answer every JSON-2 call gets (AnswerJSON2)
	web     map[string]*webSession // session id → the web session
	// noDBService: /xmlrpc/2/db is gone, as Odoo 20 removes database
	// management from the API (NoDatabaseService).
	noDBService bool
}

// NoDatabaseService makes the server answer every call of the db service
// (create, duplicate, drop, db_exist, list) with fault 1 KeyError 'db',
// as a server whose API has no database management (Odoo 20). Create the
// databases before.
func (s *Server) NoDatabaseService() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.j2.noDBService = true
}

type json2Answer struct {
	status int
	body   string
}

// webSession is a logged-in web client's session.
type webSession struct {
	db      string
	uid     int64
	checked time.Time        // when the user last confirmed its password (check_identity)
	wizards map[int64]wizard // res.users.apikeys.description and res.users.identitycheck records
	next    int64
}

// wizard is a res.users.apikeys.description (name, expiry) waiting for
// make_key, or an identity check waiting for the password (check set).
type wizard struct {
	name    string
	expires string // "YYYY-MM-DD HH:MM:SS", "" for a persistent key
	check   int64  // for an identity check: the description it unlocks
}

// AnswerJSON2 makes every later JSON-2 call of model.method answer the
// HTTP status and body (JSON, or HTML) instead of running, as Answer
// does for XML-RPC. An empty body removes the override.
func (s *Server) AnswerJSON2(model, method string, status int, body string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.j2.answers == nil {
		s.j2.answers = map[string]json2Answer{}
	}
	if body == "" {
		delete(s.j2.answers, model+"."+method)
		return
	}
	s.j2.answers[model+"."+method] = json2Answer{status, body}
}

// APIKey makes an API key for the user login of database db, valid
// until expires (the zero time: persistent), as Odoo's "New API Key"
// does, and returns it.
func (s *Server) APIKey(db, login string, expires time.Time) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[db]
	if d == nil {
		return "", fmt.Errorf("odootest: no database %q", db)
	}
	for _, u := range d.tables["res.users"] {
		if u.str("login") == login {
			exp := ""
			if !expires.IsZero() {
				exp = expires.UTC().Format("2006-01-02 15:04:05")
			}
			return d.addKey(u.id(), "test", exp), nil
		}
	}
	return "", fmt.Errorf("odootest: no user %q in %s", login, db)
}

// RevokeAPIKey deletes key from database db, as the user's "Revoke"
// button does; it reports whether it was there.
func (s *Server) RevokeAPIKey(db, key string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[db]
	if d == nil {
		return false
	}
	for id, k := range d.tables["res.users.apikeys"] {
		if k.str("key") == key {
			delete(d.tables["res.users.apikeys"], id)
			return true
		}
	}
	return false
}

// addKey stores a new key of user uid (40 hex digits, as Odoo's) and
// returns it; exp is its expiry, "" for none.
func (d *db) addKey(uid int64, name, exp string) string {
	b := make([]byte, 20)
	_, _ = rand.Read(b)
	k := hex.EncodeToString(b)
	if d.tables["res.users.apikeys"] == nil {
		d.tables["res.users.apikeys"] = map[int64]rec{}
	}
	d.next["res.users.apikeys"]++
	id := d.next["res.users.apikeys"]
	d.tables["res.users.apikeys"][id] = rec{"id": id, "key": k, "user_id": uid, "name": name, "expiration_date": exp}
	return k
}

// keyUser returns the active user whose unexpired API key is key, 0 if
// none (res.users.apikeys._check_credentials).
func (d *db) keyUser(key string, now time.Time) int64 {
	if key == "" {
		return 0
	}
	for _, k := range d.tables["res.users.apikeys"] {
		if k.str("key") != key {
			continue
		}
		if exp := k.str("expiration_date"); exp != "" && exp <= now.UTC().Format("2006-01-02 15:04:05") {
			return 0
		}
		if u, ok := d.tables["res.users"][k.m2o("user_id")]; ok && u.boolean("active") {
			return u.id()
		}
	}
	return 0
}

// credential reports whether secret logs user u in over XML-RPC: its
// password or one of its API keys (Odoo tries both).
func (s *Server) credential(d *db, u rec, secret string) bool {
	if secret == "" || !u.boolean("active") {
		return false
	}
	return u.str("password") == secret || d.keyUser(secret, s.now()) == u.id()
}

// pySignature is how Python binds a method's named arguments, for the
// methods the fake serves: api.model methods take no ids; pos are the
// parameters the fake's ORM takes positionally (as execute_kw's args),
// kw those it takes by keyword; varkw methods take any keyword (which the
// ORM may then refuse: a TypeError, as in Odoo).
type pySignature struct {
	model bool
	pos   []string
	kw    []string
	varkw bool
}

var pySignatures = map[string]pySignature{
	"search_read":                {model: true, pos: []string{"domain"}, kw: []string{"fields", "offset", "limit", "order"}, varkw: true},
	"search":                     {model: true, pos: []string{"domain"}, kw: []string{"offset", "limit", "order"}},
	"search_count":               {model: true, pos: []string{"domain"}, kw: []string{"limit"}},
	"read":                       {pos: []string{"fields"}, kw: []string{"load"}},
	"create":                     {model: true, pos: []string{"vals_list"}},
	"write":                      {pos: []string{"vals"}},
	"unlink":                     {},
	"check_access_rights":        {model: true, pos: []string{"operation"}, kw: []string{"raise_exception"}},
	"message_post":               {varkw: true},
	"action_post":                {},
	"action_cancel":              {},
	"action_draft":               {},
	"button_cancel":              {},
	"button_draft":               {},
	"action_create_payments":     {},
	"button_immediate_install":   {},
	"js_assign_outstanding_line": {pos: []string{"line_id"}},
	"try_loading":                {pos: []string{"template_code", "company", "install_demo", "force_create"}},
	"context_get":                {model: true},
	"web_save":                   {pos: []string{"vals", "specification"}, kw: []string{"next_id"}},
}

// json2Err is an error answer of JSON-2: every one has this body.
type json2Err struct {
	status  int
	name    string
	message string
}

func (e *json2Err) body() []byte {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // Python's json writes < and > as they are
	_ = enc.Encode(map[string]any{"name": e.name, "message": e.message, "arguments": []any{e.message}, "context": map[string]any{},
		"debug": "Traceback (most recent call last):\n  File \"/opt/odoo/odoo/http.py\", line 2576, in _serve_db\n    return service_model.retrying(self._serve_ir_http, env=self.env)\n" +
			e.name + ": " + e.message + "\n"})
	return bytes.TrimSpace(b.Bytes())
}

// json2Errorf is the error answer of JSON-2 for a fault of the fake's ORM
// (mapped as Odoo 19 answers the same exception) or one of its own.
func json2Fault(f *fault) *json2Err {
	switch f.code {
	case 2:
		if strings.HasPrefix(f.msg, "Record does not exist or has been deleted") {
			return &json2Err{404, "odoo.exceptions.MissingError", f.msg}
		}
		if strings.HasPrefix(f.msg, "The operation cannot be completed") {
			return &json2Err{422, "odoo.exceptions.ValidationError", f.msg}
		}
		return &json2Err{422, "odoo.exceptions.UserError", f.msg}
	case 3:
		return &json2Err{403, "odoo.exceptions.AccessDenied", f.msg}
	case 4:
		return &json2Err{403, "odoo.exceptions.AccessError", f.msg}
	}
	line := strings.TrimSpace(f.msg)
	if i := strings.LastIndexByte(line, '\n'); i >= 0 {
		line = line[i+1:]
	}
	class, msg, ok := strings.Cut(line, ": ")
	if !ok {
		class, msg = "Exception", line
	}
	if !strings.Contains(class, ".") {
		class = "builtins." + class
	}
	return &json2Err{500, class, msg}
}

// serveJSON2 serves POST /json/2/<model>/<method> (Odoo 19 and later; a
// 404 page before).
func (s *Server) serveJSON2(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	version := s.version
	s.mu.Unlock()
	if version < 19 {
		htmlPage(w, http.StatusNotFound, "<!doctype html>\n<html lang=en>\n<title>404 Not Found</title>\n<h1>Not Found</h1>\n<p>The requested URL was not found on the server.</p>\n")
		return
	}
	s.calls.Add(1)
	rest, _ := strings.CutPrefix(r.URL.Path, "/json/2/")
	model, method, ok := strings.Cut(rest, "/")
	if r.Method != http.MethodPost || !ok || model == "" || method == "" || strings.Contains(method, "/") {
		jsonError(w, &json2Err{404, "werkzeug.exceptions.NotFound", "Did you mean POST /json/2/<model>/<method>?"})
		return
	}
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		htmlPage(w, http.StatusUnsupportedMediaType, fmt.Sprintf("<!doctype html>\n<title>415 Unsupported Media Type</title>\n<p>Request inferred type is compatible with ['http'] but %s is type='json2'.\n\nPlease verify the Content-Type request header and try again.</p>\n", r.URL.Path))
		return
	}
	name := r.Header.Get("X-Odoo-Database")
	s.mu.Lock()
	if name == "" {
		s.listings.Add(1)
		if len(s.dbs) == 1 {
			for n := range s.dbs {
				name = n // monodb
			}
		}
	}
	known := s.dbs[name] != nil
	s.mu.Unlock()
	if !known {
		htmlPage(w, http.StatusNotFound, notFoundNoDB)
		return
	}
	scheme, key, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	if !strings.EqualFold(scheme, "bearer") || key == "" {
		jsonError(w, &json2Err{401, "werkzeug.exceptions.Unauthorized", "User not authenticated, use an API Key with a Bearer Authorization header."})
		return
	}
	var body map[string]any
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 8<<20))
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil || body == nil {
		jsonError(w, &json2Err{400, "werkzeug.exceptions.BadRequest", fmt.Sprintf("could not parse the body as json: %v", err)})
		return
	}
	args := fromJSON(body).(map[string]any)
	if s.stalled("object", "execute_kw", []any{nil, nil, nil, model, method}) {
		hangUp(w)
		return
	}
	out, status, lost := s.runJSON2(name, key, model, method, args)
	if lost {
		hangUp(w)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(out)
}

// runJSON2 runs one JSON-2 call under the server's lock, as one
// transaction.
func (s *Server) runJSON2(name, key, model, method string, body map[string]any) (out []byte, status int, lost bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dbs[name]
	uid := d.keyUser(key, s.now())
	if uid == 0 {
		return (&json2Err{401, "werkzeug.exceptions.Unauthorized", "Invalid apikey"}).body(), 401, false
	}
	call := model + "." + method
	if a, ok := s.j2.answers[call]; ok {
		return []byte(a.body), a.status, false
	}
	defer func() {
		if r := recover(); r != nil {
			e := &json2Err{500, "builtins.RuntimeError", fmt.Sprint(r)}
			out, status, lost = e.body(), e.status, false
		}
	}()
	v, e := s.callJSON2(d, uid, model, method, body)
	if n := s.lose[call]; n > 0 {
		s.lose[call] = n - 1
		lost = true
	}
	if e != nil {
		return e.body(), e.status, lost
	}
	out, err := toJSON(v)
	if err != nil {
		e := &json2Err{500, "builtins.TypeError", err.Error()}
		return e.body(), e.status, lost
	}
	return out, http.StatusOK, lost
}

// callJSON2 binds the named arguments as Python would, then runs the
// call on a copy of the database kept unless it fails.
func (s *Server) callJSON2(d *db, uid int64, model, method string, body map[string]any) (any, *json2Err) {
	if d.models[model] == nil {
		return nil, &json2Err{404, "werkzeug.exceptions.NotFound", fmt.Sprintf("the model %s does not exist", pyRepr(model))}
	}
	if strings.HasPrefix(method, "_") || method == "browse" {
		return nil, &json2Err{403, "odoo.exceptions.AccessError", fmt.Sprintf("Private methods (such as '%s.%s') cannot be called remotely.", model, method)}
	}
	sig, ok := pySignatures[method]
	if !ok {
		return nil, &json2Err{404, "werkzeug.exceptions.NotFound", fmt.Sprintf("The method '%s.%s' does not exist", model, method)}
	}
	args, kw, jerr := bindJSON2(model, method, sig, body)
	if jerr != nil {
		return nil, jerr
	}
	if method == "search_read" || method == "search" {
		s.recordRead(uid, model, args, kw)
	}
	if model == "res.users" && method == "context_get" {
		u := d.tables["res.users"][uid]
		return map[string]any{"lang": "en_US", "tz": u.str("tz"), "uid": uid}, nil
	}
	var v any
	var f *fault
	if isReadOnly(method) || journaled(model, method) {
		v, f = s.inPlace(d, uid, model, method, args, kw)
	} else {
		tx := d.clone(d.name)
		tx.uid = uid
		tx.now = s.now().UTC()
		v, f = tx.call(model, method, args, kw)
		tx.uid = 0
		if f == nil {
			s.dbs[d.name] = tx
		}
	}
	if f != nil {
		return nil, json2Fault(f)
	}
	if v == (none{}) {
		return nil, nil
	}
	if method == "create" {
		if id, ok := v.(int64); ok {
			v = []any{id} // JSON-2's create always answers a list
		}
	}
	return v, nil
}

// bindJSON2 binds a JSON-2 body's named arguments to the method's Python
// signature (the ids first unless the method is a model method, then the
// positional parameters in order, then keywords), as Odoo's JSON-2
// controller does; it takes what it binds out of body.
func bindJSON2(model, method string, sig pySignature, body map[string]any) ([]any, map[string]any, *json2Err) {
	ids, hasIDs := body["ids"]
	delete(body, "ids")
	if sig.model && hasIDs {
		if l, isList := ids.([]any); (isList && len(l) > 0) || isNonZeroInt(ids) {
			return nil, nil, &json2Err{422, "werkzeug.exceptions.UnprocessableEntity", fmt.Sprintf("cannot call %s.%s with ids", model, method)}
		}
	}
	var args []any
	if !sig.model {
		if !hasIDs {
			ids = []any{}
		}
		if _, isStr := ids.(string); isStr {
			ids = []any{} // Odoo browses a string as no record
		}
		args = append(args, ids)
	}
	kw := map[string]any{}
	if c, ok := body["context"]; ok {
		kw["context"] = c
		delete(body, "context")
	}
	for _, p := range sig.pos {
		v, ok := body[p]
		if !ok {
			break
		}
		args = append(args, v)
		delete(body, p)
	}
	for k, v := range body {
		if !sig.varkw && !slices.Contains(sig.kw, k) && !slices.Contains(sig.pos, k) {
			return nil, nil, &json2Err{422, "werkzeug.exceptions.UnprocessableEntity", fmt.Sprintf("got an unexpected keyword argument '%s'", k)}
		}
		if slices.Contains(sig.pos, k) { // a positional parameter after a missing one
			return nil, nil, &json2Err{422, "werkzeug.exceptions.UnprocessableEntity", fmt.Sprintf("missing a required argument before '%s'", k)}
		}
		kw[k] = v
	}
	return args, kw, nil
}

// recordRead keeps a search or search_read's domain, limit and fields in
// s.reads, as the XML-RPC side does, for tests that check what was read.
func (s *Server) recordRead(uid int64, model string, args []any, kw map[string]any) {
	domain, _ := argAt(args, 0).([]any)
	limit, _ := kw["limit"].(int64)
	var fields []string
	asked, _ := kw["fields"].([]any)
	for _, f := range asked {
		fields = append(fields, str(f))
	}
	s.reads = append(s.reads, Read{UID: uid, Model: model, Domain: domain, Limit: limit, Fields: fields,
		Names: kw["load"] == nil || kw["load"] == "_classic_read"})
}

// fromJSON converts a value decoded with UseNumber into the types the
// fake's ORM takes from XML-RPC: int64, float64 and nil for null.
func fromJSON(v any) any {
	switch x := v.(type) {
	case json.Number:
		if n, err := strconv.ParseInt(string(x), 10, 64); err == nil {
			return n
		}
		f, _ := strconv.ParseFloat(string(x), 64)
		return f
	case []any:
		for i, e := range x {
			x[i] = fromJSON(e)
		}
	case map[string]any:
		for k, e := range x {
			x[k] = fromJSON(e)
		}
	}
	return v
}

// toJSON writes v as Odoo's JSON-2 does (Python's json): a float always
// with a fraction or an exponent (125.0), keys sorted.
func toJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	if err := writeJSON(&b, v); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

func writeJSON(b *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Errorf("cannot encode %v", x)
		}
		s := strconv.FormatFloat(x, 'g', -1, 64)
		if !strings.ContainsAny(s, ".e") {
			s += ".0"
		}
		b.WriteString(s)
	case []int64:
		l := make([]any, len(x))
		for i, e := range x {
			l[i] = e
		}
		return writeJSON(b, l)
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteString(", ")
			}
			if err := writeJSON(b, e); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteString(", ")
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteString(": ")
			if err := writeJSON(b, x[k]); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case nil, bool, int, int64, string:
		out, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(out)
	default:
		return fmt.Errorf("object of type %T is not JSON serializable", v)
	}
	return nil
}

func jsonError(w http.ResponseWriter, e *json2Err) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(e.status)
	_, _ = w.Write(e.body())
}

func htmlPage(w http.ResponseWriter, status int, page string) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(page))
}

// hangUp closes the connection without an answer.
func hangUp(w http.ResponseWriter) {
	if hj, ok := w.(http.Hijacker); ok {
		if conn, _, err := hj.Hijack(); err == nil {
			conn.Close()
			return
		}
	}
	w.WriteHeader(http.StatusBadGateway)
}

// serveWeb serves the web client's JSON-RPC routes that make an API key
// (../shared/odoo18-19-api.md §3, "Getting an API key without the UI"):
// POST /web/session/authenticate and /web/dataset/call_kw/<model>/<method>
// for res.users.apikeys.description create and make_key, and
// res.users.identitycheck run_check. Other calls answer an error.
func (s *Server) serveWeb(w http.ResponseWriter, r *http.Request) {
	var req struct {
		ID     any            `json:"id"`
		Params map[string]any `json:"params"`
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.UseNumber()
	if err := dec.Decode(&req); err != nil {
		http.Error(w, "bad request", http.StatusBadRequest)
		return
	}
	params, _ := fromJSON(req.Params).(map[string]any)
	answer := func(result any, e *json2Err) {
		out := map[string]any{"jsonrpc": "2.0", "id": fromJSON(req.ID)}
		if e != nil {
			out["error"] = map[string]any{"code": 200, "message": "Odoo Server Error",
				"data": map[string]any{"name": e.name, "message": e.message, "arguments": []any{e.message}, "debug": "Traceback ..."}}
		} else {
			out["result"] = result
		}
		b, err := toJSON(out)
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.j2.web == nil {
		s.j2.web = map[string]*webSession{}
	}
	if r.URL.Path == "/web/session/authenticate" {
		d := s.dbs[str(params["db"])]
		if d == nil {
			answer(nil, &json2Err{200, "psycopg2.OperationalError", fmt.Sprintf("database %q does not exist", str(params["db"]))})
			return
		}
		for _, u := range d.tables["res.users"] {
			if u.str("login") == str(params["login"]) && u.boolean("active") && u.str("password") == str(params["password"]) && u.str("password") != "" {
				b := make([]byte, 20)
				_, _ = rand.Read(b)
				sid := hex.EncodeToString(b)
				s.j2.web[sid] = &webSession{db: d.name, uid: u.id(), wizards: map[int64]wizard{}}
				http.SetCookie(w, &http.Cookie{Name: "session_id", Value: sid, Path: "/", HttpOnly: true})
				answer(map[string]any{"uid": u.id(), "db": d.name}, nil)
				return
			}
		}
		answer(nil, &json2Err{200, "odoo.exceptions.AccessDenied", "Wrong login/password"})
		return
	}
	c, err := r.Cookie("session_id")
	ws := (*webSession)(nil)
	if err == nil {
		ws = s.j2.web[c.Value]
	}
	if ws == nil || s.dbs[ws.db] == nil {
		answer(nil, &json2Err{200, "odoo.http.SessionExpiredException", "Session expired"})
		return
	}
	answer(s.callKw(s.dbs[ws.db], ws, str(params["model"]), str(params["method"]), params))
}

// callKw serves the call_kw calls of the API key flow for the session's
// user.
func (s *Server) callKw(d *db, ws *webSession, model, method string, params map[string]any) (any, *json2Err) {
	args, _ := params["args"].([]any)
	kwargs, _ := params["kwargs"].(map[string]any)
	d.uid = ws.uid
	defer func() { d.uid = 0 }()
	first := func() int64 {
		ids, _ := idList(argAt(args, 0))
		if len(ids) == 1 {
			return ids[0]
		}
		return 0
	}
	now := s.now().UTC()
	switch model + "." + method {
	case "res.users.apikeys.description.create":
		vals, _ := argAt(args, 0).(map[string]any)
		days, err := strconv.Atoi(str(vals["duration"]))
		if err != nil || days < 0 {
			return nil, &json2Err{200, "odoo.exceptions.ValidationError", "Wrong value for res.users.apikeys.description.duration"}
		}
		maxDays := 1
		if d.hasGroup("base.group_user") {
			maxDays = 90 // base.group_user's api_key_duration
		}
		exp := ""
		if days > 0 {
			exp = now.AddDate(0, 0, days).Format("2006-01-02") + " 00:00:00"
		}
		switch {
		case d.hasGroup("base.group_system"):
		case days == 0:
			return nil, &json2Err{200, "odoo.exceptions.ValidationError", "The API key must have an expiration date"}
		case days > maxDays:
			return nil, &json2Err{200, "odoo.exceptions.ValidationError", fmt.Sprintf("You cannot exceed %d.0 days.", maxDays)}
		}
		ws.next++
		ws.wizards[ws.next] = wizard{name: str(vals["name"]), expires: exp}
		return ws.next, nil
	case "res.users.apikeys.description.make_key":
		id := first()
		if _, ok := ws.wizards[id]; !ok {
			return nil, &json2Err{200, "odoo.exceptions.MissingError", "Record does not exist or has been deleted."}
		}
		if now.Sub(ws.checked) < 10*time.Minute {
			return s.makeKey(d, ws, id), nil
		}
		ws.next++
		ws.wizards[ws.next] = wizard{check: id}
		return map[string]any{"type": "ir.actions.act_window", "res_model": "res.users.identitycheck", "res_id": ws.next, "target": "new"}, nil
	case "res.users.identitycheck.run_check":
		id := first()
		wz, ok := ws.wizards[id]
		if !ok || wz.check == 0 {
			return nil, &json2Err{200, "odoo.exceptions.MissingError", "Record does not exist or has been deleted."}
		}
		ctx, _ := kwargs["context"].(map[string]any)
		if u := d.tables["res.users"][ws.uid]; str(ctx["password"]) == "" || u.str("password") != str(ctx["password"]) {
			return nil, &json2Err{200, "odoo.exceptions.UserError", "Incorrect Password, try again or click on Forgot Password to reset your password."}
		}
		ws.checked = now
		delete(ws.wizards, id)
		return s.makeKey(d, ws, wz.check), nil
	}
	return nil, &json2Err{200, "odoo.exceptions.UserError", fmt.Sprintf("odootest: the web client's %s.%s is not served", model, method)}
}

// makeKey makes the key of description id and answers the action that
// shows it.
func (s *Server) makeKey(d *db, ws *webSession, id int64) any {
	wz := ws.wizards[id]
	delete(ws.wizards, id)
	k := d.addKey(ws.uid, wz.name, wz.expires)
	return map[string]any{"type": "ir.actions.act_window", "res_model": "res.users.apikeys.show", "target": "new",
		"context": map[string]any{"default_key": k}}
}

func isNonZeroInt(v any) bool {
	n, ok := v.(int64)
	return ok && n != 0
}
