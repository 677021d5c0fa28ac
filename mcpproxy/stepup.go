package mcpproxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// Messages for the agent when a step-up does not end in an approval.
const (
	msgDeclined       = "The user declined this exact operation in their client. Nothing was done. Do not retry it or try to reach the same result another way; ask the user what they want instead."
	msgDeclinedBefore = "The user already declined this exact operation in their client, at %s; a decline is final. Nothing was done. Do not retry it or try to reach the same result another way; ask the user what they want instead."
	msgCancelled      = "The user closed the confirmation without deciding. Nothing was done. Ask the user whether they want this operation before calling the tool again."
	msgTimeout        = "The user did not answer the confirmation in time. Nothing was done. Ask the user whether they want this operation before calling the tool again."
	msgBusy           = "Too many confirmations are already waiting for the user, so this operation was not put to them. Nothing was done. Wait for the user to answer the open ones, then try again."
	msgRejected       = "A person rejected this exact operation on the approval page; it stays rejected. Nothing was done. Do not retry it or try to reach the same result another way; tell the user it was rejected."
	msgPageBusy       = "Too many operations are already waiting on the approval page, so this one was not put there. Nothing was done. Ask the user to decide the open ones first, then try again."
	msgNoChannel      = " This client cannot ask the user to confirm, and no approval page is configured, so the operation was refused."
	msgFourEyes       = " Four eyes cannot be granted from this client, and no approval page is configured, so the operation was refused."
	msgSecret         = " It carries a secret argument (%s), which is never shown on the approval page, so it can only be confirmed by the user in a client that supports confirmations (MCP elicitation); it was refused. Nothing was done."
)

// confirmSchema is the form shown to the user: one required boolean.
var confirmSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{
			"type":        "boolean",
			"title":       "Approve this exact operation?",
			"description": "Approve only if you asked for exactly this.",
		},
	},
	"required": []string{"approve"},
}

// canElicit reports whether the client declared form elicitation, for
// this request (2026-07-28) or for the session (earlier versions).
func canElicit(ctx context.Context) bool {
	var c *mcp.ElicitationCapability
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		if info.ClientCapabilities != nil {
			c = info.ClientCapabilities.Elicitation
		}
	} else if s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo); ok {
		c = s.GetClientCapabilities().Elicitation
	}
	// An empty elicitation capability means form mode.
	return c != nil && (c.Form != nil || c.URL == nil)
}

func isModern(ctx context.Context) bool {
	return mcp.IsModernProtocol(server.RequestProtocolVersion(ctx))
}

// stepUp asks for the approval d requires: in the client when it can and
// the level is confirm, else on the approval page, else refuses.
func (p *Proxy) stepUp(ctx, dctx context.Context, cs *call, t Tool, proposal []byte, d gateway.Decision) *mcp.CallToolResult {
	if at, ok := p.declined.when(d.OperationHash); ok {
		return refusal(CodeApprovalDeclined, intent.StepUp, fmt.Sprintf(msgDeclinedBefore, at.UTC().Format("2006-01-02 15:04 UTC")))
	}
	reason := ""
	if d.Refusal != nil {
		reason = d.Refusal.Message
	}
	if d.Level == intent.LevelConfirm && !t.PageOnly && p.cfg.ClientApprover != nil && canElicit(ctx) {
		params := mcp.ElicitationParams{Message: describe(t, d), RequestedSchema: confirmSchema}
		if isModern(ctx) {
			state, err := p.states.seal(t.Name, d.OperationHash)
			if err != nil {
				return refusal(CodeApprovalUnavailable, intent.StepUp, "The confirmation could not be prepared, so nothing was done. Try again.")
			}
			return server.NewInputRequestBuilder(state).Elicit(confirmID, params).ToolResult()
		}
		select {
		case p.pending <- struct{}{}:
		default:
			return refusal(CodeApprovalBusy, intent.StepUp, msgBusy)
		}
		defer func() { <-p.pending }()
		ectx, cancel := context.WithTimeout(ctx, p.confirmTimeout())
		defer cancel()
		p.confirming.Add(1)
		res, err := p.srv.RequestElicitation(ectx, mcp.ElicitationRequest{Params: params})
		p.confirming.Add(-1)
		switch {
		case err == nil:
			return p.answered(dctx, cs, proposal, d, res)
		case ctx.Err() != nil:
			return refusal(CodeCancelled, intent.StepUp, "The call was cancelled while waiting for the user's confirmation. Nothing was done.")
		case ectx.Err() != nil:
			return refusal(CodeApprovalTimeout, intent.StepUp, msgTimeout)
		}
		p.log.Warn("elicitation failed", "tool", t.Name, "err", err)
		// Fall through to the approval page, if any.
	}
	if secret := t.secretsIn(d.Operation); secret != "" {
		return refusal(intent.CodeApprovalRequired, intent.StepUp, reason+fmt.Sprintf(msgSecret, secret))
	}
	if p.cfg.Approvals != nil {
		return p.viaPage(ctx, dctx, cs, t, proposal, d)
	}
	if d.Level == intent.LevelFourEyes {
		return refusal(intent.CodeApprovalRequired, intent.StepUp, reason+msgFourEyes)
	}
	return refusal(intent.CodeApprovalRequired, intent.StepUp, reason+msgNoChannel)
}

