package mcpproxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/intentplane/intentplane/core/intent"
)

// Mirror ties a Tool to the downstream tool it mirrors. When the server
// announces that its tools changed (notifications/tools/list_changed),
// the proxy lists them again and re-mirrors: the tool takes the server's
// new title, description (unless Description replaces it) and raw input
// schema. It becomes unavailable, hidden from tools/list and its calls
// refused with a message saying why, while the server no longer offers
// it, while its schema lacks one of the Critical parameters (a schema
// without properties lacks them all), and while the schema requires an
// argument that is not in Params. A server's tool that no Tool mirrors is
// never shown. The client is sent notifications/tools/list_changed only
// when what it sees changed.
//
// With a Lock, the tool is also served only while the server lists it
// exactly as pinned (title, description and input schema): a tool whose
// listing differs from its pin, at start or after a change, is hidden and
// its calls refused (CodeToolChanged) until the server lists it as pinned
// again or the operator pins it again; one without a pin is hidden and
// refused (CodeToolNotPinned). The difference is logged at warn level,
// once per change (Pin.Diff), and the changed description or schema never
// reaches the client.
type Mirror struct {
	// Server is the downstream server; Tool the tool's name there.
	Server *Downstream
	Tool   string
	// Description replaces the server's description; empty keeps it.
	Description string
	// Params are the parameters the configuration declares; Critical
	// those of them taking values only from trusted sources.
	Params   []string
	Critical []string
	// Lock holds the pins the tool must match; nil means the tool is not
	// pinned.
	Lock *Lock
}

// mirrored is what the proxy serves for a tool now.
type mirrored struct {
	tool mcp.Tool
	why  string      // non-empty: unavailable, and the message for the agent
	code intent.Code // why's reason code
	diff string      // how the listing differs from its pin, as last logged
}

// check returns why a tool whose server now describes it with schema
// cannot be served, or "".
func (m *Mirror) check(name string, schema json.RawMessage) string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		return fmt.Sprintf("The tool %s is unavailable: the server %s changed its input schema, which cannot be read. Nothing was done. Tell the user that the proxy's configuration must be reviewed.", name, m.Server.Name())
	}
	for _, c := range m.Critical {
		if _, ok := s.Properties[c]; !ok {
			return fmt.Sprintf("The tool %s is unavailable: the server %s changed it, and it no longer takes the argument %q, which the gateway checks against trusted records. Nothing was done. Tell the user that the proxy's configuration must be reviewed; do not try to reach the server another way.", name, m.Server.Name(), c)
		}
	}
	declared := map[string]bool{}
	for _, p := range m.Params {
		declared[p] = true
	}
	for _, r := range s.Required {
		if !declared[r] {
			return fmt.Sprintf("The tool %s is unavailable: the server %s changed it, and it now requires the argument %q, which the proxy's configuration does not declare. Nothing was done. Tell the user that the configuration must be reviewed.", name, m.Server.Name(), r)
		}
	}
	return ""
}

// unavailable returns why the tool name cannot be called now, with the
// reason code, or "".
func (p *Proxy) unavailable(name string) (intent.Code, string) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if m := p.current[name]; m != nil && m.why != "" {
		return m.code, m.why
	}
	return "", ""
}

