package approvals

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/approvals/passkey"
)

// ErrNoPasskey is the error of a revocation of a passkey the approver
// does not have (any more).
var ErrNoPasskey = errors.New("approvals: no such passkey")

// Passkeys returns the passkeys approver registered on the page whose
// store is st (SpacePasskeys), in the order registered; none is not an
// error. An entry that does not read is an error naming the approver.
func Passkeys(ctx context.Context, st Store, approver string) ([]passkey.Credential, error) {
	creds, _, err := keptPasskeys(ctx, st, approver)
	return creds, err
}

// keptPasskeys returns approver's passkeys and the entry as kept (nil:
// none), for a compare-and-swap.
func keptPasskeys(ctx context.Context, st Store, approver string) ([]passkey.Credential, []byte, error) {
	b, ok, err := st.Entry(ctx, SpacePasskeys, approver)
	if err != nil || !ok {
		return nil, nil, err
	}
	var creds []passkey.Credential
	if err := json.Unmarshal(b, &creds); err != nil {
		return nil, nil, fmt.Errorf("approvals: passkeys of %s as kept: %w", approver, err)
	}
	return creds, b, nil
}

// RevokePasskey ends rev.Approver's passkey rev.ID: it records rev's
// receipt (passkey.RevocationReceipt) through log, then removes the
// passkey from st, where the page reads it, in one compare-and-swap, so
// that a registration or removal by another process at the same time is
// not lost. The receipt comes first: a revocation that could not be
// recorded removes nothing, and one recorded whose removal failed is
// refused by `intentplane receipts verify` all the same, and can be run
// again. It returns an error wrapping ErrNoPasskey when the approver has
// no passkey of that ID.
//
// Once an approver has no passkey left, their approvals need one only
// where Config.Passkeys says so (under the default rule, the passcode
// approves again until they register a new one).
func RevokePasskey(ctx context.Context, st Store, log Log, rev passkey.Revocation) error {
	creds, _, err := keptPasskeys(ctx, st, rev.Approver)
	if err != nil {
		return err
	}
	if !slices.ContainsFunc(creds, func(c passkey.Credential) bool { return bytes.Equal(c.ID, rev.ID) }) {
		return fmt.Errorf("%w: %s has no passkey %s", ErrNoPasskey, rev.Approver, base64.RawURLEncoding.EncodeToString(rev.ID))
	}
	if _, err := log.Append(ctx, passkey.RevocationReceipt(rev)); err != nil {
		return fmt.Errorf("approvals: passkey revocation not recorded, so not revoked: %w", err)
	}
	_, err = updatePasskeys(ctx, st, rev.Approver, func(creds []passkey.Credential) []passkey.Credential {
		return slices.DeleteFunc(creds, func(c passkey.Credential) bool { return bytes.Equal(c.ID, rev.ID) })
	})
	if err != nil {
		return fmt.Errorf("approvals: passkey revocation recorded, but not removed from the store (run it again): %w", err)
	}
	return nil
}

// updatePasskeys replaces approver's passkeys kept in st with what change
// makes of them, by compare-and-swap, trying again (up to ten times) when
// another process changed them in between. It returns the passkeys
// written; none kept is not an error (nothing is written).
func updatePasskeys(ctx context.Context, st Store, approver string, change func([]passkey.Credential) []passkey.Credential) ([]passkey.Credential, error) {
	for range 10 {
		creds, old, err := keptPasskeys(ctx, st, approver)
		if err != nil || old == nil {
			return nil, err
		}
		creds = change(creds)
		b, err := json.Marshal(creds)
		if err != nil {
			return nil, err
		}
		swapped, err := st.SwapEntry(ctx, SpacePasskeys, approver, old, b, never)
		if err != nil || swapped {
			return creds, err
		}
	}
	return nil, errors.New("approvals: the passkeys kept changed under the update ten times")
}

// touchPasskey notes that approver's passkey id approved at at
// (Credential.LastUsed), best effort: a failure is logged, and the
// approval stands.
func (s *Server) touchPasskey(ctx context.Context, approver string, id []byte, at time.Time) {
	_, err := updatePasskeys(ctx, s.st, approver, func(creds []passkey.Credential) []passkey.Credential {
		for i := range creds {
			if bytes.Equal(creds[i].ID, id) {
				creds[i].LastUsed = at.UTC()
			}
		}
		return creds
	})
	if err != nil {
		s.logger.Warn("approval page: passkey's last use not kept", "approver", approver, "err", err)
	}
}

// passkeyRemoveOptions starts the removal of the signed-in approver's
// passkey the form's "id" names (base64url): the request options for
// navigator.credentials.get, allowing any of the approver's passkeys,
// whose challenge is passkey.RemovalChallenge of that ID and a fresh
// nonce.
func (s *Server) passkeyRemoveOptions(c echo.Context) error {
	if s.wa == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	creds, err := s.passkeys(c.Request().Context(), ss.approver)
	if err != nil {
		return err
	}
	id, err := base64.RawURLEncoding.DecodeString(c.FormValue("id"))
	if err != nil || !slices.ContainsFunc(creds, func(cr passkey.Credential) bool { return bytes.Equal(cr.ID, id) }) {
		return c.JSON(http.StatusNotFound, map[string]string{"error": "no such passkey"})
	}
	return s.beginAssertion(c, passkeyUser{name: ss.approver, creds: creds}, func(nonce string) []byte { return passkey.RemovalChallenge(id, nonce) },
		"remove", ceremony{Remove: id})
}

