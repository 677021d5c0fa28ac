package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/state"
)

var _ state.Reconciler = (*Store)(nil)

// OpenReservations implements state.Reconciler: the open reservations
// made before before, by Options.Now (a reservation written before their
// time was kept has a zero Since and is always listed).
func (s *Store) OpenReservations(ctx context.Context, before time.Time) ([]state.Reservation, error) {
	var out []state.Reservation
	err := s.view(ctx, func(tx *bolt.Tx) error {
		out = out[:0]
		accounts, reservations := tx.Bucket(bucketAccounts), tx.Bucket(bucketReservations)
		c := reservations.Cursor()
		for k, v := c.Seek([]byte{'r'}); k != nil && k[0] == 'r'; k, v = c.Next() {
			r, err := decodeReservation(v)
			if err != nil {
				return err
			}
			id := string(k[1:])
			var since time.Time
			if tv := reservations.Get(append([]byte{'t'}, k[1:]...)); len(tv) == 8 {
				since = time.Unix(0, int64(binary.BigEndian.Uint64(tv))).UTC()
			}
			if !since.IsZero() && !since.Before(before) {
				continue
			}
			ak, _ := key('a', r.account)
			av := accounts.Get(ak)
			if av == nil {
				return fmt.Errorf("embedded: reservation %q names the missing account %q", id, r.account)
			}
			a, err := decodeAccount(av)
			if err != nil {
				return err
			}
			out = append(out, state.Reservation{ID: id, Account: r.account, Amount: intent.Money{Currency: a.currency, Amount: r.amount}, Since: since})
		}
		return nil
	})
	return out, err
}

// Consumed implements state.Reconciler.
func (s *Store) Consumed(ctx context.Context, k string) (bool, error) {
	ck, err := key('k', k)
	if err != nil {
		return false, nil
	}
	var ok bool
	err = s.view(ctx, func(tx *bolt.Tx) error {
		ok = tx.Bucket(bucketConsumed).Get(ck) != nil
		return nil
	})
	return ok, err
}
