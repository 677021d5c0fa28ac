package approvals

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// How the Server keeps its state in its Store. Every value is JSON with a
// version "v"; an entry of another version, or one that does not decode,
// is an error when read by id and skipped (and logged) when listed.
const recordVersion = 1

// requestRecord is a request as kept in SpaceRequests under its id.
type requestRecord struct {
	V         int                     `json:"v"`
	ID        string                  `json:"id"`
	Op        intent.Operation        `json:"op"`
	Hash      intent.OperationHash    `json:"hash"`
	Level     intent.Level            `json:"level"`
	Resolved  []intent.Resolved       `json:"resolved,omitempty"`
	Facts     map[string]intent.Value `json:"facts,omitempty"`
	Reason    string                  `json:"reason,omitempty"`
	Policies  []string                `json:"policies,omitempty"`
	Currency  string                  `json:"currency,omitempty"`
	Requester string                  `json:"requester,omitempty"`
	Created   time.Time               `json:"created"`
	Expires   time.Time               `json:"expires"`
	Via       string                  `json:"via"`
	Status    Status                  `json:"status"`
	Refusal   string                  `json:"refusal,omitempty"`
	Approvals []approval.Approval     `json:"approvals,omitempty"`
	Votes     []Vote                  `json:"votes,omitempty"`
	Receipt   receipt.Receipt         `json:"receipt"`
	Lines     []requestRecord         `json:"lines,omitempty"` // a run's
}

func (r *request) record() requestRecord {
	return requestRecord{V: recordVersion, ID: r.id, Op: r.op, Hash: r.hash, Level: r.level, Resolved: r.resolved,
		Facts: r.facts, Reason: r.reason, Policies: r.policies, Currency: r.currency, Requester: r.requester, Created: r.created,
		Expires: r.expires, Via: r.via, Status: r.status, Refusal: r.refusal, Approvals: r.approvals,
		Votes: r.votes, Receipt: r.receipt, Lines: lineRecords(r.lines)}
}

func lineRecords(lines []*request) []requestRecord {
	var out []requestRecord
	for _, l := range lines {
		out = append(out, requestRecord{V: recordVersion, Op: l.op, Hash: l.hash, Level: l.level, Resolved: l.resolved,
			Facts: l.facts, Reason: l.reason, Policies: l.policies, Currency: l.currency})
	}
	return out
}

var errRecordVersion = errors.New("approvals: kept entry of an unknown version")

func decodeRequest(b []byte) (*request, error) {
	var rec requestRecord
	if err := json.Unmarshal(b, &rec); err != nil {
		return nil, err
	}
	if rec.V != recordVersion {
		return nil, errRecordVersion
	}
	r := &request{id: rec.ID, op: rec.Op, hash: rec.Hash, level: rec.Level, resolved: rec.Resolved,
		facts: rec.Facts, reason: rec.Reason, policies: rec.Policies, currency: rec.Currency, requester: rec.Requester,
		created: rec.Created, expires: rec.Expires, via: rec.Via, status: rec.Status, refusal: rec.Refusal,
		approvals: rec.Approvals, votes: rec.Votes, receipt: rec.Receipt}
	for _, l := range rec.Lines {
		r.lines = append(r.lines, &request{op: l.Op, hash: l.Hash, level: l.Level, resolved: l.Resolved,
			facts: l.Facts, reason: l.Reason, policies: l.Policies, currency: l.Currency})
	}
	return r, nil
}

// save keeps r until Config.Retain after it expires.
func (s *Server) save(ctx context.Context, r *request) error {
	return s.putJSON(ctx, SpaceRequests, r.id, r.record(), r.expires.Add(s.cfg.Retain))
}

// putJSON keeps v, as JSON, under (space, key) until expires.
func (s *Server) putJSON(ctx context.Context, space, key string, v any, expires time.Time) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return s.st.PutEntry(ctx, space, key, b, expires)
}

// get returns the request id names as kept, with its status as of now (a
// pending request past its expiry is expired), or ErrNotFound.
func (s *Server) get(ctx context.Context, id string) (*request, error) {
	r, _, err := s.getKept(ctx, id)
	return r, err
}

// getKept is get that also returns the entry's bytes as kept, for a
// compare-and-swap (Store.SwapEntry) of the request.
func (s *Server) getKept(ctx context.Context, id string) (*request, []byte, error) {
	b, ok, err := s.st.Entry(ctx, SpaceRequests, id)
	if err != nil {
		return nil, nil, fmt.Errorf("approvals: reading request %s: %w", id, err)
	}
	if !ok {
		return nil, nil, ErrNotFound
	}
	r, err := decodeRequest(b)
	if err != nil {
		return nil, nil, fmt.Errorf("approvals: request %s as kept: %w", id, err)
	}
	r.expire(s.now())
	return r, b, nil
}

