package receipt_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// referenceCanonical is Receipt.Canonical written the slow, obvious way,
// as its doc comment specifies it: a map of every non-zero field, given to
// intent.Canonical, which sorts the keys. The fast encoder (an Encoder
// written member by member into a pooled buffer) must agree with it byte
// for byte.
func referenceCanonical(r *receipt.Receipt) ([]byte, error) {
	m := map[string]any{}
	put := func(k, v string) {
		if v != "" {
			m[k] = v
		}
	}
	putTime := func(m map[string]any, k string, t time.Time) {
		if !t.IsZero() {
			m[k] = t
		}
	}
	put("action", string(r.Action))
	if len(r.Approvals) > 0 {
		var as []any
		for _, a := range r.Approvals {
			am := nonEmpty(map[string]string{"approver": a.Approver, "id": a.ID, "level": a.Level})
			putTime(am, "expires", a.ExpiresAt)
			putTime(am, "issued", a.IssuedAt)
			as = append(as, am)
		}
		m["approvals"] = as
	}
	if len(r.Args) > 0 {
		m["args"] = typed(r.Args)
	}
	put("code", string(r.Code))
	put("decision", r.Verdict.String())
	if len(r.Facts) > 0 {
		m["facts"] = typed(r.Facts)
	}
	put("mandate", r.MandateID)
	put("message", r.Message)
	put("operation", r.Operation)
	put("output", r.Output)
	put("owner", string(r.Owner))
	if len(r.Policies) > 0 {
		m["policies"] = r.Policies
	}
	if !r.Prev.IsZero() {
		m["prev"] = r.Prev.String()
	}
	if len(r.Resolved) > 0 {
		var rs []any
		for _, res := range r.Resolved {
			rm := nonEmpty(map[string]string{"param": res.Param, "sent": res.Sent, "value": res.Value})
			if p := res.Provenance; p != (intent.Provenance{}) {
				pm := nonEmpty(map[string]string{"record": p.RecordID, "source": p.Source, "version": p.Version})
				putTime(pm, "at", p.At)
				rm["provenance"] = pm
			}
			rs = append(rs, rm)
		}
		m["resolved"] = rs
	}
	put("result", r.Result)
	put("sent", r.Sent)
	if r.Seq != 0 {
		if r.Seq > 1<<63-1 {
			return nil, receipt.ErrInvalid
		}
		m["seq"] = int64(r.Seq)
	}
	putTime(m, "time", r.Time)
	return intent.Canonical(m)
}

// nonEmpty is the members of m whose value is not empty.
func nonEmpty(m map[string]string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if v != "" {
			out[k] = v
		}
	}
	return out
}

// typed is a map of values as receipts write them: {"string":s},
// {"int":n}, {"amount":minor,"scale":s} or {"bool":b}.
func typed(vs map[string]intent.Value) map[string]any {
	out := map[string]any{}
	for k, v := range vs {
		switch v.Kind {
		case intent.KindString:
			out[k] = map[string]any{"string": v.Str}
		case intent.KindInt:
			out[k] = map[string]any{"int": v.Int}
		case intent.KindAmount:
			out[k] = map[string]any{"amount": v.Int, "scale": int64(v.Scale)}
		case intent.KindBool:
			out[k] = map[string]any{"bool": v.Bool}
		default:
			out[k] = v // an invalid kind: intent.Canonical refuses it too
		}
	}
	return out
}