// passkeyRemove finishes a removal: the form's "assertion" is the
// browser's answer to the challenge passkeyRemoveOptions drew, by any of
// the approver's passkeys. The passcode alone never removes a passkey:
// under the default rule that would let a stolen passcode remove the
// passkey and approve without it. An approver who lost their only passkey
// asks an operator (`intentplane approvals passkeys revoke`).
func (s *Server) passkeyRemove(c echo.Context) error {
	if s.wa == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	ctx := c.Request().Context()
	creds, err := s.passkeys(ctx, ss.approver)
	if err != nil {
		return err
	}
	by, cer, err := s.confirmation(c, "remove", creds, func(cer *ceremony) []byte { return passkey.RemovalChallenge(cer.Remove, cer.ApprovalID) })
	switch {
	case errors.Is(err, errNoAssertion):
		return s.showPasskeys(c, http.StatusForbidden, "Removing a passkey needs one of your passkeys to confirm it; your passcode alone does not remove one. Nothing was removed. If you lost your only passkey, ask an operator to revoke it.", "")
	case errors.Is(err, errCeremony):
		return s.showPasskeys(c, http.StatusConflict, "The removal expired; nothing was removed. Try again.", "")
	case err != nil:
		s.logger.Warn("approval page: passkey removal refused", "approver", ss.approver, "err", err)
		return s.showPasskeys(c, http.StatusForbidden, "Your passkey's answer did not verify; nothing was removed.", "")
	}
	id, err := base64.RawURLEncoding.DecodeString(c.FormValue("id"))
	if err != nil || !bytes.Equal(id, cer.Remove) {
		return s.showPasskeys(c, http.StatusBadRequest, "Your passkey confirmed the removal of another passkey; nothing was removed. Try again.", "")
	}
	err = RevokePasskey(ctx, s.st, s.log, passkey.Revocation{Approver: ss.approver, ID: id, At: s.now().UTC(), By: ss.approver, Means: passkey.MeansPage, ConfirmedWith: by.ID})
	if errors.Is(err, ErrNoPasskey) {
		return s.showPasskeys(c, http.StatusNotFound, "That passkey is already removed.", "")
	}
	if err != nil {
		return err
	}
	s.logger.Info("approval page: passkey removed", "approver", ss.approver)
	return c.Redirect(http.StatusSeeOther, "/passkeys?removed=1")
}

// Errors of confirmation.
var (
	errNoAssertion = errors.New("approvals: no passkey assertion given")
	errCeremony    = errors.New("approvals: no passkey ceremony in progress")
)

// confirmation checks the form's "assertion": one of creds (the signed-in
// approver's passkeys) must have answered the challenge of the ceremony
// kept under what (challenge computes it from the ceremony). It returns
// the passkey that answered and the ceremony, or an error wrapping
// errNoAssertion (the form has none), errCeremony (none in progress, or
// it expired) or the passkey package's.
func (s *Server) confirmation(c echo.Context, what string, creds []passkey.Credential, challenge func(*ceremony) []byte) (passkey.Credential, *ceremony, error) {
	raw := c.FormValue("assertion")
	if raw == "" {
		return passkey.Credential{}, nil, errNoAssertion
	}
	cer, err := s.takeCeremony(c, what)
	if err != nil {
		return passkey.Credential{}, nil, fmt.Errorf("%w: %w", errCeremony, err)
	}
	a, err := passkey.Of([]byte(raw))
	if err != nil {
		return passkey.Credential{}, nil, err
	}
	i := slices.IndexFunc(creds, func(cr passkey.Credential) bool { return bytes.Equal(cr.ID, a.CredentialID) })
	if i < 0 {
		return passkey.Credential{}, nil, passkey.ErrOtherCredential
	}
	if err := passkey.VerifyChallenge(creds[i], challenge(cer), a); err != nil {
		return passkey.Credential{}, nil, err
	}
	return creds[i], cer, nil
}

// passkeyAddOptions starts the confirmation, by one of the signed-in
// approver's passkeys, of the registration of another: the request
// options for navigator.credentials.get over passkey.AdditionChallenge.
// An approver without a passkey registers without it.
func (s *Server) passkeyAddOptions(c echo.Context) error {
	if s.wa == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	creds, err := s.passkeys(c.Request().Context(), ss.approver)
	if err != nil {
		return err
	}
	if len(creds) == 0 {
		return c.JSON(http.StatusConflict, map[string]string{"error": "you have no passkey to confirm with"})
	}
	return s.beginAssertion(c, passkeyUser{name: ss.approver, creds: creds}, func(nonce string) []byte { return passkey.AdditionChallenge(ss.approver, nonce) },
		"add", ceremony{})
}
