package checkpoint_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/checkpoint"
	"github.com/intentplane/intentplane/store/mem"
)

type sink struct {
	mu   sync.Mutex
	cs   []receipt.Checkpoint
	fail bool
}

func (s *sink) SaveCheckpoint(ctx context.Context, c receipt.Checkpoint) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.fail {
		return errors.New("disk full")
	}
	s.cs = append(s.cs, c)
	return nil
}

type seed byte

func (b seed) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = byte(b)
	}
	return len(p), nil
}

func TestEveryAndFlush(t *testing.T) {
	ctx := context.Background()
	pub, priv, _ := ed25519.GenerateKey(seed(9))
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	st := mem.New(func() time.Time { return now })
	sk := &sink{}
	cp := checkpoint.Wrap(st, sk, receipt.NewEd25519Signer("cp-1", priv), checkpoint.Config{Every: 3, Now: func() time.Time { return now }})
	for i := range 7 {
		for _, o := range []intent.Owner{"emma", "noah"} {
			if o == "noah" && i >= 2 {
				continue
			}
			if _, err := cp.Append(ctx, receipt.Receipt{Owner: o, Time: now.Add(time.Duration(i) * time.Second), Verdict: intent.Allow}); err != nil {
				t.Fatal(err)
			}
		}
	}
	got := func() []uint64 {
		var seqs []uint64
		for _, c := range sk.cs {
			seqs = append(seqs, c.Seq)
		}
		return seqs
	}
	if s := got(); len(s) != 2 || s[0] != 3 || s[1] != 6 {
		t.Fatalf("checkpoints by count at seqs %v, want emma's 3 and 6", s)
	}
	if err := cp.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if s := got(); len(s) != 4 || s[2] != 7 || sk.cs[3].Owner != "noah" || s[3] != 2 {
		t.Fatalf("after Flush, checkpoints at %v, want emma 7 and noah 2 added", s)
	}
	if err := cp.Flush(ctx); err != nil || len(sk.cs) != 4 {
		t.Fatalf("a second Flush signed again: %d checkpoints, %v", len(sk.cs), err)
	}

	// The export verifies with the public key alone.
	var buf bytes.Buffer
	for _, o := range []intent.Owner{"emma", "noah"} {
		rs, err := st.Receipts(ctx, o, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if err := receipt.WriteJSONL(&buf, rs); err != nil {
			t.Fatal(err)
		}
	}
	if err := receipt.WriteCheckpoints(&buf, sk.cs); err != nil {
		t.Fatal(err)
	}
	data := buf.Bytes()
	rep, err := receipt.Verify(bytes.NewReader(data), receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{"cp-1": pub}))
	if err != nil || rep.Checkpoints != 4 || rep.Unverified != 0 {
		t.Fatalf("Verify = %+v, %v", rep, err)
	}
	// Cutting emma's last receipt off is detected.
	cut := bytes.Replace(data, lineOf(t, data, 7), nil, 1)
	if _, err := receipt.Verify(bytes.NewReader(cut), nil); err == nil {
		t.Fatal("a truncated tail verified")
	}
}

// lineOf returns the line of data holding emma's receipt seq.
func lineOf(t *testing.T, data []byte, seq int) []byte {
	t.Helper()
	rs, _, err := receipt.ReadJSONL(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range bytes.SplitAfter(data, []byte("\n")) {
		for _, r := range rs {
			if r.Owner == "emma" && r.Seq == uint64(seq) && bytes.Contains(line, []byte(r.Hash.String())) && bytes.Contains(line, []byte(`"type":"receipt"`)) {
				return line
			}
		}
	}
	t.Fatal("line not found")
	return nil
}

func TestFailureDoesNotFailAppend(t *testing.T) {
	ctx := context.Background()
	_, priv, _ := ed25519.GenerateKey(seed(9))
	sk := &sink{fail: true}
	cp := checkpoint.Wrap(mem.New(nil), sk, receipt.NewEd25519Signer("cp-1", priv), checkpoint.Config{Every: 1})
	if _, err := cp.Append(ctx, receipt.Receipt{Owner: "emma", Time: time.Unix(1, 0)}); err != nil {
		t.Fatalf("Append failed because its checkpoint did: %v", err)
	}
	if err := cp.Flush(ctx); err == nil {
		t.Fatal("Flush did not report the sink's failure")
	}
	sk.fail = false
	if err := cp.Flush(ctx); err != nil || len(sk.cs) != 1 {
		t.Fatalf("Flush after recovery: %d checkpoints, %v", len(sk.cs), err)
	}
}

func TestRun(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(seed(9))
	sk := &sink{}
	cp := checkpoint.Wrap(mem.New(nil), sk, receipt.NewEd25519Signer("cp-1", priv), checkpoint.Config{Every: -1, Interval: 10 * time.Millisecond})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- cp.Run(ctx) }()
	if _, err := cp.Append(ctx, receipt.Receipt{Owner: "emma", Time: time.Unix(1, 0)}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		sk.mu.Lock()
		n := len(sk.cs)
		sk.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Run signed no checkpoint within 5s")
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run = %v", err)
	}
}
