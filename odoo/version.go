package odoo

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
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

// Version is the server's Odoo version as common.version gives it.
type Version struct {
	// Major is the major version: 17, 18 or 19.
	Major int
	// Server is server_version as given ("18.0-20250506", "19.0").
	Server string
}

// version returns the server's version, read at the first call that
// needs it and kept for the life of the transport; a failure to read it
// is not kept.
func (t *transport) version(ctx context.Context) (Version, error) {
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

// readVersion asks the server its version (common.version, no login)
// and refuses one the connector does not support.
func readVersion(ctx context.Context, t *transport) (Version, error) {
	v, err := t.call(ctx, "common", "version", "version")
	if err != nil {
		return Version{}, fmt.Errorf("odoo: reading the server's version: %w", err)
	}
	return parseVersion(v)
}

// parseVersion reads common.version's answer: server_version_info's
// first element is the major version (an int; "saas~18" on Odoo's
// online builds, whose major is the number after "~").
func parseVersion(v any) (Version, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Version{}, fmt.Errorf("odoo: reading the server's version: %w", badAnswer("a struct", v))
	}
	server, _ := m["server_version"].(string)
	info, _ := m["server_version_info"].([]any)
	if len(info) == 0 {
		return Version{}, fmt.Errorf("odoo: reading the server's version: %w", badAnswer("server_version_info", m["server_version_info"]))
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
