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
