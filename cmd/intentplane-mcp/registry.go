package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"time"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/resolve"
)

// jsonRegistry is a registry read from a JSON file at start:
//
//	{"northwind": ["DE89 3704 0044 0532 0130 00",
//	               {"id": "acme", "value": "…", "version": "3", "at": "2025-03-03T09:00:00Z",
//	                "attrs": {"vendor": "ACME Supplies", "trusted": true, "age_days": 600}}]}
//
// Values are normalized with the registry's normalizer when loaded; a
// record's value is what executes. It is immutable and safe for
// concurrent use.
type jsonRegistry struct {
	byOwner map[intent.Owner]map[string]resolve.Record
}

var _ resolve.Registry = (*jsonRegistry)(nil)

// Lookup implements resolve.Registry.
func (r *jsonRegistry) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	if err := ctx.Err(); err != nil {
		return resolve.Record{}, err
	}
	rec, ok := r.byOwner[owner][value]
	if !ok {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	return rec, nil
}

// loadRegistry reads a registry file; norm may be nil.
func loadRegistry(path string, norm contract.Normalizer) (*jsonRegistry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var raw map[string][]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%s: want an object of owner → array of values or records: %v", path, err)
	}
	r := &jsonRegistry{byOwner: map[intent.Owner]map[string]resolve.Record{}}
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
					return nil, fmt.Errorf("%s: %s[%d]: %v", path, owner, i, err)
				}
			} else {
				d := json.NewDecoder(bytes.NewReader(e))
				d.DisallowUnknownFields()
				d.UseNumber()
				if err := d.Decode(&rec); err != nil {
					return nil, fmt.Errorf("%s: %s[%d]: %v", path, owner, i, err)
				}
			}
			v := rec.Value
			if norm != nil {
				if v, err = norm(rec.Value); err != nil {
					return nil, fmt.Errorf("%s: %s[%d]: %v", path, owner, i, err)
				}
			}
			if v == "" {
				return nil, fmt.Errorf("%s: %s[%d]: empty value", path, owner, i)
			}
			if rec.ID == "" {
				rec.ID = fmt.Sprintf("%s[%d]", owner, i)
			}
			attrs, err := attrValues(rec.Attrs)
			if err != nil {
				return nil, fmt.Errorf("%s: %s[%d]: %v", path, owner, i, err)
			}
			if _, dup := m[v]; dup {
				return nil, fmt.Errorf("%s: %s[%d]: value %q listed twice", path, owner, i, v)
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
