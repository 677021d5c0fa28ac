package resolve_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/resolve"
)

func squash(s string) (string, error) {
	if strings.ContainsAny(s, "!") {
		return "", errors.New("no exclamation marks")
	}
	return strings.ToUpper(strings.ReplaceAll(s, " ", "")), nil
}

// beneficiaries is a registry of two owners; it must never mix them.
var at = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

var beneficiaries = resolve.RegistryFunc(func(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
	db := map[intent.Owner]map[string]resolve.Record{
		"emma": {"GB29": {ID: "b-1", Value: "GB29", Version: "3", At: at, Attrs: map[string]intent.Value{"trusted": intent.Bool(true)}}},
		"bob":  {"MAL1": {ID: "b-9", Value: "MAL1"}},
	}
	if r, ok := db[owner][v]; ok {
		return r, nil
	}
	return resolve.Record{}, resolve.ErrNoMatch
})

var broken = resolve.RegistryFunc(func(context.Context, intent.Owner, string) (resolve.Record, error) {
	return resolve.Record{}, errors.New("connection refused to 10.0.0.7:8069 (secret detail)")
})

func contractFor(t *testing.T, sources ...contract.Source) *contract.Contract {
	t.Helper()
	c, err := contract.New(contract.Contract{Action: "bank.pay", Params: []contract.Parameter{
		{Name: "to", Type: contract.String(0), Required: true, Critical: true, Normalizer: squash, Sources: sources},
		{Name: "memo", Type: contract.String(0)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestResolve(t *testing.T) {
	t.Parallel()
	both := []contract.Source{contract.FromMandate("payees"), contract.FromRegistry("beneficiaries")}
	tests := []struct {
		name    string
		sources []contract.Source
		regs    map[string]resolve.Registry
		in      resolve.Input
		want    []intent.Resolved
		wantErr error
	}{
		{
			name: "mandate claim, agent spelling normalized", sources: both,
			in:   resolve.Input{Owner: "emma", MandateID: "m-1", Claims: map[string][]string{"payees": {"ch 93"}}, Args: intent.Args{"to": intent.Str("Ch93")}},
			want: []intent.Resolved{{Param: "to", Sent: "Ch93", Value: "CH93", Provenance: intent.Provenance{Source: "mandate:payees", RecordID: "m-1"}}},
		},
		{
			name: "registry record substitutes its canonical value", sources: both, regs: map[string]resolve.Registry{"beneficiaries": beneficiaries},
			in:   resolve.Input{Owner: "emma", MandateID: "m-1", Args: intent.Args{"to": intent.Str("gb 29")}},
			want: []intent.Resolved{{Param: "to", Sent: "gb 29", Value: "GB29", Provenance: intent.Provenance{Source: "registry:beneficiaries", RecordID: "b-1", Version: "3", At: at}}},
		},
		{
			name: "another owner's record is no match", sources: both, regs: map[string]resolve.Registry{"beneficiaries": beneficiaries},
			in:      resolve.Input{Owner: "emma", MandateID: "m-1", Args: intent.Args{"to": intent.Str("MAL1")}},
			wantErr: resolve.ErrNoMatch,
		},
		{
			name: "strict mode ignores registries", sources: both, regs: map[string]resolve.Registry{"beneficiaries": beneficiaries},
			in:      resolve.Input{Owner: "emma", MandateID: "m-1", Strict: true, Args: intent.Args{"to": intent.Str("GB29")}},
			wantErr: resolve.ErrNoMatch,
		},
		{
			name: "normalizer refusal", sources: both,
			in:      resolve.Input{Owner: "emma", Claims: map[string][]string{"payees": {"X!"}}, Args: intent.Args{"to": intent.Str("X!")}},
			wantErr: resolve.ErrNotNormalizable,
		},
		{
			name: "broken registry fails closed", sources: both, regs: map[string]resolve.Registry{"beneficiaries": broken},
			in:      resolve.Input{Owner: "emma", Args: intent.Args{"to": intent.Str("GB29")}},
			wantErr: resolve.ErrUnavailable,
		},
		{
			name: "missing registry fails closed", sources: both,
			in:      resolve.Input{Owner: "emma", Args: intent.Args{"to": intent.Str("GB29")}},
			wantErr: resolve.ErrUnavailable,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := resolve.Resolver{Registries: tt.regs}
			out, err := r.Resolve(context.Background(), contractFor(t, tt.sources...), tt.in)
			if tt.wantErr != nil {
				var re *resolve.Error
				if !errors.Is(err, tt.wantErr) || !errors.As(err, &re) {
					t.Fatalf("Resolve() error = %v, want *Error wrapping %v", err, tt.wantErr)
				}
				if strings.Contains(err.Error(), "secret") || strings.Contains(err.Error(), "MAL1") && tt.in.Owner != "bob" && strings.Contains(re.Detail, "MAL1") {
					t.Fatalf("error leaks detail: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, out.Resolved); diff != "" {
				t.Errorf("Resolved (-want, +got):\n%s", diff)
			}
			if len(out.Attrs) != len(out.Resolved) {
				t.Fatalf("Attrs has %d entries for %d resolved", len(out.Attrs), len(out.Resolved))
			}
			for i, r := range out.Resolved { // a claim has no attributes; GB29 on file is trusted
				var want map[string]intent.Value
				if r.Provenance.Source == "registry:beneficiaries" && r.Value == "GB29" {
					want = map[string]intent.Value{"trusted": intent.Bool(true)}
				}
				if strings.HasPrefix(r.Provenance.Source, "mandate:") || want != nil {
					if diff := cmp.Diff(want, out.Attrs[i]); diff != "" {
						t.Errorf("Attrs[%d] (%s) (-want, +got):\n%s", i, r.Param, diff)
					}
				}
			}
			if got := out.Args["to"].Str; got != tt.want[0].Value {
				t.Errorf("executing value = %q, want the trusted %q", got, tt.want[0].Value)
			}
			if tt.in.Args["to"].Str == out.Args["to"].Str && tt.want[0].Sent != tt.want[0].Value {
				t.Error("input args were modified in place")
			}
		})
	}
}

// scoped is a ScopedRegistry of invoices by vendor: "INV-1" of two
// vendors.
type scoped struct{ seen []map[string]string }

func (s *scoped) Lookup(ctx context.Context, owner intent.Owner, v string) (resolve.Record, error) {
	return s.LookupIn(ctx, owner, v, nil)
}

func (s *scoped) LookupIn(_ context.Context, _ intent.Owner, v string, resolved map[string]string) (resolve.Record, error) {
	s.seen = append(s.seen, resolved)
	if v != "INV-1" || resolved["vendor"] == "" {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	return resolve.Record{ID: resolved["vendor"] + "/1", Value: resolved["vendor"] + "/1"}, nil
}

func TestScopedRegistry(t *testing.T) {
	t.Parallel()
	vendors := resolve.RegistryFunc(func(_ context.Context, _ intent.Owner, v string) (resolve.Record, error) {
		return resolve.Record{ID: "v-" + v, Value: "v-" + v}, nil
	})
	c, err := contract.New(contract.Contract{Action: "ap.pay", Params: []contract.Parameter{
		{Name: "vendor", Type: contract.String(0), Required: true, Critical: true, Sources: []contract.Source{contract.FromRegistry("vendors")}},
		{Name: "bill", Type: contract.String(0), Required: true, Critical: true, Sources: []contract.Source{contract.FromRegistry("bills")}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	bills := &scoped{}
	r := resolve.Resolver{Registries: map[string]resolve.Registry{"vendors": vendors, "bills": bills}}
	out, err := r.Resolve(context.Background(), c, resolve.Input{Owner: "emma", Args: intent.Args{
		"vendor": intent.Str("acme"), "bill": intent.Str("INV-1"),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if got := out.Args["bill"].Str; got != "v-acme/1" {
		t.Errorf("bill resolved to %q, want the named vendor's v-acme/1", got)
	}
	want := []map[string]string{{"vendor": "v-acme"}} // the trusted value, never the spelling
	if diff := cmp.Diff(want, bills.seen); diff != "" {
		t.Errorf("LookupIn saw (-want, +got):\n%s", diff)
	}
}
