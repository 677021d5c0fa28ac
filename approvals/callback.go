package approvals

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// ActionRecordCallback is the action of the receipts the page records for
// call-backs.
const ActionRecordCallback intent.Action = "approvals.record_callback"

// Limits of the call-back form's fields, in bytes.
const (
	maxCompany = 64
	maxVendor  = 128
	maxIBAN    = 64
	maxPhone   = 40
	maxNote    = 1000
)

// CallbackEntry is a call-back as a person records it on the page: they
// called the vendor at the phone number already on file and the vendor read
// the new bank account back to them.
type CallbackEntry struct {
	// ID identifies the call-back: 32 lowercase hex digits, set by the
	// page.
	ID string
	// Owner is the company it was made for (an owner of the approver's).
	Owner intent.Owner
	// Vendor names the vendor called. The page passes it as typed (an ID
	// or a name as the ERP knows it); CallbackSink.CheckCallback returns
	// the vendor's ID in the ERP.
	Vendor string
	// VendorName is the vendor's name as on file; set by
	// CallbackSink.CheckCallback, empty before.
	VendorName string
	// IBAN is the account the vendor read back. The page passes it as
	// typed; CallbackSink.CheckCallback returns it normalized (electronic
	// format), and the page shows that back for the person to check.
	IBAN string
	// Phone is the number dialled, as typed.
	Phone string
	// Note is the person's free text (who answered, what was said); may be
	// empty.
	Note string
	// CalledBy is the signed-in approver who records it.
	CalledBy string
	// At is when it was recorded, in UTC.
	At time.Time
}

// CallbackSink takes the call-backs people record on the page. The page
// looks nothing up itself: it calls CheckCallback, records a receipt of the
// entry as checked through its Log, and only then calls RecordCallback with
// that entry, so that no call-back is ever recorded without its receipt.
// Both methods are called concurrently.
type CallbackSink interface {
	// CheckCallback returns e as it would be recorded (the vendor's ID and
	// name, the IBAN normalized) without recording anything. It returns a
	// *CallbackError, whose Text the page shows, when e cannot be
	// recorded (no such vendor, an invalid IBAN, a number that is not the
	// vendor's phone on file); any other error means the records could
	// not be read.
	CheckCallback(ctx context.Context, e CallbackEntry) (CallbackEntry, error)
	// RecordCallback records e as CheckCallback returned it. After it
	// returns nil the call-back may support a bank-detail change.
	RecordCallback(ctx context.Context, e CallbackEntry) error
}

// CallbackError is a call-back refused by a CallbackSink, with the words the
// page shows the person.
type CallbackError struct {
	// Field names the form field at fault ("company", "vendor", "iban" or
	// "phone"); empty when none.
	Field string
	// Text says, for the person recording, why it was refused and what to
	// do; it must not carry internal detail.
	Text string
	// Err is the underlying error, if any; never shown.
	Err error
}

func (e *CallbackError) Error() string {
	if e.Err != nil {
		return "approvals: call-back refused: " + e.Text + ": " + e.Err.Error()
	}
	return "approvals: call-back refused: " + e.Text
}

func (e *CallbackError) Unwrap() error { return e.Err }

type callbackRecord struct {
	entry   CallbackEntry
	receipt receipt.Receipt
}

type callbackView struct {
	ID, At, Owner, Vendor, VendorID, IBAN, Phone, Note, CalledBy, Receipt, ReceiptHash string
}

type callbacksView struct {
	Session  *session
	CSRF     string
	Owners   []string // the companies the approver may choose from; nil: free text
	Form     CallbackEntry
	Error    string
	Field    string
	Recorded *callbackView
	Recent   []callbackView
	Lookup   bool           // the sink tells the phone on file (PhoneDirectory)
	OnFile   *CallbackEntry // the vendor looked up: ID, name, phone on file
}

func (s *Server) callbackForm(c echo.Context) error {
	ss := sessionOf(c)
	v, err := s.callbacksView(c.Request().Context(), ss)
	if err != nil {
		return err
	}
	if err := s.lookUpPhone(c, s.approvers[ss.approver], &v); err != nil {
		return err
	}
	if id := c.QueryParam("recorded"); idPattern.MatchString(id) {
		for i := range v.Recent {
			if v.Recent[i].ID == id {
				v.Recorded = &v.Recent[i]
			}
		}
	}
	return s.page(c, http.StatusOK, "callbacks", v)
}

