package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// TestListPaymentsEmpty: a session without transfers lists none as an
// empty JSON list, not null.
func TestListPaymentsEmpty(t *testing.T) {
	res, err := (&bank{}).listPayments(context.Background(), mcp.CallToolRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Content) != 1 {
		t.Fatalf("content %+v", res.Content)
	}
	if text, ok := res.Content[0].(mcp.TextContent); !ok || text.Text != "[]" {
		t.Fatalf("list_payments of a session without transfers = %+v, want the text []", res.Content[0])
	}
}

// TestLedgerKeepsTransfers: with a ledger file, a transfer is there for
// the next start of the bank; a ledger that cannot be written sends
// nothing; a malformed one is refused at start, naming the file.
func TestLedgerKeepsTransfers(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bank-ledger.json")
	send := func(b *bank, args string) *mcp.CallToolResult {
		req := mcp.CallToolRequest{}
		req.Params.Name = "send_money"
		req.Params.RawArguments = json.RawMessage(args)
		res, err := b.sendMoney(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	b := &bank{balance: 100_000, ledger: path}
	if err := b.load(); err != nil {
		t.Fatalf("a missing ledger is a new bank: %v", err)
	}
	if res := send(b, `{"recipient_iban":"DE89370400440532013000","amount":"850.00","reference":"INV-2290"}`); res.IsError {
		t.Fatalf("transfer refused: %+v", res.Content)
	}
	again := &bank{balance: 100_000, ledger: path}
	if err := again.load(); err != nil {
		t.Fatal(err)
	}
	if again.balance != 15_000 || len(again.payments) != 1 || again.payments[0]["id"] != "TX-0001" {
		t.Fatalf("after a restart: balance %d, payments %+v; want 15000 cents and TX-0001", again.balance, again.payments)
	}

	broken := &bank{balance: 100_000, ledger: filepath.Join(t.TempDir(), "missing-dir", "ledger.json")}
	if res := send(broken, `{"recipient_iban":"DE89370400440532013000","amount":"1.00","reference":"x"}`); !res.IsError {
		t.Fatalf("a transfer the bank could not record was sent: %+v", res.Content)
	}
	if broken.balance != 100_000 || len(broken.payments) != 0 {
		t.Fatalf("a failed transfer changed the bank: balance %d, payments %+v", broken.balance, broken.payments)
	}

	if err := os.WriteFile(path, []byte("{not json"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := (&bank{ledger: path}).load(); err == nil || !strings.Contains(err.Error(), path) {
		t.Fatalf("a malformed ledger: %v; want an error naming %s", err, path)
	}
}
