package ap

import (
	"context"
	"errors"
	"fmt"

	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/erp"
)

// CallbackCheckError is a call-back that CheckCallback refuses, with the
// words a person recording it is shown.
type CallbackCheckError struct {
	// Field names what is at fault: "vendor", "phone" or "iban".
	Field string
	// Text says, for the person recording, why it was refused and what to
	// do; it carries no internal detail.
	Text string
	// Err is the underlying error, if any (the IBAN's); never shown.
	Err error
}

func (e *CallbackCheckError) Error() string {
	return "ap: call-back refused (" + e.Field + "): " + e.Text
}

func (e *CallbackCheckError) Unwrap() error { return e.Err }

// CheckCallback checks a call-back a person records before a bank-detail
// change, against the company's records in src: vendor must be one of the
// company's vendors (by ID, or by a name, as VendorName normalizes it, that
// only one of them has), dialled must be that vendor's phone on file (as
// SamePhone compares), and iban a valid IBAN. It returns the vendor as on
// file and the IBAN normalized (electronic format), recording nothing. It
// returns a *CallbackCheckError for a call-back that cannot be recorded,
// and any other error when src could not be read.
func CheckCallback(ctx context.Context, src erp.Reader, company, vendor, dialled, iban string) (erp.Vendor, string, error) {
	v, err := callbackVendor(ctx, src, company, vendor)
	if errors.Is(err, resolve.ErrNoMatch) {
		return erp.Vendor{}, "", &CallbackCheckError{Field: "vendor", Text: fmt.Sprintf(
			"No vendor of %s has this ID or name in the ERP (or several share the name: use the ID). Nothing was recorded.", company)}
	}
	if err != nil {
		return erp.Vendor{}, "", err
	}
	if v.Phone == "" {
		return erp.Vendor{}, "", &CallbackCheckError{Field: "vendor", Text: "This vendor has no phone number on file in the ERP, so no call-back can be made to it. " +
			"The accounting team adds the vendor's known number in the ERP first. Nothing was recorded."}
	}
	if !SamePhone(dialled, v.Phone) {
		return erp.Vendor{}, "", &CallbackCheckError{Field: "phone", Text: "The number you dialled is not this vendor's phone number on file in the ERP. " +
			"Call the number on file, never one from the message that announced the change, and record that call. Nothing was recorded."}
	}
	n, err := normalize.IBAN(iban)
	if err != nil {
		return erp.Vendor{}, "", &CallbackCheckError{Field: "iban", Text: "This is not a valid IBAN (its length or check digits are wrong, or it has look-alike characters). " +
			"Ask the vendor to read it again. Nothing was recorded.", Err: err}
	}
	return v, n, nil
}

// callbackVendor finds the company's vendor named by s, as the pack does.
func callbackVendor(ctx context.Context, src erp.Reader, company, s string) (erp.Vendor, error) {
	if vs, err := src.Vendors(ctx, company, erp.VendorQuery{ID: s}); err != nil {
		return erp.Vendor{}, err
	} else if len(vs) == 1 {
		return vs[0], nil
	}
	name, err := VendorName(s)
	if err != nil {
		return erp.Vendor{}, resolve.ErrNoMatch
	}
	return FindVendor(ctx, src, company, name)
}

// VendorOnFile returns the company's vendor named by vendor (its ID in the
// ERP, or its name as the pack resolves names), for a person to see the
// phone number on file before calling back. It returns a
// *CallbackCheckError (Field "vendor") when no single vendor matches or
// the vendor has no phone on file, and src's error when the ERP cannot be
// read.
func VendorOnFile(ctx context.Context, src erp.Reader, company, vendor string) (erp.Vendor, error) {
	v, err := callbackVendor(ctx, src, company, vendor)
	if errors.Is(err, resolve.ErrNoMatch) {
		return erp.Vendor{}, &CallbackCheckError{Field: "vendor", Text: fmt.Sprintf(
			"No vendor of %s has this ID or name in the ERP (or several share the name: use the ID).", company)}
	}
	if err != nil {
		return erp.Vendor{}, err
	}
	if v.Phone == "" {
		return erp.Vendor{}, &CallbackCheckError{Field: "vendor", Text: "This vendor has no phone number on file in the ERP, so no call-back can be made to it. " +
			"The accounting team adds the vendor's known number in the ERP first."}
	}
	return v, nil
}
