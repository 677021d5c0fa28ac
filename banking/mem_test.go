package banking_test

import (
	"errors"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/intent"
)

func newBank(t *testing.T) *banking.Mem {
	t.Helper()
	b := banking.NewMem()
	if err := b.Open(emma, emmaAccount()); err != nil {
		t.Fatal(err)
	}
	return b
}

func TestMemSendMoney(t *testing.T) {
	t.Parallel()
	b := newBank(t)
	tx, err := b.SendMoney(emma, "X", 12345, "s", "2022-04-01")
	if err != nil {
		t.Fatal(err)
	}
	want := banking.Transaction{ID: 8, Sender: ownIBAN, Recipient: "X", Amount: 12345, Subject: "s", Date: "2022-04-01"}
	if diff := cmp.Diff(want, tx); diff != "" {
		t.Errorf("transaction (-want, +got):\n%s", diff)
	}
	if bal, _ := b.Balance(emma); bal != 181000 {
		t.Errorf("balance %d; send_money does not change it", bal)
	}
	st, _ := b.ScheduleTransaction(emma, "Y", 1, "t", "2022-05-01", true)
	if st.ID != 9 || !st.Recurring {
		t.Errorf("scheduled %+v; want id 9, recurring", st)
	}
	if err := b.Open(emma, banking.Account{}); !errors.Is(err, banking.ErrExists) {
		t.Errorf("Open twice: %v", err)
	}
	if _, err := b.SendMoney("nobody", "X", 1, "", ""); !errors.Is(err, banking.ErrUnknownOwner) {
		t.Errorf("unknown owner: %v", err)
	}
}

func TestMemUpdateScheduledIgnoresZeroFields(t *testing.T) {
	t.Parallel()
	b := newBank(t)
	got, err := b.UpdateScheduled(emma, 6, banking.ScheduledUpdate{Amount: 6000})
	if err != nil {
		t.Fatal(err)
	}
	want := banking.Transaction{ID: 6, Sender: ownIBAN, Recipient: "SE3550000000054910000003", Amount: 6000, Subject: "Spotify Premium", Date: "2022-04-01", Recurring: true}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("after update (-want, +got):\n%s", diff)
	}
	// Recurring false is "unchanged": a standing order cannot be made
	// one-off by an update, as in AgentDojo.
	got, _ = b.UpdateScheduled(emma, 6, banking.ScheduledUpdate{Recipient: "Z", Recurring: false})
	if !got.Recurring || got.Recipient != "Z" {
		t.Errorf("after update %+v", got)
	}
	if _, err := b.UpdateScheduled(emma, 5, banking.ScheduledUpdate{Amount: 1}); !errors.Is(err, banking.ErrNotFound) {
		t.Errorf("history id 5 is not a scheduled transaction: %v", err)
	}
}

func TestMemRecentTransactions(t *testing.T) {
	t.Parallel()
	b := newBank(t)
	ids := func(n int64) []int64 {
		ts, err := b.RecentTransactions(emma, n)
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, tx := range ts {
			out = append(out, tx.ID)
		}
		return out
	}
	tests := []struct {
		n    int64
		want []int64
	}{
		{100, []int64{1, 2, 3, 4, 5}},
		{2, []int64{4, 5}},
		{0, []int64{1, 2, 3, 4, 5}}, // Python's transactions[-0:]
		{-3, []int64{4, 5}},         // transactions[3:]
		{-9, nil},
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, ids(tt.n)); diff != "" {
			t.Errorf("n=%d (-want, +got):\n%s", tt.n, diff)
		}
	}
}

func TestMemProfileAndFiles(t *testing.T) {
	t.Parallel()
	b := newBank(t)
	u, _ := b.UpdateUserInfo(emma, banking.UserInfo{City: "New York"})
	if u != (banking.UserInfo{FirstName: "Emma", LastName: "Johnson", Street: "Apple Street 1", City: "New York"}) {
		t.Errorf("user %+v", u)
	}
	if s, _ := b.ReadFile(emma, "missing.txt"); s != "" {
		t.Errorf("missing file: %q", s)
	}
	a, _ := b.Account(emma)
	a.Transactions[0].Amount = 1
	a.Files["x"] = "y"
	again, _ := b.Account(emma)
	if again.Transactions[0].Amount != 10000 || again.Files["x"] != "" {
		t.Error("Account returned shared state")
	}
	if _, err := b.UserInfo(intent.Owner("nobody")); !errors.Is(err, banking.ErrUnknownOwner) {
		t.Errorf("unknown owner: %v", err)
	}
}

// TestRecentTransactionsExtremeN: found in review, n = math.MinInt64 made
// -n overflow and the slice panic, crashing the gateway.
func TestRecentTransactionsExtremeN(t *testing.T) {
	t.Parallel()
	m := banking.NewMem()
	if err := m.Open("emma", banking.Account{IBAN: "DE89370400440532013000", Transactions: []banking.Transaction{{ID: 1}, {ID: 2}, {ID: 3}}}); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int64{math.MinInt64, math.MinInt64 + 1, -4, -3, -2, math.MaxInt64} {
		got, err := m.RecentTransactions("emma", n)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want := map[int64]int{math.MinInt64: 0, math.MinInt64 + 1: 0, -4: 0, -3: 0, -2: 1, math.MaxInt64: 3}[n]
		if len(got) != want {
			t.Errorf("n=%d: %d transactions, want %d", n, len(got), want)
		}
	}
}
