package mcpproxy

import (
	"crypto/rand"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

func TestSealer(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	s := &sealer{key: []byte("k"), ttl: time.Minute, now: func() time.Time { return now }, rand: rand.Reader, used: map[string]int64{}}
	op := intent.OperationHash{1, 2, 3}
	st, err := s.seal("send_money", op)
	if err != nil {
		t.Fatal(err)
	}
	got, err := s.open(st, "send_money")
	if err != nil || got.Op != op.String() {
		t.Fatalf("open: %v %v", got, err)
	}
	if _, err := s.open(st, "other_tool"); !errors.Is(err, ErrStateOtherCall) {
		t.Errorf("other tool: %v", err)
	}
	for _, bad := range []string{"", "x", st + "A", strings.Replace(st, ".", "A.", 1), strings.Repeat("A", 2000)} {
		if _, err := s.open(bad, "send_money"); !errors.Is(err, ErrStateInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
	other := &sealer{key: []byte("another key"), ttl: time.Minute, now: s.now, rand: rand.Reader, used: map[string]int64{}}
	if _, err := other.open(st, "send_money"); !errors.Is(err, ErrStateInvalid) {
		t.Errorf("another key's state: %v", err)
	}
	if err := s.redeem(got); err != nil {
		t.Fatal(err)
	}
	if err := s.redeem(got); !errors.Is(err, ErrStateUsed) {
		t.Errorf("second redeem: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if _, err := s.open(st, "send_money"); !errors.Is(err, ErrStateExpired) {
		t.Errorf("expired: %v", err)
	}
	if err := s.redeem(sealed{Nonce: "n", Exp: now.Add(time.Minute).Unix()}); err != nil || len(s.used) != 1 {
		t.Errorf("expired nonces are not forgotten: %v %d", err, len(s.used))
	}
}

func TestLineLimiter(t *testing.T) {
	t.Parallel()
	in := "short\n" + strings.Repeat("x", 100) + "\n" + "ok\n" + strings.Repeat("y", 30)
	l := &lineLimiter{r: iotestHalf(strings.NewReader(in)), max: 50}
	out, err := io.ReadAll(l)
	if err != nil {
		t.Fatal(err)
	}
	// The long line is dropped for a NUL marker, so that it cannot parse;
	// the last line, without newline, is passed on at the end.
	want := "short\n\x00oversized message\nok\n" + strings.Repeat("y", 30)
	if string(out) != want {
		t.Errorf("got %q\nwant %q", out, want)
	}
}

// iotestHalf returns a reader that returns at most 7 bytes per Read.
func iotestHalf(r io.Reader) io.Reader { return &smallReader{r} }

type smallReader struct{ r io.Reader }

func (s *smallReader) Read(p []byte) (int, error) {
	if len(p) > 7 {
		p = p[:7]
	}
	return s.r.Read(p)
}