// all returns every request kept, oldest first, each with its status as of
// now. An entry that does not decode is logged and skipped.
func (s *Server) all(ctx context.Context) ([]*request, error) {
	now := s.now()
	var out []*request
	err := s.st.Entries(ctx, SpaceRequests, func(key string, b []byte) error {
		r, err := decodeRequest(b)
		if err != nil {
			s.logger.Error("approval page: a kept request does not decode; skipped", "id", fmt.Sprintf("%q", key), "err", err)
			return nil
		}
		r.expire(now)
		out = append(out, r)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("approvals: listing requests: %w", err)
	}
	slices.SortStableFunc(out, func(a, b *request) int {
		if c := a.created.Compare(b.created); c != 0 {
			return c
		}
		return strings.Compare(a.id, b.id)
	})
	return out, nil
}

// Sessions. The cookie holds a random token; the store holds only its
// SHA-256 (sessionKey) with who signed in and until when. The form token
// against cross-site posts is derived from the session token (csrfOf), so
// it is never stored either: someone who reads the store learns no cookie
// and no form token.

// sessionRecord is a sign-in as kept in SpaceSessions under sessionKey.
type sessionRecord struct {
	V        int       `json:"v"`
	Approver string    `json:"approver"`
	Expires  time.Time `json:"expires"`
}

func sessionKey(token string) string { return tokenHash("intentplane-session-v1", token) }

func csrfOf(token string) string { return tokenHash("intentplane-csrf-v1", token) }

// tokenHash is the SHA-256, in hex, of a session token under a use's tag.
func tokenHash(tag, token string) string {
	h := sha256.Sum256([]byte(tag + "\x00" + token))
	return hex.EncodeToString(h[:])
}

// putSession keeps a sign-in of approver until expires.
func (s *Server) putSession(ctx context.Context, token, approver string, expires time.Time) error {
	return s.putJSON(ctx, SpaceSessions, sessionKey(token), sessionRecord{V: recordVersion, Approver: approver, Expires: expires.UTC()}, expires)
}

// session returns the live sign-in of token, or nil: none, expired, not
// decodable, or of an approver no longer configured.
func (s *Server) session(ctx context.Context, token string) (*session, error) {
	b, ok, err := s.st.Entry(ctx, SpaceSessions, sessionKey(token))
	if err != nil || !ok {
		return nil, err
	}
	var rec sessionRecord
	if json.Unmarshal(b, &rec) != nil || rec.V != recordVersion || s.approvers[rec.Approver] == nil || !s.now().Before(rec.Expires) {
		return nil, nil
	}
	return &session{approver: rec.Approver, csrf: csrfOf(token), expires: rec.Expires}, nil
}

// countSessions counts the live sign-ins.
func (s *Server) countSessions(ctx context.Context) (int, error) {
	n := 0
	now := s.now()
	err := s.st.Entries(ctx, SpaceSessions, func(_ string, b []byte) error {
		var rec sessionRecord
		if json.Unmarshal(b, &rec) == nil && now.Before(rec.Expires) {
			n++
		}
		return nil
	})
	return n, err
}

// callbackRecordJSON is a call-back as kept in SpaceCallbacks, under the
// time it was recorded and its id (so that key order is time order).
type callbackRecordJSON struct {
	V       int             `json:"v"`
	Entry   CallbackEntry   `json:"entry"`
	Receipt receipt.Receipt `json:"receipt"`
}

func callbackKey(e CallbackEntry) string {
	return e.At.UTC().Format("20060102T150405.000000000Z") + "/" + e.ID
}

// putCallback keeps r, for the page's list, for Config.CallbackRetain.
func (s *Server) putCallback(ctx context.Context, r callbackRecord) error {
	return s.putJSON(ctx, SpaceCallbacks, callbackKey(r.entry), callbackRecordJSON{V: recordVersion, Entry: r.entry, Receipt: r.receipt}, r.entry.At.Add(s.cfg.CallbackRetain))
}

// callbackRecords calls fn with every call-back kept, oldest first; an
// entry that does not decode is logged and skipped.
func (s *Server) callbackRecords(ctx context.Context, fn func(callbackRecord) error) error {
	return s.st.Entries(ctx, SpaceCallbacks, func(key string, b []byte) error {
		var rec callbackRecordJSON
		if err := json.Unmarshal(b, &rec); err != nil || rec.V != recordVersion {
			s.logger.Error("approval page: a kept call-back does not decode; skipped", "key", fmt.Sprintf("%q", key), "err", err)
			return nil
		}
		return fn(callbackRecord{entry: rec.Entry, receipt: rec.Receipt})
	})
}
