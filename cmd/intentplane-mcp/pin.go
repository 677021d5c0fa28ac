package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/intentplane/intentplane/cmd/intentplane-mcp/internal/config"
	"github.com/intentplane/intentplane/mcpproxy"
)

// loadLock reads the lock file [pins] names; nil without [pins]. A lock
// file that is missing or invalid is an error at [pins] file: the proxy
// does not start without the pins the operator configured.
func loadLock(c *config.Config) (*mcpproxy.Lock, error) {
	if c.Pins == nil {
		return nil, nil
	}
	at := []string{"pins", "file"}
	path := c.File(c.Pins.File)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, c.ErrAt(at, "lock file %s does not exist: write it with `intentplane-mcp --config %s --pin`, review it, and check it in", path, c.Path())
	}
	if err != nil {
		return nil, c.ErrAt(at, "%v", err)
	}
	l, err := mcpproxy.ParseLock(b)
	if err != nil {
		return nil, c.ErrAt(at, "lock file %s: %v", path, err)
	}
	return l, nil
}

// checkPins returns an error at each [tools] entry whose tool its server
// lists otherwise than its pin, or that has no pin, for --check.
func checkPins(c *config.Config, lock *mcpproxy.Lock, servers map[string]*mcpproxy.Downstream) error {
	if lock == nil {
		return nil
	}
	var errs []error
	for _, key := range config.Ordered(c, []string{"tools"}, c.Tools) {
		tc := c.Tools[key]
		raw, err := downstreamTool(c, key, servers[tc.Server])
		if err != nil {
			errs = append(errs, err)
			continue
		}
		diff, pinned := lock.Verify(tc.Server, raw)
		switch {
		case !pinned:
			errs = append(errs, c.ErrAt([]string{"tools", key}, "tool %q of server %q has no pin in %s, so it would be hidden: pin it with --pin after reviewing it", raw.Name, tc.Server, c.File(c.Pins.File)))
		case diff != "":
			errs = append(errs, c.ErrAt([]string{"tools", key}, "tool %q of server %q differs from its pin in %s, so it would be hidden:\n%s\nReview the change; if it is wanted, pin it again with --pin", raw.Name, tc.Server, c.File(c.Pins.File), indent(diff)))
		}
	}
	return errors.Join(errs...)
}

// runPin lists the tools of [tools] from their servers and writes their
// pins to the lock file [pins] names, printing on out what changed since
// the pins it replaces.
func runPin(ctx context.Context, c *config.Config, out, stderr io.Writer, log *slog.Logger) (err error) {
	if c.Pins == nil {
		return &config.Error{File: c.Path(), Msg: "--pin writes the lock file [pins] names, and there is no [pins] table: add [pins] with file = \"tools.lock.json\""}
	}
	path := c.File(c.Pins.File)
	var old *mcpproxy.Lock
	if _, statErr := os.Stat(path); statErr == nil {
		// An unreadable lock file is not overwritten blindly.
		if old, err = loadLock(c); err != nil {
			return fmt.Errorf("%w (fix it, or delete it to pin every tool anew)", err)
		}
	}
	servers := map[string]*mcpproxy.Downstream{}
	defer func() {
		for _, d := range servers {
			_ = d.Close()
		}
	}()
	var pins []mcpproxy.Pin
	for _, key := range config.Ordered(c, []string{"tools"}, c.Tools) {
		tc := c.Tools[key]
		d := servers[tc.Server]
		if d == nil {
			if d, err = dialServer(ctx, c, tc.Server, nil, stderr, log); err != nil {
				return err
			}
			servers[tc.Server] = d
		}
		raw, err := downstreamTool(c, key, d)
		if err != nil {
			return err
		}
		p, err := mcpproxy.PinOf(tc.Server, raw)
		if err != nil {
			return c.ErrAt([]string{"tools", key}, "%v", err)
		}
		pins = append(pins, p)
	}
	lock := mcpproxy.NewLock(pins...)
	changed := 0
	for _, p := range lock.Pins() {
		name := p.Server + "/" + p.Tool
		var was mcpproxy.Pin
		ok := false
		if old != nil {
			was, ok = old.Pin(p.Server, p.Tool)
		}
		switch diff := was.Diff(p); {
		case !ok:
			changed++
			fmt.Fprintf(out, "new       %s: %s\n", name, quoteReview(p.Description))
		case diff != "":
			changed++
			fmt.Fprintf(out, "changed   %s\n%s\n", name, indent(diff))
		default:
			fmt.Fprintf(out, "unchanged %s\n", name)
		}
	}
	if old != nil {
		for _, p := range old.Pins() {
			if _, ok := lock.Pin(p.Server, p.Tool); !ok {
				changed++
				fmt.Fprintf(out, "dropped   %s/%s (no longer in [tools])\n", p.Server, p.Tool)
			}
		}
	}
	b, err := lock.Marshal()
	if err != nil {
		return err
	}
	if err := writeFileAtomic(path, b); err != nil {
		return c.ErrAt([]string{"pins", "file"}, "%v", err)
	}
	fmt.Fprintf(out, "wrote %s: %d tools pinned, %d changes. Review the changes (git diff), check the file in, and restart the proxy.\n", path, len(pins), changed)
	return nil
}

// indent indents each line of s by four spaces.
func indent(s string) string {
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

// writeFileAtomic replaces path with b (mode 0644) through a temporary
// file in the same directory, so that a reader never sees half a file.
func writeFileAtomic(path string, b []byte) error {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name()) // after a successful rename, removes nothing
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// quoteReview quotes a new tool's description whole, for the operator to
// review before checking the lock file in, with Go's ASCII escaping: text
// past the first line or any length, a look-alike letter or an invisible
// character is shown, not hidden.
func quoteReview(s string) string { return fmt.Sprintf("%+q", s) }
