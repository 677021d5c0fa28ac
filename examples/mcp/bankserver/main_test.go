package main

import (
	"context"
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