func (p *Proxy) confirmTimeout() time.Duration {
	if p.cfg.ConfirmTimeout <= 0 {
		return 5 * time.Minute
	}
	return p.cfg.ConfirmTimeout
}

// answered turns the user's answer into a signed approval and decides
// again with it. Only an accept whose content approves counts.
func (p *Proxy) answered(dctx context.Context, cs *call, proposal []byte, d gateway.Decision, res *mcp.ElicitationResult) *mcp.CallToolResult {
	if res == nil {
		return refusal(CodeApprovalDeclined, intent.StepUp, msgCancelled)
	}
	switch res.Action {
	case mcp.ElicitationResponseActionAccept:
		if !approves(res.Content) {
			p.declined.add(d.OperationHash, p.now())
			return refusal(CodeApprovalDeclined, intent.StepUp, msgDeclined)
		}
	case mcp.ElicitationResponseActionDecline:
		p.declined.add(d.OperationHash, p.now())
		return refusal(CodeApprovalDeclined, intent.StepUp, msgDeclined)
	default:
		return refusal(CodeApprovalDeclined, intent.StepUp, msgCancelled)
	}
	if d.Level != intent.LevelConfirm || d.Operation == nil || p.cfg.ClientApprover == nil {
		return refusal(intent.CodeApprovalRequired, intent.StepUp, "This operation needs more than the confirmation of the user at this client. Nothing was done.")
	}
	a, err := p.sign(*d.Operation, d.OperationHash)
	if err != nil {
		p.log.Error("approval not signed", "err", err)
		return refusal(CodeApprovalUnavailable, intent.StepUp, "The user's confirmation could not be recorded, so nothing was done. Try again.")
	}
	d2, err := p.decide(dctx, proposal, []approval.Approval{a})
	if err != nil {
		return failed(d2)
	}
	switch d2.Verdict {
	case intent.Allow:
		return allowed(cs, d2)
	case intent.StepUp:
		return refusal(d2.Refusal.Code, d2.Verdict, d2.Refusal.Message+" The user's confirmation was not enough for this operation.")
	}
	return refused(cs, d2)
}

// approves reports whether an accepted form's content says approve: true.
func approves(content any) bool {
	m, ok := content.(map[string]any)
	if !ok {
		return false
	}
	v, ok := m["approve"].(bool)
	return ok && v
}

// sign makes the client user's approval of exactly op.
func (p *Proxy) sign(op intent.Operation, hash intent.OperationHash) (approval.Approval, error) {
	id, err := approval.NewID(p.rand)
	if err != nil {
		return approval.Approval{}, err
	}
	ttl := p.cfg.ApprovalTTL
	if ttl <= 0 {
		ttl = 2 * time.Minute
	}
	now := p.now().UTC().Truncate(time.Second)
	return approval.Sign(approval.Approval{
		ID: id, Operation: hash, MandateID: op.MandateID, Approver: p.cfg.ClientApprover.Name,
		IssuedAt: now, ExpiresAt: now.Add(ttl), Channel: receipt.ChannelElicitation,
	}, p.cfg.ClientApprover.Key)
}

