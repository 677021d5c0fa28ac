package receipt_test

import (
	"bytes"
	"crypto/ed25519"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// chainOf returns n linked receipts of owner, with realistic content.
func chainOf(t testing.TB, owner intent.Owner, n int) []receipt.Receipt {
	t.Helper()
	var rs []receipt.Receipt
	var prev *receipt.Receipt
	for i := range n {
		r, err := receipt.Link(sample(owner, i), prev)
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, r)
		prev = &rs[len(rs)-1]
	}
	return rs
}

func sample(owner intent.Owner, i int) receipt.Receipt {
	amount := intent.Amount(100000 + 25*i)
	r := receipt.Receipt{
		Owner:     owner,
		Time:      t0.Add(time.Duration(i) * time.Second),
		MandateID: "mnd_" + string(owner),
		Action:    "ap.pay_bill",
		Sent:      fmt.Sprintf(`{"action":"ap.pay_bill","args":{"vendor":"ACME Supplies","bill":"INV-%d","amount":"%s"}}`, 2290+i, intent.FormatAmount(amount, 2)),
		Args: intent.Args{
			"vendor": intent.Str("v-42"),
			"bill":   intent.Str(fmt.Sprintf("INV-%d", 2290+i)),
			"amount": intent.AmountValue(amount, 2),
			"iban":   intent.Str("DE89370400440532013000"),
		},
		Resolved: []intent.Resolved{{
			Param: "iban", Sent: "DE89 3704 0044 0532 0130 00", Value: "DE89370400440532013000",
			Provenance: intent.Provenance{Source: "registry:bank_accounts", RecordID: "17", Version: "3", At: t0.Add(-90 * 24 * time.Hour)},
		}},
		Facts: map[string]intent.Value{
			"bill.open":     intent.AmountValue(amount, 2),
			"account.age":   intent.Int(90),
			"account.trust": intent.Bool(true),
		},
		Verdict:   intent.Allow,
		Message:   "paid",
		Policies:  []string{"ap.known_payee"},
		Operation: strings.Repeat(fmt.Sprintf("%02x", i), 32),
		Result:    receipt.ResultExecuted,
		Output:    fmt.Sprintf("payment %d registered", 800+i),
	}
	if i%3 == 2 {
		r.Verdict, r.Code, r.Message, r.Result, r.Output = intent.StepUp, intent.CodeApprovalRequired, "needs approval", receipt.ResultNotExecuted, ""
		r.Approvals = []receipt.Evidence{{ID: "apv", Approver: "lena", Level: "confirm", IssuedAt: t0, ExpiresAt: t0.Add(5 * time.Minute)}}
	}
	return r
}

var (
	pub1, priv1 = key(1)
	_, priv2    = key(2)
	signer      = receipt.NewEd25519Signer("k1", priv1)
	verifier    = receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{"k1": pub1})
)

