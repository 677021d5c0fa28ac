package receipt

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Line types of the JSON Lines format.
const (
	typeReceipt    = "receipt"
	typeCheckpoint = "checkpoint"
)

// WriteJSONL writes rs to w as JSON Lines, one receipt per line, in the
// order given. Each line is the JSON object of the receipt (the version 1
// encoding Receipt.Canonical describes) with more keys: "type":"receipt",
// "hash", the receipt's Hash in hex, and, unless the receipt is of version
// 1, "version" (2 or 3; a receipt of version zero is written as of
// CurrentVersion). An approval's passkey assertion is an object of its
// bytes in standard base64: "authenticator_data", "client_data",
// "credential", "signature". Keys are sorted and zero fields left out, so the output
// is deterministic. Times are RFC 3339 in UTC with nanoseconds, hashes
// lowercase hex, and each argument and fact a typed value:
// {"string":"ACME"}, {"int":3}, {"amount":125000,"scale":2} (125000 minor
// units, 1250.00) or {"bool":true}.
//
// WriteJSONL writes the receipts as they are; it does not check their
// hashes. It returns an error wrapping ErrInvalid for a receipt that cannot
// be encoded or whose version is unknown, and w's error.
func WriteJSONL(w io.Writer, rs []Receipt) error {
	var line []byte
	for i := range rs {
		extra := []member{{key: "hash", value: rs[i].Hash.String()}, {key: "type", value: typeReceipt}, {key: "version", n: uint64(rs[i].Version)}}
		switch rs[i].Version {
		case 0:
			extra[2].n = CurrentVersion
		case Version2, Version3:
			if err := checkOld(rs[i].Version, rs[i].Approvals); err != nil {
				return err
			}
		case Version1:
			if err := checkOld(Version1, rs[i].Approvals); err != nil {
				return err
			}
			extra = extra[:2]
		default:
			return fmt.Errorf("%w: %w %d", ErrInvalid, errVersion, rs[i].Version)
		}
		var err error
		line, err = rs[i].appendJSON(line[:0], extra...)
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// WriteCheckpoints writes cs to w as JSON Lines, one checkpoint per line:
// the object Checkpoint.Canonical describes with "type":"checkpoint" and
// "sig", the signature in standard base64. Checkpoint lines may be written
// anywhere among the receipt lines; Verify reads them in any position.
func WriteCheckpoints(w io.Writer, cs []Checkpoint) error {
	var line []byte
	for i := range cs {
		var err error
		line, err = cs[i].appendCanonical(line[:0], member{key: "sig", value: base64.StdEncoding.EncodeToString(cs[i].Sig)}, member{key: "type", value: typeCheckpoint})
		if err != nil {
			return err
		}
		line = append(line, '\n')
		if _, err := w.Write(line); err != nil {
			return err
		}
	}
	return nil
}

// The JSON shapes read back by Verify. Unknown keys are refused: a reader
// that does not know a field cannot recompute the hash over it.

type jsonLine struct {
	Type string `json:"type"`
}

type jsonReceipt struct {
	Type      string               `json:"type"`
	Seq       uint64               `json:"seq"`
	Owner     string               `json:"owner"`
	Time      string               `json:"time"`
	Prev      string               `json:"prev"`
	Mandate   string               `json:"mandate"`
	Action    string               `json:"action"`
	Sent      string               `json:"sent"`
	Args      map[string]jsonValue `json:"args"`
	Resolved  []jsonResolved       `json:"resolved"`
	Facts     map[string]jsonValue `json:"facts"`
	Decision  string               `json:"decision"`
	Code      string               `json:"code"`
	Message   string               `json:"message"`
	Policies  []string             `json:"policies"`
	Operation string               `json:"operation"`
	Approvals []jsonEvidence       `json:"approvals"`
	Result    string               `json:"result"`
	Output    string               `json:"output"`
	Hash      string               `json:"hash"`
	Version   *uint64              `json:"version"`
}

type jsonValue struct {
	String *string `json:"string"`
	Int    *int64  `json:"int"`
	Amount *int64  `json:"amount"`
	Scale  *uint8  `json:"scale"`
	Bool   *bool   `json:"bool"`
}

type jsonResolved struct {
	Param      string          `json:"param"`
	Sent       string          `json:"sent"`
	Value      string          `json:"value"`
	Provenance *jsonProvenance `json:"provenance"`
}

type jsonProvenance struct {
	Source  string `json:"source"`
	Record  string `json:"record"`
	Version string `json:"version"`
	At      string `json:"at"`
}

type jsonEvidence struct {
	ID       string       `json:"id"`
	Approver string       `json:"approver"`
	Level    string       `json:"level"`
	Issued   string       `json:"issued"`
	Expires  string       `json:"expires"`
	Channel  string       `json:"channel"`
	Run      string       `json:"run"`
	Passkey  *jsonPasskey `json:"passkey"`
}

type jsonPasskey struct {
	AuthData   string `json:"authenticator_data"`
	ClientData string `json:"client_data"`
	Credential string `json:"credential"`
	Signature  string `json:"signature"`
}

type jsonCheckpoint struct {
	Type  string `json:"type"`
	Owner string `json:"owner"`
	Seq   uint64 `json:"seq"`
	Head  string `json:"head"`
	Time  string `json:"time"`
	Key   string `json:"key"`
	Sig   string `json:"sig"`
}

// decodeStrict decodes one JSON object from b into v, refusing unknown
// keys and trailing data.
func decodeStrict(b []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the JSON object")
	}
	return nil
}

// decodeReceipt decodes a receipt line. The owner and seq of a line that
// decodes as JSON but is otherwise invalid are still returned, so that the
// error can name them.
func decodeReceipt(b []byte) (Receipt, error) {
	var j jsonReceipt
	if err := decodeStrict(b, &j); err != nil {
		return Receipt{}, err
	}
	verdict, err := intent.ParseVerdict(j.Decision)
	if err != nil {
		return Receipt{Seq: j.Seq, Owner: intent.Owner(j.Owner)}, err
	}
	r := Receipt{
		Seq:       j.Seq,
		Owner:     intent.Owner(j.Owner),
		MandateID: j.Mandate,
		Action:    intent.Action(j.Action),
		Sent:      j.Sent,
		Verdict:   verdict,
		Code:      intent.Code(j.Code),
		Message:   j.Message,
		Policies:  j.Policies,
		Operation: j.Operation,
		Result:    j.Result,
		Output:    j.Output,
	}
	if j.Seq == 0 || j.Seq > math.MaxInt64 {
		return r, errors.New(`"seq" is missing, 0, or beyond 2^63-1`)
	}
	if err := r.decodeChain(j); err != nil {
		return r, err
	}
	if err := r.decodeMembers(j); err != nil {
		return r, err
	}
	return r, nil
}

// decodeChain sets r's version, time, prev and hash from a receipt line;
// an error names the field at fault.
func (r *Receipt) decodeChain(j jsonReceipt) error {
	switch {
	case j.Version == nil:
		r.Version = Version1
	case *j.Version == Version2 || *j.Version == Version3:
		r.Version = uint8(*j.Version)
	default:
		return fmt.Errorf(`"version" is %d: this reader knows 2 and 3 (and 1, written without "version")`, *j.Version)
	}
	if j.Time == "" {
		return errors.New(`"time" is missing`)
	}
	var err error
	if r.Time, err = parseTime("time", j.Time); err != nil {
		return err
	}
	if j.Prev != "" {
		if r.Prev, err = parseHashField("prev", j.Prev); err != nil {
			return err
		}
	}
	if j.Hash == "" {
		return errors.New(`"hash" is missing`)
	}
	r.Hash, err = parseHashField("hash", j.Hash)
	return err
}

// decodeMembers sets r's args, facts, resolved values and approvals from
// a receipt line, keeping what decoded before an error.
func (r *Receipt) decodeMembers(j jsonReceipt) error {
	var err error
	if r.Args, err = decodeValues[intent.Args]("args", j.Args); err != nil {
		return err
	}
	if r.Facts, err = decodeValues[map[string]intent.Value]("facts", j.Facts); err != nil {
		return err
	}
	if r.Resolved, err = decodeResolved(j.Resolved); err != nil {
		return err
	}
	r.Approvals, err = decodeApprovals(j.Approvals)
	return err
}

// decodeResolved turns the "resolved" entries of a receipt line into the
// receipt's resolved parameters, parsing each provenance's "at" time when
// present. On an error (a malformed time, naming its field) it returns
// the entries before the bad one, which decodeReceipt keeps in the
// partial receipt it returns.
func decodeResolved(js []jsonResolved) ([]intent.Resolved, error) {
	var out []intent.Resolved
	for i, jr := range js {
		res := intent.Resolved{Param: jr.Param, Sent: jr.Sent, Value: jr.Value}
		if p := jr.Provenance; p != nil {
			res.Provenance = intent.Provenance{Source: p.Source, RecordID: p.Record, Version: p.Version}
			if p.At != "" {
				var err error
				if res.Provenance.At, err = parseTime(fmt.Sprintf("resolved[%d].provenance.at", i), p.At); err != nil {
					return out, err
				}
			}
		}
		out = append(out, res)
	}
	return out, nil
}

// decodeApprovals turns the "approvals" entries of a receipt line into
// the receipt's approval evidence, parsing the "issued" and "expires"
// times when present. On an error (a malformed time, naming its field)
// it returns the evidence before the bad entry, as decodeResolved does.
func decodeApprovals(js []jsonEvidence) ([]Evidence, error) {
	var out []Evidence
	for i, ja := range js {
		ev := Evidence{ID: ja.ID, Approver: ja.Approver, Level: ja.Level, Channel: ja.Channel, Run: ja.Run}
		var err error
		if ja.Passkey != nil {
			if ev.Passkey, err = ja.Passkey.assertion(i); err != nil {
				return out, err
			}
		}
		if ja.Issued != "" {
			if ev.IssuedAt, err = parseTime(fmt.Sprintf("approvals[%d].issued", i), ja.Issued); err != nil {
				return out, err
			}
		}
		if ja.Expires != "" {
			if ev.ExpiresAt, err = parseTime(fmt.Sprintf("approvals[%d].expires", i), ja.Expires); err != nil {
				return out, err
			}
		}
		out = append(out, ev)
	}
	return out, nil
}

// assertion decodes the passkey of approval i; an error names the field.
func (j *jsonPasskey) assertion(i int) (intent.Assertion, error) {
	var a intent.Assertion
	for _, f := range []struct {
		name string
		in   string
		out  *[]byte
	}{
		{"authenticator_data", j.AuthData, &a.AuthenticatorData},
		{"client_data", j.ClientData, &a.ClientDataJSON},
		{"credential", j.Credential, &a.CredentialID},
		{"signature", j.Signature, &a.Signature},
	} {
		if f.in == "" {
			continue
		}
		b, err := base64.StdEncoding.Strict().DecodeString(f.in)
		if err != nil {
			return a, fmt.Errorf("%q is not standard base64: %w", fmt.Sprintf("approvals[%d].passkey.%s", i, f.name), err)
		}
		*f.out = b
	}
	if a.IsZero() {
		return a, fmt.Errorf(`"approvals[%d].passkey" is empty`, i)
	}
	return a, nil
}

func decodeCheckpoint(b []byte) (Checkpoint, error) {
	var j jsonCheckpoint
	if err := decodeStrict(b, &j); err != nil {
		return Checkpoint{}, err
	}
	c := Checkpoint{Owner: intent.Owner(j.Owner), Seq: j.Seq, KeyID: j.Key}
	if j.Seq == 0 || j.Seq > math.MaxInt64 {
		return c, errors.New(`"seq" is missing, 0, or beyond 2^63-1`)
	}
	var err error
	if j.Head == "" {
		return c, errors.New(`"head" is missing`)
	}
	if c.Head, err = parseHashField("head", j.Head); err != nil {
		return c, err
	}
	if j.Time != "" {
		if c.Time, err = parseTime("time", j.Time); err != nil {
			return c, err
		}
	}
	if c.Sig, err = base64.StdEncoding.Strict().DecodeString(j.Sig); err != nil {
		return c, fmt.Errorf(`"sig" is not standard base64: %w`, err)
	}
	return c, nil
}

func parseTime(field, s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("%q is not an RFC 3339 time: %w", field, err)
	}
	return t.UTC(), nil
}

