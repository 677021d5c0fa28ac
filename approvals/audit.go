package approvals

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"maps"
	"math"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/core/state"
)

// AuditLog is what the audit view reads of the gateway's store: the owners'
// receipt chains, a page at a time through the store's index
// (state.ReceiptIndex), and the checkpoints signed over them.
// store/mem, store/embedded and store/postgres implement it (cmd/ adapts
// store/mem's Owners and Checkpoints).
type AuditLog interface {
	// Owners returns every owner with a receipt chain.
	Owners(ctx context.Context) ([]intent.Owner, error)
	// Receipts returns the owner's receipts with Seq >= from, in Seq order,
	// at most limit (0: all); receipt.ErrNotFound if the owner has none.
	Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error)
	// Checkpoints returns the owner's signed checkpoints, in Seq order; an
	// empty slice when none was signed.
	Checkpoints(ctx context.Context, owner intent.Owner) ([]receipt.Checkpoint, error)
	// Page returns a page of the receipts of every owner, newest first,
	// filtered by owner, time, verdict, result and payee (the list and
	// the export read through it).
	state.ReceiptIndex
}

// AuditConfig configures the audit view (Server.EnableAudit).
type AuditConfig struct {
	// Log is where the receipts are read. Required.
	Log AuditLog
	// Verifier checks the checkpoints' signatures (the checkpoint keys'
	// public halves); nil means signatures are not checked, and the view
	// says so: a chain is then never shown as anchored.
	Verifier receipt.Verifier
	// MaxReceipts bounds the chain the view verifies whole: a chain of at
	// most MaxReceipts receipts is read and verified from #1 the first
	// time the view shows it; a longer one is shown with its head only,
	// and left to `intentplane receipts verify`. The server remembers
	// the head it verified, per owner, and later loads verify only the
	// receipts and checkpoints appended after it (a chain that no longer
	// holds that head is shown broken). Zero means 10000. The list, the export and the
	// call-back evidence read the receipts a page at a time whatever
	// their number.
	MaxReceipts int
	// PayeeParams names the parameters whose resolved value is a payee, as
	// the packs' contracts declare them (the parameters their running
	// totals are by; cmd/ collects them): the payee filter matches their
	// trusted values. Empty means any resolved parameter.
	PayeeParams []string
}

type auditState struct {
	cfg AuditConfig
	now func() time.Time

	mu       sync.Mutex
	verified map[intent.Owner]verifiedHead // what the panel verified last, per owner
}

// verifiedHead is the part of a chain the chain panel verified: #1 to Seq,
// whose last receipt hashes to Hash, its first Checkpoints checkpoints
// checked, at At. A later load verifies only what came after it.
type verifiedHead struct {
	Seq         uint64
	Hash        receipt.Hash
	Checkpoints int
	At          time.Time
}

// auditOf returns the audit configuration, or nil when the view is off.
func (s *Server) auditOf() *auditState { return s.audit.Load() }

// EnableAudit turns on the audit view: /audit lists the decisions of the
// owners the signed-in approver may decide for (Approver.Owners), with
// filters, each decision in full, each chain's verification status, and a
// CSV export at /audit.csv. A request's page then also shows whether the
// approved operation executed. It returns an error if cfg.Log is nil. Call
// it before serving.
func (s *Server) EnableAudit(cfg AuditConfig) error {
	if cfg.Log == nil {
		return errors.New("approvals: the audit view needs a receipt log")
	}
	if cfg.MaxReceipts <= 0 {
		cfg.MaxReceipts = 10000
	}
	s.audit.Store(&auditState{cfg: cfg, now: s.now, verified: map[intent.Owner]verifiedHead{}})
	return nil
}

// auditFilter is what the audit list and export are narrowed to; the zero
// value keeps everything. The store's index serves From, To, Verdict,
// Result and Payee; Action and the amounts are checked on the receipts it
// returns (keeps).
type auditFilter struct {
	From, To       string // YYYY-MM-DD, UTC, inclusive; as typed
	Action         string
	Verdict        string // allow, deny, step_up or ""
	Result         string // executed, not_executed, failed or ""
	Payee          string // the payee's id on file (a resolved value, such as V-0042), exactly
	MinAmt, MaxAmt string // decimal major units, as typed
	Cursor         string // the page: a cursor of the store's index, as a link gave it

	from, to       time.Time // to is exclusive (the day after To)
	minAmt, maxAmt *big.Rat
}

// auditResults are the results the filter offers.
var auditResults = []string{receipt.ResultExecuted, receipt.ResultNotExecuted, receipt.ResultFailed}