// viaPage looks for approvals already given on the page; if there are
// none, registers the step-up, waits ApprovalWait when a waiting slot is
// free (waits count in MaxPendingConfirmations, since each holds a
// worker), and otherwise returns the link with what to do.
func (p *Proxy) viaPage(ctx, dctx context.Context, cs *call, t Tool, proposal []byte, d gateway.Decision) *mcp.CallToolResult {
	as, err := p.cfg.Approvals.Await(ctx, d.OperationHash, 0)
	if err == nil && len(as) == 0 {
		reason := ""
		if d.Refusal != nil {
			reason = d.Refusal.Message
		}
		var link string
		link, err = p.cfg.Approvals.Request(ctx, approval.Request{
			Level: d.Level, Operation: *d.Operation, Hash: d.OperationHash,
			Resolved: d.Resolved, Reason: reason, Facts: d.Facts, Policies: d.Policies, Currency: d.Currency,
		})
		if err == nil {
			as, err = p.waitOnPage(ctx, d.OperationHash)
			if err == nil && len(as) == 0 {
				who := "The user"
				if d.Level == intent.LevelFourEyes {
					who = "Two different people"
				}
				return refusal(intent.CodeApprovalRequired, intent.StepUp, fmt.Sprintf("%s %s must approve this exact operation on the approval page: %s . Nothing was done yet. Give the user the link; once it is approved, call the tool again with exactly the same arguments. Any change needs a new approval.", reason, who, link))
			}
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, approval.ErrRejected):
			return refusal(CodeApprovalRejected, intent.StepUp, msgRejected)
		case errors.Is(err, approval.ErrTooManyRequests):
			return refusal(CodeApprovalBusy, intent.StepUp, msgPageBusy)
		case errors.Is(err, context.Canceled):
			return refusal(CodeCancelled, intent.StepUp, "The call was cancelled while waiting for approval. Nothing was done.")
		}
		p.log.Error("approval page failed", "err", err)
		return refusal(CodeApprovalUnavailable, intent.StepUp, "The approval page could not be reached, so nothing was done. Try again later.")
	}
	d2, err := p.decide(dctx, proposal, as)
	if err != nil {
		return failed(d2)
	}
	switch d2.Verdict {
	case intent.Allow:
		return allowed(cs, d2)
	case intent.StepUp:
		return refusal(d2.Refusal.Code, d2.Verdict, d2.Refusal.Message+" The approvals given so far are not enough.")
	}
	return refused(cs, d2)
}

// waitOnPage waits up to ApprovalWait for the approvals of op on the
// page when a waiting slot is free (waits count in
// MaxPendingConfirmations, since each holds a worker); with no wait
// configured, or enough calls already waiting, it returns none at once.
func (p *Proxy) waitOnPage(ctx context.Context, op intent.OperationHash) ([]approval.Approval, error) {
	if p.cfg.ApprovalWait <= 0 {
		return nil, nil
	}
	select {
	case p.pending <- struct{}{}:
		defer func() { <-p.pending }()
		return p.cfg.Approvals.Await(ctx, op, p.cfg.ApprovalWait)
	default:
		return nil, nil
	}
}

// describe writes the confirmation the user reads. What the gateway
// trusts comes first: the action, each critical value with where it came
// from, the amounts and the operation hash. The agent's own arguments come
// last, each quoted in ASCII (line breaks, control, invisible and bidi
// characters escaped as \uXXXX) and cut at 80 characters, so that no
// argument can add lines or forge the dialog.
func describe(t Tool, d gateway.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Confirm this exact operation (tool %s)?\n\n", t.Name)
	if op := d.Operation; op != nil {
		fmt.Fprintf(&b, "Action: %s\n", op.Action)
		prov := map[string]intent.Resolved{}
		for _, r := range d.Resolved {
			prov[r.Param] = r
		}
		names := op.Args.Names()
		for _, name := range names {
			r, ok := prov[name]
			if !ok {
				continue
			}
			if t.secret(name) {
				fmt.Fprintf(&b, "  %s: %s  (trusted, from %s; secret, shown as its digest)\n", name, digest(op.Args[name].String()), r.Provenance.Source)
				continue
			}
			fmt.Fprintf(&b, "  %s: %s", name, shown(op.Args[name].String()))
			if n := nameOnFile(d.Facts, name); n != "" {
				fmt.Fprintf(&b, ", %s on file", quote(n))
			}
			fmt.Fprintf(&b, "  (trusted, from %s", r.Provenance.Source)
			if r.Provenance.RecordID != "" {
				fmt.Fprintf(&b, ", record %s", shown(r.Provenance.RecordID))
			}
			if r.Sent != r.Value {
				fmt.Fprintf(&b, "; the assistant wrote %s", quote(r.Sent))
			}
			b.WriteString(")\n")
		}
		for _, name := range names {
			if v := op.Args[name]; v.Kind == intent.KindAmount {
				if _, ok := prov[name]; !ok {
					fmt.Fprintf(&b, "  %s: %s%s\n", name, v.String(), currencyOf(d))
				}
			}
		}
		fmt.Fprintf(&b, "Operation %s\n", d.OperationHash.String()[:16])
		if d.Refusal != nil {
			if why, ok := strings.CutPrefix(d.Refusal.Message, "This operation needs a person's confirmation before it can execute: "); ok {
				why, _, _ = strings.Cut(why, ". Nothing was done yet.")
				fmt.Fprintf(&b, "Why you are asked: %s.\n", oneLine(why))
			}
		}
		other := false
		for _, name := range names {
			v := op.Args[name]
			if _, ok := prov[name]; ok || v.Kind == intent.KindAmount {
				continue
			}
			if !other {
				b.WriteString("\nOther arguments, as the assistant wrote them:\n")
				other = true
			}
			if t.secret(name) {
				fmt.Fprintf(&b, "  %s: %s  (secret, shown as its digest)\n", name, digest(v.String()))
				continue
			}
			fmt.Fprintf(&b, "  %s: %s\n", name, quote(v.String()))
		}
	} else {
		fmt.Fprintf(&b, "Operation %s\n", d.OperationHash.String()[:16])
	}
	return b.String()
}

