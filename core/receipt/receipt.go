package receipt

import (
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// The values of Receipt.Result.
const (
	ResultExecuted    = "executed"     // the executor ran the operation
	ResultNotExecuted = "not_executed" // refused, stepped up, or never reached the executor
	ResultFailed      = "failed"       // the outcome is unknown: it may have taken effect; nothing is retried
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
	// Channel names how the person confirmed: ChannelPage, ChannelWebhook,
	// ChannelElicitation or ChannelPasskey. Empty when not recorded: every
	// receipt of version 1 or 2, which cannot hold it.
	Channel string
	// Run, for the approval of a run (a payment run), is the run's hash in
	// hex (approval.RunHash): what the approval, and its passkey assertion,
	// are over, the receipt's Operation being one of the run's lines (or,
	// on the page's receipt of the vote, the run as requested). Empty for
	// the approval of one operation, and in receipts of version 1 or 2.
	Run string
	// Passkey is the WebAuthn assertion of an approval given with a passkey
	// (Channel is ChannelPasskey); zero otherwise. The receipt carries its
	// bytes under its hash; `intentplane receipts verify` checks them.
	// Receipts of version 1 or 2 cannot hold it.
	Passkey intent.Assertion
}

// The values of Evidence.Channel: how a person confirmed.
const (
	// ChannelPage: on the approval page, signed in with a passcode.
	ChannelPage = "page"
	// ChannelWebhook: in a chat or ticket tool that called the approval
	// webhook back, signed by that tool's key.
	ChannelWebhook = "webhook"
	// ChannelElicitation: in the MCP client, which asked its user
	// (elicitation); only as trustworthy as the client.
	ChannelElicitation = "elicitation"
	// ChannelPasskey: on the approval page, with a WebAuthn assertion over
	// the operation hash and the approval's ID (Evidence.Passkey).
	ChannelPasskey = "passkey"
)

// recorded reports whether ev holds what only version 3 can encode.
func (ev *Evidence) recorded() bool {
	return ev.Channel != "" || ev.Run != "" || !ev.Passkey.IsZero()
}

// errChannel is returned (wrapped in ErrInvalid) for a receipt of version
// 1 or 2 whose approvals record a channel or an assertion.
var errChannel = errors.New("an approval's channel, run or passkey needs receipt version 3")

// checkOld returns an error wrapping ErrInvalid if version is 1 or 2 and
// as hold what those versions cannot encode, and nil otherwise.
func checkOld(version uint8, as []Evidence) error {
	if version != Version1 && version != Version2 {
		return nil
	}
	for i := range as {
		if as[i].recorded() {
			return fmt.Errorf("%w: %w (version %d)", ErrInvalid, errChannel, version)
		}
	}
	return nil
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
	// that is not valid UTF-8 is stored as SentText stores it; of a long
	// proposal, or one that may carry a secret argument, only what SentFor
	// says is kept.
	Sent string
	// Args are the arguments that execute (resolved values); nil on an early
	// refusal.
	Args intent.Args
	// Resolved lists each critical value: what was sent, the trusted value
	// and its provenance.
	Resolved []intent.Resolved
	// Facts are the facts read by context providers, by name.
	Facts map[string]intent.Value
	// Verdict is the gateway's decision (encoded as "decision").
	Verdict intent.Verdict
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
	// Version is the version of the encoding Hash covers: Version1,
	// Version2 or Version3. Zero means CurrentVersion; Link sets it.
	Version uint8
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
// is not valid UTF-8, invalid UTF-8 in Output is replaced by U+FFFD, a zero
// Version becomes CurrentVersion, and Hash is computed. The Seq, Prev and
// Hash r carries are ignored.
//
// prev must be the owner's current head as stored; stores call Link under
// their per-owner lock. Link returns an error wrapping ErrInvalid if r.Time
// is zero, prev belongs to another owner, or r cannot be encoded
// canonically.
func Link(r Receipt, prev *Receipt) (Receipt, error) {
	err := r.prepare(prev)
	if err != nil {
		return Receipt{}, err
	}
	if r.Hash, err = r.ComputeHash(); err != nil {
		return Receipt{}, err
	}
	return r, nil
}

// prepare does to r, a copy of the caller's receipt, what Link does but
// for the hash.
func (r *Receipt) prepare(prev *Receipt) error {
	if r.Time.IsZero() {
		return fmt.Errorf("%w: time is not set", ErrInvalid)
	}
	r.Seq, r.Prev = 1, Hash{}
	if prev != nil {
		if prev.Owner != r.Owner {
			return fmt.Errorf("%w: previous receipt belongs to owner %q, not %q", ErrInvalid, prev.Owner, r.Owner)
		}
		r.Seq, r.Prev = prev.Seq+1, prev.Hash
	}
	r.Time = r.Time.UTC()
	if r.Version == 0 {
		r.Version = CurrentVersion
	}
	if !slices.IsSorted(r.Policies) {
		r.Policies = slices.Clone(r.Policies)
		slices.Sort(r.Policies)
	}
	if !utf8.ValidString(r.Sent) {
		r.Sent = SentText([]byte(r.Sent))
	}
	if !utf8.ValidString(r.Output) { // the common case copies nothing
		r.Output = strings.ToValidUTF8(r.Output, "\uFFFD")
	}
	return nil
}

// ComputeHash returns SHA-256(0x00 || r.Canonical()), the hash r.Hash must
// hold. It does not read r.Hash. It returns an error wrapping ErrInvalid if
// r cannot be encoded canonically.
func (r *Receipt) ComputeHash() (Hash, error) {
	buf := encodings.Get().(*[]byte)
	defer putEncoding(buf)
	b, err := r.appendHashed(append((*buf)[:0], receiptDomain))
	if err != nil {
		return Hash{}, err
	}
	*buf = b // keep what the buffer grew to
	return sha256.Sum256(b), nil
}

// encodings holds buffers for the encodings that are hashed and then
// dropped, so that hashing a receipt allocates nothing.
var encodings = sync.Pool{New: func() any { b := make([]byte, 0, 2048); return &b }}

// putEncoding returns buf to encodings, unless it grew too large to keep.
func putEncoding(buf *[]byte) {
	if cap(*buf) <= 64<<10 {
		encodings.Put(buf)
	}
}

// Canonical returns the bytes r.Hash is computed over (after the domain
// byte): the encoding of every field of r except Hash, in the version
// r.Version names (zero means CurrentVersion).
//
// Version 3 is version 2 with its first byte 0x03 and each approval
// followed by its channel and its run (strings) and its passkey assertion: credential
// ID, authenticator data, client data JSON and signature, each a byte
// string (its length in bytes, uvarint, and its bytes), empty if none.
//
// Version 2 is a binary encoding in which every item delimits itself, so
// that two different receipts never give the same bytes. It is the byte
// 0x02, then the fields in the order of the Receipt struct: seq (uvarint),
// owner, time, prev (32 bytes), mandate, action, sent, args, resolved,
// facts, decision (Verdict.String), code, message, policies, operation,
// approvals, result, output. A string is its length in bytes (uvarint)
// and its bytes; a time is the byte 0 if it is zero, else the byte 1, its
// seconds since the Unix epoch (varint) and its nanoseconds (uvarint); a
// list is its length (uvarint) and its items: each resolved parameter as
// param, sent, value, provenance source, record, version and at, each
// approval as id, approver, level, issued and expires; args and facts are
// their number of entries (uvarint) and, by key in byte order, the key,
// the kind (1 string, 2 int, 3 amount, 4 bool) and the value: a string, a
// varint, a varint and the scale (one byte), or one byte 0 or 1. Fields
// are never added to version 2: a new field makes a new version.
//
// Version 1 is the canonical JSON object of intent.Canonical with these
// keys: seq, owner, time, prev, mandate, action, sent, args, resolved,
// facts, decision, code, message, policies, operation, approvals, result,
// output. A field whose value is zero (empty string, zero number, zero
// time, zero hash, nil or empty slice or map) is left out, at every level
// of nesting. Times are UTC with nanoseconds, hashes are lowercase hex, and
// each argument or fact is a typed value (see WriteJSONL). Its first byte
// is '{', which no version 2 encoding begins with.
//
// In every version the kind and scale of each argument or fact are
// hashed, so changing 1250.00 into 125000 changes the hash, and map
// entries are always kept: their key is content.
//
// It returns an error wrapping ErrInvalid if a string is not valid UTF-8, a
// value has an invalid kind, Seq exceeds 2^63-1, the version is unknown,
// or a receipt of version 1 or 2 has an approval with a channel or a
// passkey (which those versions cannot encode).
func (r *Receipt) Canonical() ([]byte, error) {
	return r.appendHashed(nil)
}

// appendHashed appends r.Canonical() to dst.
func (r *Receipt) appendHashed(dst []byte) ([]byte, error) {
	switch r.Version {
	case 0:
		return r.appendBinary(dst, CurrentVersion)
	case Version2, Version3:
		return r.appendBinary(dst, r.Version)
	case Version1:
		if err := checkOld(Version1, r.Approvals); err != nil {
			return nil, err
		}
		return r.appendJSON(dst)
	}
	return nil, fmt.Errorf("%w: %w %d", ErrInvalid, errVersion, r.Version)
}

// The keys of a receipt's encoding, encoded once.
var (
	nAction     = intent.NewName("action")
	nApprovals  = intent.NewName("approvals")
	nApprover   = intent.NewName("approver")
	nAuthData   = intent.NewName("authenticator_data")
	nChannel    = intent.NewName("channel")
	nClientData = intent.NewName("client_data")
	nCredential = intent.NewName("credential")
	nPasskey    = intent.NewName("passkey")
	nSignature  = intent.NewName("signature")
	nArgs       = intent.NewName("args")
	nAt         = intent.NewName("at")
	nCode       = intent.NewName("code")
	nDecision   = intent.NewName("decision")
	nExpires    = intent.NewName("expires")
	nFacts      = intent.NewName("facts")
	nId         = intent.NewName("id")
	nIssued     = intent.NewName("issued")
	nLevel      = intent.NewName("level")
	nMandate    = intent.NewName("mandate")
	nMessage    = intent.NewName("message")
	nOperation  = intent.NewName("operation")
	nOutput     = intent.NewName("output")
	nOwner      = intent.NewName("owner")
	nParam      = intent.NewName("param")
	nPolicies   = intent.NewName("policies")
	nPrev       = intent.NewName("prev")
	nProvenance = intent.NewName("provenance")
	nRecord     = intent.NewName("record")
	nResolved   = intent.NewName("resolved")
	nResult     = intent.NewName("result")
	nRun        = intent.NewName("run")
	nSent       = intent.NewName("sent")
	nSeq        = intent.NewName("seq")
	nSource     = intent.NewName("source")
	nTime       = intent.NewName("time")
	nValue      = intent.NewName("value")
	nVersion    = intent.NewName("version")
)

// appendJSON appends the JSON object of r to dst: the version 1 encoding
// (see Canonical), with the string members extra (sorted by key) added to
// the object. It does not read r.Version.
func (r *Receipt) appendJSON(dst []byte, extra ...member) ([]byte, error) {
	if r.Seq > math.MaxInt64 {
		return nil, fmt.Errorf("%w: seq %d exceeds 2^63-1", ErrInvalid, r.Seq)
	}
	var enc intent.Encoder
	enc.Reset(dst)
	e := &enc
	o := object{e: e, extra: extra}
	// The members in ascending key order, as the encoder requires.
	e.BeginObject()
	o.string(nAction, string(r.Action))
	if len(r.Approvals) > 0 {
		o.key(nApprovals)
		appendApprovals(e, r.Approvals)
	}
	if len(r.Args) > 0 {
		o.key(nArgs)
		typedValues(e, r.Args)
	}
	o.string(nCode, string(r.Code))
	o.string(nDecision, r.Verdict.String())
	if len(r.Facts) > 0 {
		o.key(nFacts)
		typedValues(e, r.Facts)
	}
	o.string(nMandate, r.MandateID)
	o.string(nMessage, r.Message)
	o.string(nOperation, r.Operation)
	o.string(nOutput, r.Output)
	o.string(nOwner, string(r.Owner))
	if len(r.Policies) > 0 {
		o.key(nPolicies)
		e.BeginArray()
		for _, p := range r.Policies {
			e.String(p)
		}
		e.EndArray()
	}
	o.hash(nPrev, r.Prev)
	if len(r.Resolved) > 0 {
		o.key(nResolved)
		appendResolved(e, r.Resolved)
	}
	o.string(nResult, r.Result)
	o.string(nSent, r.Sent)
	o.seq(nSeq, r.Seq)
	o.time(nTime, r.Time)
	o.end()
	b, err := e.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return b, nil
}

// appendApprovals encodes a receipt's approvals member: an array of
// objects, their members in key order.
func appendApprovals(e *intent.Encoder, as []Evidence) {
	e.BeginArray()
	for _, a := range as {
		ao := object{e: e}
		e.BeginObject()
		ao.string(nApprover, a.Approver)
		ao.string(nChannel, a.Channel)
		ao.time(nExpires, a.ExpiresAt)
		ao.string(nId, a.ID)
		ao.time(nIssued, a.IssuedAt)
		ao.string(nLevel, a.Level)
		if p := a.Passkey; !p.IsZero() {
			ao.key(nPasskey)
			po := object{e: e}
			e.BeginObject()
			po.bytes(nAuthData, p.AuthenticatorData)
			po.bytes(nClientData, p.ClientDataJSON)
			po.bytes(nCredential, p.CredentialID)
			po.bytes(nSignature, p.Signature)
			po.end()
		}
		ao.string(nRun, a.Run)
		ao.end()
	}
	e.EndArray()
}

// appendResolved encodes a receipt's resolved member: an array of
// objects, their members (and the provenance's) in key order.
func appendResolved(e *intent.Encoder, rs []intent.Resolved) {
	e.BeginArray()
	for _, res := range rs {
		ro := object{e: e}
		e.BeginObject()
		ro.string(nParam, res.Param)
		if p := res.Provenance; p != (intent.Provenance{}) {
			ro.key(nProvenance)
			po := object{e: e}
			e.BeginObject()
			po.time(nAt, p.At)
			po.string(nRecord, p.RecordID)
			po.string(nSource, p.Source)
			po.string(nVersion, p.Version)
			po.end()
		}
		ro.string(nSent, res.Sent)
		ro.string(nValue, res.Value)
		ro.end()
	}
	e.EndArray()
}

// member is a member added to an encoded object: the "type", "hash" and
// "version" of a JSON Lines record. Its value is the string value, or the
// number n if value is empty.
type member struct {
	key, value string
	n          uint64
}

// write writes m's key and value.
func (m member) write(e *intent.Encoder) {
	e.Key(m.key)
	if m.value == "" {
		e.Uint(m.n)
		return
	}
	e.String(m.value)
}

// object writes the members of one object, which its caller gives in
// ascending key order, leaving out those whose value is zero, and places the
// extra members (sorted by key) among them. The encoder checks the order.
type object struct {
	e     *intent.Encoder
	extra []member
}

// key writes the key k, after the extra members whose keys come before it.
func (o *object) key(k intent.Name) {
	for len(o.extra) > 0 && o.extra[0].key < k.String() {
		o.extra[0].write(o.e)
		o.extra = o.extra[1:]
	}
	o.e.Name(k)
}

// end writes the remaining extra members and closes the object.
func (o *object) end() {
	for _, m := range o.extra {
		m.write(o.e)
	}
	o.extra = nil
	o.e.EndObject()
}

func (o *object) string(k intent.Name, v string) {
	if v != "" {
		o.key(k)
		o.e.String(v)
	}
}

// bytes writes b in standard base64 (with padding), if it is not empty.
func (o *object) bytes(k intent.Name, b []byte) {
	if len(b) > 0 {
		o.key(k)
		o.e.String(base64.StdEncoding.EncodeToString(b))
	}
}

func (o *object) time(k intent.Name, t time.Time) {
	if !t.IsZero() {
		o.key(k)
		o.e.Time(t)
	}
}

func (o *object) hash(k intent.Name, h Hash) {
	if !h.IsZero() {
		o.key(k)
		o.e.Hex(h[:])
	}
}

// seq writes a sequence number, which the caller checked is at most
// 2^63-1.
func (o *object) seq(k intent.Name, seq uint64) {
	if seq != 0 {
		o.key(k)
		o.e.Uint(seq)
	}
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

// The keys of a typed value, encoded once.
var (
	nString = intent.NewName(keyString)
	nInt    = intent.NewName(keyInt)
	nAmount = intent.NewName(keyAmount)
	nBool   = intent.NewName(keyBool)
	nScale  = intent.NewName(keyScale)
)

// typedValues writes vs as an object of typed values, by key in byte order.
func typedValues[M ~map[string]intent.Value](e *intent.Encoder, vs M) {
	var buf [16]string
	keys := buf[:0]
	for k := range vs {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	e.BeginObject()
	for _, k := range keys {
		e.Key(k)
		typedValue(e, vs[k])
	}
	e.EndObject()
}

// typedValue writes v with its kind: {"string":s}, {"int":n},
// {"amount":minor,"scale":s} (scale always written) or {"bool":b}. A value
// of invalid kind is the encoder's error.
func typedValue(e *intent.Encoder, v intent.Value) {
	switch v.Kind {
	case intent.KindString:
		e.BeginObject()
		e.Name(nString)
		e.String(v.Str)
		e.EndObject()
	case intent.KindInt:
		e.BeginObject()
		e.Name(nInt)
		e.Int(v.Int)
		e.EndObject()
	case intent.KindAmount:
		e.BeginObject()
		e.Name(nAmount)
		e.Int(v.Int)
		e.Name(nScale)
		e.Uint(uint64(v.Scale))
		e.EndObject()
	case intent.KindBool:
		e.BeginObject()
		e.Name(nBool)
		e.Bool(v.Bool)
		e.EndObject()
	default:
		e.Value(v) // records the invalid kind as the encoder's error
	}
}
