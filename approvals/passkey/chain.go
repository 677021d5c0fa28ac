package passkey

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// ActionRegister is the action of the receipt the approval page records
// when an approver registers a passkey (see RegistrationReceipt).
const ActionRegister intent.Action = "approvals.register_passkey"

// ActionRevoke is the action of the receipt of a passkey's removal by
// its approver on the page, or its revocation by an operator (see
// RevocationReceipt).
const ActionRevoke intent.Action = "approvals.revoke_passkey"

// The facts of a registration's and a revocation's receipts.
const (
	factApprover   = "passkey.approver"
	factCredential = "passkey.credential" // base64url, no padding
	factPublicKey  = "passkey.public_key" // base64url, no padding: the COSE key
	factRPID       = "passkey.rp_id"
	factOrigin     = "passkey.origin"
	factBy         = "passkey.revoked_by"
	factMeans      = "passkey.means"
	factConfirmed  = "passkey.confirmed_with" // base64url, no padding
	factReason     = "passkey.reason"
	factName       = "passkey.name"
)

// The means of a revocation (Revocation.Means).
const (
	// MeansPage: the approver removed it on the approval page, confirming
	// with a passkey of theirs (Revocation.ConfirmedWith), verified by the
	// page.
	MeansPage = "page_passkey"
	// MeansOperator: an operator revoked it with `intentplane approvals
	// passkeys revoke`, on the store (a lost or stolen device).
	MeansOperator = "operator_cli"
)

// Revocation is the end of a registered passkey: from At on, no assertion
// by it approves.
type Revocation struct {
	// Approver is the approver who registered it.
	Approver string
	// ID is the credential's raw ID.
	ID []byte
	// At is when it was revoked, UTC.
	At time.Time
	// By names who revoked it: the approver (MeansPage) or the operator
	// (MeansOperator), as they gave their name.
	By string
	// Means is MeansPage or MeansOperator.
	Means string
	// ConfirmedWith is, for MeansPage, the raw ID of the passkey whose
	// assertion confirmed the removal (the one removed, or another of the
	// approver's); nil otherwise.
	ConfirmedWith []byte
	// Reason is the operator's reason, free text; may be empty.
	Reason string
}

// RevocationReceipt is the receipt of rev: action ActionRevoke, at
// rev.At, in the chain of no owner, its facts naming the approver, the
// credential (base64url without padding), who revoked it, by which means
// (MeansPage or MeansOperator), the passkey that confirmed a removal on
// the page and the reason given. `intentplane receipts verify` refuses an
// assertion by that credential made at or after rev.At.
func RevocationReceipt(rev Revocation) receipt.Receipt {
	b64 := base64.RawURLEncoding.EncodeToString
	msg := fmt.Sprintf("Passkey %s of %s revoked by operator %s.", b64(rev.ID), rev.Approver, rev.By)
	if rev.Means == MeansPage {
		msg = fmt.Sprintf("Passkey %s removed by %s on the approval page, confirmed with passkey %s.", b64(rev.ID), rev.Approver, b64(rev.ConfirmedWith))
	}
	facts := map[string]intent.Value{
		factApprover: intent.Str(rev.Approver), factCredential: intent.Str(b64(rev.ID)),
		factBy: intent.Str(rev.By), factMeans: intent.Str(rev.Means),
	}
	if len(rev.ConfirmedWith) > 0 {
		facts[factConfirmed] = intent.Str(b64(rev.ConfirmedWith))
	}
	if rev.Reason != "" {
		facts[factReason] = intent.Str(rev.Reason)
	}
	return receipt.Receipt{Time: rev.At, Action: ActionRevoke, Verdict: intent.Allow, Result: receipt.ResultExecuted, Message: msg, Facts: facts}
}

// revoked returns the revocation r records, or false if r is not one; an
// error for a revocation whose facts do not read.
func revoked(r *receipt.Receipt) (Revocation, bool, error) {
	if r.Action != ActionRevoke || r.Result != receipt.ResultExecuted {
		return Revocation{}, false, nil
	}
	rev := Revocation{Approver: r.Facts[factApprover].Str, At: r.Time, By: r.Facts[factBy].Str, Means: r.Facts[factMeans].Str, Reason: r.Facts[factReason].Str}
	var err error
	rev.ID, err = base64.RawURLEncoding.DecodeString(r.Facts[factCredential].Str)
	if err != nil || rev.Approver == "" || len(rev.ID) == 0 {
		return rev, true, fmt.Errorf("revocation receipt %s/%d: facts do not name an approver and a credential", ownerText(r.Owner), r.Seq)
	}
	return rev, true, nil
}

