package storetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// Run runs the conformance suite. newStore must return an empty store that
// is independent of every other one it returned (a fresh database schema or
// distinct key prefixes).
func Run(t *testing.T, newStore func(t *testing.T) state.Store) {
	t.Helper()
	tests := []struct {
		name string
		fn   func(t *testing.T, s state.Store)
	}{
		{"ReserveUpToLimit", testReserveUpToLimit},
		{"ReserveConcurrentNeverExceeds", testReserveConcurrent},
		{"CommitAndRelease", testCommitRelease},
		{"ReservationErrors", testReservationErrors},
		{"AccountLimitFixed", testAccountLimitFixed},
		{"AccountLimitFixedConcurrent", testAccountLimitFixedConcurrent},
		{"ConsumeOnce", testConsumeOnce},
		{"ConsumeConcurrentExactlyOnce", testConsumeConcurrent},
		{"Unconsume", testUnconsume},
		{"Consumed", testConsumed},
		{"HoldExclusive", testHold},
		{"HoldConcurrentOneHolder", testHoldConcurrent},
		{"HoldExpires", testHoldExpires},
		{"OpaqueKeys", testOpaqueKeys},
		{"KeyTooLong", testKeyTooLong},
		{"ReceiptChainPerOwner", testReceiptChain},
		{"ReceiptKeepsApprovalChannel", testReceiptChannel},
		{"ReceiptConcurrentAppendNoFork", testReceiptConcurrent},
		{"OpenReservations", testOpenReservations},
		{"RunningTotals", testRunningTotals},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn(t, newStore(t))
		})
	}
}

var eur = func(a intent.Amount) intent.Money { return intent.Money{Currency: "EUR", Amount: a} }

