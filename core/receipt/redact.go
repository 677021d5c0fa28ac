package receipt

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/intentplane/intentplane/core/intent"
)

// What a receipt keeps of sensitive values and large inputs: their
// SHA-256, so that the append-only chain never holds a secret or a
// record's contents, while the values can still be matched against it.

// MaxSent bounds, in bytes, what a receipt keeps of a proposal: an agent
// must not be able to make a receipt too large to verify.
const MaxSent = 4096

// Sensitive reports whether an argument's value is secret (a password, a
// patient's notes), from the action's contract.
type Sensitive func(param string) bool

// Digest is "sha256:" and the SHA-256 of s in hex.
func Digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// OutputDigest is "sha256:<hex> (<n> bytes)", what a receipt keeps of an
// executor's output given without summary.
func OutputDigest(out string) string {
	sum := sha256.Sum256([]byte(out))
	b := make([]byte, 0, len("sha256: ( bytes)")+2*len(sum)+20)
	b = hex.AppendEncode(append(b, "sha256:"...), sum[:])
	b = strconv.AppendInt(append(b, " ("...), int64(len(out)), 10)
	return string(append(b, " bytes)"...))
}

// SentFor is what a receipt keeps of what the agent sent (Receipt.Sent):
// the proposal verbatim (see SentText), cut after MaxSent bytes and
// followed by its size and digest. When p was decoded and sensitive names
// an argument of it, p is re-encoded with sorted keys instead, each
// sensitive or larger-than-MaxSent argument replaced by the digest of its
// raw JSON. p is nil when the proposal did not decode: with sensitive set,
// only body's digest and size are kept then (OutputDigest), since a secret
// may be anywhere in it. When p is not nil, body is the proposal p was
// decoded from, so valid UTF-8 that begins with white space or '{' (never
// "base64:"), and is kept as it is without being checked again.
func SentFor(body []byte, p *intent.Proposal, sensitive Sensitive) string {
	if sensitive != nil {
		if p == nil {
			return OutputDigest(string(body))
		}
		return redactedProposal(*p, sensitive)
	}
	if p != nil && len(body) <= MaxSent {
		return string(body)
	}
	if len(body) <= MaxSent {
		return SentText(body)
	}
	cut := MaxSent
	for cut > 0 && !utf8.RuneStart(body[cut]) {
		cut--
	}
	sum := sha256.Sum256(body)
	return SentText(body[:cut]) + fmt.Sprintf(" …[cut: %d bytes in all, sha256:%x]", len(body), sum)
}

func redactedProposal(p intent.Proposal, sensitive Sensitive) string {
	names := make([]string, 0, len(p.Args))
	for k := range p.Args {
		names = append(names, k)
	}
	sort.Strings(names)
	var b strings.Builder
	action, _ := json.Marshal(string(p.Action))
	b.WriteString(`{"action":`)
	b.Write(action)
	b.WriteString(`,"args":{`)
	for i, k := range names {
		if i > 0 {
			b.WriteByte(',')
		}
		key, _ := json.Marshal(k)
		b.Write(key)
		b.WriteByte(':')
		raw := p.Args[k]
		if sensitive(k) || len(raw) > MaxSent {
			b.WriteString(`"` + Digest(string(raw)) + `"`)
			continue
		}
		b.Write(raw)
	}
	b.WriteString("}}")
	return b.String()
}

// RedactArgs returns a copy of args with each sensitive value replaced by
// the digest of its text.
func RedactArgs(args intent.Args, sensitive Sensitive) intent.Args {
	out := args.Clone()
	for k, v := range args {
		if sensitive(k) {
			out[k] = intent.Str(Digest(v.String()))
		}
	}
	return out
}

// RedactResolved returns a copy of rs with the value sent and the value
// resolved of each sensitive parameter replaced by their digests.
func RedactResolved(rs []intent.Resolved, sensitive Sensitive) []intent.Resolved {
	out := make([]intent.Resolved, len(rs))
	for i, r := range rs {
		if sensitive(r.Param) {
			r.Sent, r.Value = Digest(r.Sent), Digest(r.Value)
		}
		out[i] = r
	}
	return out
}
