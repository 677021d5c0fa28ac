// Package passcode hashes and checks the passcodes approval-page approvers
// sign in with: scrypt, in the PHC string form
// "$scrypt$ln=15,r=8,p=1$<salt>$<hash>", with common and patterned
// passcodes refused before anything is hashed. It is separate from the
// page so that the CLI that hashes a passcode does not link the web stack.
//
// It imports only the standard library and golang.org/x/crypto.
package passcode

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"golang.org/x/crypto/scrypt"
)

// Params are the scrypt cost parameters of a passcode hash. The zero
// value means the defaults: LogN 15 (N = 32768), R 8, P 1, which take about
// 32 MiB and some 50 ms per check.
type Params struct {
	// LogN is log2 of scrypt's CPU/memory cost N, from 1 to 20; zero means 15.
	LogN uint8
	// R is scrypt's block size, from 1 to 32; zero means 8.
	R int
	// P is scrypt's parallelism, from 1 to 16; zero means 1.
	P int
}

func (p Params) withDefaults() Params {
	if p.LogN == 0 {
		p.LogN = 15
	}
	if p.R == 0 {
		p.R = 8
	}
	if p.P == 0 {
		p.P = 1
	}
	return p
}

func (p Params) valid() bool {
	return p.LogN >= 1 && p.LogN <= 20 && p.R >= 1 && p.R <= 32 && p.P >= 1 && p.P <= 16
}

const (
	saltLen = 16
	keyLen  = 32
	// MinLen is the minimum length of a passcode, in bytes.
	MinLen = 12
	// MaxLen is the maximum length of a passcode, in bytes.
	MaxLen = 1024
)

// ErrMalformed is returned by Check and Parse (and wrapped by
// approvals.New) for a passcode hash that is not in the form Hash writes, or whose parameters are
// out of range.
var ErrMalformed = errors.New("passcode: malformed passcode hash")

// ErrWeak is returned by Hash for a passcode shorter than
// MinLen or longer than MaxLen bytes, and for a common or
// patterned one (see weak).
var ErrWeak = fmt.Errorf("passcode: a passcode must have %d to %d bytes and not be common or a simple pattern", MinLen, MaxLen)

// common are frequent passwords of MinLen bytes or more
// (lowercase), refused before anything is hashed.
var common = map[string]bool{
	"password1234": true, "passwordpassword": true, "password12345": true, "password123456": true,
	"123456789012": true, "1234567890123": true, "12345678901234": true, "123456789abc": true,
	"qwertyuiopas": true, "qwerty123456": true, "qwertyqwerty": true, "1q2w3e4r5t6y": true,
	"1qaz2wsx3edc": true, "iloveyou1234": true, "letmein12345": true, "changeme1234": true,
	"welcome12345": true, "administrator": true, "admin1234567": true, "trustno1trustno1": true,
	"football1234": true, "baseball1234": true, "superman1234": true, "monkey123456": true,
	"sunshine1234": true, "princess1234": true, "starwars1234": true, "dragon123456": true,
	"passw0rd1234": true, "p@ssw0rd1234": true, "abc123abc123": true, "intentplane1": true,
	"intentplane123": true, "approvalpage": true,
}

// weak reports whether p is common or a simple pattern: fewer than
// 5 distinct characters, a repeated unit of up to 6 characters, a run of
// consecutive characters ("abcdefghijkl", "987654321098"), or a common
// password. It is cheap and catches only the obvious.
func weak(p string) bool {
	l := strings.ToLower(p)
	if common[l] {
		return true
	}
	distinct := map[rune]bool{}
	for _, r := range l {
		distinct[r] = true
	}
	if len(distinct) < 5 {
		return true
	}
	for unit := 1; unit <= 6 && unit < len(l); unit++ {
		if len(l)%unit == 0 && strings.Repeat(l[:unit], len(l)/unit) == l {
			return true
		}
	}
	up, down := true, true
	for i := 1; i < len(l); i++ {
		d := int(l[i]) - int(l[i-1])
		up = up && (d == 1 || (l[i] == '0' && l[i-1] == '9'))
		down = down && (d == -1 || (l[i] == '9' && l[i-1] == '0'))
	}
	return up || down
}