// testRunningTotals: a running total's account, as the gateway keeps it
// (state.TotalAccount, state.TotalLimit, state.TotalReservationID), takes
// large amounts, counts committed and open reservations, refuses only an
// overflow, and lists its open reservations for reconciliation.
func testRunningTotals(t *testing.T, s state.Store) {
	ctx := context.Background()
	acct := state.TotalAccount("acme", "ap", "paid_today", "EUR", "2026-11-30", "7")
	limit := eur(state.TotalLimit)
	res := state.ReservationID(strings.Repeat("0a", 32), "ap.pay_bill", "acme")
	for i, a := range []intent.Amount{100000, 99999, 1 << 60} {
		if err := s.Reserve(ctx, acct, limit, state.TotalReservationID(res, i), eur(a)); err != nil {
			t.Fatalf("Reserve %d on a total: %v", a, err)
		}
	}
	if err := s.Commit(ctx, state.TotalReservationID(res, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Release(ctx, state.TotalReservationID(res, 2)); err != nil {
		t.Fatal(err)
	}
	if u, err := s.Usage(ctx, acct); err != nil || u.Committed != 100000 || u.Reserved != 99999 {
		t.Fatalf("Usage = %+v, %v; want 100000 committed and 99999 reserved", u, err)
	}
	if err := s.Reserve(ctx, acct, limit, state.TotalReservationID(res, 3), eur(state.TotalLimit)); !errors.Is(err, state.ErrExceeded) {
		t.Fatalf("Reserve of an overflowing amount = %v, want ErrExceeded", err)
	}
	if rc, ok := s.(state.Reconciler); ok {
		open, err := rc.OpenReservations(ctx, time.Now().Add(time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range open {
			if got, ok := state.ParseTotalReservationID(r.ID); ok && got == res && r.Account == acct && r.Amount.Amount == 99999 {
				found = true
			}
		}
		if !found {
			t.Errorf("OpenReservations = %+v, want the total's open reservation", open)
		}
	}
}

func testReserveUpToLimit(t *testing.T, s state.Store) {
	ctx := context.Background()
	limit := eur(10000)
	if err := s.Reserve(ctx, "m1", limit, "r1", eur(6000)); err != nil {
		t.Fatalf("Reserve r1: %v", err)
	}
	if err := s.Reserve(ctx, "m1", limit, "r2", eur(4001)); !errors.Is(err, state.ErrExceeded) {
		t.Fatalf("Reserve over the limit by one cent = %v, want ErrExceeded", err)
	}
	if err := s.Reserve(ctx, "m1", limit, "r3", eur(4000)); err != nil {
		t.Fatalf("Reserve exactly to the limit: %v", err)
	}
	if err := s.Reserve(ctx, "m2", limit, "r4", eur(10000)); err != nil {
		t.Fatalf("another account is independent: %v", err)
	}
	u, err := s.Usage(ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	if u.Reserved != 10000 || u.Committed != 0 {
		t.Fatalf("Usage = %+v, want reserved 10000", u)
	}
}

func testReserveConcurrent(t *testing.T, s state.Store) {
	ctx := context.Background()
	const workers, each = 32, 20
	limit := eur(12345)
	var ok atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				err := s.Reserve(ctx, "m", limit, id, eur(100))
				switch {
				case err == nil:
					ok.Add(1)
					if i%2 == 0 {
						if err := s.Commit(ctx, id); err != nil {
							t.Errorf("Commit %s: %v", id, err)
						}
					}
				case errors.Is(err, state.ErrExceeded):
				default:
					t.Errorf("Reserve %s: %v", id, err)
				}
			}
		}()
	}
	wg.Wait()
	if got := ok.Load(); got != 123 {
		t.Errorf("%d reservations of 1.00 succeeded against a limit of 123.45, want exactly 123", got)
	}
	u, err := s.Usage(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if total := u.Committed + u.Reserved; total != 12300 {
		t.Errorf("committed+reserved = %d, want 12300", total)
	}
}

func testCommitRelease(t *testing.T, s state.Store) {
	ctx := context.Background()
	limit := eur(1000)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Reserve(ctx, "m", limit, "a", eur(700)))
	must(s.Release(ctx, "a"))
	must(s.Reserve(ctx, "m", limit, "b", eur(700)))
	must(s.Commit(ctx, "b"))
	if err := s.Reserve(ctx, "m", limit, "c", eur(301)); !errors.Is(err, state.ErrExceeded) {
		t.Fatalf("after committing 7.00 of 10.00, reserving 3.01 = %v, want ErrExceeded", err)
	}
	must(s.Reserve(ctx, "m", limit, "c", eur(300)))
	u, err := s.Usage(ctx, "m")
	must(err)
	if u.Committed != 700 || u.Reserved != 300 {
		t.Fatalf("Usage = %+v, want committed 700 reserved 300", u)
	}
}

func testReservationErrors(t *testing.T, s state.Store) {
	ctx := context.Background()
	if err := s.Commit(ctx, "nope"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Commit unknown = %v, want ErrNotFound", err)
	}
	if err := s.Release(ctx, "nope"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Release unknown = %v, want ErrNotFound", err)
	}
	if err := s.Reserve(ctx, "m", eur(1000), "x", eur(1)); err != nil {
		t.Fatal(err)
	}
	if err := s.Reserve(ctx, "m", eur(1000), "x", eur(1)); !errors.Is(err, state.ErrDuplicate) {
		t.Errorf("Reserve same id twice = %v, want ErrDuplicate", err)
	}
	if err := s.Commit(ctx, "x"); err != nil {
		t.Fatal(err)
	}
	if err := s.Commit(ctx, "x"); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Commit twice = %v, want ErrNotFound", err)
	}
	usd := intent.Money{Currency: "USD", Amount: 1}
	if err := s.Reserve(ctx, "m", eur(1000), "y", usd); !errors.Is(err, state.ErrCurrency) {
		t.Errorf("Reserve USD against EUR limit = %v, want ErrCurrency", err)
	}
	if err := s.Reserve(ctx, "m", intent.Money{Currency: "USD", Amount: 1000}, "z", usd); !errors.Is(err, state.ErrCurrency) {
		t.Errorf("Reserve on an EUR account with a USD limit = %v, want ErrCurrency", err)
	}
}

// testAccountLimitFixed: the first reservation fixes the account's limit;
// a Reserve with another limit, larger or smaller, is refused and holds
// nothing.
func testAccountLimitFixed(t *testing.T, s state.Store) {
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Reserve(ctx, "m", eur(1000), "a", eur(500)))
	if err := s.Reserve(ctx, "m", eur(1_000_000), "b", eur(600)); !errors.Is(err, state.ErrLimitMismatch) {
		t.Errorf("Reserve with a larger limit = %v, want ErrLimitMismatch", err)
	}
	if err := s.Reserve(ctx, "m", eur(999), "b", eur(1)); !errors.Is(err, state.ErrLimitMismatch) {
		t.Errorf("Reserve with a smaller limit = %v, want ErrLimitMismatch", err)
	}
	// The refused Reserve neither held anything nor used its id.
	must(s.Reserve(ctx, "m", eur(1000), "b", eur(500)))
	if err := s.Reserve(ctx, "m", eur(1000), "c", eur(1)); !errors.Is(err, state.ErrExceeded) {
		t.Errorf("Reserve past the first limit = %v, want ErrExceeded", err)
	}
	must(s.Commit(ctx, "a"))
	must(s.Release(ctx, "b"))
	// The limit stays fixed once nothing is held.
	if err := s.Reserve(ctx, "m", eur(2000), "d", eur(600)); !errors.Is(err, state.ErrLimitMismatch) {
		t.Errorf("Reserve with another limit after closing everything = %v, want ErrLimitMismatch", err)
	}
	u, err := s.Usage(ctx, "m")
	must(err)
	if u.Committed != 500 || u.Reserved != 0 {
		t.Errorf("Usage = %+v, want committed 500 reserved 0", u)
	}
	// Another account has its own limit.
	must(s.Reserve(ctx, "n", eur(2000), "e", eur(2000)))
}

