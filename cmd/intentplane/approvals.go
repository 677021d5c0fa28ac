package main

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/internal/cli"
)

// approvalsCmd administers what the approval page keeps in the store.
type approvalsCmd struct {
	Passkeys approvalsPasskeysCmd `cmd:"" help:"List and revoke approvers' passkeys (a lost or stolen device)."`
}

type approvalsPasskeysCmd struct {
	List   passkeysListCmd   `cmd:"" help:"List an approver's passkeys as the approval page keeps them."`
	Revoke passkeysRevokeCmd `cmd:"" help:"Revoke an approver's passkey (a lost, stolen or cloned device), with a receipt: it no longer approves, and receipts verify refuses an approval made with it afterwards."`
}

// busyApprovals is what to do about an embedded store file a gateway
// holds.
const busyApprovals = "stop the intentplane-mcp that uses it, run the command, and start it again: the page reads passkeys from the store on each request"

// approvalStore is what the approvals commands need of a store: the
// page's entries and the receipt log.
type approvalStore interface {
	approvals.Store
	approvals.Log
	Close() error
}

func openApprovalStore(e *env, spec string) (approvalStore, error) {
	src, err := openReceiptStore(e.ctx, spec, busyApprovals)
	if err != nil {
		return nil, err
	}
	st, ok := src.(approvalStore)
	if !ok {
		src.Close()
		return nil, fmt.Errorf("%s is not a store the approval page can use", redactDSN(spec))
	}
	return st, nil
}

// openPasskeys opens the store spec names and reads approver's passkeys
// from it; the caller closes the store.
func openPasskeys(e *env, spec, approver string) (approvalStore, []passkey.Credential, error) {
	st, err := openApprovalStore(e, spec)
	if err != nil {
		return nil, nil, err
	}
	creds, err := approvals.Passkeys(e.ctx, st, approver)
	if err != nil {
		st.Close()
		return nil, nil, err
	}
	return st, creds, nil
}

type passkeysListCmd struct {
	Store    string `required:"" help:"The store the approval page uses: postgres://... (PostgreSQL) or a file path, optionally embedded:PATH (the embedded store: stop intentplane-mcp first, start it again after)."`
	Approver string `required:"" help:"The approver's name, as in [approvals] of intentplane-mcp's configuration."`
	JSON     bool   `name:"json" help:"Print each passkey as one JSON object per line, as the page keeps it (the format of receipts verify --passkeys)."`
}

// Run prints the approver's passkeys, one a line: its ID (base64url, as
// revoke takes it), when it was registered and last used (as the page
// noted it), its relying party's origin and the approver's label for it.
func (c *passkeysListCmd) Run(e *env) error {
	st, creds, err := openPasskeys(e, c.Store, c.Approver)
	if err != nil {
		return err
	}
	defer st.Close()
	if len(creds) == 0 {
		fmt.Fprintf(e.stderr, "%s has no passkey\n", c.Approver)
	}
	for _, cr := range creds {
		if c.JSON {
			b, err := json.Marshal(cr)
			if err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "%s\n", b)
			continue
		}
		used := "never"
		if !cr.LastUsed.IsZero() {
			used = cr.LastUsed.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(e.stdout, "%s  registered %s  last used %s  at %s  %q\n", base64.RawURLEncoding.EncodeToString(cr.ID), cr.Registered.UTC().Format(time.RFC3339), used, cr.RP.Origin, cr.Name)
	}
	return nil
}

type passkeysRevokeCmd struct {
	Store    string `required:"" help:"The store the approval page uses: postgres://... (PostgreSQL) or a file path, optionally embedded:PATH (the embedded store: stop intentplane-mcp first, start it again after)."`
	Approver string `required:"" help:"The approver's name."`
	ID       string `name:"id" help:"The passkey's credential ID, base64url, as list prints it."`
	All      bool   `help:"Revoke every passkey of the approver (the device is lost, and which passkey it held is not known)."`
	By       string `required:"" help:"Who revokes: your name, recorded in the receipt."`
	Reason   string `help:"Why, recorded in the receipt (e.g. \"phone lost, reported by phone 2026-12-08\")."`
}

// Run revokes the passkey --id (or every one, --all) of the approver, each
// with a receipt (approvals.RevokePasskey), and prints one line each.
func (c *passkeysRevokeCmd) Run(e *env) error {
	if (c.ID == "") == !c.All {
		return &cli.ExitError{Code: 2, Msg: "approvals passkeys revoke: give --id CREDID or --all"}
	}
	var id []byte
	if c.ID != "" {
		var err error
		if id, err = base64.RawURLEncoding.DecodeString(c.ID); err != nil || len(id) == 0 {
			return &cli.ExitError{Code: 2, Msg: fmt.Sprintf("approvals passkeys revoke: --id %q is not a credential ID (base64url without padding, as list prints it)", c.ID)}
		}
	}
	st, creds, err := openPasskeys(e, c.Store, c.Approver)
	if err != nil {
		return err
	}
	defer st.Close()
	ids := [][]byte{id}
	if c.All {
		ids = nil
		for _, cr := range creds {
			ids = append(ids, cr.ID)
		}
		if len(ids) == 0 {
			return fmt.Errorf("%w: %s has none", approvals.ErrNoPasskey, c.Approver)
		}
	}
	for _, id := range ids {
		rev := passkey.Revocation{Approver: c.Approver, ID: id, At: time.Now().UTC(), By: c.By, Means: passkey.MeansOperator, Reason: c.Reason}
		if err := approvals.RevokePasskey(e.ctx, st, st, rev); err != nil {
			return err
		}
		fmt.Fprintf(e.stdout, "revoked: passkey %s of %s (receipt recorded)\n", base64.RawURLEncoding.EncodeToString(id), c.Approver)
	}
	if left, err := approvals.Passkeys(e.ctx, st, c.Approver); err == nil && len(left) == 0 {
		fmt.Fprintf(e.stdout, "%s has no passkey left: under the default rule they approve with the passcode until they register a new one (passkeys = \"all\" or \"four_eyes\" keep requiring one)\n", c.Approver)
	}
	return nil
}
