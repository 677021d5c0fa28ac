package approvals

import (
	"fmt"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// A run (approval.Request.Lines) is shown as one list: per payee, its
// lines (the pack's sentence for each, the amount, what the line asks and
// why), with the totals per currency; approved once, or line by line (an
// approver may leave lines out, which rejects them).

// runView is a run as its page shows it.
type runView struct {
	Count  int
	Payees []runPayeeView
	Totals []string // per currency, "12,345.00 EUR", of the lines not left out
	Asked  []string // per currency, of every line: what the run asks
	Left   int      // the lines left out
}

// runPayeeView is one payee's lines of a run.
type runPayeeView struct {
	Payee  string
	Lines  []runLineView
	Totals string // the payee's total per currency
}

// runLineView is one line of a run.
type runLineView struct {
	N       int    // 1-based, in the run's order
	Hash    string // the line's operation hash, in full: the value of its box
	Short   string // its first 16 hex digits
	Summary string // the pack's sentence
	Amount  string
	Asks    string   // what the line alone would ask, in words
	Why     []string // why, in the pack's words
	Left    string   // who left it out (rejected it); "" if no one
	// Execution is the line's execution, once the run is approved and the
	// audit view is on; nil when not executed yet, or not known.
	Execution *executionView
}

// money sums minor units per currency, in the order first seen.
type money struct {
	order []string
	sum   map[string]intent.Amount
	scale map[string]uint8
}

func (m *money) add(currency string, v intent.Value) {
	if m.sum == nil {
		m.sum, m.scale = map[string]intent.Amount{}, map[string]uint8{}
	}
	if _, ok := m.sum[currency]; !ok {
		m.order = append(m.order, currency)
	}
	m.sum[currency] += intent.Amount(v.Int)
	m.scale[currency] = v.Scale
}

func (m *money) texts() []string {
	out := make([]string, 0, len(m.order))
	for _, c := range m.order {
		out = append(out, approval.FormatAmount(m.sum[c], m.scale[c], c))
	}
	return out
}

// lineAmount returns the amount a line pays (its argument "amount", else
// its first amount) and its currency (its argument "currency", else the
// phrase's); ok is false when it pays none.
func (r *request) lineAmount(p approval.Phrase) (intent.Value, string, bool) {
	v, ok := r.op.Args["amount"]
	if !ok || v.Kind != intent.KindAmount {
		ok = false
		for _, name := range r.op.Args.Names() {
			if a := r.op.Args[name]; a.Kind == intent.KindAmount {
				v, ok = a, true
				break
			}
		}
	}
	cur := p.Currency
	if c, has := r.op.Args["currency"]; has && c.Kind == intent.KindString && len(c.Str) == 3 {
		cur = c.Str
	}
	return v, cur, ok
}

// runView returns r's lines grouped by payee in the order first named,
// with the totals per currency and each line's execution from exec (nil:
// none known), and the reasons lines ask, each with how many lines give
// it, for the run's "Why you are asked".
func (s *Server) runView(r *request, exec map[intent.OperationHash]*executionView) (runView, []string) {
	v := runView{Count: len(r.lines)}
	left := r.leftOut()
	byPayee := map[string]int{}
	var all, kept money
	payeeSums := map[string]*money{}
	why := map[string]int{}
	var whyOrder []string
	for i, l := range r.lines {
		p := s.phrase(l)
		lv := runLineView{N: i + 1, Hash: l.hash.String(), Short: l.hash.String()[:16], Summary: p.Summary, Asks: lineAsks(l.level),
			Why: whyViews(p), Left: left[l.hash], Execution: exec[l.hash]}
		payee := l.payeeName(p)
		if payee == "" {
			payee = "(no payee)"
		}
		if amt, cur, ok := l.lineAmount(p); ok {
			lv.Amount = approval.FormatAmount(intent.Amount(amt.Int), amt.Scale, cur)
			all.add(cur, amt)
			if payeeSums[payee] == nil {
				payeeSums[payee] = &money{}
			}
			if lv.Left == "" {
				kept.add(cur, amt)
				payeeSums[payee].add(cur, amt)
			}
		}
		if lv.Left != "" {
			v.Left++
		}
		j, ok := byPayee[payee]
		if !ok {
			j = len(v.Payees)
			byPayee[payee] = j
			v.Payees = append(v.Payees, runPayeeView{Payee: visible(payee)})
		}
		v.Payees[j].Lines = append(v.Payees[j].Lines, lv)
		for _, w := range lv.Why {
			if why[w] == 0 {
				whyOrder = append(whyOrder, w)
			}
			why[w]++
		}
	}
	for i := range v.Payees {
		if m := payeeSums[v.Payees[i].Payee]; m != nil {
			v.Payees[i].Totals = strings.Join(m.texts(), ", ")
		}
	}
	v.Totals, v.Asked = kept.texts(), all.texts()
	reasons := make([]string, 0, len(whyOrder))
	for _, w := range whyOrder {
		reasons = append(reasons, fmt.Sprintf("%s (%s)", w, plural(why[w], "payment")))
	}
	return v, reasons
}

// runSummary is the sentence a run's page leads with.
func runSummary(v runView) string {
	total := "nothing"
	if len(v.Asked) > 0 {
		total = strings.Join(v.Asked, " and ")
	}
	return fmt.Sprintf("Pay a run of %s to %s: %s in all", plural(v.Count, "payment"), plural(len(v.Payees), "payee"), total)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// lineAsks says what a line would ask on its own, counting the run's
// earlier lines.
func lineAsks(l intent.Level) string {
	switch l {
	case intent.LevelFourEyes:
		return "two people"
	case intent.LevelConfirm:
		return "one person"
	}
	return "no one on its own"
}

// leftOut returns the lines that an approver left out of their approval
// (rejecting them), by who left them out first.
func (r *request) leftOut() map[intent.OperationHash]string {
	out := map[intent.OperationHash]string{}
	for _, v := range r.votes {
		for _, h := range v.Left {
			if _, ok := out[h]; !ok {
				out[h] = v.Approver
			}
		}
	}
	return out
}

// open returns the hashes of r's lines no approver left out.
func (r *request) open() []intent.OperationHash {
	left := r.leftOut()
	var out []intent.OperationHash
	for _, l := range r.lines {
		if _, gone := left[l.hash]; !gone {
			out = append(out, l.hash)
		}
	}
	return out
}

// chosen splits r's open lines into those ticked (approved) and those
// left out, for an approval of the lines ticked (nil ticked: all open
// lines). It returns ErrNoLines when none of the open lines is ticked, and
// ErrOtherOperation when a ticked hash is not an open line of r.
func (r *request) chosen(ticked []intent.OperationHash) (approved, left []intent.OperationHash, err error) {
	open := r.open()
	if ticked == nil {
		return open, nil, nil
	}
	for _, h := range ticked {
		if !slices.Contains(open, h) {
			return nil, nil, ErrOtherOperation
		}
	}
	for _, h := range open {
		if slices.Contains(ticked, h) {
			approved = append(approved, h)
		} else {
			left = append(left, h)
		}
	}
	if len(approved) == 0 {
		return nil, nil, ErrNoLines
	}
	return approved, left, nil
}

// headline returns how r is named in a list and on its rejection's
// confirmation: its sentence, its amounts and its payee; for a run, the
// run's sentence, its totals and how many payees.
func (s *Server) headline(r *request) (summary, amount, payee string) {
	if len(r.lines) == 0 {
		return s.phrase(r).Summary, r.amountText(), r.payeeText()
	}
	v, _ := s.runView(r, nil)
	names := make([]string, 0, len(v.Payees))
	for _, p := range v.Payees {
		names = append(names, p.Payee)
	}
	return runSummary(v), strings.Join(v.Asked, ", "), strings.Join(names, ", ")
}

// lineHashList returns the operation hashes of r's lines, in order.
func (r *request) lineHashList() []intent.OperationHash {
	out := make([]intent.OperationHash, len(r.lines))
	for i, l := range r.lines {
		out[i] = l.hash
	}
	return out
}