// testAccountLimitFixedConcurrent: workers race to open one account with
// two different limits; only one limit is ever accepted, and the account
// never holds more than it.
func testAccountLimitFixedConcurrent(t *testing.T, s state.Store) {
	ctx := context.Background()
	const workers, each = 16, 8
	limits := [2]intent.Money{eur(1000), eur(1_000_000)}
	var ok, mismatch [2]atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				err := s.Reserve(ctx, "m", limits[w%2], fmt.Sprintf("w%d-%d", w, i), eur(100))
				switch {
				case err == nil:
					ok[w%2].Add(1)
				case errors.Is(err, state.ErrLimitMismatch):
					mismatch[w%2].Add(1)
				case errors.Is(err, state.ErrExceeded):
				default:
					t.Errorf("Reserve: %v", err)
				}
			}
		}()
	}
	wg.Wait()
	if ok[0].Load() > 0 && ok[1].Load() > 0 {
		t.Fatalf("reservations succeeded with both limits (%d with 10.00, %d with 10000.00)", ok[0].Load(), ok[1].Load())
	}
	won := 0
	if ok[1].Load() > 0 {
		won = 1
	}
	if lost := mismatch[1-won].Load(); lost != workers/2*each {
		t.Errorf("%d of %d Reserve calls with the other limit were refused with ErrLimitMismatch", lost, workers/2*each)
	}
	u, err := s.Usage(ctx, "m")
	if err != nil {
		t.Fatal(err)
	}
	if got, lim := u.Reserved, limits[won].Amount; got > lim || got != intent.Amount(ok[won].Load())*100 {
		t.Errorf("reserved %d after %d reservations of 1.00 under a limit of %d", got, ok[won].Load(), lim)
	}
}

func testConsumeOnce(t *testing.T, s state.Store) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	if err := s.Consume(ctx, "op:1", exp); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "op:1", exp); !errors.Is(err, state.ErrReplayed) {
		t.Fatalf("second Consume = %v, want ErrReplayed", err)
	}
	if err := s.Consume(ctx, "op:2", exp); err != nil {
		t.Fatalf("another key: %v", err)
	}
}

func testConsumeConcurrent(t *testing.T, s state.Store) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	const n = 64
	var ok atomic.Int64
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Consume(ctx, "approval:abc", exp)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, state.ErrReplayed):
			default:
				t.Errorf("Consume: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d of %d concurrent Consume calls succeeded, want exactly 1", ok.Load(), n)
	}
}

func draft(owner intent.Owner, i int) receipt.Receipt {
	return receipt.Receipt{
		Owner:   owner,
		Time:    time.Date(2026, 11, 30, 10, 0, i, 0, time.UTC),
		Action:  "banking.send_money",
		Sent:    fmt.Sprintf(`{"action":"banking.send_money","args":{"n":%d}}`, i),
		Verdict: intent.Deny,
		Code:    intent.CodePolicyDenied,
		Result:  "not_executed",
	}
}

