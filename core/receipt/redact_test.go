package receipt_test

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

func TestDigests(t *testing.T) {
	t.Parallel()
	for _, out := range []string{"", "x", "payment sent", strings.Repeat("é", 5000)} {
		sum := sha256.Sum256([]byte(out))
		if got, want := receipt.OutputDigest(out), fmt.Sprintf("sha256:%x (%d bytes)", sum, len(out)); got != want {
			t.Errorf("OutputDigest = %q, want %q", got, want)
		}
	}
}

func TestSentFor(t *testing.T) {
	t.Parallel()
	secret := func(p string) bool { return p == "password" }
	p := intent.Proposal{Action: "hr.login", Args: map[string]json.RawMessage{"user": []byte(`"emma"`), "password": []byte(`"hunter2"`)}}
	got := receipt.SentFor([]byte(`{"action":"hr.login","args":{"user":"emma","password":"hunter2"}}`), &p, secret)
	want := `{"action":"hr.login","args":{"password":"` + receipt.Digest(`"hunter2"`) + `","user":"emma"}}`
	if got != want {
		t.Errorf("SentFor with a secret = %s, want %s", got, want)
	}
	long := []byte(`{"action":"a","args":{"x":"` + strings.Repeat("é", receipt.MaxSent) + `"}}`)
	cut := receipt.SentFor(long, nil, nil)
	if !strings.Contains(cut, fmt.Sprintf("[cut: %d bytes in all, sha256:%x]", len(long), sha256.Sum256(long))) || len(cut) > receipt.MaxSent+200 {
		t.Errorf("SentFor of %d bytes = %d bytes ending %q", len(long), len(cut), cut[len(cut)-100:])
	}
	args := receipt.RedactArgs(intent.Args{"user": intent.Str("emma"), "password": intent.Str("hunter2")}, secret)
	if args["password"].Str != receipt.Digest("hunter2") || args["user"].Str != "emma" {
		t.Errorf("RedactArgs = %v", args)
	}
	rs := receipt.RedactResolved([]intent.Resolved{{Param: "password", Sent: "a", Value: "b"}, {Param: "user", Sent: "emma", Value: "emma"}}, secret)
	if rs[0].Sent != receipt.Digest("a") || rs[0].Value != receipt.Digest("b") || rs[1].Value != "emma" {
		t.Errorf("RedactResolved = %+v", rs)
	}
}
