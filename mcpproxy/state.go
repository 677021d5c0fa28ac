package mcpproxy

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Errors of a request state presented by a client on a multi round-trip
// retry. Any of them means the client's inputResponses are ignored.
var (
	// ErrStateInvalid: the state is malformed or its seal does not verify.
	ErrStateInvalid = errors.New("mcpproxy: request state is not one this proxy sealed")
	// ErrStateExpired: the state's validity has passed.
	ErrStateExpired = errors.New("mcpproxy: request state expired")
	// ErrStateOtherCall: the state was sealed for another tool or operation.
	ErrStateOtherCall = errors.New("mcpproxy: request state belongs to another call")
	// ErrStateUsed: the state was already redeemed once.
	ErrStateUsed = errors.New("mcpproxy: request state already used")
)

// stateDomain separates request-state MACs from anything else keyed alike.
const stateDomain = "intentplane-mcp-request-state-v1\x00"

// sealed is the content of a request state.
type sealed struct {
	Tool  string `json:"t"`
	Op    string `json:"o"` // operation hash, hex
	Exp   int64  `json:"e"` // unix seconds
	Nonce string `json:"n"`
}

// sealer issues and redeems request states: base64url(payload) "."
// base64url(HMAC-SHA256(key, domain || payload)). Redeemed nonces are kept
// until they expire, so each state is redeemed at most once.
type sealer struct {
	key  []byte
	ttl  time.Duration
	now  func() time.Time
	rand io.Reader

	mu   sync.Mutex
	used map[string]int64 // nonce → expiry (unix seconds)
}

func (s *sealer) mac(payload []byte) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(stateDomain))
	m.Write(payload)
	return m.Sum(nil)
}

// seal returns a state for tool and operation op.
func (s *sealer) seal(tool string, op intent.OperationHash) (string, error) {
	var n [16]byte
	if _, err := io.ReadFull(s.rand, n[:]); err != nil {
		return "", err
	}
	payload, err := json.Marshal(sealed{Tool: tool, Op: op.String(), Exp: s.now().Add(s.ttl).Unix(), Nonce: hex.EncodeToString(n[:])})
	if err != nil {
		return "", err
	}
	enc := base64.RawURLEncoding
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(s.mac(payload)), nil
}

// open verifies state's seal, expiry and tool; it does not redeem it.
func (s *sealer) open(state, tool string) (sealed, error) {
	var st sealed
	if len(state) > 1024 {
		return st, ErrStateInvalid
	}
	p, m, ok := strings.Cut(state, ".")
	if !ok {
		return st, ErrStateInvalid
	}
	enc := base64.RawURLEncoding
	payload, err1 := enc.DecodeString(p)
	mac, err2 := enc.DecodeString(m)
	if err1 != nil || err2 != nil || !hmac.Equal(mac, s.mac(payload)) {
		return st, ErrStateInvalid
	}
	if err := json.Unmarshal(payload, &st); err != nil {
		return st, ErrStateInvalid
	}
	if s.now().Unix() >= st.Exp {
		return st, ErrStateExpired
	}
	if st.Tool != tool {
		return st, fmt.Errorf("%w (sealed for tool %q)", ErrStateOtherCall, st.Tool)
	}
	return st, nil
}

// redeem marks st used; a second redeem fails with ErrStateUsed.
func (s *sealer) redeem(st sealed) error {
	now := s.now().Unix()
	s.mu.Lock()
	defer s.mu.Unlock()
	for n, exp := range s.used {
		if exp <= now {
			delete(s.used, n)
		}
	}
	if _, dup := s.used[st.Nonce]; dup {
		return ErrStateUsed
	}
	s.used[st.Nonce] = st.Exp
	return nil
}
