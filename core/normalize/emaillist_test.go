package normalize_test

import (
	"slices"
	"testing"

	"github.com/intentplane/intentplane/core/normalize"
)

func TestEmailList(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"b@x.com, A@X.com", "a@x.com,b@x.com"},
		{" a@x.com ,a@x.com", "a@x.com"},
		{"", ""},
		{"a@x.com,,b@x.com", ""},
		{"Mark <mark.black-2134@gmail.com>", ""},
		{"a@x.com;b@x.com", ""},
	}
	for _, tt := range tests {
		got, err := normalize.EmailList(tt.in)
		if (err == nil) != (tt.want != "") || got != tt.want {
			t.Errorf("normalize.EmailList(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestSplitList(t *testing.T) {
	t.Parallel()
	if got := normalize.SplitList(" a, ,b ,"); !slices.Equal(got, []string{"a", "b"}) {
		t.Errorf("SplitList = %q", got)
	}
	if got := normalize.SplitList(""); got != nil {
		t.Errorf("SplitList(\"\") = %q, want nil", got)
	}
}