// parseAuditFilter reads the filter from the query; the error says which
// field is wrong.
func parseAuditFilter(c echo.Context) (auditFilter, error) {
	f := auditFilter{
		From: strings.TrimSpace(c.QueryParam("from")), To: strings.TrimSpace(c.QueryParam("to")),
		Action: strings.TrimSpace(c.QueryParam("action")), Verdict: strings.TrimSpace(c.QueryParam("verdict")),
		Result: strings.TrimSpace(c.QueryParam("result")), Payee: strings.TrimSpace(c.QueryParam("payee")),
		MinAmt: strings.TrimSpace(c.QueryParam("min")), MaxAmt: strings.TrimSpace(c.QueryParam("max")),
		Cursor: c.QueryParam("c"),
	}
	var err error
	if f.From != "" {
		if f.from, err = time.Parse(time.DateOnly, f.From); err != nil {
			return f, errors.New("the From date must be YYYY-MM-DD")
		}
	}
	if f.To != "" {
		if f.to, err = time.Parse(time.DateOnly, f.To); err != nil {
			return f, errors.New("the To date must be YYYY-MM-DD")
		}
		f.to = f.to.AddDate(0, 0, 1)
	}
	if f.Verdict != "" {
		if _, err := intent.ParseVerdict(f.Verdict); err != nil {
			return f, errors.New("the verdict must be allow, deny or step_up")
		}
	}
	if f.Result != "" && !slices.Contains(auditResults, f.Result) {
		return f, errors.New("the result must be executed, not_executed or failed")
	}
	for _, a := range []struct {
		text string
		dst  **big.Rat
		name string
	}{{f.MinAmt, &f.minAmt, "minimum"}, {f.MaxAmt, &f.maxAmt, "maximum"}} {
		if a.text == "" {
			continue
		}
		minor, err := intent.ParseAmount(a.text, 6)
		if err != nil {
			return f, fmt.Errorf("the %s amount must be a plain decimal such as 1500.00", a.name)
		}
		*a.dst = big.NewRat(int64(minor), 1_000_000)
	}
	if len(f.Action) > 128 || len(f.Payee) > 128 {
		return f, errors.New("a filter is over 128 bytes")
	}
	if len(f.Cursor) > 4096 {
		return f, errors.New("the page's link is over 4096 bytes: start again from the newest decisions")
	}
	return f, nil
}

// query returns the filter as a query string (for the export link and
// the pages' links), without the cursor.
func (f auditFilter) query() string {
	v := make([]string, 0, 8)
	for _, kv := range [][2]string{{"from", f.From}, {"to", f.To}, {"action", f.Action}, {"verdict", f.Verdict},
		{"result", f.Result}, {"payee", f.Payee}, {"min", f.MinAmt}, {"max", f.MaxAmt}} {
		if kv[1] != "" {
			v = append(v, kv[0]+"="+url.QueryEscape(kv[1]))
		}
	}
	return strings.Join(v, "&")
}

// rest reports whether the filter has parts the index does not serve.
func (f auditFilter) rest() bool {
	return f.Action != "" || f.minAmt != nil || f.maxAmt != nil
}

// keeps reports whether r, whose arguments have roles ro, passes the
// parts of the filter the index does not serve: the action and the
// amounts.
func (f auditFilter) keeps(r receipt.Receipt, ro ArgRoles) bool {
	if f.Action != "" && string(r.Action) != f.Action {
		return false
	}
	if f.minAmt != nil || f.maxAmt != nil {
		a, ok := amountOf(r, ro)
		if !ok || f.minAmt != nil && a.Cmp(f.minAmt) < 0 || f.maxAmt != nil && a.Cmp(f.maxAmt) > 0 {
			return false
		}
	}
	return true
}

// indexQuery returns the parts of f the index serves, over owners (nil:
// every owner).
func (a *auditState) indexQuery(f auditFilter, owners []intent.Owner) state.ReceiptQuery {
	return state.ReceiptQuery{Owners: owners, From: f.from, To: f.to, Verdict: f.Verdict, Result: f.Result,
		Payee: f.Payee, PayeeParams: a.cfg.PayeeParams, Cursor: f.Cursor}
}

// payeeParams are the arguments that name who is paid, in the order the
// list shows the first present.
var payeeParams = []string{"vendor", "payee", "beneficiary", "recipient", "iban"}

// payeeNames are the facts that hold a payee's name on file.
var payeeNames = []string{"vendor_name", "payee_name", "beneficiary_name"}

// payee is what a receipt says of who is paid, each part as recorded
// (payeeText formats them for display).
type payee struct {
	names []string // names on file: the facts payeeNames
	ids   []string // payee arguments the receipt's Resolved lists: the trusted values
	sent  []string // payee arguments it does not: the agent's text
}

// payeeOf sorts r's payee texts by where they come from: the arguments
// ro.Payee names, else those payeeParams names. A refusal before
// resolution (or at it) leaves r.Resolved empty and r.Args as the agent
// sent them, so that nothing of it is shown as on file.
func payeeOf(r receipt.Receipt, ro ArgRoles) payee {
	var p payee
	for _, k := range payeeNames {
		if v, ok := r.Facts[k]; ok && v.Kind == intent.KindString && v.Str != "" {
			p.names = append(p.names, v.Str)
		}
	}
	params := payeeParams
	if len(ro.Payee) > 0 {
		params = ro.Payee
	}
	for _, k := range params {
		if i := slices.IndexFunc(r.Resolved, func(res intent.Resolved) bool { return res.Param == k }); i >= 0 {
			if v := r.Resolved[i].Value; v != "" {
				p.ids = append(p.ids, v)
			}
			continue
		}
		if v, ok := r.Args[k]; ok && v.Kind == intent.KindString && v.Str != "" {
			p.sent = append(p.sent, v.Str)
		}
	}
	return p
}

// payeeText is the payee column of the list, the decision page and the
// export: the name on file with the trusted id, or whichever of them is
// known, then the payee arguments that were not resolved, Go-quoted after
// the label "as sent:", as the agent's text. Invisible and control
// characters are shown as visible shows them. For example:
//
//	ACME Supplies GmbH (V-0042)
//	as sent: "ACME Supplies", "GB54 MIDL 4000 0000 0000 00"
func payeeText(r receipt.Receipt, ro ArgRoles) string {
	p := payeeOf(r, ro)
	var parts []string
	switch {
	case len(p.names) > 0 && len(p.ids) > 0 && p.names[0] != p.ids[0]:
		parts = append(parts, p.names[0]+" ("+displayValue(p.ids[0])+")")
	case len(p.names) > 0:
		parts = append(parts, p.names[0])
	case len(p.ids) > 0:
		parts = append(parts, displayValue(p.ids[0]))
	}
	if len(p.sent) > 0 {
		q := make([]string, len(p.sent))
		for i, s := range p.sent {
			q[i] = strconv.Quote(visible(s))
		}
		parts = append(parts, "as sent: "+strings.Join(q, ", "))
	}
	return visible(strings.Join(parts, "; "))
}

