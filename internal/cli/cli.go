// Package cli parses the command lines of intentplane's binaries
// (intentplane, intentplane-mcp, the evaluation harness's agentdojo) the
// same way: kong for the grammar, --version from the build
// (internal/version), usage printed on a usage error, --help a clean exit,
// and exit statuses that say what went wrong (2: usage; 1: failure; a
// command may choose another with ExitError).
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/alecthomas/kong"

	"github.com/intentplane/intentplane/internal/version"
)

// ExitError ends a command with the exit status Code (2 for a usage
// error, as kong's) and, unless Msg is empty, Msg printed on stderr.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// Parse parses args into grammar, a pointer to a kong grammar struct, for
// the binary name (also the name --version prints), described by
// description. Help goes to stdout, errors to stderr. It returns the
// parsed context; or nil and a nil error after --help or --version (the
// caller has nothing more to do); or nil and an *ExitError.
func Parse(grammar any, name, description string, args []string, stdout, stderr io.Writer) (*kong.Context, error) {
	exit := -1
	parser, err := kong.New(grammar,
		kong.Name(name),
		kong.Description(description),
		kong.Writers(stdout, stderr),
		kong.Exit(func(code int) { exit = code }),
		kong.UsageOnError(),
		kong.Vars{"version": version.Read().String(name)},
	)
	if err != nil {
		return nil, err
	}
	kctx, err := parser.Parse(args)
	switch {
	case exit == 0: // --help, --version
		return nil, nil
	case exit > 0:
		return nil, &ExitError{Code: exit}
	case err != nil:
		return nil, &ExitError{Code: 2, Msg: err.Error()}
	}
	return kctx, nil
}

// Exit ends the process after a command returned err: status 0 if err is
// nil, an ExitError's status, or 1; "name: err" is printed on stderr
// unless there is nothing to say.
func Exit(name string, err error) {
	if err == nil {
		os.Exit(0)
	}
	code := 1
	var ee *ExitError
	if errors.As(err, &ee) {
		code = ee.Code
	}
	if msg := err.Error(); msg != "" {
		fmt.Fprintln(os.Stderr, name+":", msg)
	}
	os.Exit(code)
}
