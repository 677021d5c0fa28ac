package approvals

import (
	"bytes"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// AuditLog is what the audit view reads of the gateway's store: the owners'
// receipt chains and the checkpoints signed over them. store/embedded and
// store/postgres implement it; cmd/ adapts store/mem.
type AuditLog interface {
	// Owners returns every owner with a receipt chain.
	Owners(ctx context.Context) ([]intent.Owner, error)
	// Receipts returns the owner's receipts with Seq >= from, in Seq order,
	// at most limit (0: all); receipt.ErrNotFound if the owner has none.
	Receipts(ctx context.Context, owner intent.Owner, from uint64, limit int) ([]receipt.Receipt, error)
	// Checkpoints returns the owner's signed checkpoints, in Seq order; an
	// empty slice when none was signed.
	Checkpoints(ctx context.Context, owner intent.Owner) ([]receipt.Checkpoint, error)
}

// AuditConfig configures the audit view (Server.EnableAudit).
type AuditConfig struct {
	// Log is where the receipts are read. Required.
	Log AuditLog
	// Verifier checks the checkpoints' signatures (the checkpoint keys'
	// public halves); nil means signatures are not checked, and the view
	// says so: a chain is then never shown as anchored.
	Verifier receipt.Verifier
	// MaxReceipts bounds the receipts read per owner for one page or
	// export; zero means 10000. A longer chain is shown from its newest
	// MaxReceipts, and its verification is then of that window only.
	MaxReceipts int
}

type auditState struct {
	cfg AuditConfig
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
	s.audit.Store(&auditState{cfg: cfg})
	return nil
}

// auditFilter is what the audit list and export are narrowed to; the zero
// value keeps everything.
type auditFilter struct {
	From, To       string // YYYY-MM-DD, UTC, inclusive; as typed
	Action         string
	Verdict        string // allow, deny, step_up or ""
	Payee          string // a substring of the payee or vendor, any case
	MinAmt, MaxAmt string // decimal major units, as typed

	from, to       time.Time // to is exclusive (the day after To)
	minAmt, maxAmt *big.Rat
}

// parseAuditFilter reads the filter from the query; the error says which
// field is wrong.
func parseAuditFilter(c echo.Context) (auditFilter, error) {
	f := auditFilter{
		From: strings.TrimSpace(c.QueryParam("from")), To: strings.TrimSpace(c.QueryParam("to")),
		Action: strings.TrimSpace(c.QueryParam("action")), Verdict: strings.TrimSpace(c.QueryParam("verdict")),
		Payee:  strings.TrimSpace(c.QueryParam("payee")),
		MinAmt: strings.TrimSpace(c.QueryParam("min")), MaxAmt: strings.TrimSpace(c.QueryParam("max")),
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
	return f, nil
}

// query returns the filter as a query string (for the export link).
func (f auditFilter) query() string {
	v := make([]string, 0, 7)
	for _, kv := range [][2]string{{"from", f.From}, {"to", f.To}, {"action", f.Action}, {"verdict", f.Verdict},
		{"payee", f.Payee}, {"min", f.MinAmt}, {"max", f.MaxAmt}} {
		if kv[1] != "" {
			v = append(v, kv[0]+"="+url.QueryEscape(kv[1]))
		}
	}
	return strings.Join(v, "&")
}

// keeps reports whether r, whose arguments have roles ro, passes the
// filter.
func (f auditFilter) keeps(r receipt.Receipt, ro ArgRoles) bool {
	t := r.Time.UTC()
	if !f.from.IsZero() && t.Before(f.from) || !f.to.IsZero() && !t.Before(f.to) {
		return false
	}
	if f.Action != "" && string(r.Action) != f.Action || f.Verdict != "" && r.Verdict.String() != f.Verdict {
		return false
	}
	if f.Payee != "" {
		p := strings.ToLower(f.Payee)
		if !slices.ContainsFunc(payeeTexts(r, ro), func(s string) bool { return strings.Contains(strings.ToLower(s), p) }) {
			return false
		}
	}
	if f.minAmt != nil || f.maxAmt != nil {
		a, ok := amountOf(r, ro)
		if !ok || f.minAmt != nil && a.Cmp(f.minAmt) < 0 || f.maxAmt != nil && a.Cmp(f.maxAmt) > 0 {
			return false
		}
	}
	return true
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

// payeeTexts returns every text that names r's payee, for the filter: the
// names on file, the trusted values, then what the agent sent.
func payeeTexts(r receipt.Receipt, ro ArgRoles) []string {
	p := payeeOf(r, ro)
	return slices.Concat(p.names, p.ids, p.sent)
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
// argument or fact ro.CurrencyFrom names, else ro.Currency, when roles are
// known; else its `currency` argument when it is a string (shown only when
// it is three capital letters, the ISO 4217 form: anything else is what
// the agent sent, not a currency), else its fact budget_currency, else "".
func amountCurrency(r receipt.Receipt, ro ArgRoles) string {
	if ro.CurrencyFrom != "" {
		v, ok := r.Args[ro.CurrencyFrom]
		if !ok {
			v, ok = r.Facts[ro.CurrencyFrom]
		}
		if _, iso := intent.CurrencyExponent(v.Str); ok && v.Kind == intent.KindString && iso {
			return v.Str
		}
		return ""
	}
	if ro.Currency != "" {
		return ro.Currency
	}
	if v, ok := r.Args["currency"]; ok && v.Kind == intent.KindString {
		if _, ok := intent.CurrencyExponent(v.Str); ok {
			return v.Str
		}
		return ""
	}
	if v, ok := r.Facts["budget_currency"]; ok && v.Kind == intent.KindString {
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

// chain reads owner's receipts (the newest MaxReceipts) and checkpoints
// and verifies them with receipt.Verify.
func (a *auditState) chain(ctx context.Context, owner intent.Owner) ([]receipt.Receipt, chainStatus, error) {
	st := chainStatus{Owner: ownerText(owner)}
	rs, err := a.cfg.Log.Receipts(ctx, owner, 1, 0)
	if errors.Is(err, receipt.ErrNotFound) {
		st.OK, st.Text = true, "no receipt yet"
		return nil, st, nil
	}
	if err != nil {
		return nil, st, err
	}
	cps, err := a.cfg.Log.Checkpoints(ctx, owner)
	if err != nil {
		return nil, st, err
	}
	if len(rs) > a.cfg.MaxReceipts {
		rs, st.Window = rs[len(rs)-a.cfg.MaxReceipts:], true
	}
	st.Receipts = len(rs)
	st.HeadHash = rs[len(rs)-1].Hash.String()
	if st.Window {
		st.Text = fmt.Sprintf("not verified: only the newest %d receipts were read; verify the whole chain with `intentplane receipts verify`", len(rs))
		return rs, st, nil
	}
	var buf bytes.Buffer
	if err := receipt.WriteJSONL(&buf, rs); err != nil {
		return nil, st, err
	}
	if err := receipt.WriteCheckpoints(&buf, cps); err != nil {
		return nil, st, err
	}
	_, verr := receipt.Verify(&buf, a.cfg.Verifier)
	if verr != nil {
		st.Text = "BROKEN: " + verr.Error()
		return rs, st, nil
	}
	st.OK = true
	for _, c := range cps {
		st.CheckedTo = max(st.CheckedTo, c.Seq)
	}
	switch {
	case len(cps) == 0:
		st.Text = fmt.Sprintf("verified: %d receipts linked from #1; not anchored: no signed checkpoint, so a rewrite of the whole chain could not be told", len(rs))
	case a.cfg.Verifier == nil:
		st.Text = fmt.Sprintf("verified: %d receipts linked from #1; %d checkpoints whose signatures were not checked (no checkpoint key given)", len(rs), len(cps))
	default:
		st.Anchored = true
		st.Text = fmt.Sprintf("verified: %d receipts linked from #1, anchored by a signed checkpoint at #%d", len(rs), st.CheckedTo)
		if last := rs[len(rs)-1].Seq; last > st.CheckedTo {
			st.Text += fmt.Sprintf("; #%d to #%d came after it", st.CheckedTo+1, last)
		}
	}
	return rs, st, nil
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

// decisions returns the filtered decisions of the owners me may see,
// newest first, and each owner's chain status.
func (s *Server) decisions(ctx context.Context, a *auditState, me *approverEntry, f auditFilter) ([]decisionRow, []chainStatus, error) {
	owners, err := s.auditOwners(ctx, a, me)
	if err != nil {
		return nil, nil, err
	}
	var rows []decisionRow
	var chains []chainStatus
	for _, o := range owners {
		if !me.mayDecide(o) {
			continue
		}
		rs, st, err := a.chain(ctx, o)
		if err != nil {
			return nil, nil, err
		}
		chains = append(chains, st)
		for _, r := range rs {
			if ro := s.roles(r.Action); f.keeps(r, ro) {
				rows = append(rows, rowOf(r, ro))
			}
		}
	}
	slices.SortStableFunc(rows, func(x, y decisionRow) int {
		if c := y.at.Compare(x.at); c != 0 {
			return c
		}
		return strings.Compare(x.Owner, y.Owner)
	})
	return rows, chains, nil
}

// maxAuditRows bounds the rows the audit list shows (the export has them
// all).
const maxAuditRows = 500

type auditView struct {
	Session *session
	CSRF    string
	Filter  auditFilter
	Export  string // the export's URL, with the filter
	Error   string
	Rows    []decisionRow
	More    int
	Chains  []chainStatus
	Total   int
}

func (s *Server) auditList(c echo.Context) error {
	a := s.auditOf()
	if a == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	v := auditView{Session: ss, CSRF: ss.csrf}
	f, err := parseAuditFilter(c)
	v.Filter, v.Export = f, "/audit.csv"
	if q := f.query(); q != "" {
		v.Export += "?" + q
	}
	if err != nil {
		v.Error = err.Error()
		return s.page(c, http.StatusBadRequest, "audit", v)
	}
	rows, chains, err := s.decisions(c.Request().Context(), a, s.approvers[ss.approver], f)
	if err != nil {
		return err
	}
	v.Chains, v.Total = chains, len(rows)
	if len(rows) > maxAuditRows {
		v.More, rows = len(rows)-maxAuditRows, rows[:maxAuditRows]
	}
	v.Rows = rows
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
	me := s.approvers[ss.approver]
	owners, err := s.auditOwners(c.Request().Context(), a, me)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	w := csv.NewWriter(&buf)
	w.UseCRLF = true // RFC 4180
	_ = w.Write(csvHeader)
	var rows [][]string
	var at []time.Time
	for _, o := range owners {
		if !me.mayDecide(o) {
			continue
		}
		rs, _, err := a.chain(c.Request().Context(), o)
		if err != nil {
			return err
		}
		for _, r := range rs {
			ro := s.roles(r.Action)
			if !f.keeps(r, ro) {
				continue
			}
			d := rowOf(r, ro)
			row := []string{d.Time, string(r.Owner), strconv.FormatUint(r.Seq, 10), d.Action, d.Verdict, d.Code, d.Payee,
				d.Amount, d.Result, d.Approvers, d.Operation, d.Hash, r.Message}
			for i := range row {
				row[i] = csvCell(row[i])
			}
			rows, at = append(rows, row), append(at, r.Time)
		}
	}
	idx := make([]int, len(rows))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(x, y int) int { return at[x].Compare(at[y]) })
	for _, i := range idx {
		_ = w.Write(rows[i])
	}
	w.Flush()
	if err := w.Error(); err != nil {
		return err
	}
	c.Response().Header().Set("Content-Disposition", `attachment; filename="intentplane-decisions.csv"`)
	s.logger.Info("audit export", "approver", ss.approver, "rows", len(rows))
	return c.Blob(http.StatusOK, "text/csv; charset=utf-8; header=present", buf.Bytes())
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
	rs, st, err := a.chain(c.Request().Context(), owner)
	if err != nil {
		return err
	}
	i, ok := slices.BinarySearchFunc(rs, seq, func(r receipt.Receipt, seq uint64) int { return cmpSeq(r.Seq, seq) })
	if !ok {
		return notFound()
	}
	r := rs[i]
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
	if r.Operation != "" {
		for _, o := range rs {
			if o.Operation == r.Operation && o.Seq != r.Seq {
				v.Related = append(v.Related, rowOf(o, s.roles(o.Action)))
			}
		}
	}
	return s.page(c, http.StatusOK, "receipt", v)
}

func cmpSeq(a, b uint64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
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
	rs, err := a.cfg.Log.Receipts(ctx, r.op.Owner, r.receipt.Seq+1, 0)
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
