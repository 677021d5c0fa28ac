package receipt

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
)

// Kind classifies how a receipt chain is broken.
type Kind string

// The kinds of ChainError.
const (
	// KindEdited: a receipt's content was changed. Either its stored hash
	// does not match its content, or it matches but the next receipt links
	// to another hash (the hash was recomputed after the edit), or it
	// differs from the head a checkpoint signed.
	KindEdited Kind = "edited"
	// KindRemoved: receipts are missing. The seq jumps forward (expected N,
	// got N+k, and no receipt N follows later in the file), or a checkpoint
	// attests a seq beyond the chain's end (a truncated tail).
	KindRemoved Kind = "removed"
	// KindInserted: a receipt that is not part of the chain: a copy of a
	// receipt already seen, a second receipt that links to a predecessor
	// already followed (a fork), or a receipt that links to nothing while
	// the chain continues around it.
	KindInserted Kind = "inserted"
	// KindReordered: a genuine receipt in the wrong place: its seq jumps
	// forward while the expected receipt appears later in the file, or its
	// seq goes backwards, and it links to its own predecessor.
	KindReordered Kind = "reordered"
	// KindMalformed: a line that cannot be read: not JSON, unknown type or
	// keys, a bad hash, time or value, a seq of 0.
	KindMalformed Kind = "malformed"
	// KindBadSignature: a checkpoint whose signature does not verify, or
	// whose key the Verifier does not know.
	KindBadSignature Kind = "bad_signature"
)

var kindPhrase = map[Kind]string{
	KindEdited:       "receipt was edited",
	KindRemoved:      "receipts were removed",
	KindInserted:     "receipt was inserted",
	KindReordered:    "receipt is out of order",
	KindMalformed:    "line is malformed",
	KindBadSignature: "checkpoint signature is invalid",
}

// ChainError reports the first place where a receipt chain read by Verify
// is broken.
type ChainError struct {
	// Owner is the owner of the broken chain; empty if a malformed line
	// does not tell.
	Owner intent.Owner
	// Seq is the seq of the receipt named (of the offending line, or for a
	// truncated tail the first missing seq); 0 if unknown.
	Seq uint64
	// Line is the 1-based number of the offending line.
	Line int
	// Kind says how the chain is broken.
	Kind Kind
	// Detail explains it for people.
	Detail string
	// Err is the underlying error (a JSON or Verifier error), or nil.
	Err error
}

// Error returns, for example, `receipt chain of owner "emma": line 7 (seq
// 5): receipt was edited: its hash does not match its content`.
func (e *ChainError) Error() string {
	var b strings.Builder
	if e.Owner == "" && e.Kind == KindMalformed {
		b.WriteString("receipt log")
	} else {
		fmt.Fprintf(&b, "receipt chain of owner %q", e.Owner)
	}
	fmt.Fprintf(&b, ": line %d", e.Line)
	if e.Seq != 0 {
		fmt.Fprintf(&b, " (seq %d)", e.Seq)
	}
	b.WriteString(": ")
	if p, ok := kindPhrase[e.Kind]; ok {
		b.WriteString(p)
	} else {
		b.WriteString(string(e.Kind))
	}
	if e.Detail != "" {
		b.WriteString(": ")
		b.WriteString(e.Detail)
	}
	return b.String()
}

// Unwrap returns e.Err.
func (e *ChainError) Unwrap() error { return e.Err }

