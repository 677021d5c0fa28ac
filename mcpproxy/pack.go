package mcpproxy

import (
	"encoding/json"
	"strings"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// ContractTool describes an action of a mounted pack as an MCP tool named
// name: its description is the contract's Doc and its input schema lists
// the contract's parameters (no other property accepted). Amounts accept
// a JSON number or a string holding an exact decimal.
func ContractTool(name string, c *contract.Contract) Tool {
	props := map[string]any{}
	var required []string
	for _, p := range c.Params {
		s := map[string]any{}
		switch p.Type.Kind() {
		case intent.KindString:
			s["type"] = "string"
			if p.Type.String() == "date (YYYY-MM-DD)" {
				s["format"] = "date"
			}
		case intent.KindInt:
			s["type"] = "integer"
			if lo, hi, ok := p.Type.Bounds(); ok {
				s["minimum"], s["maximum"] = lo, hi
			}
		case intent.KindBool:
			s["type"] = "boolean"
		case intent.KindAmount:
			s["type"] = []string{"number", "string"}
		}
		desc := p.Doc
		if p.Type.Kind() == intent.KindAmount {
			desc = strings.TrimSpace(desc + " (" + p.Type.String() + ")")
		}
		if p.Critical {
			desc = strings.TrimSpace(desc + " Only a value on file or named by the user is accepted.")
		}
		if desc != "" {
			s["description"] = desc
		}
		props[p.Name] = s
		if p.Required {
			required = append(required, p.Name)
		}
	}
	schema := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		schema["required"] = required
	}
	raw, _ := json.Marshal(schema) // maps of strings: cannot fail
	t := Tool{Name: name, Action: c.Action, Description: c.Doc, InputSchema: raw, ReadOnly: c.ReadOnly}
	for _, p := range c.Params {
		if p.Sensitive {
			t.Sensitive = append(t.Sensitive, p.Name)
		}
	}
	return t
}

// PackTools describes every action of a mounted pack as a tool named
// after the action's verb with prefix before it ("" or "ap_").
func PackTools(p gateway.Pack, prefix string) []Tool {
	out := make([]Tool, 0, len(p.Contracts))
	for _, c := range p.Contracts {
		_, verb, _ := strings.Cut(string(c.Action), ".")
		out = append(out, ContractTool(prefix+verb, c))
	}
	return out
}
