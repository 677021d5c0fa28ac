package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/alecthomas/kong"
)

type grammar struct {
	Version kong.VersionFlag `help:"Print the version."`
	Greet   struct {
		Name string `arg:""`
	} `cmd:""`
}

// TestParse: a command parses; --help and --version end without error
// and without a context; a usage error is ExitError status 2 and names
// what is wrong.
func TestParse(t *testing.T) {
	t.Parallel()
	var g grammar
	var out, errb bytes.Buffer
	kctx, err := Parse(&g, "tool", "a tool", []string{"greet", "ada"}, &out, &errb)
	if err != nil || kctx == nil || g.Greet.Name != "ada" {
		t.Fatalf("greet ada: context %v, err %v, name %q", kctx, err, g.Greet.Name)
	}
	for _, args := range [][]string{{"--help"}, {"--version"}} {
		out.Reset()
		kctx, err := Parse(&grammar{}, "tool", "a tool", args, &out, &errb)
		if kctx != nil || err != nil || out.Len() == 0 {
			t.Errorf("%v: context %v, err %v, printed %q; want nothing more to do and something printed", args, kctx, err, out.String())
		}
	}
	out.Reset()
	if _, err := Parse(&grammar{}, "tool", "a tool", []string{"--version"}, &out, &errb); err != nil || !strings.Contains(out.String(), "tool") {
		t.Errorf("--version: err %v, printed %q; want the binary's name", err, out.String())
	}
	kctx, err = Parse(&grammar{}, "tool", "a tool", []string{"greet"}, &out, &errb)
	var ee *ExitError
	if kctx != nil || !errors.As(err, &ee) || ee.Code != 2 || !strings.Contains(ee.Msg, "name") {
		t.Errorf("greet without a name: context %v, err %v; want ExitError 2 naming the missing argument", kctx, err)
	}
}