func checkpoint(t testing.TB, s receipt.Signer, head receipt.Receipt) receipt.Checkpoint {
	t.Helper()
	c, err := receipt.SignCheckpoint(s, head, head.Time.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// jsonl writes items (Receipt, Checkpoint or string, a raw line) one per
// line, in order.
func jsonl(t testing.TB, items ...any) []byte {
	t.Helper()
	var b bytes.Buffer
	for _, it := range items {
		var err error
		switch x := it.(type) {
		case receipt.Receipt:
			err = receipt.WriteJSONL(&b, []receipt.Receipt{x})
		case receipt.Checkpoint:
			err = receipt.WriteCheckpoints(&b, []receipt.Checkpoint{x})
		case string:
			b.WriteString(x + "\n")
		default:
			t.Fatalf("jsonl: %T", it)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return b.Bytes()
}

// rehash returns r with its hash recomputed after an edit.
func rehash(t testing.TB, r receipt.Receipt) receipt.Receipt {
	t.Helper()
	h, err := r.ComputeHash()
	if err != nil {
		t.Fatal(err)
	}
	r.Hash = h
	return r
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	e := chainOf(t, "emma", 5)
	n := chainOf(t, "noah", 4)
	ce, cn := checkpoint(t, signer, e[4]), checkpoint(t, signer, n[1])
	data := jsonl(t, e[0], n[0], e[1], e[2], n[1], cn, e[3], "", n[2], e[4], n[3], ce)

	for _, tt := range []struct {
		name string
		v    receipt.Verifier
		want receipt.Report
	}{
		{name: "verified", v: verifier, want: receipt.Report{Owners: 2, Receipts: 9, Checkpoints: 2,
			Heads:      map[intent.Owner]receipt.Hash{"emma": e[4].Hash, "noah": n[3].Hash},
			Unanchored: []receipt.Unanchored{{Owner: "noah", Head: 4, Covered: 2}}}},
		{name: "nil verifier", want: receipt.Report{Owners: 2, Receipts: 9, Checkpoints: 2, Unverified: 2,
			Heads:      map[intent.Owner]receipt.Hash{"emma": e[4].Hash, "noah": n[3].Hash},
			Unanchored: []receipt.Unanchored{{Owner: "emma", Head: 5}, {Owner: "noah", Head: 4}}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := receipt.Verify(bytes.NewReader(data), tt.v)
			if err != nil {
				t.Fatalf("Verify() error = %v", err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Verify() mismatch (-want, +got):\n%s", diff)
			}
		})
	}

	t.Run("read back", func(t *testing.T) {
		t.Parallel()
		rs, cs, err := receipt.ReadJSONL(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		want := []receipt.Receipt{e[0], n[0], e[1], e[2], n[1], e[3], n[2], e[4], n[3]}
		if diff := cmp.Diff(want, rs); diff != "" {
			t.Errorf("ReadJSONL() receipts mismatch (-want, +got):\n%s", diff)
		}
		if diff := cmp.Diff([]receipt.Checkpoint{cn, ce}, cs); diff != "" {
			t.Errorf("ReadJSONL() checkpoints mismatch (-want, +got):\n%s", diff)
		}
		var again bytes.Buffer
		if err := receipt.WriteJSONL(&again, rs); err != nil {
			t.Fatal(err)
		}
		if want := jsonl(t, e[0], n[0], e[1], e[2], n[1], e[3], n[2], e[4], n[3]); !bytes.Equal(want, again.Bytes()) {
			t.Errorf("WriteJSONL(ReadJSONL()) is not byte-identical:\n%s\nwant\n%s", again.Bytes(), want)
		}
	})

	t.Run("every field", func(t *testing.T) {
		t.Parallel()
		for _, v := range []uint8{receipt.Version1, receipt.Version2} {
			r := fixed()
			r.Version = v
			r = rehash(t, r)
			rs, _, err := receipt.ReadJSONL(bytes.NewReader(jsonl(t, r)))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]receipt.Receipt{r}, rs); diff != "" {
				t.Errorf("version %d: ReadJSONL() mismatch (-want, +got):\n%s", v, diff)
			}
		}
	})

	t.Run("truncated tail without checkpoint", func(t *testing.T) {
		t.Parallel()
		got, err := receipt.Verify(bytes.NewReader(jsonl(t, e[0], e[1], e[2])), verifier)
		if err != nil {
			t.Fatalf("Verify() error = %v; a tail removed after the last checkpoint is not detectable", err)
		}
		if got.Heads["emma"] != e[2].Hash {
			t.Errorf("Verify() head = %s, want %s", got.Heads["emma"], e[2].Hash)
		}
	})
}

// TestVerifyAnchored covers issue 11's attacks: in a file where one chain
// has a trusted checkpoint, a chain rewritten from its start (its
// checkpoints dropped), a wholly invented owner's chain, and receipts
// appended after a chain's last checkpoint verify with Verify but are
// refused by VerifyAnchored, which names each of them.
func TestVerifyAnchored(t *testing.T) {
	t.Parallel()
	e := chainOf(t, "emma", 5)
	n := chainOf(t, "noah", 4)
	ce, cn := checkpoint(t, signer, e[4]), checkpoint(t, signer, n[3])

	// noah's chain rewritten from its start: new content, hashes recomputed
	// and relinked, the checkpoint that would expose it left out.
	var forged []receipt.Receipt
	var prev *receipt.Receipt
	for i := range 4 {
		r := sample("noah", i)
		r.Output = "rewritten"
		l, err := receipt.Link(r, prev)
		if err != nil {
			t.Fatal(err)
		}
		forged = append(forged, l)
		prev = &forged[len(forged)-1]
	}
	invented := chainOf(t, "mallory", 3)
	other := receipt.NewEd25519Signer("k2", priv2) // a key the verifier does not trust

	for _, tt := range []struct {
		name  string
		items []any
		want  []receipt.Unanchored // nil: anchored
		err   string               // a *ChainError expected instead, of this kind
	}{
		{name: "every chain anchored", items: []any{e[0], n[0], e[1], n[1], e[2], n[2], e[3], n[3], e[4], ce, cn}},
		{name: "chain rewritten from its start", items: []any{e[0], e[1], e[2], e[3], e[4], ce, forged[0], forged[1], forged[2], forged[3]},
			want: []receipt.Unanchored{{Owner: "noah", Head: 4}}},
		{name: "invented owner", items: []any{e[0], e[1], e[2], e[3], e[4], ce, n[0], n[1], n[2], n[3], cn, invented[0], invented[1], invented[2]},
			want: []receipt.Unanchored{{Owner: "mallory", Head: 3}}},
		{name: "both, each named", items: []any{invented[0], e[0], e[1], e[2], e[3], e[4], ce, forged[0], forged[1], forged[2], forged[3], invented[1], invented[2]},
			want: []receipt.Unanchored{{Owner: "mallory", Head: 3}, {Owner: "noah", Head: 4}}},
		{name: "receipts after the last checkpoint", items: []any{e[0], e[1], checkpoint(t, signer, e[1]), e[2], e[3], e[4]},
			want: []receipt.Unanchored{{Owner: "emma", Head: 5, Covered: 2}}},
		{name: "rewritten chain with the old checkpoint", items: []any{forged[0], forged[1], forged[2], forged[3], cn}, err: "edited"},
		// A checkpoint signed with a key the verifier does not know
		// attests nothing: ignored, so the invented chain is unanchored.
		{name: "invented chain with an untrusted key's checkpoint", items: []any{invented[0], invented[1], invented[2], checkpoint(t, other, invented[2])},
			want: []receipt.Unanchored{{Owner: "mallory", Head: 3}}},
		// The trusted key's id with another key: a forged signature.
		{name: "invented chain with a checkpoint forged under the trusted id", items: []any{invented[0], invented[1], invented[2], checkpoint(t, receipt.NewEd25519Signer("k1", priv2), invented[2])}, err: "bad_signature"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			data := jsonl(t, tt.items...)
			if _, err := receipt.Verify(bytes.NewReader(data), verifier); (err != nil) != (tt.err != "") {
				t.Fatalf("Verify() error = %v", err)
			}
			rep, err := receipt.VerifyAnchored(bytes.NewReader(data), verifier)
			switch {
			case tt.err != "":
				var ce *receipt.ChainError
				if !errors.As(err, &ce) || string(ce.Kind) != tt.err {
					t.Fatalf("VerifyAnchored() error = %v, want a %s ChainError", err, tt.err)
				}
			case tt.want == nil:
				if err != nil || rep.Unanchored != nil {
					t.Fatalf("VerifyAnchored() = %v, %v; want every chain anchored", rep.Unanchored, err)
				}
			default:
				var ue *receipt.UnanchoredError
				if !errors.As(err, &ue) || !errors.Is(err, receipt.ErrUnanchored) {
					t.Fatalf("VerifyAnchored() error = %v, want an *UnanchoredError", err)
				}
				if diff := cmp.Diff(tt.want, ue.Chains); diff != "" {
					t.Errorf("unanchored chains mismatch (-want, +got):\n%s", diff)
				}
				if diff := cmp.Diff(tt.want, rep.Unanchored); diff != "" {
					t.Errorf("Report.Unanchored mismatch (-want, +got):\n%s", diff)
				}
				for _, u := range tt.want {
					if !strings.Contains(err.Error(), fmt.Sprintf("owner %q", u.Owner)) {
						t.Errorf("error %q does not name owner %q", err, u.Owner)
					}
				}
			}
		})
	}

	t.Run("messages", func(t *testing.T) {
		t.Parallel()
		err := &receipt.UnanchoredError{Total: 3, Chains: []receipt.Unanchored{{Owner: "emma", Head: 4}, {Owner: "noah", Head: 9, Covered: 5}, {Owner: "zoe", Head: 1}}}
		want := `3 of 3 receipt chains are not anchored by a trusted checkpoint: owner "emma": receipts 1 to 4, no checkpoint; owner "noah": receipts 6 to 9 after the last checkpoint (seq 5); owner "zoe": receipt 1, no checkpoint`
		if err.Error() != want {
			t.Errorf("Error() = %q\nwant %q", err.Error(), want)
		}
	})

	t.Run("nil verifier", func(t *testing.T) {
		t.Parallel()
		if _, err := receipt.VerifyAnchored(bytes.NewReader(jsonl(t, e[0], checkpoint(t, signer, e[0]))), nil); err == nil {
			t.Error("VerifyAnchored(nil verifier) = nil error, want one")
		}
	})
}

func TestVerifyTampering(t *testing.T) {
	t.Parallel()
	e := chainOf(t, "emma", 6) // e[i] has seq i+1
	n := chainOf(t, "noah", 2)

	edited := e[2]
	edited.Message = "paid twice"

	editedPrev := e[3]
	editedPrev.Prev = e[1].Hash

	relinked := []receipt.Receipt{e[0], e[1]} // e[2] edited, then the chain recomputed after it
	for i := 2; i < len(e); i++ {
		r := e[i]
		if i == 2 {
			r.Output = "payment 999 registered"
		}
		r, err := receipt.Link(r, &relinked[i-1])
		if err != nil {
			t.Fatal(err)
		}
		relinked = append(relinked, r)
	}

	forged := sample("emma", 3)
	forged.Args["iban"] = intent.Str("GB33BUKB20201555555555")
	forgedFork, err := receipt.Link(forged, &e[2]) // seq 4, links to e[2] as e[3] does
	if err != nil {
		t.Fatal(err)
	}
	unlinked := forgedFork
	unlinked.Seq, unlinked.Prev = 99, receipt.Hash{9}
	unlinked = rehash(t, unlinked)

	badSig := checkpoint(t, signer, e[5])
	badSig.Sig = bytes.Clone(badSig.Sig)
	badSig.Sig[0] ^= 1
	otherKey := checkpoint(t, receipt.NewEd25519Signer("k1", priv2), e[5])
	wrongHead := checkpoint(t, signer, e[2])
	wrongHead.Head = receipt.Hash{1}
	wrongHead.Sig, _ = signer.Sign(func() []byte { h, _ := wrongHead.SigHash(); return h[:] }())

	line := func(r receipt.Receipt) string { return strings.TrimSuffix(string(jsonl(t, r)), "\n") }
	good := line(e[2])

	tests := []struct {
		name   string
		items  []any
		want   receipt.ChainError // Detail and Err are not compared
		detail string             // a substring of Detail
	}{
		{
			name:  "edited field",
			items: []any{n[0], e[0], e[1], edited, e[3], e[4], e[5], n[1]},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 4, Kind: receipt.KindEdited}, detail: "does not match its content",
		},
		{
			name:  "edited and rehashed",
			items: []any{n[0], e[0], e[1], rehash(t, edited), e[3], e[4], e[5], n[1]},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 4, Kind: receipt.KindEdited}, detail: "recomputed",
		},
		{
			name:  "prev edited and rehashed: the predecessor is blamed",
			items: []any{e[0], e[1], e[2], rehash(t, editedPrev), e[4]},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindEdited},
		},
		{
			name:  "prev edited and rehashed, predecessor attested",
			items: []any{e[0], e[1], e[2], checkpoint(t, signer, e[2]), rehash(t, editedPrev), e[4]},
			want:  receipt.ChainError{Owner: "emma", Seq: 4, Line: 5, Kind: receipt.KindEdited}, detail: "checkpoint attests",
		},
		{
			name: "edited and the chain recomputed",
			items: []any{checkpoint(t, signer, e[1]), relinked[0], relinked[1], relinked[2], relinked[3],
				relinked[4], relinked[5], checkpoint(t, signer, e[4])},
			want: receipt.ChainError{Owner: "emma", Seq: 5, Line: 6, Kind: receipt.KindEdited}, detail: "one of seq 3 to 4",
		},
		{
			name:  "removed",
			items: []any{n[0], e[0], e[1], e[3], e[4], n[1], e[5]},
			want:  receipt.ChainError{Owner: "emma", Seq: 4, Line: 4, Kind: receipt.KindRemoved}, detail: "receipt 3 is missing",
		},
		{
			name:  "removed two",
			items: []any{e[0], e[3], e[4]},
			want:  receipt.ChainError{Owner: "emma", Seq: 4, Line: 2, Kind: receipt.KindRemoved}, detail: "receipts 2 to 3",
		},
		{
			name:  "removed first",
			items: []any{e[1], e[2]},
			want:  receipt.ChainError{Owner: "emma", Seq: 2, Line: 1, Kind: receipt.KindRemoved},
		},
		{
			name:  "truncated tail with checkpoint",
			items: []any{e[0], n[0], e[1], e[2], checkpoint(t, signer, e[5]), e[3]},
			want:  receipt.ChainError{Owner: "emma", Seq: 5, Line: 5, Kind: receipt.KindRemoved}, detail: "attests seq 6",
		},
		{
			name:  "all removed but a checkpoint",
			items: []any{n[0], checkpoint(t, signer, e[0])},
			want:  receipt.ChainError{Owner: "emma", Seq: 1, Line: 2, Kind: receipt.KindRemoved}, detail: "no receipt",
		},
		{
			name:  "inserted fork before the genuine one",
			items: []any{e[0], e[1], e[2], forgedFork, e[3], e[4]},
			want:  receipt.ChainError{Owner: "emma", Seq: 4, Line: 4, Kind: receipt.KindInserted},
		},
		{
			name:  "inserted fork after the genuine one",
			items: []any{e[0], e[1], e[2], e[3], forgedFork, e[4]},
			want:  receipt.ChainError{Owner: "emma", Seq: 4, Line: 5, Kind: receipt.KindInserted},
		},
		{
			name:  "inserted fork at the end",
			items: []any{e[0], e[1], e[2], e[3], forgedFork},
			want:  receipt.ChainError{Owner: "emma", Seq: 4, Line: 5, Kind: receipt.KindInserted},
		},
		{
			name:  "inserted unlinked",
			items: []any{e[0], e[1], e[2], unlinked, e[3]},
			want:  receipt.ChainError{Owner: "emma", Seq: 99, Line: 4, Kind: receipt.KindInserted},
		},
		{
			name:  "inserted with the next seq but no link",
			items: []any{e[0], e[1], rehash(t, receipt.Receipt{Seq: 3, Owner: "emma", Time: t0, Prev: receipt.Hash{3}}), e[2]},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindInserted},
		},
		{
			name:  "duplicated",
			items: []any{e[0], e[1], e[2], e[2], e[3]},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 4, Kind: receipt.KindInserted}, detail: "copy of the receipt at line 3",
		},
		{
			name:  "swapped neighbours",
			items: []any{n[0], e[0], e[1], e[3], e[2], e[4], n[1]},
			want:  receipt.ChainError{Owner: "emma", Seq: 4, Line: 4, Kind: receipt.KindReordered}, detail: "before receipt seq 3 (line 5)",
		},
		{
			name:  "swapped far apart",
			items: []any{e[0], e[4], e[2], e[3], e[1], e[5]},
			want:  receipt.ChainError{Owner: "emma", Seq: 5, Line: 2, Kind: receipt.KindReordered},
		},
		{
			name:  "moved back",
			items: []any{e[0], e[2], e[3], e[1], e[4]},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 2, Kind: receipt.KindReordered},
		},
		{
			name:  "bad signature",
			items: []any{e[0], e[1], e[2], e[3], e[4], e[5], badSig},
			want:  receipt.ChainError{Owner: "emma", Seq: 6, Line: 7, Kind: receipt.KindBadSignature},
		},
		{
			name:  "signed by an unknown key",
			items: []any{e[0], otherKey, e[1]},
			want:  receipt.ChainError{Owner: "emma", Seq: 6, Line: 2, Kind: receipt.KindBadSignature},
		},
		{
			name:  "checkpoint head differs",
			items: []any{e[0], e[1], e[2], wrongHead, e[3]},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindEdited}, detail: "checkpoint at line 4",
		},
		{
			name:  "the first break wins across owners",
			items: []any{n[0], e[0], e[2], n[1], rehash(t, func() receipt.Receipt { r := n[1]; r.Seq = 1; return r }())},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindRemoved},
		},
		{
			name:  "not JSON",
			items: []any{e[0], "{not json", e[1]},
			want:  receipt.ChainError{Line: 2, Kind: receipt.KindMalformed},
		},
		{
			name:  "unknown type",
			items: []any{e[0], `{"type":"note"}`},
			want:  receipt.ChainError{Line: 2, Kind: receipt.KindMalformed}, detail: `"note"`,
		},
		{
			name:  "unknown key",
			items: []any{e[0], e[1], strings.Replace(good, `{`, `{"admin":true,`, 1)},
			want:  receipt.ChainError{Line: 3, Kind: receipt.KindMalformed}, detail: "admin",
		},
		{
			name:  "bad hash",
			items: []any{e[0], e[1], strings.Replace(good, `"hash":"`, `"hash":"X`, 1)},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindMalformed},
		},
		{
			name:  "value without kind",
			items: []any{e[0], e[1], strings.Replace(good, `"bill":{"string":`, `"bill":{"str":`, 1)},
			want:  receipt.ChainError{Line: 3, Kind: receipt.KindMalformed},
		},
		{
			name:  "amount without scale",
			items: []any{e[0], e[1], strings.Replace(good, `,"scale":2`, ``, 1)},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindMalformed}, detail: "scale",
		},
		{
			name:  "trailing data",
			items: []any{e[0], e[1], good + ` {}`},
			want:  receipt.ChainError{Line: 3, Kind: receipt.KindMalformed},
		},
		{
			name:  "checkpoint signature not base64",
			items: []any{e[0], `{"head":"` + e[0].Hash.String() + `","seq":1,"sig":"***","type":"checkpoint"}`},
			want:  receipt.ChainError{Seq: 1, Line: 2, Kind: receipt.KindMalformed}, detail: "base64",
		},
		{
			name:  "checkpoint without head",
			items: []any{e[0], `{"owner":"emma","seq":1,"type":"checkpoint"}`},
			want:  receipt.ChainError{Owner: "emma", Seq: 1, Line: 2, Kind: receipt.KindMalformed}, detail: "head",
		},
		{
			name:  "bad time",
			items: []any{e[0], e[1], strings.Replace(good, `"time":"2026`, `"time":"26`, 1)},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindMalformed}, detail: "RFC 3339",
		},
		{
			name:  "seq 0",
			items: []any{e[0], e[1], strings.Replace(good, `"seq":3`, `"seq":0`, 1)},
			want:  receipt.ChainError{Owner: "emma", Line: 3, Kind: receipt.KindMalformed}, detail: "seq",
		},
		{
			name:  "scale edited",
			items: []any{e[0], e[1], strings.Replace(good, `,"scale":2`, `,"scale":0`, 1)},
			want:  receipt.ChainError{Owner: "emma", Seq: 3, Line: 3, Kind: receipt.KindEdited},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			_, err := receipt.Verify(bytes.NewReader(jsonl(t, tt.items...)), verifier)
			var ce *receipt.ChainError
			if !errors.As(err, &ce) {
				t.Fatalf("Verify() error = %v, want a *ChainError", err)
			}
			if diff := cmp.Diff(tt.want, *ce, cmpopts.IgnoreFields(receipt.ChainError{}, "Detail", "Err")); diff != "" {
				t.Errorf("Verify() error mismatch (-want, +got):\n%s\n(error: %v)", diff, err)
			}
			if !strings.Contains(ce.Detail, tt.detail) {
				t.Errorf("Verify() error detail = %q, want it to contain %q", ce.Detail, tt.detail)
			}
			if testing.Verbose() {
				t.Log(err)
			}
		})
	}
}

