package rpc

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Transports are the values of Options.Mode (odoo.Config.Transport).
const (
	// TransportAuto is JSON-2 on Odoo 19 and later, XML-RPC on 17 and 18.
	TransportAuto = ""
	// TransportXMLRPC is /xmlrpc/2 on every version. Odoo 19 logs a
	// deprecation warning for each such call and announces its removal
	// for Odoo 22.
	TransportXMLRPC = "xmlrpc"
	// TransportJSON2 is /json/2 (Odoo 19 and later): the identities'
	// passwords must be API keys. It is refused at Login on 17 and 18.
	TransportJSON2 = "json2"
)

// CheckTransport returns an error for a mode that is none of the
// Transport values; field names the setting in the message
// ("Config.Transport").
func CheckTransport(field, mode string) error {
	switch mode {
	case TransportAuto, TransportXMLRPC, TransportJSON2:
		return nil
	}
	return fmt.Errorf("odoo: %s %q is not a transport: \"\" (JSON-2 on Odoo 19 and later, else XML-RPC), %q or %q", field, mode, TransportXMLRPC, TransportJSON2)
}

// ErrNoJSON2 is returned by every Session call when the mode is
// TransportJSON2 and the server runs Odoo 17 or 18, which have no JSON-2
// API.
var ErrNoJSON2 = errors.New("odoo: the server has no JSON-2 API")

// json2 reports whether the Transport's calls go over JSON-2: its mode,
// and the server's version, read at the first call that needs it (also
// for XML-RPC: it chooses how calls name their database, see dbHeader).
func (t *Transport) json2(ctx context.Context) (bool, error) {
	v, err := t.Version(ctx)
	if err != nil {
		return false, err
	}
	switch {
	case t.mode == TransportXMLRPC:
		return false, nil
	case v.Major >= 19:
		return true, nil
	case t.mode == TransportJSON2:
		return false, fmt.Errorf("%w: the transport is set to %q but the server runs Odoo %s, whose external API is XML-RPC only (JSON-2 came with Odoo 19): set the transport to %q or leave it empty (automatic)",
			ErrNoJSON2, TransportJSON2, v.Server, TransportXMLRPC)
	}
	return false, nil
}

// signature is how JSON-2 names the positional arguments of a method
// the connector calls with XML-RPC's execute_kw: JSON-2 takes named
// arguments only, bound to the Python method's signature.
type signature struct {
	// ids: the first positional argument is the records' ids (a method
	// on records); otherwise the method is an @api.model one, and JSON-2
	// refuses ids for it (422).
	ids bool
	// params names the further positional parameters, in order, as in
	// Odoo 19's source.
	params []string
}

// signatures are those of every method the connector calls, and only
// those (a test walks every call in the package's source and checks
// both). A method not here is refused before anything is sent.
var signatures = map[string]signature{
	// odoo/orm/models.py
	"search_read": {params: []string{"domain", "fields", "offset", "limit", "order"}},
	"search":      {params: []string{"domain", "offset", "limit", "order"}},
	"read":        {ids: true, params: []string{"fields", "load"}},
	"create":      {params: []string{"vals_list"}},
	"write":       {ids: true, params: []string{"vals"}},
	"unlink":      {ids: true},
	// base: res.users, ir.module.module
	"context_get":              {},
	"button_immediate_install": {ids: true},
	// mail.thread; its parameters are keyword-only.
	"message_post": {ids: true},
	// account
	"action_post":                {ids: true},
	"action_cancel":              {ids: true},
	"button_cancel":              {ids: true},
	"button_draft":               {ids: true},
	"action_create_payments":     {ids: true},
	"js_assign_outstanding_line": {ids: true, params: []string{"line_id"}},
	// web (odoo/addons/web/models/models.py): create (no ids) or write,
	// then web_read of the specification
	"web_save": {ids: true, params: []string{"vals", "specification", "next_id"}},
	// account.chart.template.try_loading is not @api.model: it is called
	// with no ids.
	"try_loading": {ids: true, params: []string{"template_code", "company", "install_demo", "force_create"}},
}

// errUnknownMethod is returned for a method that is not in signatures:
// a connector bug, found by the tests, never sent to Odoo.
var errUnknownMethod = errors.New("odoo: no JSON-2 signature for the method")

