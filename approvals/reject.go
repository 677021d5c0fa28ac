package approvals

import (
	"net/http"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/core/intent"
)

// maxRejectReason bounds a rejection's reason, in bytes.
const maxRejectReason = 500

// rejectView is the confirmation step of a rejection: what is rejected and
// the reason asked for.
type rejectView struct {
	Session                          *session
	CSRF                             string
	ID, Action, Owner, Amount, Payee string
	Hash, Reason, Error              string
	Summary                          string // the operation in the approver's words (Phrase.Summary)
}

// rejectForm shows the confirmation step: a rejection is never one click,
// and it records why.
func (s *Server) rejectForm(c echo.Context) error {
	return s.showReject(c, http.StatusOK, "", "")
}

func (s *Server) showReject(c echo.Context, code int, reason, problem string) error {
	ss := sessionOf(c)
	r, err := s.lookup(c)
	if err == nil && !s.approvers[ss.approver].mayDecide(r.op.Owner) {
		err = ErrNotFound
	}
	if err != nil {
		return s.decisionError(c, err)
	}
	status := r.status
	if status != StatusPending {
		return s.decisionError(c, map[Status]error{StatusExpired: ErrExpired, StatusRefused: ErrTampered, StatusApproved: ErrDecided, StatusRejected: ErrDecided}[status])
	}
	v := rejectView{Session: ss, CSRF: ss.csrf, ID: r.id, Action: string(r.op.Action), Owner: string(r.op.Owner),
		Hash: r.hash.String(), Reason: reason, Error: problem}
	v.Summary, v.Amount, v.Payee = s.headline(r)
	return s.page(c, code, "reject", v)
}

// rejectPost records a rejection with its reason (required: 1 to 500
// bytes, one line).
func (s *Server) rejectPost(c echo.Context) error {
	reason, ok := formField(c, "reason", maxRejectReason, false)
	switch {
	case !ok:
		return s.showReject(c, http.StatusBadRequest, "", "The reason must be one line of at most 500 characters, without invisible characters.")
	case reason == "":
		return s.showReject(c, http.StatusBadRequest, "", "Say why you reject it: the reason is recorded with your decision.")
	}
	return s.voteForm(c, false, reason)
}

// payeeText names who r pays, for the request list and the rejection's
// confirmation step: the first payee argument's value that executes, with
// its name on file when the facts hold one ("V-0042 ACME Supplies GmbH"),
// invisible and control characters shown as visible shows them.
func (r *request) payeeText() string {
	for _, p := range payeeParams {
		v, ok := r.op.Args[p]
		if !ok || v.Kind != intent.KindString || v.Str == "" {
			continue
		}
		out := displayValue(v.Str)
		if n := r.nameOf(p); n != "" {
			out += " " + n
		}
		return visible(out)
	}
	return ""
}