// amountOf returns r's amount (amountNames' first) in major units.
func amountOf(r receipt.Receipt, ro ArgRoles) (*big.Rat, bool) {
	names := amountNames(r, ro)
	if len(names) == 0 {
		return nil, false
	}
	v := r.Args[names[0]]
	d := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(v.Scale)), nil)
	return new(big.Rat).SetFrac(big.NewInt(v.Int), d), true
}

// amountNames returns the names of r's amount arguments: ro.Amount (else
// `amount`) first when it is one, then the others by name.
func amountNames(r receipt.Receipt, ro ArgRoles) []string {
	var names []string
	for _, name := range r.Args.Names() {
		if r.Args[name].Kind == intent.KindAmount {
			names = append(names, name)
		}
	}
	first := "amount"
	if ro.Amount != "" {
		first = ro.Amount
	}
	if i := slices.Index(names, first); i > 0 {
		names = slices.Insert(slices.Delete(names, i, i+1), 0, first)
	}
	return names
}

// amountsText formats r's amount arguments, the payment's amount first
// and every other one after its name ("50.00 EUR; residual 105.00 EUR"),
// with their currency: the operation's own currency argument when it has
// one (an ap.pay_bill of a USD bill is in USD even when its facts name the
// mandate's EUR budget, and an approval's receipt has no facts), else the
// currency of its budget when the facts name it, else none.
func amountsText(r receipt.Receipt, ro ArgRoles) string {
	var parts []string
	for i, name := range amountNames(r, ro) {
		text := formatAmount(r.Args[name], amountCurrency(r, ro))
		if i > 0 {
			text = name + " " + text
		}
		parts = append(parts, text)
	}
	return strings.Join(parts, "; ")
}

// amountCurrency is the currency amountsText shows r's amounts in: the
// argument or fact ro.CurrencyFrom names (its `currency` argument when the
// receipt has neither, as a refusal before the facts were read or an
// approval's receipt has not), else ro.Currency, when roles are known; else its `currency` argument when it is a string (shown only when
// it is three capital letters, the ISO 4217 form: anything else is what
// the agent sent, not a currency), else its fact budget_currency, else "".
func amountCurrency(r receipt.Receipt, ro ArgRoles) string {
	if ro.CurrencyFrom != "" {
		v, ok := r.Args[ro.CurrencyFrom]
		if !ok {
			v, ok = r.Facts[ro.CurrencyFrom]
		}
		if !ok { // a receipt with no facts: a refusal before they were read, an approval
			return isoArg(r, "currency")
		}
		if _, iso := intent.CurrencyExponent(v.Str); v.Kind == intent.KindString && iso {
			return v.Str
		}
		return ""
	}
	if ro.Currency != "" {
		return ro.Currency
	}
	if _, ok := r.Args["currency"]; ok {
		return isoArg(r, "currency")
	}
	if v, ok := r.Facts["budget_currency"]; ok && v.Kind == intent.KindString {
		return v.Str
	}
	return ""
}

// isoArg returns r's string argument name when it is an ISO 4217 code
// (three capital letters, a currency known), else "".
func isoArg(r receipt.Receipt, name string) string {
	v := r.Args[name]
	if _, ok := intent.CurrencyExponent(v.Str); ok && v.Kind == intent.KindString {
		return v.Str
	}
	return ""
}

// chainStatus is one owner's chain as verified.
type chainStatus struct {
	Owner     string
	Receipts  int
	OK        bool
	Anchored  bool   // a signed checkpoint, verified, covers the chain's head or part of it
	Text      string // what the auditor reads
	Window    bool   // only the newest MaxReceipts were read
	HeadHash  string
	CheckedTo uint64 // the last seq a verified checkpoint covers
}

// head returns owner's newest receipt (the highest Seq), or ok false when
// the owner has none. The index finds the newest by time; receipts after
// it in the chain (a clock set back) are read after it.
func (a *auditState) head(ctx context.Context, owner intent.Owner) (receipt.Receipt, bool, error) {
	p, err := a.cfg.Log.Page(ctx, state.ReceiptQuery{Owners: []intent.Owner{owner}, Limit: 1})
	if err != nil || len(p.Receipts) == 0 {
		return receipt.Receipt{}, false, err
	}
	h := p.Receipts[0]
	later, err := a.cfg.Log.Receipts(ctx, owner, h.Seq+1, 0)
	if err != nil && !errors.Is(err, receipt.ErrNotFound) {
		return receipt.Receipt{}, false, err
	}
	if len(later) > 0 {
		h = later[len(later)-1]
	}
	return h, true, nil
}

// status verifies owner's chain. The first time, it reads the chain and
// its checkpoints whole and verifies them with receipt.Verify, when the
// chain holds at most MaxReceipts receipts (a longer one is shown with
// its head only: Window); it then remembers the head it verified. A later
// call verifies only what came after that head (incremental): the head
// must still be there, unchanged, and each newer receipt must link to it.
// A head that is not (the chain was rewritten, cut or reordered since) is
// a broken chain, on every later load too.
func (a *auditState) status(ctx context.Context, owner intent.Owner) (chainStatus, error) {
	st := chainStatus{Owner: ownerText(owner)}
	h, ok, err := a.head(ctx, owner)
	if err != nil {
		return st, err
	}
	a.mu.Lock()
	vh, seen := a.verified[owner]
	a.mu.Unlock()
	switch {
	case seen:
		return a.extend(ctx, owner, st, h, ok, vh)
	case !ok:
		st.OK, st.Text = true, "no receipt yet"
		return st, nil
	}
	st.Receipts, st.HeadHash = int(min(h.Seq, math.MaxInt)), h.Hash.String()
	if h.Seq > uint64(a.cfg.MaxReceipts) {
		st.Window = true
		st.Text = fmt.Sprintf("not verified here: the chain holds %d receipts, more than the %d the view verifies on a page load; verify the whole chain with `intentplane receipts verify`", h.Seq, a.cfg.MaxReceipts)
		return st, nil
	}
	return a.full(ctx, owner, st)
}