// named translates an execute_kw call (positional args, keyword kw) into
// the body of a JSON-2 call: the ids and each positional argument under
// its parameter's name, with kw's entries. one reports a create of one
// record (a dict, not a list): JSON-2 answers a list of one id, where
// XML-RPC answers the id.
func named(method string, args []any, kw map[string]any) (body map[string]any, one bool, err error) {
	sig, ok := signatures[method]
	if !ok {
		return nil, false, fmt.Errorf("%w %s: add it to signatures in odoo/internal/rpc/json2.go", errUnknownMethod, method)
	}
	body = make(map[string]any, len(args)+len(kw))
	for k, v := range kw {
		body[k] = v
	}
	names := sig.params
	if sig.ids {
		names = append([]string{"ids"}, names...)
	}
	if len(args) > len(names) {
		return nil, false, fmt.Errorf("%w: %s takes %d positional arguments, called with %d", errUnknownMethod, method, len(names), len(args))
	}
	for i, v := range args {
		if _, dup := body[names[i]]; dup {
			return nil, false, fmt.Errorf("%w: %s: argument %s given twice", errUnknownMethod, method, names[i])
		}
		body[names[i]] = v
	}
	if method == "create" {
		_, one = body["vals_list"].(map[string]any)
	}
	return body, one, nil
}

// callJSON2 calls model.method over JSON-2 with the API key key, the
// arguments translated by named, and decodes the answer into the values
// XML-RPC gives (see decodeJSON). A method returning None answers nil.
// An error answer is a *Fault (see json2Fault); its traceback (debug)
// is logged at debug level only.
func (t *Transport) callJSON2(ctx context.Context, key, model, method string, args []any, kw map[string]any) (any, error) {
	what := model + "." + method
	body, one, err := named(method, args, kw)
	if err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	raw, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("odoo: json2 %s: encoding the call: %w", what, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.baseURL+"/json/2/"+url.PathEscape(model)+"/"+url.PathEscape(method), bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("odoo: json2 %s: %w", what, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "bearer "+key)
	t.dbHeader(req)
	start := time.Now()
	t.ncalls.Add(1)
	resp, err := t.hc.Do(req)
	if err != nil {
		if cerr := ctx.Err(); cerr != nil && errors.Is(err, cerr) {
			t.log.DebugContext(ctx, "odoo call", "service", "json2", "call", what, "err", "timeout or cancelled")
		}
		var oe *net.OpError
		notSent := errors.As(err, &oe) && oe.Op == "dial"
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if notSent {
			return nil, fmt.Errorf("%w: %w: json2 %s: %s", ErrNetwork, ErrNotSent, what, t.redact(err.Error()))
		}
		return nil, fmt.Errorf("%w: json2 %s: %s", ErrNetwork, what, t.redact(err.Error()))
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return nil, fmt.Errorf("%w: json2 %s: reading the answer: %s", ErrNetwork, what, t.redact(err.Error()))
	}
	if len(out) > maxAnswer {
		return nil, fmt.Errorf("%w: json2 %s: answer larger than %d bytes", ErrBadAnswer, what, maxAnswer)
	}
	if resp.StatusCode != http.StatusOK {
		f, debug := json2Fault(resp.StatusCode, resp.Header.Get("Content-Type"), out)
		if f == nil {
			return nil, fmt.Errorf("%w: json2 %s: HTTP %d", ErrNetwork, what, resp.StatusCode)
		}
		f.Call = "json2 " + what
		f.Message = t.redact(f.Message)
		t.log.DebugContext(ctx, "odoo call", "service", "json2", "call", what, "duration", time.Since(start),
			"status", resp.StatusCode, "error", f.Name, "debug", t.redact(debug))
		return nil, f
	}
	v, err := decodeJSON(out)
	if err != nil {
		return nil, fmt.Errorf("json2 %s: %w", what, err)
	}
	if one {
		if l, ok := v.([]any); ok && len(l) == 1 {
			v = l[0]
		} else {
			return nil, fmt.Errorf("json2 %s: %w", what, BadAnswer("a list of one id", v))
		}
	}
	t.log.DebugContext(ctx, "odoo call", "service", "json2", "call", what, "duration", time.Since(start))
	return v, nil
}

// decodeJSON decodes a JSON-2 answer into the Go types XML-RPC's decoder
// gives, so that Record reads both alike: an integer becomes int64
// (an error beyond int64: never a rounded id or amount), a number with a
// fraction or an exponent float64 (Python writes every float so, 125.0),
// and null nil (a method returning None). Trailing data is an error.
func decodeJSON(raw []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("%w: not JSON: %v", ErrBadAnswer, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, fmt.Errorf("%w: data after the JSON value", ErrBadAnswer)
	}
	return numbers(v)
}

// numbers replaces every json.Number in v (decoded with UseNumber).
func numbers(v any) (any, error) {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if strings.ContainsAny(s, ".eE") {
			f, err := strconv.ParseFloat(s, 64)
			if err != nil {
				return nil, fmt.Errorf("%w: number %s: %v", ErrBadAnswer, s, err)
			}
			return f, nil
		}
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: integer %s beyond 64 bits", ErrBadAnswer, s)
		}
		return n, nil
	case []any:
		for i, e := range x {
			var err error
			if x[i], err = numbers(e); err != nil {
				return nil, err
			}
		}
	case map[string]any:
		for k, e := range x {
			var err error
			if x[k], err = numbers(e); err != nil {
				return nil, err
			}
		}
	}
	return v, nil
}