// Report summarizes what Verify read.
type Report struct {
	// Owners is the number of owners with a receipt or a checkpoint.
	Owners int
	// Receipts is the number of receipt lines read.
	Receipts int
	// Checkpoints is the number of checkpoint lines read.
	Checkpoints int
	// Unverified is the number of checkpoints whose signature was not
	// checked because Verify was given a nil Verifier.
	Unverified int
	// UnknownKeys counts, by key id, the checkpoints signed with a key
	// the Verifier does not know (Verifier.Verify gave ErrUnknownKey):
	// such a checkpoint attests nothing and is ignored, neither accepted
	// nor an error, so that a file holding checkpoints of several signers
	// (the gateway's own and an export's) verifies with the keys one
	// trusts. Nil when there is none.
	UnknownKeys map[string]int
	// Heads is, per owner, the hash of the last receipt of the verified
	// chain.
	Heads map[intent.Owner]Hash
	// Unanchored lists, sorted by owner, each chain with receipts that no
	// checkpoint verified with the Verifier covers up to its head: a
	// checkpoint of its last receipt (seq and hash) is missing. With a nil
	// Verifier no checkpoint is verified, so every chain is listed. Nil
	// when every chain is anchored.
	Unanchored []Unanchored
}

// Unanchored is a receipt chain that no trusted checkpoint covers up to its
// head. Such a chain is consistent, but nothing shows that it is the one the
// gateway wrote: it may have been rewritten from its start, invented for an
// owner the gateway never served, or extended after its last checkpoint.
type Unanchored struct {
	// Owner is the chain's owner.
	Owner intent.Owner
	// Head is the seq of the chain's last receipt.
	Head uint64
	// Covered is the seq of the newest receipt a verified checkpoint
	// attests (its hash matching); 0 if none does.
	Covered uint64
}

// String returns, for example, `owner "emma": receipts 1 to 4, no
// checkpoint` or `owner "noah": receipts 6 to 9 after the last checkpoint
// (seq 5)`.
func (u Unanchored) String() string {
	span := fmt.Sprintf("receipt %d", u.Head)
	if u.Head > u.Covered+1 {
		span = fmt.Sprintf("receipts %d to %d", u.Covered+1, u.Head)
	}
	if u.Covered == 0 {
		return fmt.Sprintf("owner %q: %s, no checkpoint", u.Owner, span)
	}
	return fmt.Sprintf("owner %q: %s after the last checkpoint (seq %d)", u.Owner, span, u.Covered)
}

// ErrUnanchored is wrapped by the *UnanchoredError VerifyAnchored returns.
var ErrUnanchored = errors.New("receipt: chain not anchored by a trusted checkpoint")

// UnanchoredError names every chain that no trusted checkpoint covers up to
// its head.
type UnanchoredError struct {
	// Chains are the unanchored chains, sorted by owner.
	Chains []Unanchored
	// Total is the number of chains with receipts.
	Total int
}

// Error returns, for example, `2 of 3 receipt chains are not anchored by a
// trusted checkpoint: owner "emma": receipts 1 to 4, no checkpoint; owner
// "noah": receipts 6 to 9 after the last checkpoint (seq 5)`.
func (e *UnanchoredError) Error() string {
	parts := make([]string, len(e.Chains))
	for i, u := range e.Chains {
		parts[i] = u.String()
	}
	return fmt.Sprintf("%d of %d receipt chains are not anchored by a trusted checkpoint: %s", len(e.Chains), e.Total, strings.Join(parts, "; "))
}

// Unwrap returns ErrUnanchored.
func (e *UnanchoredError) Unwrap() error { return ErrUnanchored }

// MaxLine is the longest line Verify reads, in bytes; a longer line is
// malformed.
const MaxLine = 8 << 20