// checkAgainstReference compares r.Canonical with referenceCanonical in
// version 1 (without what only version 3 holds), checks that decodeV2
// reads r back from its version 3 encoding (and version 2's, without that)
// and that r's JSON line reads back as a receipt of the same hash.
func checkAgainstReference(t *testing.T, r receipt.Receipt) {
	t.Helper()
	checkV2(t, r)
	checkJSONLine(t, r)
	r.Approvals = slices.Clone(r.Approvals)
	for i := range r.Approvals {
		r.Approvals[i].Channel, r.Approvals[i].Run, r.Approvals[i].Passkey = "", "", intent.Assertion{}
	}
	r.Version = receipt.Version2
	checkV2(t, r)
	r.Version = receipt.Version1
	got, err := r.Canonical()
	want, werr := referenceCanonical(&r)
	if (err == nil) != (werr == nil) || err == nil && !bytes.Equal(got, want) {
		t.Fatalf("Canonical() = %s, %v\nreference   = %s, %v", got, err, want, werr)
	}
	if err != nil && !errors.Is(err, receipt.ErrInvalid) {
		t.Fatalf("Canonical() error = %v, want ErrInvalid", err)
	}
}

// checkJSONLine checks that r's line of WriteJSONL reads back as a
// receipt of r's hash, or that WriteJSONL refuses r as Canonical does.
func checkJSONLine(t *testing.T, r receipt.Receipt) {
	t.Helper()
	h, err := r.ComputeHash()
	if err != nil {
		return
	}
	r.Hash = h
	var b bytes.Buffer
	if err := receipt.WriteJSONL(&b, []receipt.Receipt{r}); err != nil {
		if !errors.Is(err, receipt.ErrInvalid) {
			t.Fatalf("WriteJSONL() error = %v, want ErrInvalid", err)
		}
		return
	}
	if r.Seq == 0 || r.Time.IsZero() {
		return // not a line ReadJSONL accepts
	}
	rs, _, err := receipt.ReadJSONL(&b)
	if err != nil {
		t.Fatalf("ReadJSONL(WriteJSONL()) error = %v", err)
	}
	if got, err := rs[0].ComputeHash(); err != nil || got != h {
		t.Fatalf("the receipt read back hashes to %s, %v; want %s", got, err, h)
	}
}

func TestCanonicalReference(t *testing.T) {
	t.Parallel()
	checkAgainstReference(t, fixed())
	checkAgainstReference(t, fixedPasskey())
	checkAgainstReference(t, receipt.Receipt{})
	checkAgainstReference(t, sample("emma", 2))
	r := fixed()
	r.Args["bad"] = intent.Value{}
	checkAgainstReference(t, r)
	r = fixed()
	r.Message = "not \xff UTF-8"
	checkAgainstReference(t, r)
}

// FuzzCanonical fills a receipt's string fields, an argument, a fact and a
// resolved value from the fuzzer's input and compares the encoder with the
// reference.
func FuzzCanonical(f *testing.F) {
	f.Add("acme", "pay\"ment\\", "caf\u00e9\x01", "amount", int64(125000), uint8(2), uint64(7), int64(0))
	f.Add("", "", "", "", int64(0), uint8(0), uint64(0), int64(-1))
	f.Add("o\xff", "a", "m", "k\x00", int64(-5), uint8(1), uint64(1<<63), int64(1<<40))
	f.Fuzz(func(t *testing.T, owner, action, text, key string, n int64, kind uint8, seq uint64, nanos int64) {
		pk := intent.Assertion{CredentialID: []byte(key), AuthenticatorData: []byte(text), Signature: []byte(owner)}
		r := receipt.Receipt{
			Seq: seq, Owner: intent.Owner(owner), Action: intent.Action(action),
			Time: time.Unix(0, nanos), MandateID: text, Sent: text + action, Message: text,
			Output: owner + text, Policies: []string{action, text},
			Args:      intent.Args{key: {Kind: intent.Kind(kind % 6), Str: text, Int: n, Scale: kind % 4, Bool: n%2 == 0}},
			Facts:     map[string]intent.Value{key + "_fact": intent.Int(n), text: intent.Str(owner)},
			Resolved:  []intent.Resolved{{Param: key, Sent: text, Value: owner, Provenance: intent.Provenance{Source: action, At: time.Unix(n%1e10, 0)}}},
			Approvals: []receipt.Evidence{{ID: key, Approver: owner, Level: text, IssuedAt: time.Unix(0, nanos), Channel: action, Run: text, Passkey: pk}},
		}
		checkAgainstReference(t, r)
	})
}
