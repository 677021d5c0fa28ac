package state

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// The page sizes of ReceiptQuery.Limit.
const (
	// DefaultPageSize is the page size of a query whose Limit is zero.
	DefaultPageSize = 50
	// MaxPageSize is the largest page: a larger Limit reads this many.
	MaxPageSize = 1000
)

// Errors returned by ReceiptIndex.Page (wrapped).
var (
	// ErrBadCursor: a cursor that no Page returned (altered, truncated,
	// or not a cursor at all), or one returned for a query with other
	// filters.
	ErrBadCursor = errors.New("state: not a cursor of this query")
	// ErrBadQuery: a query that cannot be run (an unknown verdict, a
	// negative limit).
	ErrBadQuery = errors.New("state: invalid receipt query")
)

// ReceiptIndex reads the receipts of every owner a page at a time, newest
// first, through indexes on time, verdict, result and resolved payee, so
// that a page costs the same in a log of ten receipts or of millions. It
// is optional: a Store need not implement it (store/mem, store/embedded
// and store/postgres do). Safe for concurrent use with Append.
type ReceiptIndex interface {
	// Page returns the receipts q selects, at most q's limit of them, in
	// the order of ReceiptKey, newest first; an empty page (and no error)
	// when none is left. Receipts appended while a client pages through
	// never make a page repeat or skip one that was stored when the first
	// page was read (the cursor is a position in that order, not an
	// offset). Errors: ErrBadCursor, ErrBadQuery (wrapped), or the
	// store's.
	Page(ctx context.Context, q ReceiptQuery) (ReceiptPage, error)
}

// ReceiptQuery selects receipts for ReceiptIndex.Page. The zero value
// selects every receipt of every owner, first page.
type ReceiptQuery struct {
	// Owners limits the receipts to these owners' chains; nil means every
	// owner, an empty non-nil slice none.
	Owners []intent.Owner
	// From and To bound Receipt.Time: From inclusive, To exclusive; zero
	// means unbounded.
	From, To time.Time
	// Verdict keeps the receipts of this verdict (intent.Verdict.String:
	// "allow", "deny", "step_up"); empty means any.
	Verdict string
	// Result keeps the receipts of this result (receipt.ResultExecuted,
	// ResultNotExecuted, ResultFailed); empty means any.
	Result string
	// Payee keeps the receipts that resolved one of PayeeParams to
	// exactly this value (Receipt.Resolved: the trusted value on file,
	// such as a vendor id), compared byte for byte; empty means any.
	Payee string
	// PayeeParams names the parameters whose resolved value is the payee,
	// as the packs' contracts declare them (the parameters their running
	// totals are by); empty means any resolved parameter.
	PayeeParams []string
	// Cursor is where the page starts: ReceiptPage.Next or Prev of a page
	// read with the same filters; empty means the newest receipts.
	Cursor string
	// Limit is the page size; zero means DefaultPageSize, and more than
	// MaxPageSize reads MaxPageSize.
	Limit int
}

// ReceiptPage is one page of receipts.
type ReceiptPage struct {
	// Receipts are the page's receipts, newest first.
	Receipts []receipt.Receipt
	// Next is the cursor of the page of older receipts; empty when none
	// is left.
	Next string
	// Prev is the cursor of the page of newer receipts; empty on the
	// first page.
	Prev string
}

// ReceiptKey is a receipt's position in the order of ReceiptIndex:
// by time, then owner (bytewise), then Seq.
type ReceiptKey struct {
	Time  time.Time // UTC
	Owner intent.Owner
	Seq   uint64
}

// KeyOf returns r's ReceiptKey.
func KeyOf(r receipt.Receipt) ReceiptKey {
	return ReceiptKey{Time: r.Time.UTC(), Owner: r.Owner, Seq: r.Seq}
}

