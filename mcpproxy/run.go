package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// RunDecider decides runs of proposals as a whole (gateway.DecideRun);
// *gateway.Gateway is one. The Decider of a proxy with a run tool
// (Tool.RunOf) must implement it. It is called concurrently.
type RunDecider interface {
	DecideRun(ctx context.Context, req gateway.RunRequest) (gateway.Run, error)
}

// RunTool describes a run of action c as an MCP tool named name: its
// input is {items: [arguments of c, ...]} (1 to approval.MaxRunLines,
// each as ContractTool(c) accepts them), description doc. A call
// proposes the run (RunDecider), asks for its approval once on the
// approval page, never in the client (Tool.PageOnly), and executes each
// line with it: see Proxy's handling of Tool.RunOf.
func RunTool(name string, c *contract.Contract, items, doc string) Tool {
	one := ContractTool(name, c)
	var item map[string]any
	_ = json.Unmarshal(one.InputSchema, &item) // ContractTool's own JSON
	schema := map[string]any{
		"type": "object", "additionalProperties": false, "required": []string{items},
		"properties": map[string]any{items: map[string]any{"type": "array", "minItems": 1, "maxItems": approval.MaxRunLines, "items": item}},
	}
	raw, _ := json.Marshal(schema) // maps of plain values: cannot fail
	return Tool{Name: name, Action: c.Action, Description: doc, InputSchema: raw, Sensitive: one.Sensitive, PageOnly: true, RunOf: items}
}

// runProposals returns the proposals of a run tool's call: one per item
// of its argument t.RunOf, each {"action": t.Action, "args": item}; a
// non-empty string is the message refusing arguments of another shape.
func runProposals(t Tool, req mcp.CallToolRequest) ([][]byte, string) {
	raw := req.Params.RawArguments
	if len(raw) == 0 && req.Params.Arguments != nil {
		raw, _ = json.Marshal(req.Params.Arguments)
	}
	var args map[string]json.RawMessage
	if err := json.Unmarshal(raw, &args); err != nil || len(args) != 1 || args[t.RunOf] == nil {
		return nil, fmt.Sprintf("The arguments must be a JSON object with only %q, a list of payments. Nothing was done.", t.RunOf)
	}
	var items []json.RawMessage
	if err := json.Unmarshal(args[t.RunOf], &items); err != nil || len(items) == 0 || len(items) > approval.MaxRunLines {
		return nil, fmt.Sprintf("%q must be a list of 1 to %d objects, each the arguments of one payment. Nothing was done.", t.RunOf, approval.MaxRunLines)
	}
	a, _ := json.Marshal(string(t.Action))
	out := make([][]byte, len(items))
	for i, it := range items {
		it = bytes.TrimSpace(it)
		if len(it) == 0 || it[0] != '{' {
			return nil, fmt.Sprintf("Item %d of %q is not a JSON object. Nothing was done.", i+1, t.RunOf)
		}
		out[i] = []byte(`{"action":` + string(a) + `,"args":` + string(it) + `}`)
	}
	return out, ""
}

// runHandler turns a call of the run tool t into a run: decided as a
// whole; executed at once when no line needs a person; otherwise put on
// the approval page as one request (asking again for the same run finds
// it) and, once approved, each line executed with the run's approvals,
// in order, at most once each.
func (p *Proxy) runHandler(t Tool) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		proposals, bad := runProposals(t, req)
		if bad != "" {
			return refusal(intent.CodeMalformed, intent.Deny, bad), nil
		}
		rd, _ := p.decider.(RunDecider) // New checked it
		dctx := withCall(context.WithoutCancel(ctx), &call{live: ctx})
		run, err := rd.DecideRun(dctx, gateway.RunRequest{Mandate: p.cfg.Mandate, Proposals: proposals})
		if err != nil {
			p.log.Error("run not decided", "err", err)
			return refusal(intent.CodeUnavailable, intent.Deny, "The gateway could not decide or record this run, so nothing was done. Try again later and tell the user."), nil
		}
		if len(run.Operations) == 0 {
			return p.runReport(run, nil, "No payment of this run can execute; nothing was done."), nil
		}
		var as []approval.Approval
		if run.Level != intent.LevelAuto {
			var stop *mcp.CallToolResult
			if as, stop = p.runApprovals(ctx, run); stop != nil {
				return stop, nil
			}
		}
		return p.runReport(run, p.executeRun(dctx, run, proposals, as), ""), nil
	}
}

