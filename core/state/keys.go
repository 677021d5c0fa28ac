package state

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"

	"github.com/intentplane/intentplane/core/intent"
)

// The keys the gateway gives a Store. They are built here, in the package
// stores import, so that store/storetest checks every store against the
// keys packs really produce.

// NonceKey is the single-use key that makes an operation execute once:
// "op:" and the operation hash in hex.
func NonceKey(h intent.OperationHash) string {
	var b [len("op:") + 2*len(h)]byte
	hex.Encode(b[copy(b[:], "op:"):], h[:])
	return string(b[:])
}

// ApprovalKey is the single-use key of an approval: "approval:" and its id.
func ApprovalKey(id string) string { return "approval:" + id }

// LockKey is the record-lock key of an owner's operations of action on the
// records named by values (the resolved values of a contract's Exclusive
// parameters): "lock:", the owner, the action and each value, separated by
// NUL bytes. Values come from systems of record and may hold any byte. A
// key longer than MaxKeyLen is replaced by "lock:sha256:" and its digest
// in hex.
func LockKey(owner intent.Owner, action intent.Action, values ...string) string {
	n := len("lock:") + len(owner) + 1 + len(action)
	for _, v := range values {
		n += 1 + len(v)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString("lock:")
	b.WriteString(string(owner))
	b.WriteByte(0)
	b.WriteString(string(action))
	for _, v := range values {
		b.WriteByte(0)
		b.WriteString(v)
	}
	key := b.String()
	if len(key) > MaxKeyLen {
		sum := sha256.Sum256([]byte(key))
		key = "lock:sha256:" + hex.EncodeToString(sum[:])
	}
	return key
}
