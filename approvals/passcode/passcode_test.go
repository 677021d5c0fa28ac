package passcode_test

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/approvals/passcode"
)

func TestPasscode(t *testing.T) {
	t.Parallel()
	h, err := passcode.Hash("correct horse", passcode.Params{LogN: 4, R: 1}, bytes.NewReader(make([]byte, 16)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(h, "$scrypt$ln=4,r=1,p=1$") {
		t.Fatalf("hash %q is not self-describing", h)
	}
	for _, tt := range []struct {
		name, hash, pass string
		ok               bool
		err              error
	}{
		{"right", h, "correct horse", true, nil},
		{"wrong", h, "correct horsf", false, nil},
		{"empty", h, "", false, nil},
		{"other algorithm", strings.Replace(h, "scrypt", "bcrypt", 1), "correct horse", false, passcode.ErrMalformed},
		{"cost out of range", strings.Replace(h, "ln=4", "ln=31", 1), "correct horse", false, passcode.ErrMalformed},
		{"unknown parameter", strings.Replace(h, "p=1", "q=1", 1), "correct horse", false, passcode.ErrMalformed},
		{"truncated", h[:20], "correct horse", false, passcode.ErrMalformed},
		{"plain text", "correct horse", "correct horse", false, passcode.ErrMalformed},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ok, err := passcode.Check(tt.hash, tt.pass)
			if ok != tt.ok || !errors.Is(err, tt.err) {
				t.Fatalf("Check = %v, %v; want %v, %v", ok, err, tt.ok, tt.err)
			}
		})
	}
	for _, weak := range []string{"short", "elevenchars", "Password1234", "aaaaaaaaaaaaaaaa", "abcabcabcabc",
		"abcdefghijklmn", "987654321098", "1q2w3e4r5t6y", "aAaAbBbB1111"} {
		if _, err := passcode.Hash(weak, passcode.Params{LogN: 4, R: 1}, nil); !errors.Is(err, passcode.ErrWeak) {
			t.Errorf("weak passcode %q: %v", weak, err)
		}
	}
	h2, _ := passcode.Hash("correct horse", passcode.Params{LogN: 4, R: 1}, nil)
	if h2 == h {
		t.Fatal("two hashes of one passcode share their salt")
	}
}

func TestDecoy(t *testing.T) {
	t.Parallel()
	h, err := passcode.Hash("correct horse", passcode.Params{LogN: 4, R: 1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := passcode.Parse(h)
	if err != nil || !parsed.Check("correct horse") {
		t.Fatalf("Parse(%q) = %v; does not check its passcode", h, err)
	}
	d, err := parsed.Decoy(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{"correct horse", "", strings.Repeat("x", passcode.MaxLen)} {
		if d.Check(p) {
			t.Errorf("the decoy matches %q", p)
		}
	}
	if parsed.Check(strings.Repeat("x", passcode.MaxLen+1)) {
		t.Error("a passcode over MaxLen matched")
	}
	if _, err := parsed.Decoy(bytes.NewReader(nil)); err == nil {
		t.Error("Decoy without randomness succeeded")
	}
}