var b64 = base64.RawStdEncoding

// Hash returns the scrypt hash of passcode in a self-describing
// text form (the PHC string format), for the approvers' configuration:
//
//	$scrypt$ln=15,r=8,p=1$<salt, base64>$<hash, base64>
//
// The salt is 16 bytes read from r (nil means crypto/rand); the hash is 32
// bytes. It returns ErrWeak for a passcode of the wrong length, or
// a common or patterned one.
func Hash(passcode string, p Params, r io.Reader) (string, error) {
	if len(passcode) < MinLen || len(passcode) > MaxLen || weak(passcode) {
		return "", ErrWeak
	}
	p = p.withDefaults()
	if !p.valid() {
		return "", fmt.Errorf("passcode: scrypt parameters out of range: %+v", p)
	}
	if r == nil {
		r = rand.Reader
	}
	salt := make([]byte, saltLen)
	if _, err := io.ReadFull(r, salt); err != nil {
		return "", err
	}
	key, err := scrypt.Key([]byte(passcode), salt, 1<<p.LogN, p.R, p.P, keyLen)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("$scrypt$ln=%d,r=%d,p=%d$%s$%s", p.LogN, p.R, p.P, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// Hashed is a parsed passcode hash, ready to check passcodes against.
type Hashed struct {
	params    Params
	salt, key []byte
}

// Parse reads a passcode hash as Hash writes it. It returns ErrMalformed
// for anything else, or for cost parameters out of range.
func Parse(s string) (Hashed, error) {
	var h Hashed
	parts := strings.Split(s, "$")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "scrypt" {
		return h, ErrMalformed
	}
	for _, kv := range strings.Split(parts[2], ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 255 {
			return h, ErrMalformed
		}
		switch k {
		case "ln":
			h.params.LogN = uint8(n)
		case "r":
			h.params.R = n
		case "p":
			h.params.P = n
		default:
			return h, ErrMalformed
		}
	}
	if !h.params.valid() {
		return h, ErrMalformed
	}
	var err1, err2 error
	h.salt, err1 = b64.DecodeString(parts[3])
	h.key, err2 = b64.DecodeString(parts[4])
	if err1 != nil || err2 != nil || len(h.salt) < 8 || len(h.key) < 16 {
		return h, ErrMalformed
	}
	return h, nil
}

// Check reports whether passcode matches h, in constant time for a given
// length; a passcode over MaxLen bytes never matches.
func (h Hashed) Check(passcode string) bool {
	if len(passcode) > MaxLen {
		return false
	}
	key, err := scrypt.Key([]byte(passcode), h.salt, 1<<h.params.LogN, h.params.R, h.params.P, len(h.key))
	return err == nil && subtle.ConstantTimeCompare(key, h.key) == 1
}

// Check reports whether passcode matches hash, as written by
// Hash. It returns ErrMalformed if hash is malformed.
func Check(hash, passcode string) (bool, error) {
	h, err := Parse(hash)
	if err != nil {
		return false, err
	}
	return h.Check(passcode), nil
}

// Decoy returns a hash of h's cost that no passcode matches (a salt from r,
// nil meaning crypto/rand, and a zero key): checking an unknown approver's
// passcode against it takes as long as a known one's, so that timing does
// not tell which names exist.
func (h Hashed) Decoy(r io.Reader) (Hashed, error) {
	if r == nil {
		r = rand.Reader
	}
	d := Hashed{params: h.params, salt: make([]byte, len(h.salt)), key: make([]byte, len(h.key))}
	if _, err := io.ReadFull(r, d.salt); err != nil {
		return Hashed{}, err
	}
	return d, nil
}