// Compare returns -1, 0 or +1 as k sorts before, with or after o (older
// first).
func (k ReceiptKey) Compare(o ReceiptKey) int {
	switch {
	case !k.Time.Equal(o.Time):
		return k.Time.Compare(o.Time)
	case k.Owner != o.Owner:
		return strings.Compare(string(k.Owner), string(o.Owner))
	case k.Seq < o.Seq:
		return -1
	case k.Seq > o.Seq:
		return 1
	}
	return 0
}

// Plan is a checked ReceiptQuery, as a store runs it: the page size, where
// the page starts and in which direction.
type Plan struct {
	ReceiptQuery
	// Limit is the page size to return (1 to MaxPageSize).
	Limit int
	// After, when Start is set, is the cursor's key: the page holds the
	// receipts older than it (Back false) or newer than it (Back true).
	After ReceiptKey
	Start bool
	// Back says the page is read towards newer receipts (a Prev cursor):
	// the store reads them oldest first, and Finish puts them back newest
	// first.
	Back bool
}

// PlanOf checks q and returns its Plan: an error wrapping ErrBadQuery or
// ErrBadCursor.
func PlanOf(q ReceiptQuery) (Plan, error) {
	p := Plan{ReceiptQuery: q, Limit: q.Limit}
	switch {
	case q.Limit < 0:
		return p, fmt.Errorf("%w: negative limit %d", ErrBadQuery, q.Limit)
	case q.Limit == 0:
		p.Limit = DefaultPageSize
	case q.Limit > MaxPageSize:
		p.Limit = MaxPageSize
	}
	if q.Verdict != "" {
		if _, err := intent.ParseVerdict(q.Verdict); err != nil {
			return p, fmt.Errorf("%w: verdict %q", ErrBadQuery, q.Verdict)
		}
	}
	if q.Cursor != "" {
		k, back, err := parseCursor(q.Cursor, q.digest())
		if err != nil {
			return p, err
		}
		p.After, p.Back, p.Start = k, back, true
	}
	return p, nil
}

// Entry is what an index keeps of a receipt to filter it without reading
// it: its key, verdict, result and resolved values.
type Entry struct {
	Key      ReceiptKey
	Verdict  intent.Verdict
	Result   string
	Resolved []Resolved
}

// Resolved is one resolved parameter of a receipt and its trusted value.
type Resolved struct {
	Param, Value string
}

// EntryOf returns r's Entry.
func EntryOf(r receipt.Receipt) Entry {
	e := Entry{Key: KeyOf(r), Verdict: r.Verdict, Result: r.Result}
	for _, res := range r.Resolved {
		if res.Value != "" {
			e.Resolved = append(e.Resolved, Resolved{Param: res.Param, Value: res.Value})
		}
	}
	return e
}

// Keeps reports whether the receipt of e passes every filter of p (not
// the cursor).
func (p Plan) Keeps(e Entry) bool {
	if p.Owners != nil && !slices.Contains(p.Owners, e.Key.Owner) {
		return false
	}
	if !p.From.IsZero() && e.Key.Time.Before(p.From) || !p.To.IsZero() && !e.Key.Time.Before(p.To) {
		return false
	}
	if p.Verdict != "" && e.Verdict.String() != p.Verdict || p.Result != "" && e.Result != p.Result {
		return false
	}
	return p.Payee == "" || slices.ContainsFunc(e.Resolved, func(res Resolved) bool {
		return res.Value == p.Payee && (len(p.PayeeParams) == 0 || slices.Contains(p.PayeeParams, res.Param))
	})
}

// Beyond reports whether k is past the cursor in the page's direction
// (always true without a cursor).
func (p Plan) Beyond(k ReceiptKey) bool {
	if !p.Start {
		return true
	}
	c := k.Compare(p.After)
	return p.Back && c > 0 || !p.Back && c < 0
}

