package approvals

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/go-webauthn/webauthn/protocol"
	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// PasskeyRule says when an approver must approve with a passkey
// (Config.Passkeys).
type PasskeyRule string

// The values of Config.Passkeys.
const (
	// PasskeysRegistered (the default, ""): an approver who registered a
	// passkey approves only with it, on every request; one who did not
	// approves with the passcode sign-in alone.
	PasskeysRegistered PasskeyRule = ""
	// PasskeysFourEyes: as PasskeysRegistered, and every approval of a
	// request of level four eyes (bank-detail changes, large payments)
	// needs a passkey: an approver without one cannot approve it.
	PasskeysFourEyes PasskeyRule = "four_eyes"
	// PasskeysAll: every approval needs a passkey.
	PasskeysAll PasskeyRule = "all"
)

// SpacePasskeys holds each approver's registered passkeys (a JSON list of
// passkey.Credential) under the approver's name; they never expire.
const SpacePasskeys = "approvals/passkeys"

// spaceCeremonies holds a sign-in's WebAuthn ceremony in progress
// (registration, or the approval of one request), for five minutes.
const spaceCeremonies = "approvals/passkey-ceremonies"

// ActionRegisterPasskey is the action of the receipt the page records
// when an approver registers a passkey (passkey.RegistrationReceipt). Its
// facts name the approver (passkey.approver), the credential ID and public
// key (passkey.credential, passkey.public_key, base64url without padding:
// the COSE key as registered) and the relying party (passkey.rp_id,
// passkey.origin): what `intentplane receipts verify` checks later
// assertions with.
const ActionRegisterPasskey = passkey.ActionRegister

// Errors of a passkey approval.
var (
	// ErrPasskeyRequired: the approver must approve with a passkey
	// (Config.Passkeys) and gave none.
	ErrPasskeyRequired = errors.New("approvals: this approval needs your passkey")
	// ErrPasskey: the passkey assertion given does not verify (wrapping
	// the passkey package's error), or its ceremony is unknown or expired.
	ErrPasskey = errors.New("approvals: passkey assertion refused")
)

// never is the expiry of entries kept for good.
var never = time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)

const ceremonyTTL = 5 * time.Minute

// passkeyUser is an approver as the WebAuthn library sees them.
type passkeyUser struct {
	name  string
	creds []passkey.Credential
}

func (u passkeyUser) WebAuthnID() []byte          { return []byte(u.name) }
func (u passkeyUser) WebAuthnName() string        { return u.name }
func (u passkeyUser) WebAuthnDisplayName() string { return u.name }
func (u passkeyUser) WebAuthnCredentials() []webauthn.Credential {
	out := make([]webauthn.Credential, len(u.creds))
	for i, c := range u.creds {
		out[i] = webauthn.Credential{ID: c.ID, PublicKey: c.PublicKey}
	}
	return out
}

// descriptors lists u's passkeys as the browser is told of them.
func (u passkeyUser) descriptors() []protocol.CredentialDescriptor {
	var out []protocol.CredentialDescriptor
	for _, cr := range u.WebAuthnCredentials() {
		out = append(out, cr.Descriptor())
	}
	return out
}

// setPasskeys sets the relying party from the page's public URL; an
// address the browsers refuse as an RP ID (an IP address) leaves passkeys
// off, which only a rule requiring them makes an error.
func (s *Server) setPasskeys() error {
	switch s.cfg.Passkeys {
	case PasskeysRegistered, PasskeysFourEyes, PasskeysAll:
	default:
		return fmt.Errorf("approvals: Passkeys is %q: want \"\", %q or %q", s.cfg.Passkeys, PasskeysFourEyes, PasskeysAll)
	}
	rp, err := passkey.RPOf(s.base)
	if err == nil {
		err = protocol.ValidateRPID(rp.ID)
	}
	if err == nil {
		s.wa, err = webauthn.New(&webauthn.Config{
			RPID: rp.ID, RPDisplayName: "intentplane approvals", RPOrigins: []string{rp.Origin},
			AuthenticatorSelection: protocol.AuthenticatorSelection{UserVerification: protocol.VerificationRequired, ResidentKey: protocol.ResidentKeyRequirementPreferred},
		})
	}
	if err != nil {
		s.wa = nil
		if s.cfg.Passkeys != PasskeysRegistered {
			return fmt.Errorf("approvals: Passkeys %q needs a page URL that can be a WebAuthn RP ID (a host name, not an IP address): %w", s.cfg.Passkeys, err)
		}
		s.logger.Warn("approval page: passkeys off: the page's URL cannot be a WebAuthn RP ID", "url", s.base, "err", err)
		return nil
	}
	s.rp = rp
	return nil
}