func (s *Server) callbacksView(ctx context.Context, ss *session) (callbacksView, error) {
	v := callbacksView{Session: ss, CSRF: ss.csrf}
	me := s.approvers[ss.approver]
	if me.owners != nil {
		for o := range me.owners {
			v.Owners = append(v.Owners, string(o))
		}
		slices.Sort(v.Owners)
	}
	var mine []callbackRecord
	err := s.callbackRecords(ctx, func(r callbackRecord) error {
		if me.mayDecide(r.entry.Owner) {
			mine = append(mine, r)
		}
		return nil
	})
	if err != nil {
		return v, err
	}
	// The last Recent, newest first.
	for i := len(mine) - 1; i >= 0 && len(v.Recent) < s.cfg.Recent; i-- {
		r := mine[i]
		v.Recent = append(v.Recent, callbackView{
			ID: r.entry.ID, At: r.entry.At.Format("2006-01-02 15:04:05 UTC"), Owner: string(r.entry.Owner),
			Vendor: r.entry.VendorName, VendorID: r.entry.Vendor, IBAN: groupIBAN(r.entry.IBAN),
			Phone: r.entry.Phone, Note: r.entry.Note, CalledBy: r.entry.CalledBy,
			Receipt:     fmt.Sprintf("%s #%d", ownerText(r.receipt.Owner), r.receipt.Seq),
			ReceiptHash: r.receipt.Hash.String(),
		})
	}
	return v, nil
}

// groupIBAN shows an electronic-format IBAN in groups of four, as printed
// on paper, for the person to read it back.
func groupIBAN(s string) string {
	var b strings.Builder
	for i, r := range s {
		if i > 0 && i%4 == 0 {
			b.WriteByte(' ')
		}
		b.WriteRune(r)
	}
	return b.String()
}

// formField returns a form value with surrounding space trimmed, and
// whether it is acceptable: valid UTF-8, at most max bytes, and without
// control or invisible formatting characters (line breaks too, unless
// multiline).
func formField(c echo.Context, name string, max int, multiline bool) (string, bool) {
	v := strings.TrimSpace(c.FormValue(name))
	if len(v) > max || !utf8.ValidString(v) {
		return v, false
	}
	for _, r := range v {
		if multiline && (r == '\n' || r == '\r' || r == '\t') {
			continue
		}
		if unicode.IsControl(r) || unicode.Is(unicode.Cf, r) {
			return v, false
		}
	}
	return v, true
}

func (s *Server) recordCallbackForm(c echo.Context) error {
	ss := sessionOf(c)
	me := s.approvers[ss.approver]
	v, err := s.callbacksView(c.Request().Context(), ss)
	if err != nil {
		return err
	}
	refuse := func(code int, field, text string) error {
		v.Field, v.Error = field, text
		return s.page(c, code, "callbacks", v)
	}
	var e CallbackEntry
	var ok [5]bool
	var company string
	company, ok[0] = formField(c, "company", maxCompany, false)
	e.Owner = intent.Owner(company)
	e.Vendor, ok[1] = formField(c, "vendor", maxVendor, false)
	e.IBAN, ok[2] = formField(c, "iban", maxIBAN, false)
	e.Phone, ok[3] = formField(c, "phone", maxPhone, false)
	e.Note, ok[4] = formField(c, "note", maxNote, true)
	v.Form = e
	for i, field := range []string{"company", "vendor", "iban", "phone", "note"} {
		if !ok[i] {
			return refuse(http.StatusBadRequest, field, "A field is too long or holds control or invisible characters, so nothing was recorded. Type it again.")
		}
	}
	switch {
	case e.Owner == "":
		return refuse(http.StatusBadRequest, "company", "Choose the company, so nothing was recorded.")
	case e.Vendor == "" || e.IBAN == "" || e.Phone == "":
		return refuse(http.StatusBadRequest, "", "Fill in the vendor, the IBAN the vendor read back and the number you dialled; nothing was recorded.")
	case !me.mayDecide(e.Owner):
		return refuse(http.StatusForbidden, "company", "You may record call-backs only for the companies you approve for; nothing was recorded.")
	}
	id, err := s.token(16)
	if err != nil {
		return err
	}
	e.ID, e.CalledBy, e.At = id, ss.approver, s.now().UTC()
	stored, err := s.recordCallback(c.Request().Context(), e)
	var ce *CallbackError
	switch {
	case errors.As(err, &ce):
		return refuse(http.StatusUnprocessableEntity, ce.Field, ce.Text)
	case err != nil:
		s.logger.Error("approval page: call-back", "id", id, "err", err)
		return refuse(http.StatusInternalServerError, "", "The call-back could not be recorded, so it does not count. Try again.")
	}
	return c.Redirect(http.StatusSeeOther, "/callbacks?recorded="+stored.ID)
}