// full verifies owner's whole chain and checkpoints with receipt.Verify
// and, when they verify, remembers the head.
func (a *auditState) full(ctx context.Context, owner intent.Owner, st chainStatus) (chainStatus, error) {
	rs, err := a.cfg.Log.Receipts(ctx, owner, 1, 0)
	if err != nil {
		return st, err
	}
	cps, err := a.cfg.Log.Checkpoints(ctx, owner)
	if err != nil {
		return st, err
	}
	st.Receipts = len(rs)
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		return st, err
	}
	if err := receipt.WriteCheckpoints(&buf, cps); err != nil {
		return st, err
	}
	if _, verr := receipt.Verify(&buf, a.cfg.Verifier); verr != nil {
		st.Text = "BROKEN: " + verr.Error()
		return st, nil
	}
	last := rs[len(rs)-1]
	at := a.now().UTC()
	a.remember(owner, verifiedHead{Seq: last.Seq, Hash: last.Hash, Checkpoints: len(cps), At: at})
	st.OK = true
	for _, c := range cps {
		st.CheckedTo = max(st.CheckedTo, c.Seq)
	}
	st.Text, st.Anchored = verifiedText(len(rs), last.Seq, cps, st.CheckedTo, a.cfg.Verifier != nil)
	st.Text += fmt.Sprintf(" (read whole at %s UTC)", utc(at))
	return st, nil
}

func (a *auditState) remember(owner intent.Owner, vh verifiedHead) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.verified[owner] = vh
}

// extend verifies what owner's chain, whose head is now h (ok false: no
// receipt), holds after vh, the head verified before.
func (a *auditState) extend(ctx context.Context, owner intent.Owner, st chainStatus, h receipt.Receipt, ok bool, vh verifiedHead) (chainStatus, error) {
	broken := func(why string) (chainStatus, error) {
		st.OK, st.Text = false, fmt.Sprintf("BROKEN: %s; the chain verified up to #%d at %s UTC is not a prefix of the chain stored now; check it with `intentplane receipts verify`", why, vh.Seq, utc(vh.At))
		return st, nil
	}
	if !ok || h.Seq < vh.Seq {
		return broken("the chain is shorter than before")
	}
	st.Receipts, st.HeadHash = int(min(h.Seq, math.MaxInt)), h.Hash.String()
	last, why, err := a.verifyFrom(ctx, owner, vh)
	if err != nil {
		return st, err
	}
	if why != "" {
		return broken(why)
	}
	cps, err := a.cfg.Log.Checkpoints(ctx, owner)
	if err != nil {
		return st, err
	}
	if why, err := a.checkNew(ctx, owner, cps, vh.Checkpoints); err != nil || why != "" {
		if err != nil {
			return st, err
		}
		return broken(why)
	}
	at := a.now().UTC()
	a.remember(owner, verifiedHead{Seq: last.Seq, Hash: last.Hash, Checkpoints: len(cps), At: at})
	st.OK, st.Receipts = true, int(min(last.Seq, math.MaxInt))
	for _, c := range cps {
		st.CheckedTo = max(st.CheckedTo, c.Seq)
	}
	st.Text, st.Anchored = verifiedText(st.Receipts, last.Seq, cps, st.CheckedTo, a.cfg.Verifier != nil)
	if last.Seq == vh.Seq {
		st.Text += fmt.Sprintf(" (at %s UTC: #%d is still the receipt verified at %s UTC, none appended since", utc(at), vh.Seq, utc(vh.At))
	} else {
		st.Text += fmt.Sprintf(" (#1 to #%d verified at %s UTC; at %s UTC #%d was still that receipt and #%d to #%d were verified after it", vh.Seq, utc(vh.At), utc(at), vh.Seq, vh.Seq+1, last.Seq)
	}
	st.Text += "; receipts before it are not read again: `intentplane receipts verify` checks the whole chain)"
	return st, nil
}

// linked returns why rs, owner's receipts from vh.Seq on, do not extend
// the head vh, or "": rs[0] must be that head, unchanged, and each
// receipt after it must follow the one before.
func linked(rs []receipt.Receipt, vh verifiedHead) string {
	if len(rs) == 0 || rs[0].Seq != vh.Seq || rs[0].Hash != vh.Hash {
		return fmt.Sprintf("receipt #%d is not the one verified before", vh.Seq)
	}
	for i, r := range rs {
		if h, err := r.ComputeHash(); err != nil || h != r.Hash {
			return fmt.Sprintf("receipt #%d does not hash to its hash", r.Seq)
		}
		if i > 0 && (r.Seq != rs[i-1].Seq+1 || r.Prev != rs[i-1].Hash || r.Owner != rs[0].Owner) {
			return fmt.Sprintf("receipt #%d does not follow #%d", r.Seq, rs[i-1].Seq)
		}
	}
	return ""
}