// passkeys returns approver's registered passkeys.
func (s *Server) passkeys(ctx context.Context, approver string) ([]passkey.Credential, error) {
	return Passkeys(ctx, s.st, approver)
}

// passkeyNeeded reports whether approver must approve r with a passkey.
func (s *Server) passkeyNeeded(ctx context.Context, r *request, approver string) (bool, error) {
	switch {
	case s.cfg.Passkeys == PasskeysAll:
		return true, nil
	case s.cfg.Passkeys == PasskeysFourEyes && r.level == intent.LevelFourEyes:
		return true, nil
	}
	creds, err := s.passkeys(ctx, approver)
	return len(creds) > 0, err
}

// ceremony is a WebAuthn ceremony in progress, kept under its sign-in.
type ceremony struct {
	V       int                  `json:"v"`
	Session webauthn.SessionData `json:"session"`
	// For an approval: the request, the operation (or run) hash and the
	// approval ID the challenge was derived from.
	Request    string               `json:"request,omitempty"`
	Operation  intent.OperationHash `json:"operation,omitzero"`
	ApprovalID string               `json:"approval_id,omitempty"`
	// For a removal: the passkey to remove (the approval ID is then the
	// challenge's nonce).
	Remove []byte `json:"remove,omitempty"`
	// For a registration: one of the approver's passkeys confirmed it.
	Confirmed bool `json:"confirmed,omitempty"`
}

func ceremonyKey(c echo.Context, what string) (string, error) {
	ck, err := c.Cookie(sessionCookie)
	if err != nil {
		return "", err
	}
	return sessionKey(ck.Value) + "/" + what, nil
}

// takeCeremony returns the ceremony kept under what for c's sign-in and
// forgets it: each is used once.
func (s *Server) takeCeremony(c echo.Context, what string) (*ceremony, error) {
	key, err := ceremonyKey(c, what)
	if err != nil {
		return nil, err
	}
	ctx := c.Request().Context()
	b, ok, err := s.st.Entry(ctx, spaceCeremonies, key)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, fmt.Errorf("%w: no passkey ceremony in progress (it expires after %s); try again", ErrPasskey, ceremonyTTL)
	}
	if err := s.st.DeleteEntry(ctx, spaceCeremonies, key); err != nil {
		return nil, err
	}
	var cer ceremony
	if err := json.Unmarshal(b, &cer); err != nil || cer.V != recordVersion {
		return nil, fmt.Errorf("%w: ceremony as kept does not read", ErrPasskey)
	}
	return &cer, nil
}

func (s *Server) putCeremony(c echo.Context, what string, cer ceremony) error {
	key, err := ceremonyKey(c, what)
	if err != nil {
		return err
	}
	cer.V = recordVersion
	return s.putJSON(c.Request().Context(), spaceCeremonies, key, cer, s.now().Add(ceremonyTTL))
}

// passkeyOn sets the Content-Security-Policy of a page that runs the
// passkey script: the page's own script and requests to itself, nothing
// else.
func passkeyOn(c echo.Context) {
	c.Response().Header().Set("Content-Security-Policy", contentSecurityPolicy+"; script-src 'self'; connect-src 'self'")
}

func (s *Server) passkeyJS(c echo.Context) error {
	b, err := assets.ReadFile("static/passkey.js")
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", b)
}

type passkeyView struct {
	Session   *session
	CSRF      string
	On        bool // the page can register passkeys
	Rule      string
	Passkeys  []passkeyRow
	Error, OK string
}

type passkeyRow struct{ Name, ID, Registered, LastUsed string }

// passkeyPage lists the signed-in approver's passkeys and offers to
// register one, and to remove one with a passkey's confirmation.
func (s *Server) passkeyPage(c echo.Context) error {
	ok := ""
	switch {
	case c.QueryParam("registered") != "":
		ok = "Your passkey is registered. Approvals now ask for it."
	case c.QueryParam("removed") != "":
		ok = "The passkey is removed: it no longer approves for you."
	}
	return s.showPasskeys(c, http.StatusOK, "", ok)
}

func (s *Server) showPasskeys(c echo.Context, code int, errText, ok string) error {
	ss := sessionOf(c)
	creds, err := s.passkeys(c.Request().Context(), ss.approver)
	if err != nil {
		return err
	}
	v := passkeyView{Session: ss, CSRF: ss.csrf, On: s.wa != nil, Rule: ruleText(s.cfg.Passkeys), Error: errText, OK: ok}
	for _, cr := range creds {
		row := passkeyRow{Name: cr.Name, ID: base64.RawURLEncoding.EncodeToString(cr.ID), Registered: cr.Registered.Format("2006-01-02 15:04 UTC"), LastUsed: "never"}
		if !cr.LastUsed.IsZero() {
			row.LastUsed = cr.LastUsed.Format("2006-01-02 15:04 UTC")
		}
		v.Passkeys = append(v.Passkeys, row)
	}
	if v.On {
		passkeyOn(c)
	}
	return s.page(c, code, "passkeys", v)
}