// Verify reads JSON Lines as WriteJSONL and WriteCheckpoints write them
// (receipt and checkpoint lines, several owners interleaved, blank lines
// ignored) and verifies each owner's chain. It works offline, with v's
// public keys alone.
//
// Each owner's chain must start at seq 1 with a zero prev and run, in file
// order, through seq 2, 3, ... each receipt's prev being the hash of the one
// before and each hash matching its content. Every checkpoint's signature
// is checked with v, and its head must be the hash of the receipt with its
// seq; a checkpoint beyond the chain's end means the tail was removed.
// Checkpoints may appear anywhere in the file. If v is nil, signatures are
// not checked (Report.Unverified counts those checkpoints) but their heads
// still are: a nil v detects accidents, not forgers.
//
// Verify returns a *ChainError naming the first offending line (the
// smallest line number among all owners' first breaks) and the receipt it
// holds; see the Kind constants for the classification. Where the break is
// a link (receipt N+1's prev is not receipt N's hash) and no receipt N+1
// linking to receipt N follows, receipt N is named as edited (its hash was
// recomputed after an edit), unless a checkpoint attests receipt N, in
// which case receipt N+1 is named. When a reordering is found, the first
// line out of place is named. A receipt appended after the last checkpoint
// by someone who can write the log cannot be told from a genuine one; nor
// can a chain rewritten from its start when no checkpoint covers it: such
// chains are listed in Report.Unanchored, and VerifyAnchored refuses them.
//
// The Report is returned in every case, counting what was read; its Heads
// are those of the chains as far as they verified. Errors reading r are
// returned as they are.
func Verify(r io.Reader, v Verifier) (Report, error) {
	vr, err := verify(r, v)
	return vr.report(), err
}

// VerifyAnchored is Verify that also requires every chain to be anchored:
// covered up to its head by a checkpoint whose signature v verifies (so v
// holds only keys the caller trusts). A broken chain is reported first, as
// by Verify; then, if any chain is unanchored, it returns an
// *UnanchoredError (wrapping ErrUnanchored) naming each one. This detects
// what Verify alone cannot: a chain rewritten from its start, an invented
// owner's chain, receipts appended after the last checkpoint. It returns an
// error if v is nil.
func VerifyAnchored(r io.Reader, v Verifier) (Report, error) {
	if v == nil {
		return Report{}, errors.New("receipt: VerifyAnchored needs a Verifier with the trusted checkpoint keys")
	}
	vr, err := verify(r, v)
	rep := vr.report()
	if err == nil && len(rep.Unanchored) > 0 {
		err = &UnanchoredError{Chains: rep.Unanchored, Total: len(rep.Heads)}
	}
	return rep, err
}

func verify(r io.Reader, v Verifier) (*verifier, error) {
	vr := &verifier{v: v, owners: map[intent.Owner]*chain{}}
	if err := vr.read(r); err != nil {
		return vr, err
	}
	for _, o := range vr.order {
		vr.owners[o].check(vr)
	}
	if vr.first != nil {
		return vr, vr.first
	}
	return vr, nil
}

type verifier struct {
	v           Verifier
	owners      map[intent.Owner]*chain
	order       []intent.Owner
	receipts    int
	checkpoints int
	unverified  int
	unknownKeys map[string]int
	first       *ChainError
}

// entry is a receipt line as the chain check needs it.
type entry struct {
	line int
	seq  uint64
	prev Hash
	hash Hash // as stored
	ok   bool // hash matches the content
}

type checkpointEntry struct {
	line int
	c    Checkpoint
}

type chain struct {
	owner       intent.Owner
	entries     []entry
	bySeq       map[uint64][]int // seq → indexes into entries
	checkpoints []checkpointEntry
	accepted    map[uint64]int // seq → index of the entry accepted in the chain
	headSeq     uint64
	head        int    // index of the head entry, -1 if none
	covered     uint64 // the seq of the newest accepted receipt a verified checkpoint attests
}

func (vr *verifier) fail(e *ChainError) {
	if vr.first == nil || e.Line < vr.first.Line {
		vr.first = e
	}
}

func (vr *verifier) chain(o intent.Owner) *chain {
	c, ok := vr.owners[o]
	if !ok {
		c = &chain{owner: o, bySeq: map[uint64][]int{}, accepted: map[uint64]int{}, head: -1}
		vr.owners[o] = c
		vr.order = append(vr.order, o)
	}
	return c
}

