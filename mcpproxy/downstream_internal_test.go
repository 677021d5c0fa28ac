package mcpproxy

import (
	"errors"
	"fmt"
	"os"
	"testing"
)

// TestIsClosed: the errors a write to a dead server's stdin gives, wrapped
// as mcp-go wraps them, say the connection is gone; others do not.
//
// Not parallel: a parallel test starting a child process forks while the
// pipe's read end is open, and the child holds it until it execs (the fd
// is close-on-exec), so the write meant to fail with EPIPE can succeed.
func TestIsClosed(t *testing.T) {
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	_, broken := w.Write([]byte("{}\n")) // the reader is gone: EPIPE
	w.Close()
	_, closed := w.Write([]byte("{}\n")) // our end is closed: os.ErrClosed
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"broken pipe", broken, true},
		{"closed file", closed, true},
		{"another error", errors.New("broken pipe, says the text only"), false},
	} {
		if got := isClosed(fmt.Errorf("failed to write request: %w", tc.err)); got != tc.want {
			t.Errorf("%s (%v): isClosed = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
}