func testReceiptChain(t *testing.T, s state.Store) {
	ctx := context.Background()
	var last receipt.Receipt
	for i := range 5 {
		for _, o := range []intent.Owner{"alice", "bob"} {
			r, err := s.Append(ctx, draft(o, i))
			if err != nil {
				t.Fatal(err)
			}
			if r.Seq != uint64(i+1) {
				t.Fatalf("owner %s receipt %d has Seq %d, want %d", o, i, r.Seq, i+1)
			}
			if o == "alice" {
				if i == 0 && !r.Prev.IsZero() {
					t.Fatalf("first receipt has Prev %s, want zero", r.Prev)
				}
				if i > 0 && r.Prev != last.Hash {
					t.Fatalf("receipt %d Prev = %s, want previous hash %s", i+1, r.Prev, last.Hash)
				}
				last = r
			}
		}
	}
	got, err := s.Receipts(ctx, "alice", 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Seq != 2 || got[1].Seq != 3 {
		t.Fatalf("Receipts(alice, from 2, limit 2) returned %d receipts %v", len(got), seqs(got))
	}
	if none, err := s.Receipts(ctx, "carol", 1, 0); !errors.Is(err, receipt.ErrNotFound) {
		t.Fatalf("Receipts of an owner without receipts = %v, %v; want receipt.ErrNotFound", seqs(none), err)
	}
	beyond, err := s.Receipts(ctx, "alice", 99, 0)
	if err != nil || len(beyond) != 0 {
		t.Fatalf("Receipts beyond the head = %v, %v; want none, nil", seqs(beyond), err)
	}
	verifyAll(t, s, "alice", "bob")
}

// testReceiptChannel: a receipt's approvals come back with their channel
// and passkey assertion byte for byte (receipt version 3), and the chain
// still verifies.
func testReceiptChannel(t *testing.T, s state.Store) {
	ctx := context.Background()
	r := draft("alice", 0)
	at := r.Time
	pk := intent.Assertion{CredentialID: []byte{0xc1, 0x00}, AuthenticatorData: []byte{0x49, 0x96, 0x05}, ClientDataJSON: []byte(`{"type":"webauthn.get"}`), Signature: []byte{0x30, 0x45, 0xff}}
	r.Approvals = []receipt.Evidence{
		{ID: "a1", Approver: "lena", Level: "four_eyes", IssuedAt: at, ExpiresAt: at.Add(time.Hour), Channel: receipt.ChannelPasskey, Passkey: pk},
		{ID: "a2", Approver: "omar", Level: "four_eyes", IssuedAt: at, ExpiresAt: at.Add(time.Hour), Channel: receipt.ChannelPage},
	}
	if _, err := s.Append(ctx, r); err != nil {
		t.Fatal(err)
	}
	got, err := s.Receipts(ctx, "alice", 1, 0)
	if err != nil || len(got) != 1 {
		t.Fatalf("Receipts(alice) = %d receipts, %v; want 1", len(got), err)
	}
	as := got[0].Approvals
	if got[0].Version != receipt.Version3 || len(as) != 2 || as[0].Channel != receipt.ChannelPasskey || !as[0].Passkey.Equal(pk) || as[1].Channel != receipt.ChannelPage || !as[1].Passkey.IsZero() {
		t.Fatalf("receipt read back: version %d, approvals %+v; want version 3 with the channels and the assertion", got[0].Version, as)
	}
	verifyAll(t, s, "alice")
}

func testReceiptConcurrent(t *testing.T, s state.Store) {
	ctx := context.Background()
	const n = 64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := s.Append(ctx, draft("emma", i)); err != nil {
				t.Errorf("Append: %v", err)
			}
		}()
	}
	wg.Wait()
	got, err := s.Receipts(ctx, "emma", 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != n {
		t.Fatalf("%d receipts stored, want %d", len(got), n)
	}
	for i, r := range got {
		if r.Seq != uint64(i+1) {
			t.Fatalf("receipt %d has Seq %d: the chain forked or has a gap", i, r.Seq)
		}
	}
	verifyAll(t, s, "emma")
}