func (vr *verifier) report() Report {
	rep := Report{
		Owners:      len(vr.owners),
		Receipts:    vr.receipts,
		Checkpoints: vr.checkpoints,
		Unverified:  vr.unverified,
		UnknownKeys: vr.unknownKeys,
		Heads:       map[intent.Owner]Hash{},
	}
	for o, c := range vr.owners {
		if c.head >= 0 {
			rep.Heads[o] = c.entries[c.head].hash
			if c.covered < c.headSeq {
				rep.Unanchored = append(rep.Unanchored, Unanchored{Owner: o, Head: c.headSeq, Covered: c.covered})
			}
		}
	}
	sort.Slice(rep.Unanchored, func(i, j int) bool { return rep.Unanchored[i].Owner < rep.Unanchored[j].Owner })
	return rep
}

func (vr *verifier) read(r io.Reader) error {
	return scan(r, func(n int, line []byte, tooLong bool) {
		if tooLong {
			vr.fail(&ChainError{Line: n, Kind: KindMalformed, Detail: "line longer than " + strconv.Itoa(MaxLine) + " bytes"})
		} else {
			vr.line(n, line)
		}
	})
}

// scan calls f for each line of r that is not blank, with its 1-based
// number. A line longer than MaxLine is passed as nil with tooLong set.
func scan(r io.Reader, f func(n int, line []byte, tooLong bool)) error {
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, tooLong, err := readLine(br)
		if err != nil && err != io.EOF {
			return fmt.Errorf("receipt: reading: %w", err)
		}
		if tooLong || len(bytes.TrimSpace(line)) > 0 {
			f(n, line, tooLong)
		}
		if err == io.EOF {
			return nil
		}
	}
}

// readLine reads one line without its end; tooLong reports a line longer
// than MaxLine, which is consumed but not returned.
func readLine(br *bufio.Reader) (line []byte, tooLong bool, err error) {
	for {
		frag, err := br.ReadSlice('\n')
		if !tooLong && len(line)+len(frag) <= MaxLine+2 {
			line = append(line, frag...)
		} else {
			tooLong, line = true, nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) > MaxLine {
			tooLong, line = true, nil
		}
		return line, tooLong, err
	}
}

func (vr *verifier) line(n int, b []byte) {
	var t jsonLine
	if err := json.Unmarshal(b, &t); err != nil {
		vr.fail(&ChainError{Line: n, Kind: KindMalformed, Detail: "not a JSON object", Err: err})
		return
	}
	switch t.Type {
	case typeReceipt:
		r, err := decodeReceipt(b)
		if err != nil {
			vr.fail(&ChainError{Owner: r.Owner, Seq: r.Seq, Line: n, Kind: KindMalformed, Detail: err.Error(), Err: err})
			return
		}
		h, err := r.ComputeHash()
		if err != nil {
			vr.fail(&ChainError{Owner: r.Owner, Seq: r.Seq, Line: n, Kind: KindMalformed, Detail: err.Error(), Err: err})
			return
		}
		vr.receipts++
		c := vr.chain(r.Owner)
		c.bySeq[r.Seq] = append(c.bySeq[r.Seq], len(c.entries))
		c.entries = append(c.entries, entry{line: n, seq: r.Seq, prev: r.Prev, hash: r.Hash, ok: h == r.Hash})
	case typeCheckpoint:
		cp, err := decodeCheckpoint(b)
		if err == nil {
			_, err = cp.SigHash()
		}
		if err != nil {
			vr.fail(&ChainError{Owner: cp.Owner, Seq: cp.Seq, Line: n, Kind: KindMalformed, Detail: err.Error(), Err: err})
			return
		}
		vr.checkpoints++
		c := vr.chain(cp.Owner)
		if vr.v == nil {
			vr.unverified++
		} else if err := cp.Verify(vr.v); errors.Is(err, ErrUnknownKey) {
			if vr.unknownKeys == nil {
				vr.unknownKeys = map[string]int{}
			}
			vr.unknownKeys[cp.KeyID]++
			return // attests nothing: ignored
		} else if err != nil {
			vr.fail(&ChainError{Owner: cp.Owner, Seq: cp.Seq, Line: n, Kind: KindBadSignature, Detail: err.Error(), Err: err})
			return
		}
		c.checkpoints = append(c.checkpoints, checkpointEntry{line: n, c: cp})
	default:
		vr.fail(&ChainError{Line: n, Kind: KindMalformed, Detail: fmt.Sprintf(`"type" is %q, want "receipt" or "checkpoint"`, t.Type)})
	}
}

