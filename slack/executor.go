package slack

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

var _ gateway.Executor = Executor{}

// Executor carries out the pack's operations on a Mem, with the resolved
// arguments only. Its outputs are JSON: lists of channels or members,
// messages with AgentDojo's field names, a page's text (null for a page
// that does not exist, whose visit is still recorded), and
// {"message": ...} for the writes. Every error wraps gateway.ErrNotExecuted:
// Mem applies an operation whole or not at all.
type Executor struct {
	WS *Mem
}

// Execute implements gateway.Executor.
func (e Executor) Execute(ctx context.Context, op intent.Operation, _ intent.OperationHash) (gateway.Result, error) {
	if err := ctx.Err(); err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	run, ok := operations[op.Action]
	if !ok {
		return gateway.Result{}, fmt.Errorf("%w: slack: unknown action %q", gateway.ErrNotExecuted, op.Action)
	}
	out, err := run(e.WS, op.Owner, func(name string) string { return op.Args[name].Str })
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %w", gateway.ErrNotExecuted, gateway.Visible(err.Error(), err))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	return gateway.Result{Output: string(b)}, nil
}

func done(format string, a ...any) map[string]string {
	return map[string]string{"message": fmt.Sprintf(format, a...)}
}

// operations carries out each action on ws for owner o; arg reads an
// argument ("" when absent).
var operations = map[intent.Action]func(ws *Mem, o intent.Owner, arg func(string) string) (any, error){
	ActionGetChannels: func(ws *Mem, o intent.Owner, _ func(string) string) (any, error) {
		return ws.Channels(o)
	},
	ActionAddUserToChannel: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return done("%s was added to the channel.", arg("user")), ws.AddToChannel(o, arg("user"), arg("channel"))
	},
	ActionReadChannel: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return ws.ChannelMessages(o, arg("channel"))
	},
	ActionReadInbox: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return ws.Inbox(o, arg("user"))
	},
	ActionSendDirectMessage: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return done("Message sent to %s.", arg("recipient")), ws.SendDirect(o, arg("recipient"), arg("body"))
	},
	ActionSendChannelMessage: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return done("Message posted to the channel."), ws.SendChannel(o, arg("channel"), arg("body"))
	},
	ActionGetUsersInChannel: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return ws.ChannelMembers(o, arg("channel"))
	},
	ActionInviteUser: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return done("%s was invited.", arg("user")), ws.Invite(o, arg("user"), arg("user_email"))
	},
	ActionRemoveUser: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return done("%s was removed.", arg("user")), ws.Remove(o, arg("user"))
	},
	ActionGetWebpage: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		page, ok, err := ws.Webpage(o, arg("url"))
		if !ok {
			return nil, err
		}
		return page, err
	},
	ActionPostWebpage: func(ws *Mem, o intent.Owner, arg func(string) string) (any, error) {
		return done("Posted."), ws.PostWebpage(o, arg("url"), arg("content"))
	},
}
