package mcpproxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Defaults bounding what a client can make the proxy hold over stdio.
const (
	// defaultMaxMessage bounds one JSON-RPC line. A proposal is refused
	// above 64 KiB anyway; 1 MiB leaves room for large _meta and
	// elicitation answers.
	defaultMaxMessage = 1 << 20
	// defaultMaxInFlight bounds the bytes of client requests read but not
	// yet answered.
	defaultMaxInFlight = 16 << 20
	// stdioWorkers and stdioQueue size mcp-go's tool call pool: workers
	// run calls concurrently, so that open confirmations never hold up
	// other calls; the queue holds calls waiting for a worker.
	stdioWorkers = 100
	stdioQueue   = 256
)

// badLine replaces a line the proxy refuses to pass on: it cannot parse,
// so mcp-go answers it with a parse error.
const badLine = "\x00refused message\n"

// lineLimiter passes the client's JSON-RPC lines on to mcp-go, one whole
// line at a time, so that what a client makes the proxy hold is bounded:
//
//   - a line longer than max is dropped (a parse error answers it);
//   - a request (a method and an id) is passed on only once its bytes fit
//     in the in-flight budget, and they stay counted until the response
//     with its id is written (see responseWatcher); reading stops until
//     then, so a flood of calls waits in the client's pipe, not in memory;
//   - a request whose id is neither a string nor an integer, and a
//     tools/call without id, are dropped, since their answer could not be
//     matched (or there would be none).
//   - a tools/call in which some object gives a key twice is answered
//     with an error (-32602 when the object is under params): mcp-go
//     would keep the last value, while a log or a reviewer may read the
//     first.
type lineLimiter struct {
	r       io.Reader
	max     int
	fl      *inflight
	reply   func([]byte) // writes a whole answer to the client; nil: placeholders only
	buf     []byte       // output ready for Read
	line    []byte       // the current line so far
	skip    bool         // dropping the rest of an oversized line
	scratch []byte
}

func (l *lineLimiter) Read(p []byte) (int, error) {
	for len(l.buf) == 0 {
		if l.scratch == nil {
			l.scratch = make([]byte, 64<<10)
		}
		n, err := l.r.Read(l.scratch)
		l.filter(l.scratch[:n])
		if err != nil {
			if len(l.line) > 0 && !l.skip {
				l.emit(l.line)
			}
			l.line, l.skip = nil, false
			if len(l.buf) == 0 {
				return 0, err
			}
		}
	}
	n := copy(p, l.buf)
	l.buf = l.buf[n:]
	if len(l.buf) == 0 {
		l.buf = nil // release a large line at once
	}
	return n, nil
}

func (l *lineLimiter) filter(b []byte) {
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		seg := b
		if i >= 0 {
			seg = b[:i+1]
		}
		b = b[len(seg):]
		if !l.skip {
			if len(l.line)+len(seg) > l.max {
				head := append(l.line, seg[:min(len(seg), l.max-len(l.line))]...)
				if !l.answer(head, codeInvalidRequest, fmt.Sprintf("The message is larger than %d bytes, so it was not read. Nothing was done.", l.max)) {
					l.buf = append(l.buf, "\x00oversized message\n"...)
				}
				l.skip, l.line = true, nil
			} else {
				l.line = append(l.line, seg...)
			}
		}
		if seg[len(seg)-1] == '\n' {
			if !l.skip {
				l.emit(l.line)
			}
			l.line, l.skip = l.line[:0], false
			if cap(l.line) > 64<<10 {
				l.line = nil
			}
		}
	}
}