// verifyFrom verifies owner's receipts from the verified head vh on,
// MaxReceipts+1 at a time (so that memory does not grow with what was
// appended since), and returns the last, or why they do not extend vh.
func (a *auditState) verifyFrom(ctx context.Context, owner intent.Owner, vh verifiedHead) (receipt.Receipt, string, error) {
	for {
		rs, err := a.cfg.Log.Receipts(ctx, owner, vh.Seq, a.cfg.MaxReceipts+1)
		if err != nil && !errors.Is(err, receipt.ErrNotFound) {
			return receipt.Receipt{}, "", err
		}
		if why := linked(rs, vh); why != "" {
			return receipt.Receipt{}, why, nil
		}
		last := rs[len(rs)-1]
		if len(rs) <= a.cfg.MaxReceipts {
			return last, "", nil
		}
		vh = verifiedHead{Seq: last.Seq, Hash: last.Hash}
	}
}

// checkNew checks the checkpoints of cps from the index from on (those
// not checked before): each signed (when a Verifier is given) over a
// receipt of the chain as it is stored, re-hashed. It returns why one is
// not, or "".
func (a *auditState) checkNew(ctx context.Context, owner intent.Owner, cps []receipt.Checkpoint, from int) (string, error) {
	if len(cps) < from {
		return "checkpoints were removed", nil
	}
	for _, c := range cps[from:] {
		if a.cfg.Verifier != nil {
			if err := c.Verify(a.cfg.Verifier); err != nil {
				return fmt.Sprintf("the checkpoint at #%d does not verify: %v", c.Seq, err), nil
			}
		}
		at, err := a.cfg.Log.Receipts(ctx, owner, c.Seq, 1)
		if err != nil && !errors.Is(err, receipt.ErrNotFound) {
			return "", err
		}
		if len(at) != 1 || linked(at, verifiedHead{Seq: c.Seq, Hash: c.Head}) != "" {
			return fmt.Sprintf("the checkpoint at #%d is not over the receipt stored there", c.Seq), nil
		}
	}
	return "", nil
}

// verifiedText says what verifying a chain of n receipts, the last last,
// with checkpoints cps (the newest at checkedTo) established, and whether
// the chain is anchored.
func verifiedText(n int, last uint64, cps []receipt.Checkpoint, checkedTo uint64, keyed bool) (string, bool) {
	switch {
	case len(cps) == 0:
		return fmt.Sprintf("verified: %d receipts linked from #1; not anchored: no signed checkpoint, so a rewrite of the whole chain could not be told", n), false
	case !keyed:
		return fmt.Sprintf("verified: %d receipts linked from #1; %d checkpoints whose signatures were not checked (no checkpoint key given)", n, len(cps)), false
	}
	text := fmt.Sprintf("verified: %d receipts linked from #1, anchored by a signed checkpoint at #%d", n, checkedTo)
	if last > checkedTo {
		text += fmt.Sprintf("; #%d to #%d came after it", checkedTo+1, last)
	}
	return text, true
}

// auditOwners returns the owners approver may see, sorted.
func (s *Server) auditOwners(ctx context.Context, a *auditState, me *approverEntry) ([]intent.Owner, error) {
	if me == nil {
		return nil, nil
	}
	if me.owners == nil {
		os, err := a.cfg.Log.Owners(ctx)
		if err != nil {
			return nil, err
		}
		return slices.Sorted(slices.Values(os)), nil
	}
	out := make([]intent.Owner, 0, len(me.owners))
	for o := range me.owners {
		out = append(out, o)
	}
	slices.Sort(out)
	return out, nil
}

// decisionRow is one decision in the audit list and export.
type decisionRow struct {
	Owner, OwnerID, Time, Action, Verdict, Code, Payee, Amount, Result, Approvers, Operation, Hash string
	Seq                                                                                            uint64
	OK                                                                                             bool // allowed
	at                                                                                             time.Time
}

// roles returns the roles of action's arguments (Config.Roles), or none.
func (s *Server) roles(action intent.Action) ArgRoles {
	if s.cfg.Roles == nil {
		return ArgRoles{}
	}
	ro, _ := s.cfg.Roles(action)
	return ro
}

// rowOf returns r's row, its texts (but OwnerID, the link's) shown as
// visible shows them.
func rowOf(r receipt.Receipt, ro ArgRoles) decisionRow {
	var who []string
	for _, e := range r.Approvals {
		who = append(who, e.Approver)
	}
	payee := payeeText(r, ro)
	if n := r.Args["count"]; r.Action == approval.RunAction && n.Kind == intent.KindInt {
		// A payment run's request and decisions: its payments are the
		// receipts of their own operations.
		payee = fmt.Sprintf("payment run of %d", n.Int)
	}
	return decisionRow{
		Owner: visible(ownerText(r.Owner)), OwnerID: string(r.Owner), Seq: r.Seq,
		Time: r.Time.UTC().Format("2006-01-02 15:04:05"), at: r.Time,
		Action: visible(string(r.Action)), Verdict: r.Verdict.String(), Code: visible(string(r.Code)), Payee: payee,
		Amount: visible(amountsText(r, ro)), Result: visible(r.Result), Approvers: visible(strings.Join(who, ", ")),
		Operation: r.Operation, Hash: r.Hash.String(), OK: r.Verdict == intent.Allow,
	}
}

// scope returns the owners me may see, as a query's Owners: nil for every
// owner, none when me is nil.
func scope(me *approverEntry) []intent.Owner {
	if me == nil {
		return []intent.Owner{}
	}
	if me.owners == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(me.owners))
}

// chains returns the chain status of each owner me may see.
func (s *Server) chains(ctx context.Context, a *auditState, me *approverEntry) ([]chainStatus, error) {
	owners, err := s.auditOwners(ctx, a, me)
	if err != nil {
		return nil, err
	}
	var out []chainStatus
	for _, o := range owners {
		if !me.mayDecide(o) {
			continue
		}
		st, err := a.status(ctx, o)
		if err != nil {
			return nil, err
		}
		out = append(out, st)
	}
	return out, nil
}

