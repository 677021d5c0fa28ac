package workspace

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

var _ gateway.Executor = Executor{}

// Executor carries out the pack's operations on a Mem, with the resolved
// arguments only. Its outputs are what AgentDojo's tools return, as JSON:
// e-mails, events, files and contacts as objects with AgentDojo's field
// names, today's date as a string, and {"message": ...} for deletions.
// Lists arrive as comma-separated text and are split. Every error wraps
// gateway.ErrNotExecuted: the in-memory workspace applies an operation
// whole or not at all; a missing id or a search that finds nothing is
// shown to the agent as AgentDojo's tools report it.
type Executor struct {
	WS *Mem
}

// Execute implements gateway.Executor.
func (e Executor) Execute(ctx context.Context, op intent.Operation, _ intent.OperationHash) (gateway.Result, error) {
	if err := ctx.Err(); err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	out, err := e.execute(op)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %w", gateway.ErrNotExecuted, gateway.Visible(err.Error(), err))
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	return gateway.Result{Output: string(b)}, nil
}

// execute carries out op by its action's entry in operations; an action
// the pack does not have is an error.
func (e Executor) execute(op intent.Operation) (any, error) {
	run, ok := operations[op.Action]
	if !ok {
		return nil, fmt.Errorf("workspace: unknown action %q", op.Action)
	}
	return run(e.WS, op.Owner, opArgs(op.Args))
}

// opArgs reads an operation's resolved arguments as the workspace's
// tools take them.
type opArgs intent.Args

// str is the text of the argument name; "" when it is absent.
func (a opArgs) str(name string) string { return a[name].Str }

// list is the argument name, comma-separated text, split by normalize.SplitList.
func (a opArgs) list(name string) []string { return normalize.SplitList(a[name].Str) }

// operations carries out each of the pack's actions on the workspace ws
// for the owner o, returning the output Execute marshals as JSON.
var operations = map[intent.Action]func(ws *Mem, o intent.Owner, a opArgs) (any, error){
	ActionSendEmail: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		var att []Attachment
		for _, id := range a.list("attachments") {
			att = append(att, Attachment{Type: "file", FileID: id})
		}
		return ws.SendEmail(o, a.list("recipients"), a.list("cc"), a.list("bcc"), a.str("subject"), a.str("body"), att)
	},
	ActionDeleteEmail: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return message("Email with id %s deleted successfully.", a.str("email_id")), ws.DeleteEmail(o, a.str("email_id"))
	},
	ActionGetUnreadEmails: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.UnreadEmails(o)
	},
	ActionGetSentEmails: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.EmailsWithStatus(o, StatusSent)
	},
	ActionGetReceivedEmails: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.EmailsWithStatus(o, StatusReceived)
	},
	ActionGetDraftEmails: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.EmailsWithStatus(o, StatusDraft)
	},
	ActionSearchEmails: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.SearchEmails(o, a.str("query"), a.str("sender"))
	},
	ActionSearchContactsByName: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.SearchContacts(o, a.str("query"), false)
	},
	ActionSearchContactsByEmail: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.SearchContacts(o, a.str("query"), true)
	},
	ActionGetCurrentDay: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.CurrentDay(o)
	},
	ActionSearchCalendarEvents: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.SearchEvents(o, a.str("query"), a.str("date"))
	},
	ActionGetDayCalendarEvents: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.DayEvents(o, a.str("day"))
	},
	ActionCreateCalendarEvent: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.CreateEvent(o, a.str("title"), a.str("start_time"), a.str("end_time"), a.str("description"), a.list("participants"), a.str("location"))
	},
	ActionCancelCalendarEvent: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return message("Event with ID %s has been canceled and participants have been notified.", a.str("event_id")), ws.CancelEvent(o, a.str("event_id"))
	},
	ActionRescheduleCalendarEvent: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.RescheduleEvent(o, a.str("event_id"), a.str("new_start_time"), a.str("new_end_time"))
	},
	ActionAddEventParticipants: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.AddParticipants(o, a.str("event_id"), a.list("participants"))
	},
	ActionAppendToFile: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.AppendToFile(o, a.str("file_id"), a.str("content"))
	},
	ActionSearchFilesByFilename: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.SearchFilesByFilename(o, a.str("filename"))
	},
	ActionCreateFile: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.CreateFile(o, a.str("filename"), a.str("content"))
	},
	ActionDeleteFile: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.DeleteFile(o, a.str("file_id"))
	},
	ActionGetFileByID: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.File(o, a.str("file_id"))
	},
	ActionListFiles: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.ListFiles(o)
	},
	ActionShareFile: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.ShareFile(o, a.str("file_id"), a.str("email"), a.str("permission"))
	},
	ActionSearchFiles: func(ws *Mem, o intent.Owner, a opArgs) (any, error) {
		return ws.SearchFiles(o, a.str("query"))
	},
}

func message(format string, a ...any) map[string]string {
	return map[string]string{"message": fmt.Sprintf(format, a...)}
}
