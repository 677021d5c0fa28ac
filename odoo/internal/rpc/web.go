package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
)

// Web makes the web client's JSON-RPC requests (/web/...) with one
// browser session, as Odoo's own web client does: for what Odoo serves
// its web client only, such as making an API key. Its requests are not
// counted by Calls. It is not safe for concurrent use.
type Web struct {
	t       *Transport
	sid     string
	secrets []string
}

// Web returns a Web over t's server, with no session yet (the first
// Call to /web/session/authenticate gives it one); secrets are removed
// from its messages with t's own.
func (t *Transport) Web(secrets ...string) *Web { return &Web{t: t, secrets: secrets} }

// LoggedIn reports whether an answer gave the Web a session.
func (w *Web) LoggedIn() bool { return w.sid != "" }

// CallKw calls model.method through /web/dataset/call_kw.
func (w *Web) CallKw(ctx context.Context, model, method string, args []any, kw map[string]any) (any, error) {
	if kw == nil {
		kw = map[string]any{}
	}
	v, err := w.Call(ctx, "/web/dataset/call_kw/"+model+"/"+method, map[string]any{"model": model, "method": method, "args": args, "kwargs": kw})
	if err != nil {
		return nil, fmt.Errorf("%s.%s: %w", model, method, err)
	}
	return v, nil
}

// Call posts a JSON-RPC request with params to path and returns its
// result; an error answer is a *Fault as json2Fault maps it (its
// traceback dropped).
func (w *Web) Call(ctx context.Context, path string, params map[string]any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, w.t.timeout)
	defer cancel()
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "method": "call", "id": 1, "params": params})
	if err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.t.baseURL+path, bytes.NewReader(body))
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

func (w *Web) redact(s string) string {
	s = w.t.redact(s)
	for _, p := range w.secrets {
		if p != "" {
			s = strings.ReplaceAll(s, p, "***")
		}
	}
	return s
}
