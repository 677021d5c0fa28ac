package main

import (
	"context"
	"errors"

	"github.com/intentplane/intentplane/ap"
	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/erp"
)

// callbackBook joins the approval page's call-back form to the ap pack: the
// page records call-backs into it (approvals.CallbackSink), and the pack
// reads them back (ap.Callbacks) when the agent asks for a bank-detail
// change. It checks each call-back against the ERP the pack is mounted on,
// and keeps them in the gateway's store (ap.StoredCallbacks), so that a
// restart, or another replica sharing the store, still has them; a change
// needs a fresh one anyway (ap.Config.CallbackValidity).
type callbackBook struct {
	kept ap.StoredCallbacks // its Store is set once the store is open
	src  erp.Reader         // the ap pack's ERP; nil until the pack is mounted
}

var (
	_ approvals.CallbackSink   = (*callbackBook)(nil)
	_ approvals.PhoneDirectory = (*callbackBook)(nil)
	_ ap.Callbacks             = (*callbackBook)(nil)
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
	return b.kept.Callback(ctx, company, number)
}

// CheckCallback implements approvals.CallbackSink with ap.CheckCallback
// over the pack's ERP; its refusals become the page's.
func (b *callbackBook) CheckCallback(ctx context.Context, e approvals.CallbackEntry) (approvals.CallbackEntry, error) {
	v, iban, err := ap.CheckCallback(ctx, b.src, string(e.Owner), e.Vendor, e.Phone, e.IBAN)
	var ce *ap.CallbackCheckError
	if errors.As(err, &ce) {
		return e, &approvals.CallbackError{Field: ce.Field, Text: ce.Text, Err: err}
	}
	if err != nil {
		return e, err
	}
	e.Vendor, e.VendorName, e.IBAN = v.ID, v.Name, iban
	return e, nil
}

// RecordCallback implements approvals.CallbackSink.
func (b *callbackBook) RecordCallback(ctx context.Context, e approvals.CallbackEntry) error {
	return b.kept.Record(ctx, ap.Callback{
		ID: e.ID, Company: string(e.Owner), Vendor: e.Vendor, Number: e.IBAN,
		Phone: e.Phone, CalledBy: e.CalledBy, At: e.At,
	})
}

// PhoneOnFile implements approvals.PhoneDirectory with ap.VendorOnFile
// over the pack's ERP.
func (b *callbackBook) PhoneOnFile(ctx context.Context, owner intent.Owner, vendor string) (approvals.CallbackEntry, error) {
	v, err := ap.VendorOnFile(ctx, b.src, string(owner), vendor)
	var ce *ap.CallbackCheckError
	if errors.As(err, &ce) {
		return approvals.CallbackEntry{}, &approvals.CallbackError{Field: ce.Field, Text: ce.Text, Err: err}
	}
	if err != nil {
		return approvals.CallbackEntry{}, err
	}
	return approvals.CallbackEntry{Owner: owner, Vendor: v.ID, VendorName: v.Name, Phone: v.Phone}, nil
}
