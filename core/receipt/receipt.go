package receipt

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// Decision is the gateway's decision recorded in a receipt.
type Decision string

// The decisions.
const (
	Allow  Decision = "allow"
	Deny   Decision = "deny"
	StepUp Decision = "step_up" // a human must approve this exact operation
)

// The values of Receipt.Result.
const (
	ResultExecuted    = "executed"     // the executor ran the operation
	ResultNotExecuted = "not_executed" // refused, stepped up, or never reached the executor
	ResultFailed      = "failed"       // the executor reported an error; nothing is retried
)

// Evidence is one approval presented for an operation.
type Evidence struct {
	// ID identifies the approval (it is single use).
	ID string
	// Approver names the human who approved.
	Approver string
	// Level is the approval level: "confirm" or "four_eyes".
	Level string
	// IssuedAt and ExpiresAt bound the approval's validity, in UTC; zero if
	// unknown.
	IssuedAt, ExpiresAt time.Time
}

// Receipt is the record of one decision of the gateway, allowed or not. It
// is one link of its owner's receipt chain.
type Receipt struct {
	// Seq is the receipt's 1-based position in its owner's chain; set by
	// Link.
	Seq uint64
	// Owner is the owner whose chain holds the receipt. The empty owner is
	// a chain like any other, for refusals made before any owner is known.
	Owner intent.Owner
	// Time is when the decision was made, in UTC; it must not be zero.
	Time time.Time
	// Prev is the hash of the owner's previous receipt; zero for Seq 1. Set
	// by Link.
	Prev Hash
	// MandateID identifies the session's mandate; empty when the mandate
	// could not be read.
	MandateID string
	// Action is the action as decoded; empty if the proposal was malformed.
	Action intent.Action
	// Sent is what the agent sent, verbatim (the raw proposal body). A body
	// that is not valid UTF-8 is stored as SentText stores it.
	Sent string
	// Args are the arguments that execute (resolved values); nil on an early
	// refusal.
	Args intent.Args
	// Resolved lists each critical value: what was sent, the trusted value
	// and its provenance.
	Resolved []intent.Resolved
	// Facts are the facts read by context providers, by name.
	Facts map[string]intent.Value
	// Decision is the gateway's decision.
	Decision Decision
	// Code is the reason code; empty for a plain allow.
	Code intent.Code
	// Message is the message given to the agent.
	Message string
	// Policies are the determining policies, sorted (Link sorts them).
	Policies []string
	// Operation is the operation hash in hex; empty if none was built.
	Operation string
	// Approvals are the approvals presented for the operation.
	Approvals []Evidence
	// Result is ResultExecuted, ResultNotExecuted or ResultFailed.
	Result string
	// Output is the short execution output or error summary shown to the
	// agent; it never holds secrets.
	Output string
	// Hash is SHA-256(0x00 || r.Canonical()): the hash of every field
	// above. Set by Link.
	Hash Hash
}

// Domain bytes that separate the hashes intentplane computes (operation
// hashes in package intent use 0x02).
const (
	receiptDomain    = 0x00
	checkpointDomain = 0x01
)

// ErrInvalid is returned (wrapped) by Link, ComputeHash and SignCheckpoint
// for a receipt or checkpoint that cannot be recorded: a zero time, a
// predecessor of another owner, a sequence number beyond 2^63-1, a value of
// invalid kind, or a string that is not valid UTF-8.
var ErrInvalid = errors.New("receipt: invalid receipt")

// sentPrefix marks a Sent body stored in base64.
const sentPrefix = "base64:"

// SentText returns body as Receipt.Sent stores it: verbatim if it is valid
// UTF-8 and does not begin with "base64:", otherwise "base64:" followed by
// its standard base64 encoding (so the two forms never collide).
func SentText(body []byte) string {
	if utf8.Valid(body) && !strings.HasPrefix(string(body), sentPrefix) {
		return string(body)
	}
	return sentPrefix + base64.StdEncoding.EncodeToString(body)
}