func ruleText(r PasskeyRule) string {
	switch r {
	case PasskeysAll:
		return "Every approval on this page needs a passkey."
	case PasskeysFourEyes:
		return "Approvals of four-eyes requests (bank-detail changes, large payments) need a passkey; once you register one, all your approvals do."
	}
	return "Once you register a passkey, all your approvals need it; your passcode alone no longer approves."
}

// passkeyRegisterOptions starts a registration: the creation options for
// navigator.credentials.create, as JSON.
func (s *Server) passkeyRegisterOptions(c echo.Context) error {
	if s.wa == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	creds, err := s.passkeys(c.Request().Context(), ss.approver)
	if err != nil {
		return err
	}
	// An approver who has a passkey adds another only with its
	// confirmation: otherwise a stolen passcode would register the
	// thief's passkey and approve with it.
	confirmed := false
	if len(creds) > 0 {
		_, _, err := s.confirmation(c, "add", creds, func(cer *ceremony) []byte { return passkey.AdditionChallenge(ss.approver, cer.ApprovalID) })
		if err != nil {
			s.logger.Warn("approval page: passkey addition not confirmed", "approver", ss.approver, "err", err)
			return c.JSON(http.StatusForbidden, map[string]string{"error": "adding a passkey needs one of yours to confirm it"})
		}
		confirmed = true
	}
	user := passkeyUser{name: ss.approver, creds: creds}
	opts, sd, err := s.wa.BeginRegistration(user, webauthn.WithExclusions(user.descriptors()), webauthn.WithConveyancePreference(protocol.PreferNoAttestation))
	if err != nil {
		return err
	}
	if err := s.putCeremony(c, "register", ceremony{Session: *sd, Confirmed: confirmed}); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, opts)
}

// passkeyRegister finishes a registration: the form's "credential" is the
// browser's response to navigator.credentials.create. The credential is
// kept with the approver's passkeys and recorded in a receipt.
func (s *Server) passkeyRegister(c echo.Context) error {
	if s.wa == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	ctx := c.Request().Context()
	cer, err := s.takeCeremony(c, "register")
	if err != nil {
		return s.showPasskeys(c, http.StatusConflict, "The registration expired; nothing was registered. Try again.", "")
	}
	creds, err := s.passkeys(ctx, ss.approver)
	if err != nil {
		return err
	}
	if len(creds) > 0 && !cer.Confirmed {
		return s.showPasskeys(c, http.StatusForbidden, "Adding a passkey needs one of your passkeys to confirm it; your passcode alone does not add one. Nothing was registered.", "")
	}
	parsed, err := protocol.ParseCredentialCreationResponseBytes([]byte(c.FormValue("credential")))
	var cred *webauthn.Credential
	if err == nil {
		cred, err = s.wa.CreateCredential(passkeyUser{name: ss.approver, creds: creds}, cer.Session, parsed)
	}
	if err != nil || !cred.Flags.UserVerified {
		s.logger.Warn("approval page: passkey registration refused", "approver", ss.approver, "err", err)
		return s.showPasskeys(c, http.StatusBadRequest, "The passkey could not be registered (it did not verify you, or the browser's answer was refused); nothing was registered.", "")
	}
	pk := passkey.Credential{Approver: ss.approver, ID: cred.ID, PublicKey: cred.PublicKey, RP: s.rp, Registered: s.now().UTC(), Name: passkeyName(c.FormValue("name"))}
	if _, err := s.log.Append(ctx, passkey.RegistrationReceipt(pk)); err != nil {
		return fmt.Errorf("approvals: passkey registration not recorded, so not registered: %w", err)
	}
	if err := s.putJSON(ctx, SpacePasskeys, ss.approver, append(creds, pk), never); err != nil {
		return err
	}
	s.logger.Info("approval page: passkey registered", "approver", ss.approver)
	return c.Redirect(http.StatusSeeOther, "/passkeys?registered=1")
}

