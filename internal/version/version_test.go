package version_test

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/internal/version"
)

func TestString(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name string
		in   version.Info
		want string
	}{
		{"nothing recorded", version.Info{}, "intentplane devel"},
		{"devel with vcs", version.Info{Module: "(devel)", Revision: "0e418ad", Time: "2026-12-01T16:40:00Z", Go: "go1.26.8"}, "intentplane devel (commit 0e418ad, 2026-12-01T16:40:00Z) go1.26.8"},
		{"release, modified tree", version.Info{Module: "v1.2.3", Revision: "abc", Modified: true, Go: "go1.26.8"}, "intentplane v1.2.3 (commit abc+modified) go1.26.8"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.in.String("intentplane"); got != tt.want {
				t.Errorf("String() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestReadInTestBinary(t *testing.T) {
	t.Parallel()
	in := version.Read()
	if !strings.HasPrefix(in.Go, "go1.") {
		t.Errorf("Read().Go = %q, want the toolchain's version", in.Go)
	}
}

func TestShort(t *testing.T) {
	for _, tt := range []struct {
		in   version.Info
		want string
	}{
		{version.Info{}, "devel"},
		{version.Info{Module: "(devel)", Revision: "93fd67a1b2c3d4e5f60718293a4b5c6d7e8f9012"}, "devel+93fd67a1b2c3"},
		{version.Info{Module: "(devel)", Revision: "93fd67a1b2c3d4e5f60718293a4b5c6d7e8f9012", Modified: true}, "devel+93fd67a1b2c3.modified"},
		{version.Info{Module: "v0.3.0", Revision: "abc"}, "v0.3.0+abc"},
	} {
		if got := tt.in.Short(); got != tt.want {
			t.Errorf("%+v.Short() = %q, want %q", tt.in, got, tt.want)
		}
	}
}
