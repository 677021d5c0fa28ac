package approvals

import (
	"context"
	"errors"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/core/intent"
)

// PhoneDirectory is implemented by a CallbackSink that can tell a vendor's
// phone number on file: the call-back page then lets the person look the
// number up before calling, so that they dial the number on file and never
// one from the message that announced the change.
type PhoneDirectory interface {
	// PhoneOnFile returns the owner's vendor named by vendor (an ID or a
	// name, as typed) with its ID, name and phone number on file (Vendor,
	// VendorName, Phone). It returns a *CallbackError, whose Text the page
	// shows, when there is no such vendor or no number on file; any other
	// error means the records could not be read.
	PhoneOnFile(ctx context.Context, owner intent.Owner, vendor string) (CallbackEntry, error)
}

// lookUpPhone fills v with the phone on file of the vendor the query names
// (company, vendor), when the sink is a PhoneDirectory and the company is
// one of the approver's owners; it sets v.Error otherwise.
func (s *Server) lookUpPhone(c echo.Context, me *approverEntry, v *callbacksView) error {
	dir, ok := s.cfg.Callbacks.(PhoneDirectory)
	if !ok {
		return nil
	}
	v.Lookup = true
	company, cok := formField(c, "company", maxCompany, false)
	vendor, vok := formField(c, "vendor", maxVendor, false)
	if c.QueryParam("lookup") == "" {
		return nil
	}
	v.Form.Owner, v.Form.Vendor = intent.Owner(company), vendor
	switch {
	case !cok || company == "" || !me.mayDecide(intent.Owner(company)):
		v.Error, v.Field = "Choose one of your companies.", "company"
		return nil
	case !vok || vendor == "":
		v.Error, v.Field = "Type the vendor's ID or name as the ERP knows it.", "vendor"
		return nil
	}
	e, err := dir.PhoneOnFile(c.Request().Context(), intent.Owner(company), vendor)
	var ce *CallbackError
	if errors.As(err, &ce) {
		v.Error, v.Field = ce.Text, "vendor"
		return nil
	}
	if err != nil {
		return err
	}
	v.OnFile = &e
	return nil
}