func parseHashField(field, s string) (Hash, error) {
	h, err := ParseHash(s)
	if err != nil {
		return h, fmt.Errorf("%q: %w", field, err)
	}
	return h, nil
}

func decodeValues[M ~map[string]intent.Value](field string, in map[string]jsonValue) (M, error) {
	if len(in) == 0 {
		return nil, nil
	}
	out := make(M, len(in))
	for k, jv := range in {
		v, err := jv.value()
		if err != nil {
			return nil, fmt.Errorf("%s[%q]: %w", field, k, err)
		}
		out[k] = v
	}
	return out, nil
}

func (j jsonValue) value() (intent.Value, error) {
	n := 0
	var v intent.Value
	if j.String != nil {
		n++
		v = intent.Str(*j.String)
	}
	if j.Int != nil {
		n++
		v = intent.Int(*j.Int)
	}
	if j.Bool != nil {
		n++
		v = intent.Bool(*j.Bool)
	}
	if j.Amount != nil {
		n++
		if j.Scale == nil {
			return v, errors.New(`amount without "scale"`)
		}
		v = intent.AmountValue(intent.Amount(*j.Amount), *j.Scale)
	} else if j.Scale != nil {
		return v, errors.New(`"scale" without "amount"`)
	}
	if n != 1 {
		return v, errors.New(`a value needs exactly one of "string", "int", "amount", "bool"`)
	}
	return v, nil
}

