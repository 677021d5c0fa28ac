// Package filereg is a trusted source read from a JSON file: for each owner,
// the values (IBANs, e-mail addresses, identifiers) on file, each possibly a
// record with an id, a version, a time and attributes. It implements
// resolve.Registry for a front door's configuration (intentplane-mcp's
// [registries]). It is read once; a change to the file needs a restart.
//
// It imports only the standard library and core/; it must never import a
// pack, a connector or a front door.
package filereg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/resolve"
)

// ErrMalformed is wrapped by the errors of Read and Load for a document
// that is not a valid registry.
var ErrMalformed = errors.New("filereg: malformed registry")

// Registry is a trusted source read from a JSON document at start, whose
// top-level object maps each owner to the values or records on file:
//
//	{"northwind": ["DE89 3704 0044 0532 0130 00",
//	               {"id": "acme", "value": "…", "version": "3", "at": "2025-03-03T09:00:00Z",
//	                "attrs": {"vendor": "ACME Supplies", "trusted": true, "age_days": 600}}]}
//
// A value alone is a record whose ID is "owner[index]". A record has a
// value (required), and optionally an id, a version, a time ("at", RFC 3339,
// kept in UTC) and attributes (strings, booleans and integers only), which
// resolve returns as facts. Values are normalized with the registry's
// normalizer when read; a record's value is what executes. A Registry is
// immutable and safe for concurrent use.
type Registry struct {
	byOwner map[intent.Owner]map[string]resolve.Record
}

var _ resolve.Registry = (*Registry)(nil)

// Lookup implements resolve.Registry: it returns owner's record whose
// value (normalized) is value, or resolve.ErrNoMatch; owners never see each
// other's records.
func (r *Registry) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	if err := ctx.Err(); err != nil {
		return resolve.Record{}, err
	}
	rec, ok := r.byOwner[owner][value]
	if !ok {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	return rec, nil
}

// Load reads the registry file at path (see Read); errors name the file.
func Load(path string, norm contract.Normalizer) (*Registry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	r, err := Read(b, norm)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return r, nil
}

// Read parses a registry document, normalizing each value with norm (nil
// means values are kept as written). It returns an error wrapping
// ErrMalformed, naming the entry ("northwind[2]"), for a document that is
// not an object of owner → array of values or records, an unknown record
// field, a value norm refuses or that is empty, an attribute that is not a
// string, boolean or integer, and a value listed twice for one owner.
func Read(doc []byte, norm contract.Normalizer) (*Registry, error) {
	var raw map[string][]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: want an object of owner → array of values or records: %v", ErrMalformed, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%w: data after the object", ErrMalformed)
	}
	r := &Registry{byOwner: map[intent.Owner]map[string]resolve.Record{}}
	for owner, entries := range raw {
		m := map[string]resolve.Record{}
		for i, e := range entries {
			var rec struct {
				ID      string         `json:"id"`
				Value   string         `json:"value"`
				Version string         `json:"version"`
				At      time.Time      `json:"at"`
				Attrs   map[string]any `json:"attrs"`
			}
			if len(e) > 0 && e[0] == '"' {
				if err := json.Unmarshal(e, &rec.Value); err != nil {
					return nil, fmt.Errorf("%w: %s[%d]: %v", ErrMalformed, owner, i, err)
				}
			} else {
				d := json.NewDecoder(bytes.NewReader(e))
				d.DisallowUnknownFields()
				d.UseNumber()
				if err := d.Decode(&rec); err != nil {
					return nil, fmt.Errorf("%w: %s[%d]: %v", ErrMalformed, owner, i, err)
				}
			}
			v := rec.Value
			if norm != nil {
				var err error
				if v, err = norm(rec.Value); err != nil {
					return nil, fmt.Errorf("%w: %s[%d]: %w", ErrMalformed, owner, i, err)
				}
			}
			if v == "" {
				return nil, fmt.Errorf("%w: %s[%d]: empty value", ErrMalformed, owner, i)
			}
			if rec.ID == "" {
				rec.ID = fmt.Sprintf("%s[%d]", owner, i)
			}
			attrs, err := attrValues(rec.Attrs)
			if err != nil {
				return nil, fmt.Errorf("%w: %s[%d]: %v", ErrMalformed, owner, i, err)
			}
			if _, dup := m[v]; dup {
				return nil, fmt.Errorf("%w: %s[%d]: value %q listed twice", ErrMalformed, owner, i, v)
			}
			m[v] = resolve.Record{ID: rec.ID, Value: v, Version: rec.Version, At: rec.At.UTC(), Attrs: attrs}
		}
		r.byOwner[intent.Owner(owner)] = m
	}
	return r, nil
}

// attrValues converts record attributes: strings, booleans and integers.
func attrValues(m map[string]any) (map[string]intent.Value, error) {
	if len(m) == 0 {
		return nil, nil
	}
	out := make(map[string]intent.Value, len(m))
	for k, v := range m {
		switch x := v.(type) {
		case string:
			out[k] = intent.Str(x)
		case bool:
			out[k] = intent.Bool(x)
		case json.Number:
			n, err := x.Int64()
			if err != nil {
				return nil, fmt.Errorf("attribute %q: only integers are allowed", k)
			}
			out[k] = intent.Int(n)
		default:
			return nil, fmt.Errorf("attribute %q: only strings, booleans and integers are allowed", k)
		}
	}
	return out, nil
}

// Has reports whether the registry holds at least one record for owner. A
// front door warns at start when the session's owner has none: every
// lookup for that owner would then answer resolve.ErrNoMatch.
func (r *Registry) Has(owner intent.Owner) bool { return len(r.byOwner[owner]) > 0 }
