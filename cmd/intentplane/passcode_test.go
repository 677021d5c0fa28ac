package main

import (
	"strings"
	"testing"

	"github.com/intentplane/intentplane/approvals/passcode"
)

func TestReadPasscodeFromStdin(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ name, in, want string }{
		{"line", "correct horse\n", "correct horse"},
		{"crlf", "correct horse\r\nrest", "correct horse"},
		{"no newline", "correct horse", "correct horse"},
	} {
		got, err := readPasscode(strings.NewReader(tt.in), nil)
		if err != nil || got != tt.want {
			t.Errorf("%s: %q, %v; want %q", tt.name, got, err, tt.want)
		}
	}
	if _, err := readPasscode(strings.NewReader("\n"), nil); err == nil {
		t.Error("empty passcode accepted")
	}
	pass, _ := readPasscode(strings.NewReader("correct horse\n"), nil)
	h, err := passcode.Hash(pass, passcode.Params{LogN: 4}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ok, err := passcode.Check(h, "correct horse"); !ok || err != nil {
		t.Fatalf("Check = %v, %v", ok, err)
	}
}
