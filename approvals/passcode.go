package approvals

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

// PasscodeParams are the scrypt cost parameters of a passcode hash. The zero
// value means the defaults: LogN 15 (N = 32768), R 8, P 1, which take about
// 32 MiB and some 50 ms per check.
type PasscodeParams struct {
	// LogN is log2 of scrypt's CPU/memory cost N, from 1 to 20; zero means 15.
	LogN uint8
	// R is scrypt's block size, from 1 to 32; zero means 8.
	R int
	// P is scrypt's parallelism, from 1 to 16; zero means 1.
	P int
}

func (p PasscodeParams) withDefaults() PasscodeParams {
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

func (p PasscodeParams) valid() bool {
	return p.LogN >= 1 && p.LogN <= 20 && p.R >= 1 && p.R <= 32 && p.P >= 1 && p.P <= 16
}

const (
	passcodeSaltLen = 16
	passcodeKeyLen  = 32
	// MinPasscodeLen is the minimum length of a passcode, in bytes.
	MinPasscodeLen = 12
	// MaxPasscodeLen is the maximum length of a passcode, in bytes.
	MaxPasscodeLen = 1024
)

// ErrBadPasscodeHash is returned by CheckPasscode and New for a passcode
// hash that is not in the form HashPasscode writes, or whose parameters are
// out of range.
var ErrBadPasscodeHash = errors.New("approvals: malformed passcode hash")

// ErrWeakPasscode is returned by HashPasscode for a passcode shorter than
// MinPasscodeLen or longer than MaxPasscodeLen bytes, and for a common or
// patterned one (see weakPasscode).
var ErrWeakPasscode = fmt.Errorf("approvals: a passcode must have %d to %d bytes and not be common or a simple pattern", MinPasscodeLen, MaxPasscodeLen)

// commonPasscodes are frequent passwords of MinPasscodeLen bytes or more
// (lowercase), refused before anything is hashed.
var commonPasscodes = map[string]bool{
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

// weakPasscode reports whether p is common or a simple pattern: fewer than
// 5 distinct characters, a repeated unit of up to 6 characters, a run of
// consecutive characters ("abcdefghijkl", "987654321098"), or a common
// password. It is cheap and catches only the obvious.
func weakPasscode(p string) bool {
	l := strings.ToLower(p)
	if commonPasscodes[l] {
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

// HashPasscode returns the scrypt hash of passcode in a self-describing
// text form (the PHC string format), for the approvers' configuration:
//
//	$scrypt$ln=15,r=8,p=1$<salt, base64>$<hash, base64>
//
// The salt is 16 bytes read from r (nil means crypto/rand); the hash is 32
// bytes. It returns ErrWeakPasscode for a passcode of the wrong length, or
// a common or patterned one.
func HashPasscode(passcode string, p PasscodeParams, r io.Reader) (string, error) {
	if len(passcode) < MinPasscodeLen || len(passcode) > MaxPasscodeLen || weakPasscode(passcode) {
		return "", ErrWeakPasscode
	}
	p = p.withDefaults()
	if !p.valid() {
		return "", fmt.Errorf("approvals: scrypt parameters out of range: %+v", p)
	}
	if r == nil {
		r = rand.Reader
	}
	salt := make([]byte, passcodeSaltLen)
	if _, err := io.ReadFull(r, salt); err != nil {
		return "", err
	}
	key, err := scrypt.Key([]byte(passcode), salt, 1<<p.LogN, p.R, p.P, passcodeKeyLen)
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("$scrypt$ln=%d,r=%d,p=%d$%s$%s", p.LogN, p.R, p.P, b64.EncodeToString(salt), b64.EncodeToString(key)), nil
}

// passcodeHash is a parsed passcode hash.
type passcodeHash struct {
	params    PasscodeParams
	salt, key []byte
}

func parsePasscodeHash(s string) (passcodeHash, error) {
	var h passcodeHash
	parts := strings.Split(s, "$")
	if len(parts) != 5 || parts[0] != "" || parts[1] != "scrypt" {
		return h, ErrBadPasscodeHash
	}
	for _, kv := range strings.Split(parts[2], ",") {
		k, v, ok := strings.Cut(kv, "=")
		n, err := strconv.Atoi(v)
		if !ok || err != nil || n < 0 || n > 255 {
			return h, ErrBadPasscodeHash
		}
		switch k {
		case "ln":
			h.params.LogN = uint8(n)
		case "r":
			h.params.R = n
		case "p":
			h.params.P = n
		default:
			return h, ErrBadPasscodeHash
		}
	}
	if !h.params.valid() {
		return h, ErrBadPasscodeHash
	}
	var err1, err2 error
	h.salt, err1 = b64.DecodeString(parts[3])
	h.key, err2 = b64.DecodeString(parts[4])
	if err1 != nil || err2 != nil || len(h.salt) < 8 || len(h.key) < 16 {
		return h, ErrBadPasscodeHash
	}
	return h, nil
}

func (h passcodeHash) check(passcode string) bool {
	if len(passcode) > MaxPasscodeLen {
		return false
	}
	key, err := scrypt.Key([]byte(passcode), h.salt, 1<<h.params.LogN, h.params.R, h.params.P, len(h.key))
	return err == nil && subtle.ConstantTimeCompare(key, h.key) == 1
}

// CheckPasscode reports whether passcode matches hash, as written by
// HashPasscode. It returns ErrBadPasscodeHash if hash is malformed.
func CheckPasscode(hash, passcode string) (bool, error) {
	h, err := parsePasscodeHash(hash)
	if err != nil {
		return false, err
	}
	return h.check(passcode), nil
}
