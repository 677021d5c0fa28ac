package normalize

import "strings"

// Email normalizes an e-mail address: an addr-spec such as
// "ap@acme.example", in plain ASCII, lower-cased.
//
// Email trims surrounding ASCII spaces (U+0020 only) and lower-cases the
// whole address: intentplane treats addresses case-insensitively, local part
// included. It refuses:
//
//   - any non-ASCII character, including internationalized addresses and
//     look-alikes such as a Cyrillic 'а' (U+0430); an internationalized
//     domain may be given in its ASCII form ("xn--..."), which is kept as
//     written and never decoded;
//   - control characters (tab, newline) and spaces inside the address;
//   - display names, angle brackets, comments and quoted local parts: only
//     the bare address is accepted;
//   - anything but exactly one '@';
//   - a local part that is empty, longer than 64 characters, has a character
//     other than letters, digits and !#$%&'*+-/=?^_`{|}~, or has a leading,
//     trailing or double dot;
//   - a domain that is a literal ("[192.0.2.1]"), has fewer than two labels,
//     has a label that is empty, longer than 63 characters, starts or ends
//     with '-' or has a character other than letters, digits and '-', or
//     whose last label is all digits;
//   - an address longer than 254 characters.
//
// The error, if any, wraps [ErrInvalid] and is an [*Error] of Kind
// [KindEmail].
func Email(s string) (string, error) {
	const kind = KindEmail
	if err := checkASCII(kind, s); err != nil {
		return "", err
	}
	t, lead := trimSpaces(s)
	if t == "" {
		return "", fail(kind, s, "is empty")
	}
	if len(t) > 254 {
		return "", fail(kind, s, "has %d characters; an address has at most 254", len(t))
	}
	if i := strings.IndexAny(t, "<>"); i >= 0 {
		return "", fail(kind, s, "contains %s at position %d; display names and angle brackets are refused, give the bare address such as name@example.com", char(t[i]), lead+i+1)
	}
	if i := strings.IndexAny(t, "()"); i >= 0 {
		return "", fail(kind, s, "contains %s at position %d; comments are refused, give the bare address such as name@example.com", char(t[i]), lead+i+1)
	}
	if i := strings.IndexByte(t, '"'); i >= 0 {
		return "", fail(kind, s, "contains '\"' at position %d; quoted local parts are refused", lead+i+1)
	}
	if i := strings.IndexByte(t, ' '); i >= 0 {
		return "", fail(kind, s, "contains a space at position %d; an address has no spaces", lead+i+1)
	}
	at := strings.IndexByte(t, '@')
	switch {
	case at < 0:
		return "", fail(kind, s, "has no '@'; an address looks like name@example.com")
	case strings.IndexByte(t[at+1:], '@') >= 0:
		return "", fail(kind, s, "has more than one '@'")
	}
	local, domain := t[:at], t[at+1:]

	if err := emailLocalPart(s, local, lead); err != nil {
		return "", err
	}
	if err := emailDomain(s, domain, lead+at+2); err != nil {
		return "", err
	}
	return strings.ToLower(t), nil
}

// emailLocalPart checks local, the part of the address s before the '@'
// that starts at index lead of s: 1 to 64 characters, only atext and dots,
// no dot at either end nor two in a row (a dot-atom, RFC 5322 3.2.3).
// The error is a *normalize.Error of KindEmail naming the first fault.
func emailLocalPart(s, local string, lead int) error {
	const kind = KindEmail
	switch {
	case local == "":
		return fail(kind, s, "has nothing before the '@'")
	case len(local) > 64:
		return fail(kind, s, "has a local part of %d characters; at most 64 are allowed", len(local))
	}
	for i := 0; i < len(local); i++ {
		if c := local[i]; !isAtext(c) && c != '.' {
			return fail(kind, s, "contains %s at position %d; the part before the '@' may have only letters, digits, dots and !#$%%&'*+-/=?^_`{|}~", char(c), lead+i+1)
		}
	}
	if local[0] == '.' || local[len(local)-1] == '.' || strings.Contains(local, "..") {
		return fail(kind, s, "has a dot at the start or end of the part before the '@', or two dots in a row")
	}
	return nil
}

// emailDomain checks domain, the part of the address s after the '@'
// whose first character is at position start of s (counted from 1): a
// domain name of at least two labels, each of 1 to 63 letters, digits and
// inner '-', with a top-level label that is not all digits. Domain
// literals ([192.0.2.1]) are refused. The error is a *normalize.Error of
// KindEmail naming the first fault.
func emailDomain(s, domain string, start int) error {
	const kind = KindEmail
	if domain == "" {
		return fail(kind, s, "has nothing after the '@'")
	}
	if domain[0] == '[' {
		return fail(kind, s, "has a domain literal; give a domain name such as example.com")
	}
	labels := 0
	last := ""
	for rest := domain; ; {
		label, tail, more := strings.Cut(rest, ".")
		labels++
		last = label
		switch {
		case label == "":
			return fail(kind, s, "has an empty label in its domain (a dot at the start or end, or two dots in a row)")
		case len(label) > 63:
			return fail(kind, s, "has a domain label of %d characters; at most 63 are allowed", len(label))
		case label[0] == '-' || label[len(label)-1] == '-':
			return fail(kind, s, "has a domain label %q that starts or ends with '-'", label)
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !isAlnum(c) && c != '-' {
				return fail(kind, s, "contains %s at position %d; a domain has only letters, digits, '-' and dots", char(c), start+i)
			}
		}
		if !more {
			break
		}
		rest, start = tail, start+len(label)+1
	}
	if labels < 2 {
		return fail(kind, s, "has the domain %q without a dot; a domain has at least two labels, such as example.com", domain)
	}
	if allDigits(last) {
		return fail(kind, s, "has a top-level domain %q that is all digits", last)
	}
	return nil
}

// isAtext reports whether c is an RFC 5322 atext character.
func isAtext(c byte) bool {
	return isAlnum(c) || strings.IndexByte("!#$%&'*+-/=?^_`{|}~", c) >= 0
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}