// passkeyApproveOptions starts the approval of a request with a passkey:
// it draws the approval's ID and returns the request options for
// navigator.credentials.get, whose challenge is passkey.Challenge of the
// operation hash (for a run, of the run of the ticked lines) and that ID.
func (s *Server) passkeyApproveOptions(c echo.Context) error {
	if s.wa == nil {
		return echo.ErrNotFound
	}
	ss := sessionOf(c)
	ctx := c.Request().Context()
	r, err := s.lookup(c)
	if err == nil && !s.approvers[ss.approver].mayDecide(r.op.Owner) {
		err = ErrNotFound
	}
	if err != nil {
		return c.JSON(http.StatusNotFound, map[string]string{"error": "no such request"})
	}
	ticked, err := tickedLines(c, true)
	op := r.hash
	if err == nil && len(r.lines) > 0 {
		var lines []intent.OperationHash
		if lines, _, err = r.chosen(ticked); err == nil {
			op, err = approval.RunHash(r.op.MandateID, lines)
		}
	}
	if err != nil {
		return c.JSON(http.StatusConflict, map[string]string{"error": "tick at least one payment"})
	}
	creds, err := s.passkeys(ctx, ss.approver)
	if err != nil {
		return err
	}
	if len(creds) == 0 {
		return c.JSON(http.StatusConflict, map[string]string{"error": "register a passkey first"})
	}
	return s.beginAssertion(c, passkeyUser{name: ss.approver, creds: creds}, func(aid string) []byte { return passkey.Challenge(op, aid) },
		"approve/"+r.id, ceremony{Request: r.id, Operation: op})
}

// beginAssertion answers the request options for navigator.credentials.get
// over challenge(nonce), a nonce drawn here (cer.ApprovalID: an
// approval's ID, or a removal's or an addition's nonce), allowing any of
// user's passkeys and requiring user verification, and keeps the ceremony
// cer under what.
func (s *Server) beginAssertion(c echo.Context, user passkeyUser, challenge func(nonce string) []byte, what string, cer ceremony) error {
	nonce, err := approval.NewID(s.rand)
	if err != nil {
		return err
	}
	cer.ApprovalID = nonce
	opts, sd, err := s.wa.BeginLogin(user, webauthn.WithChallenge(challenge(nonce)),
		webauthn.WithAllowedCredentials(user.descriptors()), webauthn.WithUserVerification(protocol.VerificationRequired))
	if err != nil {
		return err
	}
	cer.Session = *sd
	if err := s.putCeremony(c, what, cer); err != nil {
		return err
	}
	return c.JSON(http.StatusOK, opts)
}

// passkeyBallot is what the page verified of an approval given with a
// passkey: sign checks the assertion against the operation it signs.
type passkeyBallot struct {
	id        string // the approval's ID, drawn with the challenge
	assertion intent.Assertion
	cred      passkey.Credential
}

// ballotPasskey returns the passkey part of the approval the form posts:
// nil if it carries no assertion.
func (s *Server) ballotPasskey(c echo.Context, id, approver string) (*passkeyBallot, error) {
	raw := c.FormValue("assertion")
	if raw == "" {
		return nil, nil
	}
	if s.wa == nil {
		return nil, fmt.Errorf("%w: passkeys are off on this page", ErrPasskey)
	}
	cer, err := s.takeCeremony(c, "approve/"+id)
	if err != nil {
		return nil, err
	}
	a, err := passkey.Of([]byte(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrPasskey, err)
	}
	creds, err := s.passkeys(c.Request().Context(), approver)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(creds, func(cr passkey.Credential) bool { return string(cr.ID) == string(a.CredentialID) })
	if i < 0 {
		return nil, fmt.Errorf("%w: %w", ErrPasskey, passkey.ErrOtherCredential)
	}
	return &passkeyBallot{id: cer.ApprovalID, assertion: a, cred: creds[i]}, nil
}

// verify checks the ballot's assertion against the approval a about to
// be signed (its operation and ID) and puts the assertion in it.
func (pb *passkeyBallot) verify(a *approval.Approval) error {
	a.ID = pb.id
	if err := passkey.Verify(pb.cred, a.Operation, a.ID, pb.assertion); err != nil {
		return fmt.Errorf("%w: %w", ErrPasskey, err)
	}
	a.Channel, a.Passkey = receipt.ChannelPasskey, pb.assertion
	return nil
}

// passkeyView sets whether the request page asks the signed-in approver
// for a passkey, and then allows the page its script.
func (s *Server) passkeyView(c echo.Context, r *request, v *requestView) error {
	ctx := c.Request().Context()
	creds, err := s.passkeys(ctx, v.Session.approver)
	if err != nil {
		return err
	}
	need, err := s.passkeyNeeded(ctx, r, v.Session.approver)
	if err != nil {
		return err
	}
	v.Passkey = s.wa != nil && len(creds) > 0
	v.PasskeyNeeded = need && !v.Passkey
	if v.Passkey {
		passkeyOn(c)
	}
	return nil
}

// passkeyName returns the label an approver gave a passkey: trimmed, its
// control characters dropped, cut to passkey.MaxNameLen bytes on a
// character boundary.
func passkeyName(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, s))
	for len(s) > passkey.MaxNameLen {
		_, n := utf8.DecodeLastRuneInString(s)
		s = s[:len(s)-n]
	}
	return s
}
