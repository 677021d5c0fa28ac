// Package version tells which build of intentplane is running, for the
// binaries' --version flag and the logs: the module version (or "devel"),
// the VCS revision and time the binary was built from, whether the tree had
// uncommitted changes, and the Go version. Everything comes from the build
// information the Go toolchain embeds (runtime/debug.ReadBuildInfo); nothing
// is stamped by hand. It imports the standard library only.
package version

import (
	"runtime/debug"
	"strings"
)

// Info is what a binary knows of its own build. Empty fields were not
// recorded (a test binary, `go run` without VCS information).
type Info struct {
	Module   string // module version, e.g. "v0.3.0", or "(devel)"
	Revision string // VCS revision (full commit hash)
	Time     string // VCS commit time, RFC 3339, UTC
	Modified bool   // the working tree had uncommitted changes
	Go       string // Go toolchain version, e.g. "go1.26.8"
}

// Read returns the build information of the running binary.
func Read() Info {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return Info{}
	}
	in := Info{Module: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			in.Revision = s.Value
		case "vcs.time":
			in.Time = s.Value
		case "vcs.modified":
			in.Modified = s.Value == "true"
		}
	}
	return in
}

// String is one line for --version: "NAME VERSION (commit REV[+modified],
// TIME) GO", leaving out what was not recorded.
func (in Info) String(name string) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte(' ')
	if in.Module == "" || in.Module == "(devel)" {
		b.WriteString("devel")
	} else {
		b.WriteString(in.Module)
	}
	if in.Revision != "" {
		b.WriteString(" (commit ")
		b.WriteString(in.Revision)
		if in.Modified {
			b.WriteString("+modified")
		}
		if in.Time != "" {
			b.WriteString(", ")
			b.WriteString(in.Time)
		}
		b.WriteByte(')')
	}
	if in.Go != "" {
		b.WriteByte(' ')
		b.WriteString(in.Go)
	}
	return b.String()
}

// Short is the version alone, for a protocol's version field (MCP's
// serverInfo.version): the module version, or "devel" for a build from a
// work tree, followed by "+" and the first 12 hex digits of the commit
// when one was recorded, and ".modified" when the tree had changes; e.g.
// "v0.3.0", "devel+93fd67a1b2c3", "devel+93fd67a1b2c3.modified".
func (in Info) Short() string {
	s := in.Module
	if s == "" || s == "(devel)" {
		s = "devel"
	}
	if in.Revision != "" {
		s += "+" + in.Revision[:min(12, len(in.Revision))]
		if in.Modified {
			s += ".modified"
		}
	}
	return s
}