// ReadJSONL reads JSON Lines as WriteJSONL and WriteCheckpoints write them
// and returns the receipts and checkpoints in file order, without checking
// hashes, links or signatures (Verify does). Blank lines are skipped. A line
// that cannot be read returns a *ChainError of KindMalformed naming it;
// errors reading r are returned as they are.
func ReadJSONL(r io.Reader) ([]Receipt, []Checkpoint, error) {
	var (
		rs    []Receipt
		cs    []Checkpoint
		first *ChainError
	)
	err := scan(r, func(n int, line []byte, tooLong bool) {
		if first != nil {
			return
		}
		malformed := func(o intent.Owner, seq uint64, err error) {
			first = &ChainError{Owner: o, Seq: seq, Line: n, Kind: KindMalformed, Detail: err.Error(), Err: err}
		}
		if tooLong {
			malformed("", 0, fmt.Errorf("line longer than %d bytes", MaxLine))
			return
		}
		var t jsonLine
		if err := json.Unmarshal(line, &t); err != nil {
			malformed("", 0, err)
			return
		}
		switch t.Type {
		case typeReceipt:
			rec, err := decodeReceipt(line)
			if err != nil {
				malformed(rec.Owner, rec.Seq, err)
				return
			}
			rs = append(rs, rec)
		case typeCheckpoint:
			c, err := decodeCheckpoint(line)
			if err != nil {
				malformed(c.Owner, c.Seq, err)
				return
			}
			cs = append(cs, c)
		default:
			malformed("", 0, fmt.Errorf(`"type" is %q, want "receipt" or "checkpoint"`, t.Type))
		}
	})
	if err != nil {
		return rs, cs, err
	}
	if first != nil {
		return rs, cs, first
	}
	return rs, cs, nil
}