// runApprovals returns the approvals given to run on the page, or the
// answer for the agent when there are none yet (the link), or the run was
// rejected or could not be put there.
func (p *Proxy) runApprovals(ctx context.Context, run gateway.Run) ([]approval.Approval, *mcp.CallToolResult) {
	if p.cfg.Approvals == nil {
		return nil, refusal(CodeApprovalUnavailable, intent.StepUp, "This run needs a person's approval and no approval page is configured, so nothing was done. Tell the user.")
	}
	as, err := p.cfg.Approvals.Await(ctx, run.Hash, 0)
	if err == nil && len(as) == 0 {
		var link string
		if link, err = p.cfg.Approvals.Request(ctx, runRequest(run)); err == nil {
			as, err = p.waitOnPage(ctx, run.Hash)
		}
		if err == nil && len(as) == 0 {
			who := "The user"
			if run.Level == intent.LevelFourEyes {
				who = "Two different people"
			}
			return nil, refusal(intent.CodeApprovalRequired, intent.StepUp, fmt.Sprintf("This run of %d payments needs approval as a whole: %s must approve it on the approval page: %s . Nothing was done yet. Give the user the link; once it is approved, call the tool again with exactly the same payments. Any change to a payment needs a new approval.", len(run.Operations), who, link))
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, approval.ErrRejected):
			return nil, refusal(CodeApprovalRejected, intent.StepUp, "A person rejected this run (or a payment in it) on the approval page; it stays rejected. Nothing was done. Do not retry it or its payments, alone or in another run; tell the user.")
		case errors.Is(err, approval.ErrTooManyRequests):
			return nil, refusal(CodeApprovalBusy, intent.StepUp, msgPageBusy)
		}
		p.log.Error("approval page failed", "err", err)
		return nil, refusal(CodeApprovalUnavailable, intent.StepUp, "The approval page could not be reached, so nothing was done. Try again later.")
	}
	return as, nil
}

// runRequest is the approval request of run: its operation (the run of
// its lines), hash and level, and each line that may execute with what the
// gateway decided of it.
func runRequest(run gateway.Run) approval.Request {
	var lines []approval.Request
	var mandateID string
	var owner intent.Owner
	for _, d := range run.Lines {
		if d.Verdict != intent.StepUp || d.Operation == nil {
			continue
		}
		mandateID, owner = d.Operation.MandateID, d.Operation.Owner
		reason := ""
		if d.Refusal != nil {
			reason = d.Refusal.Message
		}
		lines = append(lines, approval.Request{Operation: *d.Operation, Hash: d.OperationHash, Level: d.Level,
			Resolved: d.Resolved, Reason: reason, Facts: d.Facts, Policies: d.Policies, Currency: d.Currency})
	}
	op, _ := approval.RunOperation(mandateID, owner, run.Operations) // the gateway's own lines
	return approval.Request{Operation: op, Hash: run.Hash, Level: run.Level, Lines: lines}
}

// lineResult is what became of one line of a run.
type lineResult struct {
	d    gateway.Decision
	note string // why it was not presented, when it was not
}

// executeRun executes the lines of run that may execute, in order, each
// with the approvals that all cover it (a line an approver left out of
// their approval is not executed: it was rejected).
func (p *Proxy) executeRun(ctx context.Context, run gateway.Run, proposals [][]byte, as []approval.Approval) map[int]lineResult {
	out := map[int]lineResult{}
	for i, d := range run.Lines {
		if d.Verdict != intent.StepUp {
			continue
		}
		if !coveredByAll(as, d.OperationHash) {
			out[i] = lineResult{note: "an approver left it out of the run's approval: it is rejected and was not executed; do not retry it"}
			continue
		}
		res, err := p.decide(ctx, proposals[i], as)
		if err != nil && !res.Executed {
			out[i] = lineResult{note: "the gateway could not record its decision, so it was not executed"}
			continue
		}
		out[i] = lineResult{d: res}
	}
	return out
}

// coveredByAll reports whether every approval of as covers line h (a
// run's approval lists it in Lines).
func coveredByAll(as []approval.Approval, h intent.OperationHash) bool {
	for _, a := range as {
		if len(a.Lines) > 0 && !slices.Contains(a.Lines, h) {
			return false
		}
	}
	return true
}

// runReport answers a run's call: one line per payment, in order, saying
// what became of it. It is a tool error when nothing executed.
func (p *Proxy) runReport(run gateway.Run, results map[int]lineResult, head string) *mcp.CallToolResult {
	var b strings.Builder
	if head != "" {
		b.WriteString(head + "\n")
	}
	executed := 0
	for i, d := range run.Lines {
		fmt.Fprintf(&b, "%d. ", i+1)
		res, done := results[i]
		switch {
		case d.Verdict != intent.StepUp:
			b.WriteString("refused: " + message(d))
		case !done:
			b.WriteString("not executed")
		case res.note != "":
			b.WriteString("not executed: " + res.note)
		case res.d.Executed:
			executed++
			b.WriteString("executed: " + res.d.Output)
		default:
			b.WriteString("not executed: " + message(res.d))
		}
		b.WriteByte('\n')
	}
	if executed == 0 {
		return refusal(runCode(run, results), intent.Deny, strings.TrimSpace(b.String()))
	}
	return mcp.NewToolResultText(fmt.Sprintf("%d of %d payments executed, each once, with its own receipt.\n%s", executed, len(run.Lines), b.String()))
}

func message(d gateway.Decision) string {
	if d.Refusal == nil {
		return "refused"
	}
	return oneLine(d.Refusal.Message)
}

// runCode is the reason code of a run of which nothing executed: the
// lines' own code when they all give the same one (every payment already
// executed: execution.replayed), policy.denied otherwise.
func runCode(run gateway.Run, results map[int]lineResult) intent.Code {
	var code intent.Code
	for i, d := range run.Lines {
		if res, ok := results[i]; ok && res.note == "" {
			d = res.d
		}
		if d.Refusal == nil || (code != "" && d.Refusal.Code != code) {
			return intent.CodePolicyDenied
		}
		code = d.Refusal.Code
	}
	if code == "" {
		return intent.CodePolicyDenied
	}
	return code
}
