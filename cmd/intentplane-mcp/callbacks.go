package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/erp"
)

// callbackBook joins the approval page's call-back form to the ap pack: the
// page records call-backs into it (approvals.CallbackSink), and the pack
// reads them back (ap.Callbacks) when the agent asks for a bank-detail
// change. It checks each call-back against the ERP the pack is mounted on.
// Call-backs are held in memory: they last as long as the process, and a
// change needs a fresh one anyway (ap.Config.CallbackValidity).
type callbackBook struct {
	mem ap.CallbackMem
	src erp.Reader // the ap pack's ERP; nil until the pack is mounted
}

var (
	_ approvals.CallbackSink = (*callbackBook)(nil)
	_ ap.Callbacks           = (*callbackBook)(nil)
)

// forPack remembers src, the ERP of the ap pack being mounted, and returns
// the call-backs the pack reads.
func (b *callbackBook) forPack(src erp.Reader) ap.Callbacks {
	b.src = src
	return b
}

// sink returns the page's call-back sink, or nil when no ap pack is
// mounted (the page then has no call-back form). A nil book has none.
func (b *callbackBook) sink() approvals.CallbackSink {
	if b == nil || b.src == nil {
		return nil
	}
	return b
}

// Callback implements ap.Callbacks.
func (b *callbackBook) Callback(ctx context.Context, company, number string) (ap.Callback, error) {
	return b.mem.Callback(ctx, company, number)
}

// CheckCallback implements approvals.CallbackSink: the vendor must be one of
// the company's vendors in the ERP (by ID, or by a name only one vendor
// has), the number dialled its phone on file, and the IBAN valid.
func (b *callbackBook) CheckCallback(ctx context.Context, e approvals.CallbackEntry) (approvals.CallbackEntry, error) {
	company := string(e.Owner)
	v, err := b.vendor(ctx, company, e.Vendor)
	if errors.Is(err, resolve.ErrNoMatch) {
		return e, &approvals.CallbackError{Field: "vendor", Text: fmt.Sprintf(
			"No vendor of %s has this ID or name in the ERP (or several share the name: use the ID). Nothing was recorded.", company)}
	}
	if err != nil {
		return e, err
	}
	if v.Phone == "" {
		return e, &approvals.CallbackError{Field: "vendor", Text: "This vendor has no phone number on file in the ERP, so no call-back can be made to it. " +
			"The accounting team adds the vendor's known number in the ERP first. Nothing was recorded."}
	}
	if !ap.SamePhone(e.Phone, v.Phone) {
		return e, &approvals.CallbackError{Field: "phone", Text: "The number you dialled is not this vendor's phone number on file in the ERP. " +
			"Call the number on file, never one from the message that announced the change, and record that call. Nothing was recorded."}
	}
	n, err := normalize.IBAN(e.IBAN)
	if err != nil {
		return e, &approvals.CallbackError{Field: "iban", Text: "This is not a valid IBAN (its length or check digits are wrong, or it has look-alike characters). " +
			"Ask the vendor to read it again. Nothing was recorded.", Err: err}
	}
	e.Vendor, e.VendorName, e.IBAN = v.ID, v.Name, n
	return e, nil
}

// vendor finds the company's vendor named by s, as the pack does.
func (b *callbackBook) vendor(ctx context.Context, company, s string) (erp.Vendor, error) {
	if vs, err := b.src.Vendors(ctx, company, erp.VendorQuery{ID: s}); err != nil {
		return erp.Vendor{}, err
	} else if len(vs) == 1 {
		return vs[0], nil
	}
	name, err := ap.VendorName(s)
	if err != nil {
		return erp.Vendor{}, resolve.ErrNoMatch
	}
	return ap.FindVendor(ctx, b.src, company, name)
}

// RecordCallback implements approvals.CallbackSink.
func (b *callbackBook) RecordCallback(ctx context.Context, e approvals.CallbackEntry) error {
	return b.mem.Record(ctx, ap.Callback{
		ID: e.ID, Company: string(e.Owner), Vendor: e.Vendor, Number: e.IBAN,
		Phone: e.Phone, CalledBy: e.CalledBy, At: e.At,
	})
}