// hideUnavailable removes unavailable tools from a tools/list answer.
// They stay registered, so that a client calling one from an old list
// reads why rather than "tool not found".
func (p *Proxy) hideUnavailable(_ context.Context, _ any, _ *mcp.ListToolsRequest, res *mcp.ListToolsResult) {
	if res == nil {
		return
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	kept := res.Tools[:0:0]
	for _, t := range res.Tools {
		if !p.hidden[t.Name] {
			kept = append(kept, t)
		}
	}
	res.Tools = kept
}

// remirror applies the tools server d lists now to the tools mirroring it.
//
// The tools registered with the server and the names hidden from its
// list change together as the client sees them: while the new tools are
// being registered, what either the old or the new list hides stays
// hidden, so that a tool is never listed with a registration (its
// schema) of another state than the one that shows it.
func (p *Proxy) remirror(d *Downstream, raw []RawTool) {
	p.mirrorMu.Lock()
	defer p.mirrorMu.Unlock()
	p.mu.Lock()
	p.applyLocked(d, raw)
	st, changed := p.publishLocked()
	if !changed {
		p.hidden = p.hiddenLocked()
		p.mu.Unlock()
		return
	}
	for name := range p.hiddenLocked() {
		p.hidden[name] = true // hidden by the old list or the new one
	}
	p.mu.Unlock()
	p.setTools(st)
	p.mu.Lock()
	p.hidden = p.hiddenLocked()
	p.mu.Unlock()
}

// hiddenLocked returns the names of the tools unavailable now, which the
// client's list leaves out (hideUnavailable). p.mu is held.
func (p *Proxy) hiddenLocked() map[string]bool {
	hidden := map[string]bool{}
	for name, cur := range p.current {
		if cur.why != "" {
			hidden[name] = true
		}
	}
	return hidden
}

// applyLocked updates what is served of the tools mirroring d from the
// tools d lists now, and logs what became unavailable or available again.
// p.mu is held.
func (p *Proxy) applyLocked(d *Downstream, raw []RawTool) {
	byName := make(map[string]RawTool, len(raw))
	for _, r := range raw {
		byName[r.Name] = r
	}
	for _, name := range p.order {
		t := p.tools[name]
		m := t.Mirror
		if m == nil || m.Server != d {
			continue
		}
		cur := p.current[name]
		was := cur.why
		cur.code = CodeToolUnavailable
		r, ok := byName[m.Tool]
		if ok && m.Lock != nil {
			diff, pinned := m.Lock.Verify(d.Name(), r)
			switch {
			case !pinned:
				cur.why, cur.code = fmt.Sprintf("The tool %s is unavailable: the operator has not pinned it (reviewed its description and input schema). Nothing was done. Tell the user that the operator must review and pin the tool (intentplane-mcp --pin).", name), CodeToolNotPinned
			case diff != "":
				// The changed description and schema are not even
				// registered: only the pinned tool ever is.
				cur.why, cur.code = fmt.Sprintf("The tool %s is unavailable: the server %s changed its description or input schema since the operator reviewed and pinned it. Nothing was done. Tell the user that the operator must review the change and pin the tool again; do not try to reach the server another way.", name, d.Name()), CodeToolChanged
			}
			if diff != cur.diff && diff != "" {
				p.log.Warn("tool differs from its pin", "tool", name, "server", d.Name(), "downstream_tool", m.Tool, "diff", diff)
			}
			cur.diff = diff
			if !pinned || diff != "" {
				p.logChange(name, d, was, cur.why)
				continue
			}
		}
		switch {
		case !ok:
			cur.why = fmt.Sprintf("The tool %s is unavailable: the server %s no longer offers it. Nothing was done. Tell the user; do not try to reach the server another way.", name, d.Name())
		default:
			nt := t
			nt.Title, nt.Description, nt.InputSchema = r.Title, r.Description, r.InputSchema
			if m.Description != "" {
				nt.Description = m.Description
			}
			mt, err := mcpTool(nt)
			if err != nil {
				cur.why = fmt.Sprintf("The tool %s is unavailable: the server %s changed it in a way the proxy cannot serve. Nothing was done. Tell the user.", name, d.Name())
				break
			}
			cur.tool, cur.why = mt, m.check(name, r.InputSchema)
		}
		p.logChange(name, d, was, cur.why)
	}
}

// logChange logs a tool becoming unavailable (or unavailable for another
// reason), or available again.
func (p *Proxy) logChange(name string, d *Downstream, was, why string) {
	switch {
	case why != "" && why != was:
		p.log.Warn("tool unavailable", "tool", name, "server", d.Name(), "why", why)
	case why == "" && was != "":
		p.log.Warn("tool available again", "tool", name, "server", d.Name())
	}
}

// publishLocked computes what the client sees; on the first call, or
// when that changed, it returns the tools to register (every tool, the
// unavailable ones hidden by hideUnavailable) and true. p.mu is held.
func (p *Proxy) publishLocked() ([]server.ServerTool, bool) {
	var shown []mcp.Tool
	st := make([]server.ServerTool, 0, len(p.order))
	for _, name := range p.order {
		cur := p.current[name]
		st = append(st, server.ServerTool{Tool: cur.tool, Handler: p.handler(p.tools[name])})
		if cur.why == "" {
			shown = append(shown, cur.tool)
		}
	}
	sort.Slice(shown, func(i, j int) bool { return shown[i].Name < shown[j].Name })
	enc, err := json.Marshal(shown)
	if err != nil {
		enc = nil // cannot compare: publish
	}
	if p.visible != nil && enc != nil && bytes.Equal(enc, p.visible) {
		return nil, false
	}
	p.visible = enc
	return st, true
}

// setTools registers st, which notifies the client's session that the
// list changed. mcp-go panics on tools it refuses; mcpTool checked them.
func (p *Proxy) setTools(st []server.ServerTool) {
	defer func() {
		if r := recover(); r != nil {
			p.log.Error("tools not registered", "err", fmt.Sprint(r))
		}
	}()
	p.srv.SetTools(st...)
}
