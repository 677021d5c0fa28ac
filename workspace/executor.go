package workspace

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
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

func (e Executor) execute(op intent.Operation) (any, error) {
	o, a := op.Owner, op.Args
	str := func(name string) string { return a[name].Str }
	list := func(name string) []string { return SplitList(a[name].Str) }
	switch op.Action {
	case ActionSendEmail:
		var att []Attachment
		for _, id := range list("attachments") {
			att = append(att, Attachment{Type: "file", FileID: id})
		}
		return e.WS.SendEmail(o, list("recipients"), list("cc"), list("bcc"), str("subject"), str("body"), att)
	case ActionDeleteEmail:
		return message("Email with id %s deleted successfully.", str("email_id")), e.WS.DeleteEmail(o, str("email_id"))
	case ActionGetUnreadEmails:
		return e.WS.UnreadEmails(o)
	case ActionGetSentEmails:
		return e.WS.EmailsWithStatus(o, StatusSent)
	case ActionGetReceivedEmails:
		return e.WS.EmailsWithStatus(o, StatusReceived)
	case ActionGetDraftEmails:
		return e.WS.EmailsWithStatus(o, StatusDraft)
	case ActionSearchEmails:
		return e.WS.SearchEmails(o, str("query"), str("sender"))
	case ActionSearchContactsByName:
		return e.WS.SearchContacts(o, str("query"), false)
	case ActionSearchContactsByEmail:
		return e.WS.SearchContacts(o, str("query"), true)
	case ActionGetCurrentDay:
		return e.WS.CurrentDay(o)
	case ActionSearchCalendarEvents:
		return e.WS.SearchEvents(o, str("query"), str("date"))
	case ActionGetDayCalendarEvents:
		return e.WS.DayEvents(o, str("day"))
	case ActionCreateCalendarEvent:
		return e.WS.CreateEvent(o, str("title"), str("start_time"), str("end_time"), str("description"), list("participants"), str("location"))
	case ActionCancelCalendarEvent:
		return message("Event with ID %s has been canceled and participants have been notified.", str("event_id")), e.WS.CancelEvent(o, str("event_id"))
	case ActionRescheduleCalendarEvent:
		return e.WS.RescheduleEvent(o, str("event_id"), str("new_start_time"), str("new_end_time"))
	case ActionAddEventParticipants:
		return e.WS.AddParticipants(o, str("event_id"), list("participants"))
	case ActionAppendToFile:
		return e.WS.AppendToFile(o, str("file_id"), str("content"))
	case ActionSearchFilesByFilename:
		return e.WS.SearchFilesByFilename(o, str("filename"))
	case ActionCreateFile:
		return e.WS.CreateFile(o, str("filename"), str("content"))
	case ActionDeleteFile:
		return e.WS.DeleteFile(o, str("file_id"))
	case ActionGetFileByID:
		return e.WS.File(o, str("file_id"))
	case ActionListFiles:
		return e.WS.ListFiles(o)
	case ActionShareFile:
		return e.WS.ShareFile(o, str("file_id"), str("email"), str("permission"))
	case ActionSearchFiles:
		return e.WS.SearchFiles(o, str("query"))
	}
	return nil, fmt.Errorf("workspace: unknown action %q", op.Action)
}

func message(format string, a ...any) map[string]string {
	return map[string]string{"message": fmt.Sprintf(format, a...)}
}