// auditPageSize is how many decisions a page of the list shows.
const auditPageSize = 100

// maxScan bounds the receipts one page of the list reads when the filter
// has parts the index does not serve (action, amounts): a page that
// reaches it shows what matched so far, and its Older link goes on from
// there.
const maxScan = 5000

// rowsPage is one page of the list: its receipts, newest first, and the
// cursors of the pages of older and newer ones ("": none).
type rowsPage struct {
	rows       []receipt.Receipt
	next, prev string
	scanned    int  // receipts read
	cut        bool // maxScan ended the page before it was full
}

// pageOf reads the page of q (its cursor included), at most n receipts
// that f keeps.
func (s *Server) pageOf(ctx context.Context, a *auditState, q state.ReceiptQuery, f auditFilter, n int) (rowsPage, error) {
	if !f.rest() {
		q.Limit = n
		p, err := a.cfg.Log.Page(ctx, q)
		return rowsPage{rows: p.Receipts, next: p.Next, prev: p.Prev, scanned: len(p.Receipts)}, err
	}
	plan, err := state.PlanOf(q)
	if err != nil {
		return rowsPage{}, err
	}
	start := q.Cursor
	q.Limit = min(5*n, state.MaxPageSize)
	var out rowsPage
	for {
		p, err := a.cfg.Log.Page(ctx, q)
		if err != nil {
			return out, err
		}
		if s.keep(&out, p.Receipts, f, n, plan.Back) {
			break
		}
		more := p.Next
		if plan.Back {
			more = p.Prev
		}
		if more == "" {
			break
		}
		if q.Cursor = more; out.scanned >= maxScan {
			out.cut = true
			break
		}
	}
	return s.cursors(q, out, start, plan.Back, n), nil
}

// keep adds to out.rows the receipts of rs that f keeps, reading rs away
// from the cursor (newest first, or oldest first when back); it reports
// whether the page is full.
func (s *Server) keep(out *rowsPage, rs []receipt.Receipt, f auditFilter, n int, back bool) bool {
	for i := range rs {
		r := rs[i]
		if back {
			r = rs[len(rs)-1-i]
		}
		out.scanned++
		if f.keeps(r, s.roles(r.Action)) {
			if out.rows = append(out.rows, r); len(out.rows) == n {
				return true
			}
		}
	}
	return false
}

// cursors sets out's cursors, its rows read from the cursor start in the
// direction back says, and q.Cursor where a cut page goes on: the rows
// are put newest first.
func (s *Server) cursors(q state.ReceiptQuery, out rowsPage, start string, back bool, n int) rowsPage {
	full := len(out.rows) == n
	if back {
		slices.Reverse(out.rows)
	}
	if len(out.rows) == 0 {
		if out.cut && !back {
			out.next = q.Cursor
		}
		if out.cut && back {
			out.prev = q.Cursor
		}
		return out
	}
	first, last := state.KeyOf(out.rows[0]), state.KeyOf(out.rows[len(out.rows)-1])
	switch {
	case back:
		out.next = state.Cursor(q, last, false)
		if full {
			out.prev = state.Cursor(q, first, true)
		} else if out.cut {
			out.prev = q.Cursor
		}
	default:
		if start != "" {
			out.prev = state.Cursor(q, first, true)
		}
		if full {
			out.next = state.Cursor(q, last, false)
		} else if out.cut {
			out.next = q.Cursor
		}
	}
	return out
}

type auditView struct {
	Session    *session
	CSRF       string
	Filter     auditFilter
	Results    []string
	Export     string // the export's URL, with the filter
	Error      string
	Rows       []decisionRow
	Chains     []chainStatus
	Next, Prev string // the URLs of the pages of older and newer decisions; "" for none
	First      string // the URL of the newest page, when this is not it
	Heading    string
	Cut        string // why the page holds fewer rows than it could
}

// link returns the list's URL for filter query q and cursor c.
func link(q, c string) string {
	v := make([]string, 0, 2)
	if q != "" {
		v = append(v, q)
	}
	if c != "" {
		v = append(v, "c="+url.QueryEscape(c))
	}
	if len(v) == 0 {
		return "/audit"
	}
	return "/audit?" + strings.Join(v, "&")
}

func (s *Server) auditList(c echo.Context) error {
	a := s.auditOf()
	if a == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	v := auditView{Session: ss, CSRF: ss.csrf, Results: auditResults}
	f, err := parseAuditFilter(c)
	v.Filter, v.Export = f, "/audit.csv"
	if q := f.query(); q != "" {
		v.Export += "?" + q
	}
	if err != nil {
		v.Error = err.Error()
		return s.page(c, http.StatusBadRequest, "audit", v)
	}
	me := s.approvers[ss.approver]
	p, err := s.pageOf(c.Request().Context(), a, a.indexQuery(f, scope(me)), f, auditPageSize)
	if errors.Is(err, state.ErrBadCursor) || errors.Is(err, state.ErrBadQuery) {
		v.Error = "This page's link is not one the page made (altered, cut short, or of other filters): start again from the newest decisions."
		v.First = link(f.query(), "")
		return s.page(c, http.StatusBadRequest, "audit", v)
	}
	if err != nil {
		return err
	}
	if v.Chains, err = s.chains(c.Request().Context(), a, me); err != nil {
		return err
	}
	for _, r := range p.rows {
		v.Rows = append(v.Rows, rowOf(r, s.roles(r.Action)))
	}
	v.Heading = "Decisions, newest first"
	if f.Cursor == "" && p.next == "" && !p.cut {
		v.Heading = fmt.Sprintf("%d decision", len(v.Rows))
		if len(v.Rows) != 1 {
			v.Heading += "s"
		}
	}
	if p.cut {
		v.Cut = fmt.Sprintf("%d receipts were searched for this page; more may match further on.", p.scanned)
	}
	if p.next != "" {
		v.Next = link(f.query(), p.next)
	}
	if p.prev != "" {
		v.Prev = link(f.query(), p.prev)
	}
	if f.Cursor != "" {
		v.First = link(f.query(), "")
	}
	return s.page(c, http.StatusOK, "audit", v)
}

