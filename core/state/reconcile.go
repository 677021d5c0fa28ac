package state

import (
	"context"
	"encoding/hex"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Reservation is an open budget reservation as a Reconciler lists it.
type Reservation struct {
	// ID is the reservation id (see Ledger.Reserve and ReservationID).
	ID string
	// Account is the ledger account: a mandate id, or a mandate's budget
	// in another currency (BudgetAccount; AccountMandate gives its id).
	Account string
	// Amount is the amount held, in minor units of the account's currency.
	Amount intent.Money
	// Since is when the reservation was made, in UTC, by the store's clock
	// (the database server's for PostgreSQL); zero if the store did not
	// record it.
	Since time.Time
}

// Reconciler is implemented by stores that can list what a crash leaves
// behind, for the gateway's reconciliation (gateway.Reconcile). Stores
// that do not implement it (and in-memory stores, which a crash empties)
// need no reconciliation.
type Reconciler interface {
	// OpenReservations returns the open reservations made before before
	// (every one whose Since is zero), in any order.
	OpenReservations(ctx context.Context, before time.Time) ([]Reservation, error)
}

// ErrNotReconcilable is returned when a store does not implement
// Reconciler (by wrappers that forward to it).
var ErrNotReconcilable = errors.New("state: the store cannot list open reservations")

// ReservationID is the id under which the gateway reserves an operation's
// amount: the operation hash in hex, then its action and its owner,
// separated by spaces (an action has none; the owner comes last, so it may).
// It is unique per operation, as the hash covers the action and the owner,
// and it lets reconciliation name, ask and record the operation after a
// crash. If that would exceed MaxKeyLen (a very long owner), it is the
// hash alone, which reconciliation leaves to an operator.
func ReservationID(hash string, action intent.Action, owner intent.Owner) string {
	if len(hash)+len(action)+len(owner)+2 > MaxKeyLen {
		return hash
	}
	return hash + " " + string(action) + " " + string(owner)
}

// ParseReservationID returns the parts of a ReservationID; ok is false for
// any other id (a bare hash, reservations made before ids carried them).
func ParseReservationID(id string) (hash intent.OperationHash, action intent.Action, owner intent.Owner, ok bool) {
	h, rest, ok1 := strings.Cut(id, " ")
	a, o, ok2 := strings.Cut(rest, " ")
	if !ok1 || !ok2 || len(h) != 2*len(hash) || a == "" {
		return hash, "", "", false
	}
	if _, err := hex.Decode(hash[:], []byte(h)); err != nil {
		return hash, "", "", false
	}
	return hash, intent.Action(a), intent.Owner(o), true
}

// TotalReservationID is the id under which the gateway reserves an
// operation's amount on its i-th running total (see contract.Total):
// "total", i in decimal, a colon and the operation's ReservationID. It is
// committed or released with the operation's budget reservation, and
// reconciled like it after a crash.
func TotalReservationID(reservation string, i int) string {
	id := "total" + strconv.Itoa(i) + ":" + reservation
	if len(id) > MaxKeyLen { // the hash alone, as ReservationID does
		hash, _, _ := strings.Cut(reservation, " ")
		id = "total" + strconv.Itoa(i) + ":" + hash
	}
	return id
}

// ParseTotalReservationID returns the ReservationID of the operation a
// TotalReservationID belongs to; ok is false for any other id.
func ParseTotalReservationID(id string) (reservation string, ok bool) {
	rest, ok := strings.CutPrefix(id, "total")
	if !ok {
		return "", false
	}
	n, reservation, ok := strings.Cut(rest, ":")
	if _, err := strconv.Atoi(n); !ok || err != nil || n == "" || n[0] == '-' || n[0] == '+' {
		return "", false
	}
	return reservation, true
}
