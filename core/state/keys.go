package state

import (
	"crypto/sha256"
	"encoding/hex"
	"math"
	"strconv"
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

// BudgetAccount is the ledger account of a mandate's budget in currency
// when it is not the mandate's main budget (mandate.Mandate.Budgets):
// the mandate id, a NUL byte and the currency. The main budget's account
// is the mandate id alone, as it always was, so reservations made before
// a mandate had several budgets stay on their account. Mandate ids hold no
// NUL byte (mandate.Issue refuses them), so no two mandates' accounts
// meet.
func BudgetAccount(mandateID, currency string) string { return mandateID + "\x00" + currency }

// AccountMandate returns the mandate id of a budget account (the account
// itself for a main budget, see BudgetAccount).
func AccountMandate(account string) string {
	id, _, _ := strings.Cut(account, "\x00")
	return id
}

// NotExecutedKey is the single-use key that reconciliation consumes when
// it releases an operation whose nonce it keeps spent although the system
// of record showed the operation had not executed (see gateway.Reconcile):
// "notexec:" and the operation hash in hex. The gateway then answers a
// retry that the operation did not execute, not that it did.
func NotExecutedKey(h intent.OperationHash) string { return "notexec:" + h.String() }

// SettleKey is the single-use key that one reconciliation consumes before
// it gives back the nonce of an operation whose reservation it released,
// so that of two reconciliations (two replicas starting at once) acting on
// the same reservation only one gives the nonce back, and none gives back
// the nonce of a later decision that reserved under the same id:
// "settle:", the reservation's Since in Unix nanoseconds, a space and the
// reservation id. A key longer than MaxKeyLen is replaced by
// "settle:sha256:" and its digest in hex.
func SettleKey(r Reservation) string {
	key := "settle:" + strconv.FormatInt(r.Since.UnixNano(), 10) + " " + r.ID
	if len(key) > MaxKeyLen {
		sum := sha256.Sum256([]byte(key))
		key = "settle:sha256:" + hex.EncodeToString(sum[:])
	}
	return key
}

// ApprovalKey is the single-use key of an approval: "approval:" and its id.
func ApprovalKey(id string) string { return "approval:" + id }

// LineApprovalKey is the single-use key of a run's approval (one with
// approval.Approval.Lines) for one of its lines: ApprovalKey of its id,
// "/" and the line's operation hash in hex. A run's approval is used
// once per line.
func LineApprovalKey(id string, op intent.OperationHash) string {
	return ApprovalKey(id) + "/" + op.String()
}

// LockKey is the record-lock key of an owner's operations of action on the
// records named by values (the resolved values of a contract's Exclusive
// parameters): "lock:", the owner, the action and each value, separated by
// NUL bytes. Values come from systems of record and may hold any byte. A
// key longer than MaxKeyLen is replaced by "lock:sha256:" and its digest
// in hex.
func LockKey(owner intent.Owner, action intent.Action, values ...string) string {
	return joinKey("lock:", []string{string(owner), string(action)}, values)
}

// joinKey returns prefix, then head and values separated by NUL bytes; a
// key longer than MaxKeyLen is replaced by prefix, "sha256:" and its
// digest in hex.
func joinKey(prefix string, head, values []string) string {
	n := len(prefix)
	for _, p := range head {
		n += 1 + len(p)
	}
	for _, v := range values {
		n += 1 + len(v)
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(prefix)
	for i, p := range head {
		if i > 0 {
			b.WriteByte(0)
		}
		b.WriteString(p)
	}
	for _, v := range values {
		b.WriteByte(0)
		b.WriteString(v)
	}
	key := b.String()
	if len(key) > MaxKeyLen {
		sum := sha256.Sum256([]byte(key))
		key = prefix + "sha256:" + hex.EncodeToString(sum[:])
	}
	return key
}

// TotalAccount is the ledger account of a running total (see
// contract.Total): "total:", then the owner, the pack, the total's name,
// the currency, the period (a date, a week, a mandate id, or "") and each
// value it is kept by, separated by NUL bytes. A key longer than MaxKeyLen
// is replaced by "total:sha256:" and its digest in hex.
func TotalAccount(owner intent.Owner, pack, name, currency, period string, values ...string) string {
	return joinKey("total:", []string{string(owner), pack, name, currency, period}, values)
}

// ParseTotalAccount returns the parts of a TotalAccount: the owner, the
// pack, the total's name, the currency, the period and the values it is
// kept by, in that order, for logs and reports (each may hold any byte:
// quote them before printing). ok is false for any other account; a
// digest account ("total:sha256:…") gives one part, the digest.
func ParseTotalAccount(account string) (parts []string, ok bool) {
	rest, ok := strings.CutPrefix(account, "total:")
	if !ok {
		return nil, false
	}
	if d, digest := strings.CutPrefix(rest, "sha256:"); digest && !strings.Contains(rest, "\x00") {
		return []string{"sha256:" + d}, true
	}
	parts = strings.Split(rest, "\x00")
	if len(parts) < 5 {
		return nil, false
	}
	return parts, true
}

// TotalLimit is the limit of every total's ledger account: a total is a
// count, not a budget, so a reservation on it fails only when the sum
// would overflow (ErrExceeded).
const TotalLimit intent.Amount = math.MaxInt64
