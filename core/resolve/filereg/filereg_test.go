package filereg_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/core/resolve/filereg"
)

const doc = `{
  "northwind": [
    "DE89 3704 0044 0532 0130 00",
    {"id": "acme", "value": "gb29 nwbk 6016 1331 9268 19", "version": "3", "at": "2025-03-03T10:00:00+01:00",
     "attrs": {"vendor": "ACME Supplies", "trusted": true, "age_days": 600}}
  ],
  "globex": ["FR14 2004 1010 0505 0001 3M02 606"]
}`

func TestLookup(t *testing.T) {
	t.Parallel()
	r, err := filereg.Read([]byte(doc), normalize.IBAN)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name  string
		owner intent.Owner
		value string
		want  resolve.Record // zero: no match
	}{
		{"plain value, id from its place", "northwind", "DE89370400440532013000", resolve.Record{ID: "northwind[0]", Value: "DE89370400440532013000"}},
		{"record with attributes", "northwind", "GB29NWBK60161331926819", resolve.Record{
			ID: "acme", Value: "GB29NWBK60161331926819", Version: "3", At: time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC),
			Attrs: map[string]intent.Value{"vendor": intent.Str("ACME Supplies"), "trusted": intent.Bool(true), "age_days": intent.Int(600)},
		}},
		{"another owner's value", "globex", "DE89370400440532013000", resolve.Record{}},
		{"an owner sees its own", "globex", "FR1420041010050500013M02606", resolve.Record{ID: "globex[0]", Value: "FR1420041010050500013M02606"}},
		{"unknown owner", "initech", "DE89370400440532013000", resolve.Record{}},
		{"looked up as typed, not normalized", "northwind", "DE89 3704 0044 0532 0130 00", resolve.Record{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := r.Lookup(ctx, tc.owner, tc.value)
			if tc.want.ID == "" {
				if !errors.Is(err, resolve.ErrNoMatch) {
					t.Fatalf("Lookup = %+v, %v; want ErrNoMatch", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Lookup (-want, +got):\n%s", diff)
			}
		})
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := r.Lookup(cctx, "northwind", "DE89370400440532013000"); !errors.Is(err, context.Canceled) {
		t.Errorf("Lookup with a cancelled context: %v", err)
	}
}

func TestReadWithoutNormalizer(t *testing.T) {
	t.Parallel()
	r, err := filereg.Read([]byte(`{"emma": ["Bob@Example.com"]}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lookup(context.Background(), "emma", "Bob@Example.com"); err != nil {
		t.Errorf("a value read without normalizer is not found as written: %v", err)
	}
}

func TestReadRefuses(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, doc, want string
		raw             bool // read without normalizer
	}{
		{"not an object", `["DE89370400440532013000"]`, "want an object of owner", false},
		{"not JSON", `{"northwind": [`, "want an object of owner", false},
		{"data after the object", `{} {}`, "data after the object", false},
		{"unknown record field", `{"northwind": [{"value": "DE89370400440532013000", "iban": "x"}]}`, "northwind[0]", false},
		{"value the normalizer refuses", `{"northwind": ["DE89370400440532013001"]}`, "northwind[0]", false},
		{"empty value", `{"northwind": [{"id": "x"}]}`, "northwind[0]: empty value", true},
		{"fractional attribute", `{"northwind": [{"value": "DE89370400440532013000", "attrs": {"age": 1.5}}]}`, `attribute "age": only integers`, false},
		{"object attribute", `{"northwind": [{"value": "DE89370400440532013000", "attrs": {"bank": {}}}]}`, `attribute "bank": only strings, booleans and integers`, false},
		{"value listed twice", `{"northwind": ["DE89370400440532013000", "de89 3704 0044 0532 0130 00"]}`, `northwind[1]: value "DE89370400440532013000" listed twice`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			norm := normalize.IBAN
			if tc.raw {
				norm = nil
			}
			_, err := filereg.Read([]byte(tc.doc), norm)
			if !errors.Is(err, filereg.ErrMalformed) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Read = %v; want ErrMalformed containing %q", err, tc.want)
			}
		})
	}
	if _, err := filereg.Read([]byte(`{"northwind": ["DE89370400440532013001"]}`), normalize.IBAN); !errors.Is(err, normalize.ErrInvalid) {
		t.Errorf("a refused value's error does not wrap the normalizer's: %v", err)
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "payees.json")
	if err := os.WriteFile(path, []byte(doc), 0o600); err != nil {
		t.Fatal(err)
	}
	r, err := filereg.Load(path, normalize.IBAN)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Lookup(context.Background(), "northwind", "GB29NWBK60161331926819"); err != nil {
		t.Error(err)
	}
	if err := os.WriteFile(path, []byte(`{"northwind": [""]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := filereg.Load(path, nil); err == nil || !strings.HasPrefix(err.Error(), path+": ") {
		t.Errorf("Load of a bad file = %v; want an error naming it", err)
	}
	if _, err := filereg.Load(filepath.Join(dir, "missing.json"), nil); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load of a missing file = %v", err)
	}
}

func TestHas(t *testing.T) {
	t.Parallel()
	r, err := filereg.Read([]byte(`{"northwind": ["DE89 3704 0044 0532 0130 00"], "empty": []}`), normalize.IBAN)
	if err != nil {
		t.Fatal(err)
	}
	for owner, want := range map[intent.Owner]bool{"northwind": true, "empty": false, "globex": false} {
		if got := r.Has(owner); got != want {
			t.Errorf("Has(%q) = %v, want %v", owner, got, want)
		}
	}
}