// recordCallback checks e with the sink, records its receipt, and then
// records it with the sink. A refusal of the sink is receipted too. It
// returns the entry as recorded.
func (s *Server) recordCallback(ctx context.Context, e CallbackEntry) (CallbackEntry, error) {
	sink := s.cfg.Callbacks
	checked, err := sink.CheckCallback(ctx, e)
	var ce *CallbackError
	if errors.As(err, &ce) {
		rec := callbackReceipt(e)
		rec.Verdict, rec.Code = intent.Deny, intent.CodeNotTrusted
		rec.Message = fmt.Sprintf("Call-back %s by %s refused: %s", e.ID, e.CalledBy, ce.Text)
		if _, lerr := s.log.Append(ctx, rec); lerr != nil {
			s.logger.Error("approval page: refused call-back not receipted", "id", e.ID, "err", lerr)
		}
		return CallbackEntry{}, err
	}
	if err != nil {
		return CallbackEntry{}, err
	}
	// The sink may not change who, when, or for whom.
	checked.ID, checked.Owner, checked.CalledBy, checked.At, checked.Note = e.ID, e.Owner, e.CalledBy, e.At, e.Note
	rec := callbackReceipt(checked)
	rec.Verdict, rec.Result = intent.Allow, receipt.ResultExecuted
	rec.Message = fmt.Sprintf("Call-back %s recorded by %s on the page: vendor %s (%s), called at %s, confirmed the IBAN %s.",
		checked.ID, checked.CalledBy, checked.VendorName, checked.Vendor, checked.Phone, groupIBAN(checked.IBAN))
	stored, err := s.log.Append(ctx, rec)
	if err != nil {
		return CallbackEntry{}, fmt.Errorf("approvals: call-back not receipted, so not recorded: %w", err)
	}
	// Kept for the page's list (after a restart too, and on every replica
	// sharing the store) before the sink makes it count; taken back if
	// the sink fails.
	if err = s.putCallback(ctx, callbackRecord{entry: checked, receipt: stored}); err != nil {
		err = fmt.Errorf("approvals: call-back receipted but not kept: %w", err)
	} else if err = sink.RecordCallback(ctx, checked); err != nil {
		if derr := s.st.DeleteEntry(ctx, SpaceCallbacks, callbackKey(checked)); derr != nil {
			s.logger.Error("approval page: a call-back the sink refused is still listed", "id", checked.ID, "err", derr)
		}
	}
	if err != nil {
		fail := callbackReceipt(checked)
		fail.Verdict, fail.Result = intent.Deny, receipt.ResultFailed
		fail.Message = fmt.Sprintf("Call-back %s was not recorded after all; it does not count.", checked.ID)
		if _, lerr := s.log.Append(ctx, fail); lerr != nil {
			s.logger.Error("approval page: failed call-back not receipted", "id", e.ID, "err", lerr)
		}
		return CallbackEntry{}, err
	}
	s.logger.Info("call-back recorded", "id", checked.ID, "owner", checked.Owner, "vendor", checked.Vendor, "by", checked.CalledBy)
	return checked, nil
}

// callbackReceipt is the receipt of e: who, when, for whom and what.
func callbackReceipt(e CallbackEntry) receipt.Receipt {
	args := intent.Args{
		"callback":  intent.Str(e.ID),
		"vendor":    intent.Str(e.Vendor),
		"iban":      intent.Str(e.IBAN),
		"phone":     intent.Str(e.Phone),
		"called_by": intent.Str(e.CalledBy),
	}
	if e.VendorName != "" {
		args["vendor_name"] = intent.Str(e.VendorName)
	}
	if e.Note != "" {
		args["note"] = intent.Str(e.Note)
	}
	return receipt.Receipt{
		Owner: e.Owner, Time: e.At, Action: ActionRecordCallback, Args: args,
		Result: receipt.ResultNotExecuted,
	}
}