// check walks the chain in file order, accepting each receipt that follows
// the head, classifies the first one that does not, then compares the
// checkpoints with what was accepted.
func (c *chain) check(vr *verifier) {
	attested := map[uint64]Hash{}
	for _, cp := range c.checkpoints {
		attested[cp.c.Seq] = cp.c.Head
	}
	broken := false
	for i := range c.entries {
		x := &c.entries[i]
		if !x.ok {
			vr.fail(c.err(x, KindEdited, "its hash does not match its content"))
			broken = true
			break
		}
		var h Hash
		if c.head >= 0 {
			h = c.entries[c.head].hash
		}
		if x.seq == c.headSeq+1 && x.prev == h {
			c.accepted[x.seq] = i
			c.head, c.headSeq = i, x.seq
			continue
		}
		vr.fail(c.classify(i, h, attested))
		broken = true
		break
	}
	c.checkCheckpoints(vr, broken)
}

func (c *chain) err(x *entry, k Kind, format string, args ...any) *ChainError {
	return &ChainError{Owner: c.owner, Seq: x.seq, Line: x.line, Kind: k, Detail: fmt.Sprintf(format, args...)}
}

// successorAfter returns the index of an entry after i with the given seq
// and prev, or -1.
func (c *chain) successorAfter(i int, seq uint64, prev Hash) int {
	for _, j := range c.bySeq[seq] {
		if j > i && c.entries[j].prev == prev {
			return j
		}
	}
	return -1
}

// followedAfter reports whether an entry after i links to h.
func (c *chain) followedAfter(i int, h Hash) bool {
	for j := i + 1; j < len(c.entries); j++ {
		if c.entries[j].prev == h {
			return true
		}
	}
	return false
}

// links reports whether x links to a receipt of its own predecessor seq
// found anywhere in the file (or is a first receipt with a zero prev).
func (c *chain) links(x *entry) bool {
	if x.seq == 1 {
		return x.prev.IsZero()
	}
	for _, j := range c.bySeq[x.seq-1] {
		if c.entries[j].hash == x.prev {
			return true
		}
	}
	return false
}

// classify names the break at entry i, which does not follow the head
// (whose hash is h).
func (c *chain) classify(i int, h Hash, attested map[uint64]Hash) *ChainError {
	x := &c.entries[i]
	want := c.headSeq + 1
	switch {
	case x.seq > want:
		return c.classifyAhead(i, h)
	case x.seq == want: // the prev does not link to the head
		return c.classifyUnlinked(i, h, attested)
	default: // x.seq < want: the seq goes backwards
		return c.classifyBehind(i)
	}
}

// classifyAhead names the break at entry i, whose seq is beyond the
// head's successor: a receipt reordered or inserted before it, or
// receipts removed.
func (c *chain) classifyAhead(i int, h Hash) *ChainError {
	x := &c.entries[i]
	want := c.headSeq + 1
	if j := c.successorAfter(i, want, h); j >= 0 {
		if c.links(x) {
			return c.err(x, KindReordered, "it comes before receipt seq %d (line %d)", want, c.entries[j].line)
		}
		return c.err(x, KindInserted, "it links to no receipt of the chain, which continues with seq %d at line %d", want, c.entries[j].line)
	}
	if x.seq == want+1 {
		return c.err(x, KindRemoved, "expected seq %d, got %d: receipt %d is missing", want, x.seq, want)
	}
	return c.err(x, KindRemoved, "expected seq %d, got %d: receipts %d to %d are missing", want, x.seq, want, x.seq-1)
}

