package rpc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Supported are the Odoo major versions the connector speaks to. Their
// differences (fields, states, faults) are measured in
// ../shared/odoo17-api.md and ../shared/odoo18-19-api.md and live in the
// connector's dialect, never in a pack.
var Supported = []int{17, 18, 19}

// ErrUnsupportedVersion is returned, wrapped in a *VersionError, when the
// server runs an Odoo major version the connector does not speak.
var ErrUnsupportedVersion = errors.New("odoo: unsupported Odoo version")

// VersionError reports the version a server announced when the connector
// does not support it.
type VersionError struct {
	// Announced is the server's server_version as it gave it ("20.0").
	Announced string
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("odoo: the server runs Odoo %s; this connector supports Odoo 17.0, 18.0 and 19.0 (Community or Enterprise)", e.Announced)
}

func (e *VersionError) Unwrap() error { return ErrUnsupportedVersion }

// Version is the server's Odoo version as common.version (or, over
// JSON-2, GET /web/version) gives it.
type Version struct {
	// Major is the major version: 17, 18 or 19.
	Major int
	// Server is server_version as given ("18.0-20250506", "19.0").
	Server string
}

// Version returns the server's version, read at the first call that
// needs it and kept for the life of the Transport; a failure to read it
// is not kept.
func (t *Transport) Version(ctx context.Context) (Version, error) {
	t.vmu.Lock()
	defer t.vmu.Unlock()
	if t.ver.Major != 0 {
		return t.ver, nil
	}
	v, err := readVersion(ctx, t)
	if err != nil {
		return Version{}, err
	}
	t.ver = v
	t.major.Store(int64(v.Major))
	return v, nil
}

// readVersion asks the server its version, without login, and refuses
// one the connector does not support. With the transport set to JSON-2 it
// asks GET /web/version, which Odoo 19 answers over HTTP and JSON, so that
// a server whose XML-RPC is off (or gone: Odoo announces its removal for
// Odoo 22) is still read; a server without it (Odoo 17 and 18 answer 404)
// is asked over XML-RPC (common.version), and the first Session call then
// says that it has no JSON-2 (ErrNoJSON2). Otherwise it asks common.version, and, with the
// transport automatic, GET /web/version when XML-RPC fails, so that an
// automatic connector also finds a server that speaks JSON-2 only.
func readVersion(ctx context.Context, t *Transport) (Version, error) {
	if t.mode == TransportJSON2 {
		v, err := t.webVersion(ctx)
		if err == nil {
			return parseVersion(v)
		}
		if !errors.Is(err, errNoWebVersion) {
			return Version{}, fmt.Errorf("odoo: reading the server's version: %w", err)
		}
	}
	v, err := t.Call(ctx, "common", "version", "version")
	if err != nil && t.mode == TransportAuto && ctx.Err() == nil {
		if w, werr := t.webVersion(ctx); werr == nil {
			return parseVersion(w)
		}
	}
	if err != nil {
		return Version{}, fmt.Errorf("odoo: reading the server's version: %w", err)
	}
	return parseVersion(v)
}

// errNoWebVersion is returned by webVersion for a server without GET
// /web/version (HTTP 404: Odoo 17 and 18).
var errNoWebVersion = errors.New("odoo: the server has no /web/version")

// webVersion asks GET /web/version (Odoo 19 on; one call, counted by
// Calls), naming the database in the X-Odoo-Database header so that Odoo
// does not list its databases, and returns its answer as common.version
// gives it: {"version": "19.0", "version_info": [19, 0, 0, "final", 0,
// ""]} becomes server_version and server_version_info.
func (t *Transport) webVersion(ctx context.Context) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, t.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, t.baseURL+"/web/version", nil)
	if err != nil {
		return nil, err
	}
	t.dbHeader(req)
	start := time.Now()
	t.ncalls.Add(1)
	resp, err := t.hc.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("%w: GET /web/version: %s", ErrNetwork, t.redact(err.Error()))
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	t.log.DebugContext(ctx, "odoo call", "service", "web", "call", "version", "duration", time.Since(start), "status", resp.StatusCode)
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: GET /web/version: reading the answer: %s", ErrNetwork, t.redact(err.Error()))
	case resp.StatusCode == http.StatusNotFound:
		return nil, errNoWebVersion
	case resp.StatusCode != http.StatusOK:
		return nil, fmt.Errorf("%w: GET /web/version: HTTP %d", ErrNetwork, resp.StatusCode)
	case len(raw) > maxAnswer:
		return nil, fmt.Errorf("%w: GET /web/version: answer larger than %d bytes", ErrBadAnswer, maxAnswer)
	}
	v, err := decodeJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("GET /web/version: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("GET /web/version: %w", BadAnswer("a JSON object", v))
	}
	return map[string]any{"server_version": m["version"], "server_version_info": m["version_info"]}, nil
}

// parseVersion reads common.version's answer: server_version_info's
// first element is the major version (an int; "saas~18" on Odoo's
// online builds, whose major is the number after "~").
func parseVersion(v any) (Version, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Version{}, fmt.Errorf("odoo: reading the server's version: %w", BadAnswer("a struct", v))
	}
	server, _ := m["server_version"].(string)
	info, _ := m["server_version_info"].([]any)
	if len(info) == 0 {
		return Version{}, fmt.Errorf("odoo: reading the server's version: %w", BadAnswer("server_version_info", m["server_version_info"]))
	}
	major := int64(-1)
	switch x := info[0].(type) {
	case int64:
		major = x
	case string:
		_, n, _ := strings.Cut(x, "~")
		if n, err := strconv.ParseInt(n, 10, 64); err == nil {
			major = n
		}
	}
	if server == "" {
		server = fmt.Sprint(info[0])
	}
	for _, s := range Supported {
		if int64(s) == major {
			return Version{Major: s, Server: server}, nil
		}
	}
	return Version{}, &VersionError{Announced: server}
}
