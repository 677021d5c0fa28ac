package odoo

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"
)

// KeyDays is the lifetime, in days, of the API keys Setup makes when
// SetupConfig.KeyDays is zero: the longest Odoo 19 lets a user without
// Settings rights give its own key (base.group_user's "API Keys maximum
// duration days"; users in no group with a duration get 1 day). Only
// Settings users may have keys that never expire, and the connector's
// users must not be Settings users.
const KeyDays = 90

// APIKey is an API key Setup made for one of the connector's users.
type APIKey struct {
	// Login is its user's.
	Login string
	// Key is the key: 40 hex digits, the identity's Password.
	Key string
	// Expires is when Odoo stops taking it: midnight (the server's
	// calendar, UTC) of the day KeyDays after the day it was made.
	Expires time.Time
}

// NewAPIKey makes an API key for the user id (its login and password)
// valid for days days (1 to 365; a user without Settings rights may not
// exceed its groups' maximum, 90 for internal users), named name in the
// user's Preferences, and returns it. Odoo 19 makes the first key of a
// user only through its web client: the method is @check_identity, which
// refuses XML-RPC. NewAPIKey does what the web client does, over four
// JSON-RPC requests (not counted by Calls): logs in with a web session
// (/web/session/authenticate), creates the key's description
// (res.users.apikeys.description, name and duration), asks for the key
// (make_key), and confirms the user's password (res.users.identitycheck
// run_check), which answers the key. It needs Odoo 19 or later. The key
// is never logged; an error never holds it or the password.
func (a *Admin) NewAPIKey(ctx context.Context, id Identity, name string, days int) (APIKey, error) {
	if days < 1 || days > 365 {
		return APIKey{}, fmt.Errorf("odoo: an API key lasts 1 to 365 days, not %d", days)
	}
	w := &webClient{t: a.t, db: a.db, secrets: []string{id.Password}}
	if _, err := w.call(ctx, "/web/session/authenticate", map[string]any{"db": a.db, "login": id.Login, "password": id.Password}); err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: logging in to the web client: %w", id.Login, err)
	}
	if w.sid == "" {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: logging in to the web client: %w", id.Login, badAnswer("a session cookie", nil))
	}
	made := time.Now().UTC()
	v, err := w.kw(ctx, "res.users.apikeys.description", "create", []any{map[string]any{"name": name, "duration": fmt.Sprint(days)}}, nil)
	if err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: %w", id.Login, err)
	}
	desc, err := asID(v)
	if err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: res.users.apikeys.description.create: %w", id.Login, err)
	}
	v, err = w.kw(ctx, "res.users.apikeys.description", "make_key", []any{[]any{desc}}, nil)
	if err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: %w", id.Login, err)
	}
	if act, _ := v.(map[string]any); act["res_model"] == "res.users.identitycheck" {
		check, err := asID(act["res_id"])
		if err != nil {
			return APIKey{}, fmt.Errorf("odoo: API key for %s: make_key: %w", id.Login, err)
		}
		v, err = w.kw(ctx, "res.users.identitycheck", "run_check", []any{[]any{check}}, map[string]any{"context": map[string]any{"password": id.Password}})
		if err != nil {
			return APIKey{}, fmt.Errorf("odoo: API key for %s: confirming the password: %w", id.Login, err)
		}
	}
	act, _ := v.(map[string]any)
	actx, _ := act["context"].(map[string]any)
	key, _ := actx["default_key"].(string)
	if act["res_model"] != "res.users.apikeys.show" || key == "" {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: %w", id.Login, badAnswer("the action showing the key", v))
	}
	day := time.Date(made.Year(), made.Month(), made.Day(), 0, 0, 0, 0, time.UTC)
	return APIKey{Login: id.Login, Key: key, Expires: day.AddDate(0, 0, days)}, nil
}

// webClient makes the web client's JSON-RPC requests with one session.
type webClient struct {
	t       *transport
	db      string
	sid     string
	secrets []string
}

// kw calls model.method through /web/dataset/call_kw.
func (w *webClient) kw(ctx context.Context, model, method string, args []any, kw map[string]any) (any, error) {
	if kw == nil {
		kw = map[string]any{}
	}
	v, err := w.call(ctx, "/web/dataset/call_kw/"+model+"/"+method, map[string]any{"model": model, "method": method, "args": args, "kwargs": kw})
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", model, method, err)
	}
	return v, nil
}

// call posts a JSON-RPC request with params to path and returns its
// result; an error answer is a *Fault as json2Fault maps it (its
// traceback dropped).
func (w *webClient) call(ctx context.Context, path string, params map[string]any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, w.t.timeout)
	defer cancel()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.t.base+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if w.sid != "" {
		req.AddCookie(&http.Cookie{Name: "session_id", Value: w.sid})
	}
	hc := *w.t.hc
	hc.Jar = nil
	hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNetwork, w.redact(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: %s", ErrNetwork, w.redact(err.Error()))
	}
	for _, c := range resp.Cookies() {
		if c.Name == "session_id" && validSessionID(c.Value) {
			w.sid = c.Value
		}
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s: HTTP %d", ErrNetwork, path, resp.StatusCode)
	}
	var out struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Data json.RawMessage `json:"data"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("%w: %s: not JSON-RPC", ErrBadAnswer, path)
	}
	if out.Error != nil {
		f, _ := json2Fault(http.StatusUnprocessableEntity, "application/json", out.Error.Data)
		if f == nil {
			return nil, fmt.Errorf("%w: %s: an error without data", ErrBadAnswer, path)
		}
		f.Call, f.Status, f.Message = "web "+path, 0, w.redact(f.Message)
		return nil, f
	}
	if out.Result == nil {
		return nil, errors.Join(ErrBadAnswer, fmt.Errorf("%s: no result", path))
	}
	return decodeJSON(out.Result)
}

func (w *webClient) redact(s string) string {
	s = w.t.redact(s)
	for _, p := range w.secrets {
		if p != "" {
			s = strings.ReplaceAll(s, p, "***")
		}
	}
	return s
}
