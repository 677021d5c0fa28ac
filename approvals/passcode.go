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
	MinPasscodeLen = 8
	// MaxPasscodeLen is the maximum length of a passcode, in bytes.
	MaxPasscodeLen = 1024
)

// ErrBadPasscodeHash is returned by CheckPasscode and New for a passcode
// hash that is not in the form HashPasscode writes, or whose parameters are
// out of range.
var ErrBadPasscodeHash = errors.New("approvals: malformed passcode hash")

// ErrWeakPasscode is returned by HashPasscode for a passcode shorter than
// MinPasscodeLen or longer than MaxPasscodeLen bytes.
var ErrWeakPasscode = fmt.Errorf("approvals: a passcode must have %d to %d bytes", MinPasscodeLen, MaxPasscodeLen)

var b64 = base64.RawStdEncoding

// HashPasscode returns the scrypt hash of passcode in a self-describing
// text form (the PHC string format), for the approvers' configuration:
//
//	$scrypt$ln=15,r=8,p=1$<salt, base64>$<hash, base64>
//
// The salt is 16 bytes read from r (nil means crypto/rand); the hash is 32
// bytes. It returns ErrWeakPasscode for a passcode of the wrong length.
func HashPasscode(passcode string, p PasscodeParams, r io.Reader) (string, error) {
	if len(passcode) < MinPasscodeLen || len(passcode) > MaxPasscodeLen {
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