// RegistrationReceipt is the receipt of cred's registration: action
// ActionRegister, at cred.Registered, in the chain of no owner, its facts
// naming the approver, the credential ID and public key (base64url
// without padding), the relying party and the approver's label for it
// (passkey.name, when given), so that an auditor finds the
// key every later assertion of the approver is checked with.
func RegistrationReceipt(cred Credential) receipt.Receipt {
	b64 := base64.RawURLEncoding.EncodeToString
	facts := map[string]intent.Value{
		factApprover: intent.Str(cred.Approver), factCredential: intent.Str(b64(cred.ID)),
		factPublicKey: intent.Str(b64(cred.PublicKey)), factRPID: intent.Str(cred.RP.ID), factOrigin: intent.Str(cred.RP.Origin),
	}
	if cred.Name != "" {
		facts[factName] = intent.Str(cred.Name)
	}
	return receipt.Receipt{
		Time: cred.Registered, Action: ActionRegister, Verdict: intent.Allow, Result: receipt.ResultExecuted,
		Message: fmt.Sprintf("Passkey %s registered by %s on the approval page at %s.", b64(cred.ID), cred.Approver, cred.RP.Origin),
		Facts:   facts,
	}
}

// registered returns the credential r registers, or false if r is not a
// registration; an error for a registration whose facts do not read.
func registered(r *receipt.Receipt) (Credential, bool, error) {
	if r.Action != ActionRegister || r.Result != receipt.ResultExecuted {
		return Credential{}, false, nil
	}
	c := Credential{Approver: r.Facts[factApprover].Str, RP: RP{ID: r.Facts[factRPID].Str, Origin: r.Facts[factOrigin].Str}, Registered: r.Time}
	var err1, err2 error
	c.ID, err1 = base64.RawURLEncoding.DecodeString(r.Facts[factCredential].Str)
	c.PublicKey, err2 = base64.RawURLEncoding.DecodeString(r.Facts[factPublicKey].Str)
	if err := errors.Join(err1, err2); err != nil || c.Approver == "" || len(c.ID) == 0 || len(c.PublicKey) == 0 {
		return c, true, fmt.Errorf("registration receipt %s/%d: facts do not name an approver, a credential and a key", r.Owner, r.Seq)
	}
	return c, true, nil
}

// ReadCredentials reads passkeys as the approval page keeps them, one
// JSON object (Credential) per line, for receipts whose registration is
// not in the chain checked (an export of a part of it). Blank lines are
// skipped; a line that does not read is an error naming it.
func ReadCredentials(r io.Reader) ([]Credential, error) {
	var out []Credential
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var c Credential
		if err := json.Unmarshal(line, &c); err != nil || c.Approver == "" || len(c.ID) == 0 || len(c.PublicKey) == 0 {
			return nil, fmt.Errorf("passkey: credentials line %d is not a credential (approver, id, public_key, rp)", n)
		}
		out = append(out, c)
	}
	return out, sc.Err()
}

// CheckError is an approval of a receipt whose passkey evidence does not
// hold.
type CheckError struct {
	Owner    intent.Owner
	Seq      uint64
	Approval string // the approval's ID
	Approver string
	Err      error
}

func (p CheckError) Error() string {
	return fmt.Sprintf("receipt %s/%d: approval %s by %s: %v", ownerText(p.Owner), p.Seq, p.Approval, p.Approver, p.Err)
}

func ownerText(o intent.Owner) string {
	if o == "" {
		return "(no owner)"
	}
	return string(o)
}

// Errors of Check, besides Verify's.
var (
	// ErrUnregistered: no credential of the assertion's ID registered by
	// the approver before the receipt, in the chain or the file given.
	ErrUnregistered = errors.New("passkey: credential not registered by this approver before the receipt")
	// ErrNoAssertion: the channel says passkey and there is no assertion,
	// or there is an assertion and the channel says otherwise.
	ErrNoAssertion = errors.New("passkey: channel and assertion disagree")
	// ErrRevoked: the credential was revoked (a revocation receipt in the
	// receipts checked) before the approval was given.
	ErrRevoked = errors.New("passkey: credential revoked before the approval")
)