// json2Error is the body of every JSON-2 error answer. Debug, the Python
// traceback (1 to 6 KB, with the server's paths), is never shown.
type json2Error struct {
	Name    string `json:"name"`
	Message string `json:"message"`
	Debug   string `json:"debug"`
}

// json2Fault maps a JSON-2 error answer (an HTTP status other than 200)
// onto the *Fault an XML-RPC call failing alike gives, so that callers
// branch on both transports the same way (../shared/odoo18-19-api.md §3):
//
//   - 422 UserError, ValidationError and other odoo.exceptions: fault 2
//     (ErrUser); 404 MissingError: fault 2 and ErrMissing, as is 404
//     NotFound for an unknown model ("Object … doesn't exist" on XML-RPC).
//   - 403 AccessError: fault 4 (ErrAccess); AccessDenied: fault 3.
//   - 401 (Invalid apikey, no key): fault 3, ErrAccessDenied and
//     ErrKeyRefused.
//   - 500 TypeError, ValueError, …, 404 NotFound for an unknown method,
//     422 UnprocessableEntity (ids for an @api.model method, arguments
//     that do not bind), 400 BadRequest: fault 1 (ErrServer), the
//     message prefixed with the exception's class as a traceback's last
//     line is.
//   - 404 or 415 in HTML (no such database, no JSON-2 route: Odoo 18 or
//     older): fault 1 naming that; nothing ran.
//
// Any other answer that is not a JSON error (a proxy's 502) gives nil:
// the caller reports ErrNetwork, as the call may have run. debug is the
// traceback, for a debug log.
func json2Fault(status int, contentType string, body []byte) (f *Fault, debug string) {
	var e json2Error
	if err := json.Unmarshal(body, &e); err != nil || e.Name == "" {
		switch {
		case status == http.StatusNotFound && bytes.Contains(body, []byte("No database is selected")):
			return &Fault{Code: 1, Status: status, Message: "HTTP 404: no such database on the server (Odoo: \"No database is selected and the requested URL was not found\")"}, ""
		case status == http.StatusNotFound || status == http.StatusUnsupportedMediaType:
			return &Fault{Code: 1, Status: status, Message: fmt.Sprintf("HTTP %d (%s): the server has no JSON-2 route here; it is not Odoo 19 or later, or a proxy hides /json/2", status, contentType)}, ""
		}
		return nil, ""
	}
	f = &Fault{Status: status, Name: e.Name, Message: e.Message}
	class := e.Name[strings.LastIndexByte(e.Name, '.')+1:]
	switch {
	case status == http.StatusUnauthorized:
		f.Code = 3
	case e.Name == "odoo.exceptions.AccessDenied":
		f.Code = 3
	case e.Name == "odoo.exceptions.AccessError":
		f.Code = 4
	case e.Name == "werkzeug.exceptions.NotFound" && strings.HasPrefix(e.Message, "the model "):
		f.Code = 2
	case strings.HasPrefix(e.Name, "odoo.exceptions."):
		f.Code = 2
	default:
		f.Code = 1
		f.Message = class + ": " + e.Message
	}
	return f, e.Debug
}
