package main

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"time"
)

// logLines is the stderr of start-up messages (the mandate, warnings, the
// approval page's and admin listener's addresses) and of the downstream
// servers when --log-format is json: each line written to it becomes one
// record of its handler, so that a log collector reads one JSON object a
// line. A line "intentplane-mcp: warning: …" is a warning, any other line
// information; the "intentplane-mcp: " prefix is dropped. Records are
// written whatever the log level: they are what the text format prints
// unconditionally. It is safe for concurrent use.
type logLines struct {
	h   slog.Handler
	now func() time.Time

	mu  sync.Mutex
	buf []byte // an unfinished line
}

func (l *logLines) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.buf = append(l.buf, b...)
	for {
		i := bytes.IndexByte(l.buf, '\n')
		if i < 0 {
			return len(b), nil
		}
		line := string(l.buf[:i])
		l.buf = l.buf[i+1:]
		if err := l.emit(line); err != nil {
			return len(b), err
		}
	}
}

// emit writes one line as a record; blank lines are dropped.
func (l *logLines) emit(line string) error {
	msg := strings.TrimSpace(strings.TrimPrefix(line, "intentplane-mcp: "))
	if msg == "" {
		return nil
	}
	level := slog.LevelInfo
	if rest, ok := strings.CutPrefix(msg, "warning: "); ok {
		level, msg = slog.LevelWarn, rest
	}
	return l.h.Handle(context.Background(), slog.NewRecord(l.now(), level, msg, 0))
}