// Check re-checks every passkey approval the receipts rs hold (the
// evidence of channel "passkey"): its assertion must verify (Verify) for
// the operation of the receipt (or the run the evidence names) and the
// approval's ID, under a credential its approver registered in rs no
// later than the approval, or one of known, and that no revocation in rs
// (RevocationReceipt) ended between its registration and the approval.
// The approval's time is its IssuedAt (when the page verified the
// assertion and signed), or the receipt's time when that is not recorded.
// It returns the number of assertions checked and every problem found, in
// the order of rs.
func Check(rs []receipt.Receipt, known []Credential) (int, []CheckError) {
	var (
		regs     []Credential
		revs     []Revocation
		problems []CheckError
		checked  int
	)
	for i := range rs {
		c, ok, err := registered(&rs[i])
		if ok && err == nil {
			regs = append(regs, c)
		}
		if !ok {
			var rev Revocation
			if rev, ok, err = revoked(&rs[i]); ok && err == nil {
				revs = append(revs, rev)
			}
		}
		if err != nil {
			problems = append(problems, CheckError{Owner: rs[i].Owner, Seq: rs[i].Seq, Err: err})
		}
	}
	for i := range rs {
		r := &rs[i]
		for _, ev := range r.Approvals {
			if ev.Channel != receipt.ChannelPasskey && ev.Passkey.IsZero() {
				continue
			}
			checked++
			if err := checkEvidence(r, ev, regs, revs, known); err != nil {
				problems = append(problems, CheckError{Owner: r.Owner, Seq: r.Seq, Approval: ev.ID, Approver: ev.Approver, Err: err})
			}
		}
	}
	return checked, problems
}

func checkEvidence(r *receipt.Receipt, ev receipt.Evidence, regs []Credential, revs []Revocation, known []Credential) error {
	if ev.Channel != receipt.ChannelPasskey || ev.Passkey.IsZero() {
		return ErrNoAssertion
	}
	hexOp := r.Operation
	if ev.Run != "" {
		hexOp = ev.Run
	}
	op, err := intent.ParseOperationHash(hexOp)
	if err != nil {
		return fmt.Errorf("%w: no operation hash to check the challenge against", ErrChallenge)
	}
	at := ev.IssuedAt
	if at.IsZero() {
		at = r.Time
	}
	cred, ok := find(ev, regs, at)
	if !ok {
		if cred, ok = find(ev, known, time.Time{}); !ok {
			return ErrUnregistered
		}
	}
	if rev, ok := revokedAt(cred, revs, at); ok {
		return fmt.Errorf("%w (revoked %s by %s, %s)", ErrRevoked, rev.At.UTC().Format(time.RFC3339), rev.By, rev.Means)
	}
	return Verify(cred, op, ev.ID, ev.Passkey)
}

// revokedAt returns the revocation of cred, after its registration and
// before at, if there is one. An approval at the revocation's very
// instant stands: the page may have verified it before the removal
// reached its store.
func revokedAt(cred Credential, revs []Revocation, at time.Time) (Revocation, bool) {
	for _, rev := range revs {
		if rev.Approver == cred.Approver && bytes.Equal(rev.ID, cred.ID) && !rev.At.Before(cred.Registered) && rev.At.Before(at) {
			return rev, true
		}
	}
	return Revocation{}, false
}

// find returns the credential of ev's assertion that ev's approver
// registered, no later than before unless before is zero: its latest
// registration, should it have been registered again after a revocation.
func find(ev receipt.Evidence, creds []Credential, before time.Time) (Credential, bool) {
	var (
		found Credential
		ok    bool
	)
	for _, c := range creds {
		if c.Approver == ev.Approver && bytes.Equal(c.ID, ev.Passkey.CredentialID) && (before.IsZero() || !c.Registered.After(before)) &&
			(!ok || c.Registered.After(found.Registered)) {
			found, ok = c, true
		}
	}
	return found, ok
}

func (p CheckError) Unwrap() error { return p.Err }