// verifyAll exports the owners' chains and verifies them offline.
func verifyAll(t *testing.T, s state.Store, owners ...intent.Owner) {
	t.Helper()
	var all []receipt.Receipt
	for _, o := range owners {
		rs, err := s.Receipts(context.Background(), o, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, rs...)
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, all); err != nil {
		t.Fatal(err)
	}
	rep, err := receipt.Verify(&buf, nil)
	if err != nil {
		t.Fatalf("exported chains do not verify: %v", err)
	}
	if rep.Receipts != len(all) {
		t.Fatalf("Verify saw %d receipts, want %d", rep.Receipts, len(all))
	}
}

func seqs(rs []receipt.Receipt) []uint64 {
	out := make([]uint64, len(rs))
	for i, r := range rs {
		out[i] = r.Seq
	}
	return out
}

func testUnconsume(t *testing.T, s state.Store) {
	ctx := context.Background()
	exp := time.Now().Add(time.Hour)
	if err := s.Unconsume(ctx, "op:never"); err != nil {
		t.Fatalf("Unconsume of a key never consumed = %v, want nil", err)
	}
	if err := s.Consume(ctx, "op:1", exp); err != nil {
		t.Fatal(err)
	}
	if err := s.Unconsume(ctx, "op:1"); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "op:1", exp); err != nil {
		t.Fatalf("Consume after Unconsume = %v, want nil", err)
	}
	if err := s.Consume(ctx, "op:1", exp); !errors.Is(err, state.ErrReplayed) {
		t.Fatalf("second Consume after Unconsume = %v, want ErrReplayed", err)
	}
}

func testHold(t *testing.T, s state.Store) {
	ctx := context.Background()
	key := state.LockKey("cfo@northwind", "ap.pay_bill", "res.partner:7")
	before := time.Now()
	if err := s.Hold(ctx, key, "a", time.Hour); err != nil {
		t.Fatal(err)
	}
	err := s.Hold(ctx, key, "b", time.Hour)
	if !errors.Is(err, state.ErrHeld) {
		t.Fatalf("Hold by another holder = %v, want ErrHeld", err)
	}
	// The refusal says when the hold expires (a minute's leeway for a
	// database server's clock).
	var he *state.HeldError
	if !errors.As(err, &he) || he.Until.Location() != time.UTC ||
		he.Until.Before(before.Add(time.Hour-time.Minute)) || he.Until.After(time.Now().Add(time.Hour+time.Minute)) {
		t.Fatalf("Hold by another holder = %#v, want a *state.HeldError with the expiry, an hour from now, in UTC", err)
	}
	if err := s.Hold(ctx, key, "a", time.Hour); err != nil {
		t.Fatalf("Hold renewed by its holder = %v, want nil", err)
	}
	if err := s.Hold(ctx, state.LockKey("cfo@northwind", "ap.pay_bill", "res.partner:8"), "b", time.Hour); err != nil {
		t.Fatalf("another record: %v", err)
	}
	if err := s.Unhold(ctx, key, "b"); err != nil {
		t.Fatalf("Unhold by a holder that does not hold = %v, want nil", err)
	}
	if err := s.Hold(ctx, key, "b", time.Hour); !errors.Is(err, state.ErrHeld) {
		t.Fatalf("Unhold by another holder released the hold: %v", err)
	}
	if err := s.Unhold(ctx, key, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Hold(ctx, key, "b", time.Hour); err != nil {
		t.Fatalf("Hold after Unhold = %v, want nil", err)
	}
}

func testHoldConcurrent(t *testing.T, s state.Store) {
	ctx := context.Background()
	const n = 32
	var ok atomic.Int64
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := s.Hold(ctx, "lock:bill", fmt.Sprintf("holder-%d", i), time.Hour)
			switch {
			case err == nil:
				ok.Add(1)
			case errors.Is(err, state.ErrHeld):
			default:
				t.Errorf("Hold: %v", err)
			}
		}()
	}
	wg.Wait()
	if ok.Load() != 1 {
		t.Fatalf("%d of %d concurrent Hold calls succeeded, want exactly 1", ok.Load(), n)
	}
}