// emit queues one complete line for mcp-go, waiting for room in the
// in-flight budget if it is a request.
func (l *lineLimiter) emit(line []byte) {
	var head struct {
		ID     json.RawMessage `json:"id"`
		Method *string         `json:"method"`
	}
	if err := json.Unmarshal(line, &head); err != nil && l.answer(line, codeParseError, "The message is not valid JSON, or is nested too deeply, so it was not read. Nothing was done.") {
		return
	}
	if head.Method == nil {
		// Not JSON (mcp-go answers a parse error), or a response to one
		// of our own requests (an elicitation answer): passed on as is.
		l.buf = append(l.buf, line...)
		return
	}
	if len(head.ID) == 0 || string(head.ID) == "null" {
		if *head.Method == "tools/call" {
			l.buf = append(l.buf, badLine...)
		} else {
			l.buf = append(l.buf, line...) // a notification
		}
		return
	}
	key, ok := idKey(head.ID)
	if !ok {
		l.buf = append(l.buf, badLine...)
		return
	}
	if *head.Method == "tools/call" {
		// encoding/json keeps the last of two equal keys: a call naming
		// "iban" twice could show a reviewer one value and execute the
		// other. Such a call is refused before anything reads it.
		// A number beyond a float64 (1e400, 5000 digits) would get
		// mcp-go's own error, which quotes it whole.
		if f := scan(line); f.key != "" || f.number != "" {
			code := codeInvalidRequest
			if strings.HasPrefix(f.at, "params") {
				code = codeInvalidParams
			}
			msg := fmt.Sprintf("The message gives the key %q twice in one object (at %s), so it was not read: each key must be given once. Nothing was done.", f.key, f.at)
			if f.key == "" {
				msg = fmt.Sprintf("The value at %s is a number out of range (%s): a JSON number must fit a 64-bit float, so the message was not read; "+
					"give an amount as a decimal string such as \"1250.00\". Nothing was done.", f.at, numberText(f.number))
			}
			if !l.answer(line, code, msg) {
				l.buf = append(l.buf, badLine...)
			}
			return
		}
	}
	if l.fl != nil {
		l.fl.acquire(key, len(line))
	}
	l.buf = append(l.buf, line...)
}

// JSON-RPC error codes of the answers lineLimiter gives itself.
const (
	codeParseError     = -32700
	codeInvalidRequest = -32600
	codeInvalidParams  = -32602
)

// answer replies to the request whose start is head with a JSON-RPC error,
// when the request's id can be read from head (a string or an integer,
// before any value that cannot be read); it reports whether it did.
func (l *lineLimiter) answer(head []byte, code int, msg string) bool {
	if l.reply == nil {
		return false
	}
	id, ok := leadingID(head)
	if !ok {
		return false
	}
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "error": map[string]any{"code": code, "message": msg}})
	if err != nil {
		return false
	}
	l.reply(append(b, '\n'))
	return true
}

// leadingID reads the top-level "id" of a JSON object from its first
// bytes, skipping the members before it; ok is false when it cannot be
// read or is neither a string nor an integer.
func leadingID(b []byte) (json.RawMessage, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		if t == "id" {
			if _, ok := idKey(v); !ok {
				return nil, false
			}
			return v, true
		}
	}
	return nil, false
}

// idKey is the canonical form of a JSON-RPC id: "s" and the string, or "n"
// and the integer. Other ids are refused.
func idKey(raw json.RawMessage) (string, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) > 0 && raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return "", false
	}
	return "n" + strconv.FormatInt(n, 10), true
}

// inflight counts the bytes of requests read and not yet answered. It is
// safe for concurrent use.
type inflight struct {
	max int

	mu     sync.Mutex
	cond   *sync.Cond
	used   int
	held   map[string][]int // id → sizes of the requests with that id
	closed bool
}

func newInflight(max int) *inflight {
	f := &inflight{max: max, held: map[string][]int{}}
	f.cond = sync.NewCond(&f.mu)
	return f
}

// acquire waits until n more bytes fit (or nothing else is in flight), then
// counts them under the request id key.
func (f *inflight) acquire(key string, n int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for !f.closed && f.used > 0 && f.used+n > f.max {
		f.cond.Wait()
	}
	f.used += n
	f.held[key] = append(f.held[key], n)
}

// release uncounts the oldest request with the id key, if any.
func (f *inflight) release(key string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s := f.held[key]
	if len(s) == 0 {
		return
	}
	f.used -= s[0]
	if len(s) == 1 {
		delete(f.held, key)
	} else {
		f.held[key] = s[1:]
	}
	f.cond.Broadcast()
}

// close lets every waiting and future acquire through.
func (f *inflight) close() {
	f.mu.Lock()
	f.closed = true
	f.cond.Broadcast()
	f.mu.Unlock()
}

// responseWatcher writes mcp-go's output to the client and releases the
// in-flight bytes of each request it answers. mcp-go writes one whole
// message per Write.
type responseWatcher struct {
	w  io.Writer
	fl *inflight
	mu *sync.Mutex // nil: mcp-go is the only writer
}