// Finish returns the page of rs, which the store read in the plan's
// direction (newest first, or oldest first when Back), at most Limit+1 of
// them: the extra one tells that a further page exists.
func (p Plan) Finish(rs []receipt.Receipt) ReceiptPage {
	more := len(rs) > p.Limit
	if more {
		rs = rs[:p.Limit]
	}
	if p.Back {
		slices.Reverse(rs)
	}
	out := ReceiptPage{Receipts: rs}
	if len(rs) == 0 {
		return out
	}
	d := p.digest()
	if more || p.Back {
		out.Next = cursor(KeyOf(rs[len(rs)-1]), false, d)
	}
	if p.Back && more || !p.Back && p.Start {
		out.Prev = cursor(KeyOf(rs[0]), true, d)
	}
	return out
}

// Cursor returns the cursor of q's page next to the receipt at k: the
// receipts older than k, or newer than k when newer is true. A reader
// that filters pages further (and so stops within one) makes its own
// cursors with it; Cursor(q, ReceiptKey{}, true) reads from the oldest
// receipt on (each page still newest first).
func Cursor(q ReceiptQuery, k ReceiptKey, newer bool) string {
	return cursor(k, newer, q.digest())
}

// cursorVersion is the first byte of every cursor.
const cursorVersion = 1

// digest is what a cursor is bound to: q's filters.
func (q ReceiptQuery) digest() [8]byte {
	h := sha256.New()
	w := func(s string) {
		var n [8]byte
		binary.BigEndian.PutUint64(n[:], uint64(len(s)))
		h.Write(n[:])
		h.Write([]byte(s))
	}
	w("intentplane receipt cursor")
	w(fmt.Sprint(q.Owners == nil, len(q.Owners)))
	for _, o := range q.Owners {
		w(string(o))
	}
	w(q.From.UTC().Format(time.RFC3339Nano))
	w(q.To.UTC().Format(time.RFC3339Nano))
	w(q.Verdict)
	w(q.Result)
	w(q.Payee)
	for _, p := range q.PayeeParams {
		w(p)
	}
	var d [8]byte
	copy(d[:], h.Sum(nil))
	return d
}

// cursor encodes k: version, direction, time (Unix seconds and
// nanoseconds), seq, owner, then a checksum over them and the query's
// digest.
func cursor(k ReceiptKey, back bool, digest [8]byte) string {
	b := make([]byte, 0, 2+20+len(k.Owner)+8)
	b = append(b, cursorVersion, 0)
	if back {
		b[1] = 1
	}
	b = binary.BigEndian.AppendUint64(b, uint64(k.Time.Unix()))
	b = binary.BigEndian.AppendUint32(b, uint32(k.Time.Nanosecond()))
	b = binary.BigEndian.AppendUint64(b, k.Seq)
	b = append(b, k.Owner...)
	sum := sha256.Sum256(append(slices.Clone(b), digest[:]...))
	return base64.RawURLEncoding.EncodeToString(append(b, sum[:8]...))
}

// parseCursor decodes what cursor encoded for a query of this digest.
func parseCursor(s string, digest [8]byte) (ReceiptKey, bool, error) {
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) < 2+20+8 || b[0] != cursorVersion || b[1] > 1 {
		return ReceiptKey{}, false, fmt.Errorf("%w: malformed", ErrBadCursor)
	}
	body, sum := b[:len(b)-8], b[len(b)-8:]
	want := sha256.Sum256(append(slices.Clone(body), digest[:]...))
	if string(want[:8]) != string(sum) {
		return ReceiptKey{}, false, fmt.Errorf("%w: altered, or read with other filters", ErrBadCursor)
	}
	ns := binary.BigEndian.Uint32(body[10:])
	if ns >= 1e9 {
		return ReceiptKey{}, false, fmt.Errorf("%w: malformed time", ErrBadCursor)
	}
	k := ReceiptKey{
		Time: time.Unix(int64(binary.BigEndian.Uint64(body[2:])), int64(ns)).UTC(),
		Seq:  binary.BigEndian.Uint64(body[14:]), Owner: intent.Owner(body[22:]),
	}
	return k, body[1] == 1, nil
}