func testHoldExpires(t *testing.T, s state.Store) {
	ctx := context.Background()
	if err := s.Hold(ctx, "lock:crashed", "a", time.Millisecond); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		err := s.Hold(ctx, "lock:crashed", "b", time.Hour)
		if err == nil {
			break
		}
		if !errors.Is(err, state.ErrHeld) || time.Now().After(deadline) {
			t.Fatalf("Hold of an expired hold = %v, want nil", err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := s.Hold(ctx, "lock:crashed", "a", time.Hour); !errors.Is(err, state.ErrHeld) {
		t.Fatalf("the expired holder took the hold back: %v", err)
	}
}

// PackKeys are keys as the gateway builds them for packs' operations: a
// record lock on an AP vendor (NUL-separated), nonces and approval ids,
// and keys of arbitrary bytes: NUL, bytes that are not UTF-8, a key of
// state.MaxKeyLen bytes.
func PackKeys() []string {
	var h intent.OperationHash
	for i := range h {
		h[i] = byte(255 - i)
	}
	return []string{
		state.LockKey("cfo@northwind", "ap.pay_bill", "res.partner:7"),
		state.LockKey("cfo@northwind", "ap.change_bank_account", "7"),
		state.LockKey("emma", "banking.send_money", "GB29NWBK60161331926819", "\xff\x00"),
		state.NonceKey(h),
		state.ApprovalKey("ap-01J9Z"),
		"",
		"\x00",
		"\x00\x00",
		"\xc3\x28\xff\xfe",
		"lock:\x00",
		strings.Repeat("\x00\xff", state.MaxKeyLen/2)[1:], // a NUL can still be appended
	}
}

func testOpaqueKeys(t *testing.T, s state.Store) {
	for _, k := range PackKeys() {
		CheckKey(t, s, k)
	}
}

// CheckKey checks that key round-trips through every operation of s that
// takes a key, and leaves s as it found it (but for an account opened with
// a limit of 100 EUR). For the fuzz targets of each store.
func CheckKey(t *testing.T, s state.Store, key string) {
	t.Helper()
	ctx := context.Background()
	checkKeyConsume(t, ctx, s, key)
	checkKeyHold(t, ctx, s, key)
	checkKeyReserve(t, ctx, s, key)
}

// checkKeyConsume is CheckKey's part for the replay table: key is
// consumed once, key with a trailing NUL is a different key, and
// Unconsume releases key only.
func checkKeyConsume(t *testing.T, ctx context.Context, s state.Store, key string) {
	t.Helper()
	exp := time.Now().Add(time.Hour)
	if err := s.Consume(ctx, key, exp); err != nil {
		t.Fatalf("Consume(%s) = %v", show(key), err)
	}
	if err := s.Consume(ctx, key, exp); !errors.Is(err, state.ErrReplayed) {
		t.Fatalf("second Consume(%s) = %v, want ErrReplayed", show(key), err)
	}
	if err := s.Consume(ctx, key+"\x00", exp); err != nil {
		t.Fatalf("Consume(%s), the key and a NUL = %v, want nil", show(key+"\x00"), err)
	}
	if err := s.Unconsume(ctx, key); err != nil {
		t.Fatalf("Unconsume(%s) = %v", show(key), err)
	}
	if err := s.Consume(ctx, key+"\x00", exp); !errors.Is(err, state.ErrReplayed) {
		t.Fatalf("Unconsume(%s) also released %s", show(key), show(key+"\x00"))
	}
	if err := s.Unconsume(ctx, key+"\x00"); err != nil {
		t.Fatal(err)
	}
}

// checkKeyHold is CheckKey's part for holds: key held by "a\x00" is not
// held by "a", and Unhold by "a\x00" frees it for "a".
func checkKeyHold(t *testing.T, ctx context.Context, s state.Store, key string) {
	t.Helper()
	if err := s.Hold(ctx, key, "a\x00", time.Hour); err != nil {
		t.Fatalf("Hold(%s) = %v", show(key), err)
	}
	if err := s.Hold(ctx, key, "a", time.Hour); !errors.Is(err, state.ErrHeld) {
		t.Fatalf("Hold(%s) by another holder = %v, want ErrHeld", show(key), err)
	}
	if err := s.Unhold(ctx, key, "a\x00"); err != nil {
		t.Fatalf("Unhold(%s) = %v", show(key), err)
	}
	if err := s.Hold(ctx, key, "a", time.Hour); err != nil {
		t.Fatalf("Hold(%s) after Unhold = %v", show(key), err)
	}
	if err := s.Unhold(ctx, key, "a"); err != nil {
		t.Fatal(err)
	}
}

// checkKeyReserve is CheckKey's part for budgets: key and key with a
// trailing NUL are separate accounts and reservations, each of EUR 60
// against a limit of EUR 100, and Release frees both.
func checkKeyReserve(t *testing.T, ctx context.Context, s state.Store, key string) {
	t.Helper()
	limit := eur(100)
	if err := s.Reserve(ctx, key, limit, key, eur(60)); err != nil {
		t.Fatalf("Reserve(account %s, id %s) = %v", show(key), show(key), err)
	}
	if err := s.Reserve(ctx, key+"\x00", limit, key+"\x00", eur(60)); err != nil {
		t.Fatalf("Reserve on account %s = %v: it shares a row with %s", show(key+"\x00"), err, show(key))
	}
	if u, err := s.Usage(ctx, key); err != nil || u.Reserved != 60 || u.Committed != 0 {
		t.Fatalf("Usage(%s) = %+v, %v, want 60 reserved", show(key), u, err)
	}
	for _, k := range []string{key, key + "\x00"} {
		if err := s.Release(ctx, k); err != nil {
			t.Fatalf("Release(%s) = %v", show(k), err)
		}
	}
	if u, err := s.Usage(ctx, key); err != nil || u.Reserved != 0 {
		t.Fatalf("Usage(%s) after Release = %+v, %v", show(key), u, err)
	}
}

func testKeyTooLong(t *testing.T, s state.Store) {
	ctx := context.Background()
	long := strings.Repeat("k", state.MaxKeyLen+1)
	checks := map[string]error{
		"Consume":   s.Consume(ctx, long, time.Now().Add(time.Hour)),
		"Unconsume": s.Unconsume(ctx, long),
		"Hold":      s.Hold(ctx, long, "a", time.Hour),
		"Reserve":   s.Reserve(ctx, long, eur(1), "r", eur(1)),
		"Release":   s.Release(ctx, long),
	}
	for name, err := range checks {
		if !errors.Is(err, state.ErrKeyTooLong) {
			t.Errorf("%s of a key of %d bytes = %v, want ErrKeyTooLong", name, len(long), err)
		}
	}
}

// show quotes a key for a message, cut after 40 bytes.
func show(k string) string {
	if len(k) > 40 {
		return fmt.Sprintf("%q… (%d bytes)", k[:40], len(k))
	}
	return fmt.Sprintf("%q", k)
}

// Fuzz runs CheckKey on s for arbitrary keys, seeded with PackKeys; keys
// too long for CheckKey (which appends a byte) must be refused with
// state.ErrKeyTooLong. Call it from a store's fuzz target:
//
//	func FuzzKeys(f *testing.F) { storetest.Fuzz(f, mem.New(nil)) }
func Fuzz(f *testing.F, s state.Store) {
	for _, k := range PackKeys() {
		f.Add([]byte(k))
	}
	f.Fuzz(func(t *testing.T, key []byte) {
		if len(key) >= state.MaxKeyLen {
			if err := s.Consume(context.Background(), string(key)+"\x00", time.Now()); !errors.Is(err, state.ErrKeyTooLong) {
				t.Fatalf("Consume of a key of %d bytes = %v, want ErrKeyTooLong", len(key)+1, err)
			}
			return
		}
		CheckKey(t, s, string(key))
	})
}

// testConsumed: Consumed reports a consumed key, not an unused one, and
// not one given back with Unconsume; it changes nothing.
func testConsumed(t *testing.T, s state.Store) {
	ctx := context.Background()
	if err := s.Consume(ctx, "op:used", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Consume(ctx, "op:back", time.Now().Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if err := s.Unconsume(ctx, "op:back"); err != nil {
		t.Fatal(err)
	}
	for key, want := range map[string]bool{"op:used": true, "op:unused": false, "op:back": false} {
		if got, err := s.Consumed(ctx, key); err != nil || got != want {
			t.Errorf("Consumed(%q) = %v, %v; want %v", key, got, err, want)
		}
	}
	if err := s.Consume(ctx, "op:unused", time.Now().Add(time.Hour)); err != nil {
		t.Errorf("Consume after Consumed read it: %v (Consumed must not consume)", err)
	}
}