func (r responseWatcher) Write(b []byte) (int, error) {
	if r.mu != nil {
		r.mu.Lock()
		defer r.mu.Unlock()
	}
	n, err := r.w.Write(b)
	if key, ok := responseID(b); ok {
		r.fl.release(key)
	}
	return n, err
}

// responseID returns the id key of a response (a message with an id and a
// result or an error, and no method), reading no further than needed: mcp-go
// writes "jsonrpc" and "id" before "result".
func responseID(b []byte) (string, bool) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return "", false
	}
	var id json.RawMessage
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return "", false
		}
		switch t {
		case "method":
			return "", false
		case "id":
			if dec.Decode(&id) != nil {
				return "", false
			}
			continue
		case "result", "error":
			if id == nil {
				// Read on: the id comes after.
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return "", false
				}
				// A message with both a result and a method does not exist;
				// keep reading for the id.
				continue
			}
			return idKey(id)
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return "", false
		}
	}
	if id != nil {
		return idKey(id)
	}
	return "", false
}

// duplicateKey reports the first key that some object of the JSON value b
// gives twice (compared after unescaping, so "iban" and "\u0069ban" are
// the same key), with the path of that object ("params.arguments",
// "params.arguments.lines[2]"; "" for the top level shown as "the
// message"). In the message and in params, which mcp-go decodes into
// structs, keys are also compared as encoding/json matches struct fields,
// ignoring case (foldKey): "arguments" and "Arguments" (or "argument\u017f",
// a long s) both fill the call's arguments, the last one winning. A value
// that cannot be read reports none: it is refused elsewhere.
func duplicateKey(b []byte) (key, at string, found bool) {
	f := scan(b)
	return f.key, f.at, f.key != ""
}

// fault is what scan found wrong in a message: a key given twice (key) or
// a number that encoding/json cannot decode into a float64, as mcp-go
// decodes a call's arguments (number, whole), at the path at.
type fault struct{ key, number, at string }

// maxNumberShown bounds how much of a refused number a message quotes.
const maxNumberShown = 24

// numberText returns n for a message: whole when short, else its first
// maxNumberShown bytes and its length.
func numberText(n string) string {
	if len(n) <= maxNumberShown {
		return n
	}
	return fmt.Sprintf("%s… (%d characters)", n[:maxNumberShown], len(n))
}

// scan walks the JSON value b and returns the first fault (see
// duplicateKey for keys); none when b holds none, or cannot be read.
func scan(b []byte) (f fault) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var walk func(path string) bool // reads one value; false on error or duplicate
	walk = func(path string) bool {
		t, err := dec.Token()
		if err != nil {
			return false
		}
		switch t {
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, err := dec.Token()
				if err != nil {
					return false
				}
				k, _ := kt.(string)
				seenAs := k
				if path == "" || path == "params" {
					seenAs = foldKey(k)
				}
				if seen[seenAs] {
					f.key, f.at = k, path
					if f.at == "" {
						f.at = "the message"
					}
					return false
				}
				seen[seenAs] = true
				sub := k
				if path != "" {
					sub = path + "." + k
				}
				if !walk(sub) {
					return false
				}
			}
			_, err = dec.Token() // '}'
			return err == nil
		case json.Delim('['):
			for i := 0; dec.More(); i++ {
				if !walk(fmt.Sprintf("%s[%d]", path, i)) {
					return false
				}
			}
			_, err = dec.Token() // ']'
			return err == nil
		}
		if n, ok := t.(json.Number); ok {
			if _, err := strconv.ParseFloat(string(n), 64); err != nil {
				f.number, f.at = string(n), path
				return false
			}
		}
		return true
	}
	walk("")
	return f
}

// foldKey folds k as encoding/json does when it matches an object key with
// a struct field: ASCII letters upper-cased, any other rune replaced by the
// smallest rune of its Unicode case-folding orbit (so the long s '\u017f'
// is 'S' and the Kelvin sign is 'K').
func foldKey(k string) string {
	var b strings.Builder
	for _, r := range k {
		switch {
		case 'a' <= r && r <= 'z':
			r -= 'a' - 'A'
		case r >= utf8.RuneSelf:
			for {
				f := unicode.SimpleFold(r)
				if f <= r {
					r = f
					break
				}
				r = f
			}
		}
		b.WriteRune(r)
	}
	return b.String()
}
