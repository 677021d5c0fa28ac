package normalize_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/normalize"
)

// Each normalizer fits the signature a contract holds.
var _ = []func(string) (string, error){
	normalize.IBAN,
	normalize.AccountNumber,
	normalize.Email,
	normalize.Identifier,
	normalize.Name,
	normalize.BIC,
	normalize.RoutingNumber,
	normalize.SortCode,
}

// test is one row of a normalizer table: want is the normalized value, or
// reason a substring of the refusal's Reason.
type test struct {
	name   string
	in     string
	want   string
	reason string
}

// run runs a table against normalizer f of the given kind.
func run(t *testing.T, kind string, f func(string) (string, error), tests []test) {
	t.Helper()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			run1(t, kind, f, tt)
		})
	}
}

// run1 runs one row of a table against normalizer f of the given kind.
func run1(t *testing.T, kind string, f func(string) (string, error), tt test) {
	t.Helper()
	got, err := f(tt.in)
	if tt.reason == "" {
		if err != nil {
			t.Fatalf("%s(%q): unexpected error: %v", kind, tt.in, err)
		}
		if got != tt.want {
			t.Fatalf("%s(%q) = %q, want %q", kind, tt.in, got, tt.want)
		}
		again, err := f(got)
		if err != nil || again != got {
			t.Fatalf("%s(%q) = %q, %v; not idempotent", kind, got, again, err)
		}
		return
	}
	if err == nil {
		t.Fatalf("%s(%q) = %q, want an error with reason %q", kind, tt.in, got, tt.reason)
	}
	if got != "" {
		t.Errorf("%s(%q) returned %q with its error, want \"\"", kind, tt.in, got)
	}
	checkError(t, err, kind, tt.in, tt.reason)
}

// checkError checks that err wraps ErrInvalid, is an *Error of the kind for
// input in, and that its reason contains reason.
func checkError(t *testing.T, err error, kind, in, reason string) {
	t.Helper()
	if !errors.Is(err, normalize.ErrInvalid) {
		t.Errorf("error %v does not wrap ErrInvalid", err)
	}
	var e *normalize.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T) is not a *normalize.Error", err, err)
	}
	if e.Kind != kind {
		t.Errorf("Kind = %q, want %q", e.Kind, kind)
	}
	if !strings.HasPrefix(in, strings.TrimSuffix(e.Input, "...")) {
		t.Errorf("Input = %q, not a prefix of %q", e.Input, in)
	}
	if !strings.Contains(e.Reason, reason) {
		t.Errorf("Reason = %q, want it to contain %q", e.Reason, reason)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, kind+": ") || !strings.HasSuffix(msg, ": "+e.Reason) {
		t.Errorf("Error() = %q, want %q, the quoted input, then the reason", msg, kind+": ")
	}
	for _, c := range []byte(err.Error()) {
		if c >= 0x80 {
			t.Errorf("Error() = %q has a non-ASCII byte; look-alikes must show as escapes", err.Error())
			break
		}
	}
}

func TestError(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		f    func(string) (string, error)
		in   string
		want *normalize.Error
		msg  string
	}{
		{
			name: "mod-97",
			f:    normalize.IBAN,
			in:   "DE89 3704 0044 0532 0130 01",
			want: &normalize.Error{Kind: "iban", Input: "DE89 3704 0044 0532 0130 01", Reason: "check digits do not match (mod-97); the IBAN has a typo or was altered"},
			msg:  `iban: "DE89 3704 0044 0532 0130 01": check digits do not match (mod-97); the IBAN has a typo or was altered`,
		},
		{
			name: "cyrillic A",
			f:    normalize.IBAN,
			in:   "DE89\u0410",
			want: &normalize.Error{Kind: "iban", Input: "DE89\u0410", Reason: "contains the non-ASCII character U+0410 at position 5; look-alike characters are refused, type the IBAN in plain ASCII"},
			msg:  `iban: "DE89\u0410": contains the non-ASCII character U+0410 at position 5; look-alike characters are refused, type the IBAN in plain ASCII`,
		},
		{
			name: "wrong length",
			f:    normalize.IBAN,
			in:   "GB29NWBK6016133192681",
			want: &normalize.Error{Kind: "iban", Input: "GB29NWBK6016133192681", Reason: "GB IBANs have 22 characters, got 21"},
			msg:  `iban: "GB29NWBK6016133192681": GB IBANs have 22 characters, got 21`,
		},
		{
			name: "long input is cut to 64 runes",
			f:    normalize.Identifier,
			in:   strings.Repeat("é", 70),
			want: &normalize.Error{Kind: "identifier", Input: strings.Repeat("é", 64) + "...", Reason: "contains the non-ASCII character U+00E9 at position 1; look-alike characters are refused, type the identifier in plain ASCII"},
			msg:  `identifier: "` + strings.Repeat(`\u00e9`, 64) + `...": contains the non-ASCII character U+00E9 at position 1; look-alike characters are refused, type the identifier in plain ASCII`,
		},
		{
			name: "invalid UTF-8",
			f:    normalize.Email,
			in:   "a\xffb@example.com",
			want: &normalize.Error{Kind: "email", Input: "a\xffb@example.com", Reason: "contains the byte 0xFF, which is not valid UTF-8, at position 2; type the address in plain ASCII"},
			msg:  `email: "a\xffb@example.com": contains the byte 0xFF, which is not valid UTF-8, at position 2; type the address in plain ASCII`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := tt.f(tt.in)
			var got *normalize.Error
			if !errors.As(err, &got) {
				t.Fatalf("error %v (%T) is not a *normalize.Error", err, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("error mismatch (-want, +got):\n%s", diff)
			}
			if got := err.Error(); got != tt.msg {
				t.Errorf("Error() =\n%s\nwant\n%s", got, tt.msg)
			}
			if !errors.Is(err, normalize.ErrInvalid) {
				t.Errorf("error does not wrap ErrInvalid")
			}
		})
	}
}