// classifyUnlinked names the break at entry i, the head's successor by
// seq whose prev is not the head's hash h: an insertion, or an edit of it
// or of the head.
func (c *chain) classifyUnlinked(i int, h Hash, attested map[uint64]Hash) *ChainError {
	x := &c.entries[i]
	if j := c.successorAfter(i, c.headSeq+1, h); j >= 0 {
		return c.err(x, KindInserted, "it does not link to receipt seq %d; the receipt that does is at line %d", c.headSeq, c.entries[j].line)
	}
	if c.head < 0 {
		return c.err(x, KindEdited, "the first receipt's prev is not zero")
	}
	head := &c.entries[c.head]
	if a, ok := attested[c.headSeq]; ok && a == h {
		return c.err(x, KindEdited, "its prev does not match receipt seq %d, which a checkpoint attests", c.headSeq)
	}
	return c.err(head, KindEdited, "it was edited and its hash recomputed: the next receipt (line %d) links to %s, not to its hash", x.line, x.prev)
}

// classifyBehind names the break at entry i, whose seq is one the chain
// already accepted: a copy, a fork, or a receipt reordered or inserted.
func (c *chain) classifyBehind(i int) *ChainError {
	x := &c.entries[i]
	want := c.headSeq + 1
	a := &c.entries[c.accepted[x.seq]]
	if a.hash == x.hash {
		return c.err(x, KindInserted, "it is a copy of the receipt at line %d", a.line)
	}
	if a.prev == x.prev {
		if x.seq == c.headSeq && !c.followedAfter(i, a.hash) && c.followedAfter(i, x.hash) {
			return c.err(a, KindInserted, "it and the receipt at line %d both follow receipt seq %d, and the chain continues from the other", x.line, x.seq-1)
		}
		return c.err(x, KindInserted, "it and the receipt at line %d both follow receipt seq %d", a.line, x.seq-1)
	}
	if c.links(x) {
		return c.err(x, KindReordered, "expected seq %d, got %d", want, x.seq)
	}
	return c.err(x, KindInserted, "expected seq %d, got %d, which links to no receipt of the chain", want, x.seq)
}

// checkCheckpoints compares each checkpoint with the accepted chain. If the
// chain is broken, checkpoints beyond the accepted part are not judged.
func (c *chain) checkCheckpoints(vr *verifier, broken bool) {
	for _, cp := range c.checkpoints {
		if cp.c.Seq > c.headSeq {
			if broken {
				continue
			}
			end := "the chain has no receipt"
			if c.head >= 0 {
				end = fmt.Sprintf("the chain ends at seq %d (line %d)", c.headSeq, c.entries[c.head].line)
			}
			vr.fail(&ChainError{Owner: c.owner, Seq: c.headSeq + 1, Line: cp.line, Kind: KindRemoved,
				Detail: fmt.Sprintf("%s but the checkpoint on this line attests seq %d", end, cp.c.Seq)})
			continue
		}
		x := &c.entries[c.accepted[cp.c.Seq]]
		if x.hash == cp.c.Head {
			if vr.v != nil && cp.c.Seq > c.covered {
				c.covered = cp.c.Seq
			}
			continue
		}
		// The latest matching checkpoint below bounds where the edit is.
		var lo uint64
		for _, o := range c.checkpoints {
			if s := o.c.Seq; s < cp.c.Seq && s > lo && c.entries[c.accepted[s]].hash == o.c.Head {
				lo = s
			}
		}
		where := "this receipt"
		if lo+1 < cp.c.Seq {
			where = fmt.Sprintf("this receipt or one of seq %d to %d", lo+1, cp.c.Seq-1)
		}
		vr.fail(c.err(x, KindEdited, "its hash differs from the head signed in the checkpoint at line %d: %s was edited and the hashes after it recomputed", cp.line, where))
	}
}
