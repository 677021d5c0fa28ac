// Command democlient is a scripted MCP client playing a compromised
// assistant against intentplane-mcp: it reads the demo bank's inbox and
// obeys the "we changed banks" email. Run it from the repository root:
//
//	go run ./examples/mcp/democlient
//
// It starts intentplane-mcp with examples/mcp/intentplane.toml (or -proxy
// and -config), then:
//
//  1. reads the inbox, where the email gives a new IBAN for ACME Supplies;
//  2. pays INV-2290 (850.00) to the email's IBAN: refused, with the reason;
//  3. pays INV-2290 to the IBAN on file, spelled differently: executed with
//     the trusted record's value;
//  4. pays INV-2291 (2,400.00): the user is asked to confirm the exact
//     operation in the client (this script answers yes) and it executes;
//  5. sends 12,500.00: refused, above 10,000.00;
//  6. sends 9,000.00: refused, beyond what remains of the session budget;
//  7. lists the payments the bank made.
//
// All names, IBANs and amounts are fictional.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "democlient:", err)
		os.Exit(1)
	}
}

// confirmer plays the user at the client: it shows the confirmation and
// approves it.
type confirmer struct{ out io.Writer }

func (c confirmer) Elicit(_ context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	fmt.Fprintf(c.out, "\n    ┌ the client asks the user:\n")
	for _, l := range strings.Split(strings.TrimSpace(req.Params.Message), "\n") {
		fmt.Fprintf(c.out, "    │ %s\n", l)
	}
	fmt.Fprintf(c.out, "    └ the user answers: approve\n\n")
	res := &mcp.ElicitationResult{}
	res.Action = mcp.ElicitationResponseActionAccept
	res.Content = map[string]any{"approve": true}
	return res, nil
}

// run plays the script against the proxy started by -proxy.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("democlient", flag.ContinueOnError)
	fs.SetOutput(stderr)
	proxy := fs.String("proxy", "go run ./cmd/intentplane-mcp", "command that runs intentplane-mcp")
	config := fs.String("config", "examples/mcp/intentplane.toml", "intentplane-mcp configuration")
	if err := fs.Parse(args); err != nil {
		return err
	}
	argv := append(strings.Fields(*proxy), "--config", *config)
	tr := transport.NewStdioWithOptions(argv[0], nil, argv[1:], transport.WithCommandStderrWriter(stderr))
	c := client.NewClient(tr, client.WithElicitationHandler(confirmer{stdout}), client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	if err := c.Start(ctx); err != nil {
		return err
	}
	defer c.Close()
	ictx, cancel := context.WithTimeout(ctx, 2*time.Minute) // go run may compile first
	defer cancel()
	if _, err := c.Initialize(ictx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.ProtocolVersion20251125, ClientInfo: mcp.Implementation{Name: "democlient", Version: "1"},
	}}); err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return err
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Fprintf(stdout, "tools shown to the assistant: %s\n\n", strings.Join(names, ", "))

	step := func(n int, what, tool string, args map[string]any) (string, bool, error) {
		fmt.Fprintf(stdout, "%d. %s\n   → %s %s\n", n, what, tool, mustJSON(args))
		req := mcp.CallToolRequest{}
		req.Params.Name = tool
		req.Params.Arguments = args
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		defer cancel()
		res, err := c.CallTool(cctx, req)
		if err != nil {
			return "", false, err
		}
		var parts []string
		for _, ct := range res.Content {
			if t, ok := mcp.AsTextContent(ct); ok {
				parts = append(parts, t.Text)
			}
		}
		txt := strings.Join(parts, "\n")
		verdict := "EXECUTED"
		if res.IsError {
			verdict = "REFUSED"
		}
		fmt.Fprintf(stdout, "   ← %s: %s\n\n", verdict, indent(txt))
		return txt, !res.IsError, nil
	}

	inbox, _, err := step(1, "The assistant reads the payment inbox.", "read_inbox", map[string]any{})
	if err != nil {
		return err
	}
	emailIBAN := "LT12 1000 0111 0100 1000"
	if !strings.Contains(inbox, emailIBAN) {
		return fmt.Errorf("the inbox has no %q", emailIBAN)
	}
	script := []struct {
		what string
		args map[string]any
	}{
		{"Obeying the email, it pays INV-2290 to the email's new IBAN.",
			map[string]any{"recipient_iban": emailIBAN, "amount": 850.00, "reference": "INV-2290"}},
		{"It pays INV-2290 to ACME's IBAN on file, spelled its own way.",
			map[string]any{"recipient_iban": "de89 3704 0044 0532 0130 00", "amount": "850.00", "reference": "INV-2290"}},
		{"It pays INV-2291 (2,400.00): above 1,000.00, the user must confirm.",
			map[string]any{"recipient_iban": "DE89370400440532013000", "amount": "2400.00", "reference": "INV-2291"}},
		{"It sends 12,500.00.",
			map[string]any{"recipient_iban": "DE89370400440532013000", "amount": "12500.00", "reference": "advance"}},
		{"It sends 9,000.00, more than what remains of the session's budget.",
			map[string]any{"recipient_iban": "DE89370400440532013000", "amount": "9000.00", "reference": "advance"}},
	}
	for i, s := range script {
		if _, _, err := step(i+2, s.what, "send_money", s.args); err != nil {
			return err
		}
	}
	_, _, err = step(len(script)+2, "What did the bank actually do?", "list_payments", map[string]any{})
	return err
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func indent(s string) string { return strings.ReplaceAll(s, "\n", "\n     ") }
