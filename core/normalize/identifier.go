package normalize

import "strings"

// maxIdentifier is the longest identifier, in characters.
const maxIdentifier = 128

// Identifier normalizes a plain record identifier such as "INV-2290",
// "P-1001" or "7". It trims surrounding ASCII spaces (U+0020 only), keeps
// the case, and accepts 1 to 128 characters among the ASCII letters, digits
// and - _ . : /.
//
// Identifier refuses any other character, among them spaces inside the
// identifier, control characters and any non-ASCII character (look-alikes
// such as a Cyrillic 'Р' are refused, never folded). It also refuses a
// '/'-separated segment that is "." or "..", so an identifier cannot climb a
// path when an executor puts it in a URL or a file name.
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindIdentifier].
func Identifier(s string) (string, error) {
	const kind = KindIdentifier
	if err := checkASCII(kind, s); err != nil {
		return "", err
	}
	t, lead := trimSpaces(s)
	switch {
	case t == "":
		return "", fail(kind, s, "is empty")
	case len(t) > maxIdentifier:
		return "", fail(kind, s, "has %d characters; an identifier has at most %d", len(t), maxIdentifier)
	}
	for i := 0; i < len(t); i++ {
		if c := t[i]; !isAlnum(c) && strings.IndexByte("-_.:/", c) < 0 {
			return "", fail(kind, s, "contains %s at position %d; an identifier has only letters, digits and - _ . : /", char(c), lead+i+1)
		}
	}
	for seg := range strings.SplitSeq(t, "/") {
		if seg == "." || seg == ".." {
			return "", fail(kind, s, "has a %q path segment; it is refused so the identifier cannot climb a path", seg)
		}
	}
	return t, nil
}