// Link returns r placed after prev in its owner's chain: Seq is prev.Seq+1
// (1 if prev is nil), Prev is prev.Hash (zero if prev is nil), Time is in
// UTC, Policies are sorted (in a copy), Sent is converted by SentText if it
// is not valid UTF-8, invalid UTF-8 in Output is replaced by U+FFFD, and
// Hash is computed. The Seq, Prev and Hash r carries are ignored.
//
// prev must be the owner's current head as stored; stores call Link under
// their per-owner lock. Link returns an error wrapping ErrInvalid if r.Time
// is zero, prev belongs to another owner, or r cannot be encoded
// canonically.
func Link(r Receipt, prev *Receipt) (Receipt, error) {
	if r.Time.IsZero() {
		return Receipt{}, fmt.Errorf("%w: time is not set", ErrInvalid)
	}
	r.Seq, r.Prev = 1, Hash{}
	if prev != nil {
		if prev.Owner != r.Owner {
			return Receipt{}, fmt.Errorf("%w: previous receipt belongs to owner %q, not %q", ErrInvalid, prev.Owner, r.Owner)
		}
		r.Seq, r.Prev = prev.Seq+1, prev.Hash
	}
	r.Time = r.Time.UTC()
	if !slices.IsSorted(r.Policies) {
		r.Policies = slices.Clone(r.Policies)
		slices.Sort(r.Policies)
	}
	if !utf8.ValidString(r.Sent) {
		r.Sent = SentText([]byte(r.Sent))
	}
	r.Output = strings.ToValidUTF8(r.Output, "\uFFFD")
	h, err := r.ComputeHash()
	if err != nil {
		return Receipt{}, err
	}
	r.Hash = h
	return r, nil
}

// ComputeHash returns SHA-256(0x00 || r.Canonical()), the hash r.Hash must
// hold. It does not read r.Hash. It returns an error wrapping ErrInvalid if
// r cannot be encoded canonically.
func (r *Receipt) ComputeHash() (Hash, error) {
	b, err := r.Canonical()
	if err != nil {
		return Hash{}, err
	}
	return domainHash(receiptDomain, b), nil
}

func domainHash(domain byte, b []byte) Hash {
	d := sha256.New()
	d.Write([]byte{domain})
	d.Write(b)
	var h Hash
	d.Sum(h[:0])
	return h
}

// Canonical returns the canonical encoding (intent.Canonical) of every
// field of r except Hash: the bytes r.Hash is computed over.
//
// The encoding is a JSON object with these keys: seq, owner, time, prev,
// mandate, action, sent, args, resolved, facts, decision, code, message,
// policies, operation, approvals, result, output. A field whose value is
// zero (empty string, zero number, zero time, zero hash, nil or empty slice
// or map) is left out, at every level of nesting, so that a field added
// later, absent from old receipts, leaves their hashes unchanged. Keys are
// only ever added, never renamed. Times are UTC with nanoseconds, hashes
// are lowercase hex, and each argument or fact is a typed value (see
// WriteJSONL) whose kind and scale are hashed too, so changing 1250.00 into
// 125000 changes the hash. Map entries are always kept: their key is
// content.
//
// It returns an error wrapping ErrInvalid if a string is not valid UTF-8, a
// value has an invalid kind, or Seq exceeds 2^63-1.
func (r *Receipt) Canonical() ([]byte, error) {
	m, err := r.fields()
	if err != nil {
		return nil, err
	}
	return canonical(m)
}

func canonical(m map[string]any) ([]byte, error) {
	b, err := intent.Canonical(m)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return b, nil
}

