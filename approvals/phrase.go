package approvals

import (
	"maps"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// asRequest returns r as the approval.Request it was submitted as, for a
// Phraser.
func (r *request) asRequest() approval.Request {
	return approval.Request{
		Operation: r.op, Hash: r.hash, Level: r.level, Resolved: r.resolved, Reason: r.reason,
		Policies: r.policies, Facts: r.facts, Currency: r.currency, Requester: r.requester, ExpiresAt: r.expires,
	}
}

// phrase returns how r reads for its approvers: the first of Config.Phrasers
// that phrases its action, with what it leaves out written from the
// operation's arguments (summary) or left to the level (why). A Phraser
// that panics is skipped: the page then shows the arguments as they are.
func (s *Server) phrase(r *request) approval.Phrase {
	var p approval.Phrase
	for _, ph := range s.cfg.Phrasers {
		if got, ok := s.tryPhrase(ph, r); ok {
			p = got
			break
		}
	}
	if p.Currency == "" || r.currency != "" {
		p.Currency = r.currency
	}
	if p.Summary == "" {
		p.Summary = r.summary(p)
	}
	return p
}

func (s *Server) tryPhrase(ph approval.Phraser, r *request) (p approval.Phrase, ok bool) {
	defer func() {
		if e := recover(); e != nil {
			s.logger.Error("approval page: a phraser panicked", "action", r.op.Action, "panic", e)
			p, ok = approval.Phrase{}, false
		}
	}()
	req := r.asRequest()
	// A phraser reads a copy: it cannot change what the page checks.
	req.Operation.Args = r.op.Args.Clone()
	req.Resolved = slices.Clone(r.resolved)
	req.Facts = maps.Clone(r.facts)
	req.Policies = slices.Clone(r.policies)
	return ph.Phrase(req)
}

// summary writes a sentence from r's arguments when no pack phrases its
// action: the action, its amounts, and who is paid ("pay.send: 1,500.00
// EUR to GB29").
func (r *request) summary(p approval.Phrase) string {
	var parts []string
	for _, name := range r.op.Args.Names() {
		if v := r.op.Args[name]; v.Kind == intent.KindAmount {
			parts = append(parts, approval.FormatAmount(intent.Amount(v.Int), v.Scale, p.Currency))
		}
	}
	out := string(r.op.Action)
	if len(parts) > 0 {
		out += ": " + strings.Join(parts, ", ")
	}
	if payee := r.payeeName(p); payee != "" {
		if len(parts) == 0 {
			out += ":"
		}
		out += " to " + payee
	}
	return visible(out)
}

// payeeName names who r pays for a sentence: the first payee argument's
// name on file, or its value that executes.
func (r *request) payeeName(p approval.Phrase) string {
	for _, name := range payeeParams {
		v, ok := r.op.Args[name]
		if !ok || v.Kind != intent.KindString || v.Str == "" {
			continue
		}
		if n := r.recordName(name, p); n != "" {
			return n
		}
		return displayValue(v.Str)
	}
	return ""
}

// recordName returns the name shown for param's record: the pack's first
// name for it, else the name in the facts (nameOf); "" if none, or if it
// is the value itself.
func (r *request) recordName(param string, p approval.Phrase) string {
	n := r.nameOf(param)
	if names := p.Names[param]; len(names) > 0 && names[0] != "" {
		n = names[0]
	}
	if v, ok := r.op.Args[param]; ok && n == v.String() {
		return ""
	}
	return n
}

// names returns every name param's record has on file, for telling
// whether the agent asked for it: the pack's, and the one in the facts.
func (r *request) names(param string, p approval.Phrase) []string {
	out := slices.Clone(p.Names[param])
	if n := r.nameOf(param); n != "" {
		out = append(out, n)
	}
	return out
}

// label returns the pack's name of argument param for people, or param.
func label(p approval.Phrase, param string) string {
	if l := p.Labels[param]; l != "" {
		return l
	}
	return param
}

// valueView is a critical value as the page leads with it: the record's
// name on file, the id that executes as secondary, and the agent's own
// words only when they asked for something else.
type valueView struct {
	Param, Label string
	Shown        string // the name on file, or the value that executes when it has none
	ID           string // the value that executes, when Shown is a name
	Quoted       string // Shown or ID escaped, when either holds other than printable ASCII
	Since        string // when the record was set, as a date; "" if unknown
	Differs      bool   // the value that executes is not what the agent asked for
	Sent         string
	SentQuoted   string
}

// valueViews returns r's critical values for the page's lead, labelled by
// the pack.
func (r *request) valueViews(p approval.Phrase) []valueView {
	out := make([]valueView, 0, len(r.resolved))
	for _, res := range r.resolved {
		v := valueView{Param: res.Param, Label: label(p, res.Param), Shown: visible(displayValue(res.Value)),
			Since: approval.FormatDate(res.Provenance.At)}
		if n := r.recordName(res.Param, p); n != "" {
			v.Shown, v.ID = visible(n), visible(displayValue(res.Value))
			v.Quoted = quoted(n + " " + res.Value)
		} else {
			v.Quoted = quoted(res.Value)
		}
		if !asked(res.Sent, res.Value, r.names(res.Param, p)) {
			v.Differs, v.Sent, v.SentQuoted = true, visible(res.Sent), quoted(res.Sent)
		}
		out = append(out, v)
	}
	return out
}

// amountViews returns r's amounts labelled by the pack, each with its
// currency's decimals.
func (r *request) amountViews(p approval.Phrase) []argView {
	var out []argView
	for _, name := range r.op.Args.Names() {
		if v := r.op.Args[name]; v.Kind == intent.KindAmount {
			out = append(out, argView{Name: name, Label: label(p, name), Value: approval.FormatAmount(intent.Amount(v.Int), v.Scale, p.Currency)})
		}
	}
	return out
}

// otherViews returns r's arguments that are neither critical nor amounts,
// labelled by the pack.
func (r *request) otherViews(p approval.Phrase) []argView {
	critical := map[string]bool{}
	for _, res := range r.resolved {
		critical[res.Param] = true
	}
	var out []argView
	for _, name := range r.op.Args.Names() {
		v := r.op.Args[name]
		if critical[name] || v.Kind == intent.KindAmount {
			continue
		}
		out = append(out, argView{Name: name, Label: label(p, name), Value: v.String(), Quoted: quoted(v.String()), Kind: v.Kind.String()})
	}
	return out
}

// argViews returns r's arguments as hashed, for the auditor: amounts in
// exact decimals at their scale, as the operation hash covers them.
func (r *request) argViews() []argView {
	var out []argView
	for _, name := range r.op.Args.Names() {
		v := r.op.Args[name]
		text := v.String()
		if v.Kind == intent.KindAmount {
			text = intent.FormatAmount(intent.Amount(v.Int), v.Scale)
		}
		out = append(out, argView{Name: name, Value: text, Quoted: quoted(text), Kind: v.Kind.String()})
	}
	return out
}

// whyViews returns the pack's reasons, each shown as visible shows text.
func whyViews(p approval.Phrase) []string {
	out := make([]string, 0, len(p.Why))
	for _, w := range p.Why {
		if w != "" {
			out = append(out, visible(w))
		}
	}
	return out
}

// sectionViews returns the pack's sections, each value shown as visible
// shows text.
func sectionViews(p approval.Phrase) []approval.Section {
	out := make([]approval.Section, 0, len(p.Sections))
	for _, sec := range p.Sections {
		v := approval.Section{Title: visible(sec.Title)}
		for _, f := range sec.Facts {
			v.Facts = append(v.Facts, approval.Fact{Label: visible(f.Label), Value: visible(f.Value), Warn: f.Warn})
		}
		out = append(out, v)
	}
	return out
}

// askText says what r asks of approvers, and what is given so far.
func askText(l intent.Level, have int) string {
	if l == intent.LevelFourEyes {
		switch have {
		case 0:
			return "Four eyes: two different people must approve it."
		case 1:
			return "Four eyes: two different people must approve it; one has."
		}
		return "Four eyes: two different people approved it."
	}
	return "One person must confirm it."
}