func TestChainErrorMessage(t *testing.T) {
	t.Parallel()
	tests := []struct {
		err  receipt.ChainError
		want string
	}{
		{
			err:  receipt.ChainError{Owner: "emma", Seq: 5, Line: 7, Kind: receipt.KindEdited, Detail: "its hash does not match its content"},
			want: `receipt chain of owner "emma": line 7 (seq 5): receipt was edited: its hash does not match its content`,
		},
		{
			err:  receipt.ChainError{Line: 2, Kind: receipt.KindMalformed, Detail: "not a JSON object"},
			want: `receipt log: line 2: line is malformed: not a JSON object`,
		},
		{
			err:  receipt.ChainError{Owner: "noah", Seq: 6, Line: 9, Kind: receipt.KindRemoved},
			want: `receipt chain of owner "noah": line 9 (seq 6): receipts were removed`,
		},
	}
	for _, tt := range tests {
		if got := tt.err.Error(); got != tt.want {
			t.Errorf("Error() = %q, want %q", got, tt.want)
		}
	}
	inner := errors.New("inner")
	if err := (&receipt.ChainError{Err: inner}); !errors.Is(err, inner) {
		t.Error("ChainError does not unwrap to Err")
	}
}

func TestVerifyLongLine(t *testing.T) {
	t.Parallel()
	e := chainOf(t, "emma", 2)
	long := `{"type":"receipt","sent":"` + strings.Repeat("a", receipt.MaxLine) + `"}`
	_, err := receipt.Verify(bytes.NewReader(jsonl(t, e[0], long, e[1])), nil)
	var ce *receipt.ChainError
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Kind != receipt.KindMalformed {
		t.Errorf("Verify() error = %v, want line 2 malformed", err)
	}
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestVerifyReadError(t *testing.T) {
	t.Parallel()
	_, err := receipt.Verify(failingReader{}, nil)
	var ce *receipt.ChainError
	if err == nil || errors.As(err, &ce) {
		t.Errorf("Verify() error = %v, want the reader's error", err)
	}
}

func TestReadJSONLMalformed(t *testing.T) {
	t.Parallel()
	e := chainOf(t, "emma", 2)
	rs, _, err := receipt.ReadJSONL(bytes.NewReader(jsonl(t, e[0], `{"type":"receipt","seq":"one"}`, e[1])))
	var ce *receipt.ChainError
	if !errors.As(err, &ce) || ce.Line != 2 || ce.Kind != receipt.KindMalformed {
		t.Fatalf("ReadJSONL() error = %v, want line 2 malformed", err)
	}
	if diff := cmp.Diff(e[:1], rs); diff != "" {
		t.Errorf("ReadJSONL() receipts before the bad line mismatch (-want, +got):\n%s", diff)
	}
}

func TestWriteJSONLInvalid(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := receipt.WriteJSONL(&b, []receipt.Receipt{{Seq: 1, Message: "\xff"}}); !errors.Is(err, receipt.ErrInvalid) {
		t.Errorf("WriteJSONL() error = %v, want ErrInvalid", err)
	}
	if err := receipt.WriteCheckpoints(&b, []receipt.Checkpoint{{Seq: 1, Owner: "\xff"}}); !errors.Is(err, receipt.ErrInvalid) {
		t.Errorf("WriteCheckpoints() error = %v, want ErrInvalid", err)
	}
}

// TestVerifyCheckpointsOfTwoSigners: a file with the gateway's own
// checkpoints and an export's verifies with the export's key alone; the
// other signer's checkpoints are counted as unknown keys, not errors.
func TestVerifyCheckpointsOfTwoSigners(t *testing.T) {
	t.Parallel()
	e := chainOf(t, "emma", 3)
	gatewayKey := receipt.NewEd25519Signer("intentplane-mcp", priv2)
	data := jsonl(t, e[0], e[1], checkpoint(t, gatewayKey, e[1]), e[2], checkpoint(t, gatewayKey, e[2]), checkpoint(t, signer, e[2]))
	rep, err := receipt.VerifyAnchored(bytes.NewReader(data), verifier)
	if err != nil {
		t.Fatalf("VerifyAnchored: %v", err)
	}
	if rep.Checkpoints != 3 || rep.UnknownKeys["intentplane-mcp"] != 2 || len(rep.UnknownKeys) != 1 {
		t.Fatalf("report %+v; want 3 checkpoints, 2 of them by the unknown key intentplane-mcp", rep)
	}
}