// fields returns the receipt as the map that is hashed and exported.
func (r *Receipt) fields() (map[string]any, error) {
	m := make(map[string]any, 20)
	if err := putSeq(m, "seq", r.Seq); err != nil {
		return nil, err
	}
	putString(m, "owner", string(r.Owner))
	putTime(m, "time", r.Time)
	putHash(m, "prev", r.Prev)
	putString(m, "mandate", r.MandateID)
	putString(m, "action", string(r.Action))
	putString(m, "sent", r.Sent)
	if len(r.Args) > 0 {
		args, err := valueMap(r.Args)
		if err != nil {
			return nil, err
		}
		m["args"] = args
	}
	if len(r.Resolved) > 0 {
		rs := make([]any, len(r.Resolved))
		for i, res := range r.Resolved {
			rm := map[string]any{}
			putString(rm, "param", res.Param)
			putString(rm, "sent", res.Sent)
			putString(rm, "value", res.Value)
			pm := map[string]any{}
			putString(pm, "source", res.Provenance.Source)
			putString(pm, "record", res.Provenance.RecordID)
			putString(pm, "version", res.Provenance.Version)
			putTime(pm, "at", res.Provenance.At)
			if len(pm) > 0 {
				rm["provenance"] = pm
			}
			rs[i] = rm
		}
		m["resolved"] = rs
	}
	if len(r.Facts) > 0 {
		facts, err := valueMap(r.Facts)
		if err != nil {
			return nil, err
		}
		m["facts"] = facts
	}
	putString(m, "decision", string(r.Decision))
	putString(m, "code", string(r.Code))
	putString(m, "message", r.Message)
	if len(r.Policies) > 0 {
		m["policies"] = r.Policies
	}
	putString(m, "operation", r.Operation)
	if len(r.Approvals) > 0 {
		as := make([]any, len(r.Approvals))
		for i, a := range r.Approvals {
			am := map[string]any{}
			putString(am, "id", a.ID)
			putString(am, "approver", a.Approver)
			putString(am, "level", a.Level)
			putTime(am, "issued", a.IssuedAt)
			putTime(am, "expires", a.ExpiresAt)
			as[i] = am
		}
		m["approvals"] = as
	}
	putString(m, "result", r.Result)
	putString(m, "output", r.Output)
	return m, nil
}

func putString(m map[string]any, k, v string) {
	if v != "" {
		m[k] = v
	}
}

func putTime(m map[string]any, k string, t time.Time) {
	if !t.IsZero() {
		m[k] = t.UTC()
	}
}

func putHash(m map[string]any, k string, h Hash) {
	if !h.IsZero() {
		m[k] = h.String()
	}
}

func putSeq(m map[string]any, k string, seq uint64) error {
	if seq > math.MaxInt64 {
		return fmt.Errorf("%w: seq %d exceeds 2^63-1", ErrInvalid, seq)
	}
	if seq != 0 {
		m[k] = int64(seq)
	}
	return nil
}

// Value kinds as they are written in receipts: each value is an object with
// exactly one of these keys (and "scale" for amounts).
const (
	keyString = "string"
	keyInt    = "int"
	keyAmount = "amount"
	keyBool   = "bool"
	keyScale  = "scale"
)

func valueMap[M ~map[string]intent.Value](vs M) (map[string]any, error) {
	out := make(map[string]any, len(vs))
	for k, v := range vs {
		tv, err := typedValue(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %q: %w", ErrInvalid, k, err)
		}
		out[k] = tv
	}
	return out, nil
}

// typedValue encodes v with its kind: {"string":s}, {"int":n},
// {"amount":minor,"scale":s} (scale always written) or {"bool":b}.
func typedValue(v intent.Value) (map[string]any, error) {
	switch v.Kind {
	case intent.KindString:
		return map[string]any{keyString: v.Str}, nil
	case intent.KindInt:
		return map[string]any{keyInt: v.Int}, nil
	case intent.KindAmount:
		return map[string]any{keyAmount: v.Int, keyScale: v.Scale}, nil
	case intent.KindBool:
		return map[string]any{keyBool: v.Bool}, nil
	}
	return nil, fmt.Errorf("value of invalid kind %d", v.Kind)
}