// nameFacts are the facts that name a critical argument's record, by
// parameter, in the order looked for (as the approval page shows them);
// any other parameter's is "<param>_name".
var nameFacts = map[string][]string{
	"vendor":      {"vendor_name"},
	"bill":        {"bill_ref", "bill_number", "bill_name"},
	"beneficiary": {"beneficiary_name"},
}

// nameOnFile returns the name on file of param's record, as a context
// provider read it from the system of record into facts, or "".
func nameOnFile(facts map[string]intent.Value, param string) string {
	keys := nameFacts[param]
	if keys == nil {
		keys = []string{param + "_name"}
	}
	for _, k := range keys {
		if v, ok := facts[k]; ok && v.Kind == intent.KindString && v.Str != "" {
			return v.Str
		}
	}
	return ""
}

// currencyOf returns " " and the currency the operation's amount is
// reserved in (the gateway's Decision.Currency, else the fact
// budget_currency), or "".
func currencyOf(d gateway.Decision) string {
	if d.Currency != "" {
		return " " + shown(d.Currency)
	}
	if v, ok := d.Facts["budget_currency"]; ok && v.Kind == intent.KindString && v.Str != "" {
		return " " + shown(v.Str)
	}
	return ""
}

// maxShown bounds an argument shown in a confirmation, in characters.
const maxShown = 80

// quote returns s quoted in ASCII, cut at maxShown characters, flagged
// when it holds anything but printable ASCII.
func quote(s string) string {
	cut := clip(s)
	q := strconv.QuoteToASCII(cut)
	if cut != s {
		q += fmt.Sprintf(" (cut; %d bytes in all)", len(s))
	}
	if !plain(s) {
		q += " (contains non-ASCII or invisible characters)"
	}
	return q
}

// shown returns a trusted value as is when it is plain printable ASCII,
// else quoted.
func shown(s string) string {
	if plain(s) && len(s) <= maxShown {
		return s
	}
	return quote(s)
}

// oneLine escapes what could break a line of trusted text.
func oneLine(s string) string {
	if plain(s) {
		return s
	}
	q := strconv.QuoteToASCII(s)
	return q[1 : len(q)-1]
}

// plain reports whether s is printable ASCII only.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// clip cuts s at maxShown characters.
func clip(s string) string {
	n := 0
	for i := range s {
		if n == maxShown {
			return s[:i]
		}
		n++
	}
	return s
}

// secret reports whether the argument name of t is sensitive.
func (t Tool) secret(name string) bool { return slices.Contains(t.Sensitive, name) }

// secretsIn names the sensitive arguments op carries, not empty, joined
// with ", "; "" when it carries none.
func (t Tool) secretsIn(op *intent.Operation) string {
	if op == nil {
		return strings.Join(t.Sensitive, ", ") // unknown: assume all
	}
	var names []string
	for _, name := range op.Args.Names() {
		if t.secret(name) && op.Args[name].String() != "" { // an empty value reveals nothing
			names = append(names, name)
		}
	}
	return strings.Join(names, ", ")
}

// digest is what a confirmation shows of a secret: the start of its
// SHA-256, as receipts keep it whole ("sha256:…").
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:8]) + "…"
}

// maxDeclined bounds the declines a proxy remembers; past it the oldest
// is forgotten.
const maxDeclined = 4096

// declines are the operations the user declined in the client, by
// operation hash, with when: a decline is final for the proxy's life, as
// a rejection on the approval page is, so a retry of the same operation
// is refused without asking the user again. It is safe for concurrent use.
type declines struct {
	mu    sync.Mutex
	at    map[intent.OperationHash]time.Time
	order []intent.OperationHash // oldest first
}

func (ds *declines) add(h intent.OperationHash, now time.Time) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.at == nil {
		ds.at = map[intent.OperationHash]time.Time{}
	}
	if _, ok := ds.at[h]; ok {
		return
	}
	if len(ds.order) >= maxDeclined {
		delete(ds.at, ds.order[0])
		ds.order = ds.order[1:]
	}
	ds.at[h] = now
	ds.order = append(ds.order, h)
}

func (ds *declines) when(h intent.OperationHash) (time.Time, bool) {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	at, ok := ds.at[h]
	return at, ok
}
