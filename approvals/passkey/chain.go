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

// The facts of a registration's receipt.
const (
	factApprover   = "passkey.approver"
	factCredential = "passkey.credential" // base64url, no padding
	factPublicKey  = "passkey.public_key" // base64url, no padding: the COSE key
	factRPID       = "passkey.rp_id"
	factOrigin     = "passkey.origin"
)

// RegistrationReceipt is the receipt of cred's registration: action
// ActionRegister, at cred.Registered, in the chain of no owner, its facts
// naming the approver, the credential ID and public key (base64url
// without padding) and the relying party, so that an auditor finds the
// key every later assertion of the approver is checked with.
func RegistrationReceipt(cred Credential) receipt.Receipt {
	b64 := base64.RawURLEncoding.EncodeToString
	return receipt.Receipt{
		Time: cred.Registered, Action: ActionRegister, Verdict: intent.Allow, Result: receipt.ResultExecuted,
		Message: fmt.Sprintf("Passkey %s registered by %s on the approval page at %s.", b64(cred.ID), cred.Approver, cred.RP.Origin),
		Facts: map[string]intent.Value{
			factApprover: intent.Str(cred.Approver), factCredential: intent.Str(b64(cred.ID)),
			factPublicKey: intent.Str(b64(cred.PublicKey)), factRPID: intent.Str(cred.RP.ID), factOrigin: intent.Str(cred.RP.Origin),
		},
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
)

// Check re-checks every passkey approval the receipts rs hold (the
// evidence of channel "passkey"): its assertion must verify (Verify) for
// the operation of the receipt (or the run the evidence names) and the
// approval's ID, under a credential its approver registered in rs no
// later than the receipt, or one of known. It returns the number of
// assertions checked and every problem found, in the order of rs.
func Check(rs []receipt.Receipt, known []Credential) (int, []CheckError) {
	var (
		regs     []Credential
		problems []CheckError
		checked  int
	)
	for i := range rs {
		c, ok, err := registered(&rs[i])
		if err != nil {
			problems = append(problems, CheckError{Owner: rs[i].Owner, Seq: rs[i].Seq, Err: err})
		}
		if ok && err == nil {
			regs = append(regs, c)
		}
	}
	for i := range rs {
		r := &rs[i]
		for _, ev := range r.Approvals {
			if ev.Channel != receipt.ChannelPasskey && ev.Passkey.IsZero() {
				continue
			}
			checked++
			if err := checkEvidence(r, ev, regs, known); err != nil {
				problems = append(problems, CheckError{Owner: r.Owner, Seq: r.Seq, Approval: ev.ID, Approver: ev.Approver, Err: err})
			}
		}
	}
	return checked, problems
}

func checkEvidence(r *receipt.Receipt, ev receipt.Evidence, regs, known []Credential) error {
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
	cred, ok := find(ev, regs, r.Time)
	if !ok {
		if cred, ok = find(ev, known, time.Time{}); !ok {
			return ErrUnregistered
		}
	}
	return Verify(cred, op, ev.ID, ev.Passkey)
}

// find returns the credential of ev's assertion that ev's approver
// registered, no later than before unless before is zero.
func find(ev receipt.Evidence, creds []Credential, before time.Time) (Credential, bool) {
	for _, c := range creds {
		if c.Approver == ev.Approver && bytes.Equal(c.ID, ev.Passkey.CredentialID) && (before.IsZero() || !c.Registered.After(before)) {
			return c, true
		}
	}
	return Credential{}, false
}

func (p CheckError) Unwrap() error { return p.Err }