// csvCell returns s as an export cell: its invisible and control
// characters shown as visible shows them, and a cell a spreadsheet would
// run as a formula (one starting with = + - @, a tab or a carriage return)
// neutralised by prefixing a quote.
func csvCell(s string) string {
	s = visible(s)
	if s != "" && strings.ContainsRune("=+-@\t\r", rune(s[0])) {
		return "'" + s
	}
	return s
}

// csvHeader names the export's columns.
var csvHeader = []string{"time_utc", "owner", "seq", "action", "verdict", "code", "payee", "amount", "result", "approvers", "operation", "receipt_hash", "message"}

// csvRow is r's row of the export.
func csvRow(r receipt.Receipt, ro ArgRoles) []string {
	d := rowOf(r, ro)
	row := []string{d.Time, string(r.Owner), strconv.FormatUint(r.Seq, 10), d.Action, d.Verdict, d.Code, d.Payee,
		d.Amount, d.Result, d.Approvers, d.Operation, d.Hash, r.Message}
	for i := range row {
		row[i] = csvCell(row[i])
	}
	return row
}

// auditCSV streams every decision the filter keeps, oldest first, a page
// of the index at a time (memory does not grow with the rows). An error
// after the first page ends the file with a row saying the export is
// incomplete, since the status was sent.
func (s *Server) auditCSV(c echo.Context) error {
	a := s.auditOf()
	if a == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	f, err := parseAuditFilter(c)
	if err != nil {
		return s.page(c, http.StatusBadRequest, "message", msg("Bad filter", err.Error()))
	}
	ctx := c.Request().Context()
	q := a.indexQuery(f, scope(s.approvers[ss.approver]))
	q.Cursor, q.Limit = state.Cursor(q, state.ReceiptKey{}, true), state.MaxPageSize
	p, err := a.cfg.Log.Page(ctx, q)
	if err != nil {
		return err
	}
	res := c.Response()
	res.Header().Set(echo.HeaderContentType, "text/csv; charset=utf-8; header=present")
	res.Header().Set(echo.HeaderContentDisposition, `attachment; filename="intentplane-decisions.csv"`)
	res.WriteHeader(http.StatusOK)
	w := csv.NewWriter(res)
	w.UseCRLF = true // RFC 4180
	_ = w.Write(csvHeader)
	rows := 0
	for {
		for _, r := range slices.Backward(p.Receipts) {
			if ro := s.roles(r.Action); f.keeps(r, ro) {
				_ = w.Write(csvRow(r, ro))
				rows++
			}
		}
		if w.Flush(); w.Error() != nil || p.Prev == "" {
			break
		}
		res.Flush()
		q.Cursor = p.Prev
		if p, err = a.cfg.Log.Page(ctx, q); err != nil {
			s.logger.Error("audit export cut short", "approver", ss.approver, "rows", rows, "err", err)
			_ = w.Write([]string{"# export incomplete: the store failed after " + strconv.Itoa(rows) + " rows"})
			w.Flush()
			return nil
		}
	}
	s.logger.Info("audit export", "approver", ss.approver, "rows", rows)
	return nil
}

type provenanceView struct {
	Param, Sent, Value, Source, Record, Version, At string
	Differs                                         bool
}

type receiptView struct {
	Session                                                       *session
	CSRF                                                          string
	Owner, OwnerID, Time, Mandate, Action, Verdict, Code, Message string
	Sent, Operation, Result, Output, Hash, Prev, Payee, Amount    string
	ArgsTitle                                                     string // what the arguments are: executed, resolved, or as sent
	Seq                                                           uint64
	Args, Facts                                                   []argView
	Resolved                                                      []provenanceView
	Policies                                                      []string
	Approvals                                                     []receipt.Evidence
	Chain                                                         chainStatus
	Related                                                       []decisionRow
}

// argsTitle says what a receipt's arguments are: those that executed;
// the values resolved for an operation that did not execute; or, when
// nothing was resolved (a refusal before or during resolution), the
// agent's own text, which the page must not present as on file.
func argsTitle(r receipt.Receipt) string {
	switch {
	case r.Result == receipt.ResultExecuted:
		return "What executed"
	case r.Result == receipt.ResultFailed:
		return "What was sent to execute (the outcome is unknown: it may have taken effect)"
	case len(r.Resolved) > 0:
		return "Arguments after resolution (nothing executed)"
	}
	return "Arguments as the agent sent them (not resolved, nothing executed)"
}

