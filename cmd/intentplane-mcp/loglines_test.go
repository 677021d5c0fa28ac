package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"
)

// TestLogLinesJSON: with --log-format json, every start-up line (written
// in pieces or several at once) is one JSON object, a warning at WARN,
// anything else at INFO even when the level is warn.
func TestLogLinesJSON(t *testing.T) {
	var out bytes.Buffer
	log := newLogger(&out, "json", slog.LevelWarn)
	w := &logLines{h: log.Handler(), now: func() time.Time { return time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC) }}
	for _, piece := range []string{"intentplane-mcp: warning: pack ap: few ", "approvers\nintentplane-mcp: mandate m-1 for northwind\n", "\n[bank] started\n"} {
		if _, err := w.Write([]byte(piece)); err != nil {
			t.Fatal(err)
		}
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	want := []struct{ level, msg string }{{"WARN", "pack ap: few approvers"}, {"INFO", "mandate m-1 for northwind"}, {"INFO", "[bank] started"}}
	if len(lines) != len(want) {
		t.Fatalf("%d lines, want %d:\n%s", len(lines), len(want), out.String())
	}
	for i, l := range lines {
		var rec struct{ Level, Msg, Time string }
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatalf("line %d is not JSON: %v: %s", i, err, l)
		}
		if rec.Level != want[i].level || rec.Msg != want[i].msg || rec.Time != "2030-01-02T03:04:05Z" {
			t.Errorf("line %d = %+v, want %+v", i, rec, want[i])
		}
	}
}
