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
	b := make([]byte, 0, len("op:")+hex.EncodedLen(len(h)))
	return string(hex.AppendEncode(append(b, "op:"...), h[:]))
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
	parts := append([]string{"lock:" + string(owner), string(action)}, values...)
	key := strings.Join(parts, "\x00")
	if len(key) > MaxKeyLen {
		sum := sha256.Sum256([]byte(key))
		key = "lock:sha256:" + hex.EncodeToString(sum[:])
	}
	return key
}