func (s *Server) auditReceipt(c echo.Context) error {
	a := s.auditOf()
	if a == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	owner := intent.Owner(c.QueryParam("owner"))
	seq, err := strconv.ParseUint(c.QueryParam("seq"), 10, 63)
	me := s.approvers[ss.approver]
	notFound := func() error {
		return s.page(c, http.StatusNotFound, "message", &message{Title: "No such decision",
			Text: "There is no such decision among those of the owners you approve for.", Session: ss, CSRF: ss.csrf})
	}
	if err != nil || seq == 0 || !me.mayDecide(owner) {
		return notFound()
	}
	ctx := c.Request().Context()
	rs, err := a.cfg.Log.Receipts(ctx, owner, seq, 1)
	if errors.Is(err, receipt.ErrNotFound) || err == nil && len(rs) == 0 {
		return notFound()
	}
	if err != nil {
		return err
	}
	st, err := a.status(ctx, owner)
	if err != nil {
		return err
	}
	r := rs[0]
	v := receiptView{
		Session: ss, CSRF: ss.csrf, Owner: ownerText(r.Owner), OwnerID: string(r.Owner), Seq: r.Seq,
		Time: r.Time.UTC().Format("2006-01-02 15:04:05 UTC"), Mandate: r.MandateID, Action: visible(string(r.Action)),
		Verdict: r.Verdict.String(), Code: visible(string(r.Code)), Message: visible(r.Message), Sent: r.Sent, Operation: r.Operation,
		Result: r.Result, Output: visible(r.Output), Hash: r.Hash.String(), Payee: payeeText(r, s.roles(r.Action)), Amount: amountsText(r, s.roles(r.Action)),
		ArgsTitle: argsTitle(r), Policies: r.Policies, Approvals: r.Approvals, Chain: st,
	}
	if !r.Prev.IsZero() {
		v.Prev = r.Prev.String()
	}
	for _, name := range r.Args.Names() {
		val := r.Args[name]
		text := val.String()
		if val.Kind == intent.KindAmount {
			text = formatAmount(val, "")
		} else {
			text = displayValue(text)
		}
		v.Args = append(v.Args, argView{Name: name, Value: text, Quoted: quoted(val.String()), Kind: val.Kind.String()})
	}
	for _, name := range slices.Sorted(func(yield func(string) bool) {
		for k := range r.Facts {
			if !yield(k) {
				return
			}
		}
	}) {
		val := r.Facts[name]
		v.Facts = append(v.Facts, argView{Name: name, Value: val.String(), Quoted: quoted(val.String()), Kind: val.Kind.String()})
	}
	for _, res := range r.Resolved {
		pv := provenanceView{Param: res.Param, Sent: res.Sent, Value: displayValue(res.Value),
			Source: res.Provenance.Source, Record: res.Provenance.RecordID, Version: res.Provenance.Version,
			Differs: !sameSpelling(res.Sent, res.Value)}
		if !res.Provenance.At.IsZero() {
			pv.At = res.Provenance.At.UTC().Format("2006-01-02 15:04:05 UTC")
		}
		v.Resolved = append(v.Resolved, pv)
	}
	if v.Related, err = s.related(ctx, a, r); err != nil {
		return err
	}
	return s.page(c, http.StatusOK, "receipt", v)
}

// relatedSpan is how far from a receipt, in its chain, the decision page
// looks for the other receipts of its operation (its request, approval and
// execution are normally a few receipts apart).
const relatedSpan = 500

// related returns the rows of the receipts of r's operation within
// relatedSpan receipts of r in its chain, but r.
func (s *Server) related(ctx context.Context, a *auditState, r receipt.Receipt) ([]decisionRow, error) {
	if r.Operation == "" {
		return nil, nil
	}
	from := uint64(1)
	if r.Seq > relatedSpan {
		from = r.Seq - relatedSpan
	}
	rs, err := a.cfg.Log.Receipts(ctx, r.Owner, from, 2*relatedSpan+1)
	if err != nil {
		return nil, err
	}
	var out []decisionRow
	for _, o := range rs {
		if o.Operation == r.Operation && o.Seq != r.Seq {
			out = append(out, rowOf(o, s.roles(o.Action)))
		}
	}
	return out, nil
}

// executionView is what the request page says of the approved operation's
// execution, read from the owner's receipt chain.
type executionView struct {
	Result, Output, Time, Receipt string
	Executed, Failed              bool
}

// executionOf returns the first receipt after r's that executed (or
// failed) r's operation, or nil when none has yet or the audit view is off.
func (s *Server) executionOf(ctx context.Context, r *request) (*executionView, error) {
	m, err := s.executions(ctx, r, []intent.OperationHash{r.hash})
	return m[r.hash], err
}

// executions returns, for each of the operation hashes hs of r (r's own,
// or its lines' for a run), the first receipt after r's own that executed
// it or failed executing it; an operation without one is absent.
func (s *Server) executions(ctx context.Context, r *request, hs []intent.OperationHash) (map[intent.OperationHash]*executionView, error) {
	a := s.auditOf()
	if a == nil || r.receipt.Seq == 0 {
		return nil, nil
	}
	// Bounded: an execution follows its approval closely.
	rs, err := a.cfg.Log.Receipts(ctx, r.op.Owner, r.receipt.Seq+1, a.cfg.MaxReceipts)
	if err != nil && !errors.Is(err, receipt.ErrNotFound) {
		return nil, err
	}
	want := map[string]intent.OperationHash{}
	for _, h := range hs {
		want[h.String()] = h
	}
	out := map[intent.OperationHash]*executionView{}
	for _, x := range rs {
		h, ok := want[x.Operation]
		if !ok || out[h] != nil || x.Result != receipt.ResultExecuted && x.Result != receipt.ResultFailed {
			continue
		}
		out[h] = &executionView{
			Result: x.Result, Output: x.Output, Time: x.Time.UTC().Format("2006-01-02 15:04:05 UTC"),
			Receipt:  fmt.Sprintf("%s #%d", ownerText(x.Owner), x.Seq),
			Executed: x.Result == receipt.ResultExecuted, Failed: x.Result == receipt.ResultFailed,
		}
	}
	return out, nil
}

// auditOn answers 404 for the audit pages while the view is off.
func (s *Server) auditOn(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		if s.auditOf() == nil {
			return echo.ErrNotFound
		}
		return next(c)
	}
}
