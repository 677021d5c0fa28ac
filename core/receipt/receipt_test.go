package receipt_test

import (
	"crypto/ed25519"
	"crypto/sha256"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

var t0 = time.Date(2026, 3, 14, 9, 26, 53, 589793238, time.UTC)

// fixed is a receipt with every field set, for the golden tests.
func fixed() receipt.Receipt {
	return receipt.Receipt{
		Seq:       7,
		Owner:     "acme-gmbh",
		Time:      t0,
		Prev:      receipt.Hash(sha256.Sum256([]byte("previous"))),
		MandateID: "mnd_01",
		Action:    "ap.pay_bill",
		Sent:      `{"action":"ap.pay_bill","args":{"vendor":"ACME Supplies","iban":"DE89 3704 0044 0532 0130 00","amount":"1250.00"}}`,
		Args: intent.Args{
			"vendor": intent.Str("v-42"),
			"iban":   intent.Str("DE89370400440532013000"),
			"amount": intent.AmountValue(125000, 2),
			"urgent": intent.Bool(false),
			"count":  intent.Int(1),
		},
		Resolved: []intent.Resolved{{
			Param: "iban",
			Sent:  "DE89 3704 0044 0532 0130 00",
			Value: "DE89370400440532013000",
			Provenance: intent.Provenance{
				Source:   "registry:bank_accounts",
				RecordID: "res.partner.bank/17",
				Version:  "3",
				At:       time.Date(2025, 11, 2, 8, 0, 0, 0, time.UTC),
			},
		}},
		Facts: map[string]intent.Value{
			"bill.open":     intent.AmountValue(125000, 2),
			"account.age":   intent.Int(133),
			"account.trust": intent.Bool(true),
		},
		Verdict:   intent.Allow,
		Code:      "",
		Message:   "Paid \"INV-2290\"\n",
		Policies:  []string{"ap.cooling_off", "ap.known_payee"},
		Operation: strings.Repeat("ab", 32),
		Approvals: []receipt.Evidence{{
			ID:        "apv_9",
			Approver:  "lena",
			Level:     "confirm",
			IssuedAt:  t0.Add(-time.Minute),
			ExpiresAt: t0.Add(4 * time.Minute),
		}},
		Result: receipt.ResultExecuted,
		Output: "payment 881 registered",
	}
}

// The hashed bytes of a receipt are frozen: if this test fails, the
// encoding drifted and every stored receipt would stop verifying. This is
// version 1, which receipts written before version 2 use.
func TestCanonicalGolden(t *testing.T) {
	t.Parallel()
	r := fixed()
	r.Version = receipt.Version1
	got, err := r.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"action":"ap.pay_bill",` +
		`"approvals":[{"approver":"lena","expires":"2026-03-14T09:30:53.589793238Z","id":"apv_9","issued":"2026-03-14T09:25:53.589793238Z","level":"confirm"}],` +
		`"args":{"amount":{"amount":125000,"scale":2},"count":{"int":1},"iban":{"string":"DE89370400440532013000"},"urgent":{"bool":false},"vendor":{"string":"v-42"}},` +
		`"decision":"allow",` +
		`"facts":{"account.age":{"int":133},"account.trust":{"bool":true},"bill.open":{"amount":125000,"scale":2}},` +
		`"mandate":"mnd_01",` +
		`"message":"Paid \"INV-2290\"\u000a",` +
		`"operation":"abababababababababababababababababababababababababababababababab",` +
		`"output":"payment 881 registered",` +
		`"owner":"acme-gmbh",` +
		`"policies":["ap.cooling_off","ap.known_payee"],` +
		`"prev":"6da0633528deaa0144e7b058315f0b753ec0b945163a72bf96a0d18180f9de0d",` +
		`"resolved":[{"param":"iban","provenance":{"at":"2025-11-02T08:00:00.000000000Z","record":"res.partner.bank/17","source":"registry:bank_accounts","version":"3"},"sent":"DE89 3704 0044 0532 0130 00","value":"DE89370400440532013000"}],` +
		`"result":"executed",` +
		`"sent":"{\"action\":\"ap.pay_bill\",\"args\":{\"vendor\":\"ACME Supplies\",\"iban\":\"DE89 3704 0044 0532 0130 00\",\"amount\":\"1250.00\"}}",` +
		`"seq":7,` +
		`"time":"2026-03-14T09:26:53.589793238Z"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Canonical() mismatch (-want, +got):\n%s", diff)
	}
	checkHash(t, r, got, "c2d48d98ddb84329db59f93afa262e36a3823b40a23c72093358cf1053764355")
}

// checkHash checks that r's hash is SHA-256(0x00 || canonical) and the
// frozen hash want, and returns it.
func checkHash(t *testing.T, r receipt.Receipt, canonical []byte, want string) receipt.Hash {
	t.Helper()
	h, err := r.ComputeHash()
	if err != nil {
		t.Fatal(err)
	}
	if sum := receipt.Hash(sha256.Sum256(append([]byte{0x00}, canonical...))); h != sum {
		t.Errorf("ComputeHash() = %s, want SHA-256(0x00 || Canonical()) = %s", h, sum)
	}
	if h.String() != want {
		t.Errorf("ComputeHash() = %s, want frozen %s", h, want)
	}
	return h
}

// TestCanonicalGoldenV2 freezes the version 2 encoding of the receipt
// TestCanonicalGolden freezes in version 1, item by item as Canonical
// documents it.
func TestCanonicalGoldenV2(t *testing.T) {
	t.Parallel()
	r := fixed()
	r.Version = receipt.Version2
	got, err := r.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]byte(goldenBinary(receipt.Version2, "")), got); diff != "" {
		t.Errorf("Canonical() mismatch (-want, +got):\n%s", diff)
	}
	checkHash(t, r, got, "78e9c5d2ab138e90c0be3e4530bb9ce63d1f57d5ad452fcc7eceb542da48db1c")
	r.Version = 4
	if _, err := r.ComputeHash(); !errors.Is(err, receipt.ErrInvalid) {
		t.Errorf("ComputeHash() of version 4 error = %v, want ErrInvalid", err)
	}
	r.Version = receipt.Version2
	r.Approvals[0].Channel = receipt.ChannelPage
	if _, err := r.ComputeHash(); !errors.Is(err, receipt.ErrInvalid) {
		t.Errorf("ComputeHash() of version 2 with a channel error = %v, want ErrInvalid", err)
	}
}

// TestCanonicalGoldenV3 freezes the version 3 encoding: version 2's items
// and, after each approval, its channel and passkey assertion. Version
// zero is version 3.
func TestCanonicalGoldenV3(t *testing.T) {
	t.Parallel()
	r := fixed()
	got, err := r.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	// An approval with no channel recorded: six empty items.
	if diff := cmp.Diff([]byte(goldenBinary(receipt.Version3, "\x00\x00\x00\x00\x00\x00")), got); diff != "" {
		t.Errorf("Canonical() mismatch (-want, +got):\n%s", diff)
	}
	checkHash(t, r, got, "87e116cf4a8eb8eee25f1c121c3e69297017aca2bb128894964ed8ed33847ae5")
	r = fixedPasskey()
	got, err = r.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	tail := "\x07passkey" + "\x00" + "\x01\xc1" + "\x02ad" + "\x02{}" + "\x02\xff\x00"
	if diff := cmp.Diff([]byte(goldenBinary(receipt.Version3, tail)), got); diff != "" {
		t.Errorf("Canonical() with a passkey mismatch (-want, +got):\n%s", diff)
	}
	checkHash(t, r, got, "b5286092f4cb44267dc33bc75d7cec048f37b1bba21683900e3493a94c018944")
	r.Version = receipt.Version3
	if h, err := r.ComputeHash(); err != nil || h != rehash(t, fixedPasskey()).Hash {
		t.Errorf("ComputeHash() of Version3 = %s, %v; want that of version zero", h, err)
	}
}

// fixedPasskey is fixed() with its approval given with a passkey.
func fixedPasskey() receipt.Receipt {
	r := fixed()
	r.Approvals[0].Channel = receipt.ChannelPasskey
	r.Approvals[0].Passkey = intent.Assertion{CredentialID: []byte{0xc1}, AuthenticatorData: []byte("ad"), ClientDataJSON: []byte("{}"), Signature: []byte{0xff, 0x00}}
	return r
}

// goldenBinary is the binary encoding of fixed() in version (2 or 3),
// with approvalTail after the approval's times, written item by item as
// Canonical documents it.
func goldenBinary(version byte, approvalTail string) string {
	str := func(s string) string { return string(rune(len(s))) + s } // every string here is shorter than 128 bytes
	prev := sha256.Sum256([]byte("previous"))
	return string([]byte{version}) +
		"\x07" + // seq
		str("acme-gmbh") +
		"\x01\xba\xa7\xa9\x9b\x0d\xd6\x8f\x9e\x99\x02" + // time: 1, seconds 1773480413 (zigzag varint), nanoseconds 589793238 (uvarint)
		string(prev[:]) +
		str("mnd_01") + str("ap.pay_bill") + str(fixed().Sent) +
		"\x05" + // args, by key
		str("amount") + "\x03\x90\xa1\x0f\x02" + // amount 125000 (zigzag varint), scale 2
		str("count") + "\x02\x02" + // int 1
		str("iban") + "\x01" + str("DE89370400440532013000") +
		str("urgent") + "\x04\x00" + // bool false
		str("vendor") + "\x01" + str("v-42") +
		"\x01" + // resolved
		str("iban") + str("DE89 3704 0044 0532 0130 00") + str("DE89370400440532013000") +
		str("registry:bank_accounts") + str("res.partner.bank/17") + str("3") +
		"\x01\x80\xbe\xb8\x90\x0d\x00" + // at: 2025-11-02T08:00:00Z
		"\x03" + // facts
		str("account.age") + "\x02\x8a\x02" + // int 133
		str("account.trust") + "\x04\x01" +
		str("bill.open") + "\x03\x90\xa1\x0f\x02" +
		str("allow") + str("") + str("Paid \"INV-2290\"\n") +
		"\x02" + str("ap.cooling_off") + str("ap.known_payee") +
		str(strings.Repeat("ab", 32)) +
		"\x01" + str("apv_9") + str("lena") + str("confirm") +
		"\x01\xc2\xa6\xa9\x9b\x0d\xd6\x8f\x9e\x99\x02" + // issued, a minute before
		"\x01\x9a\xab\xa9\x9b\x0d\xd6\x8f\x9e\x99\x02" + // expires, four minutes after
		approvalTail +
		str("executed") + str("payment 881 registered")
}

func TestCheckpointGolden(t *testing.T) {
	t.Parallel()
	c := receipt.Checkpoint{
		Owner: "acme-gmbh",
		Seq:   7,
		Head:  receipt.Hash(sha256.Sum256([]byte("head"))),
		Time:  t0,
		KeyID: "gw-2026",
		Sig:   []byte("not part of the hash"),
	}
	got, err := c.Canonical()
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"head":"9f2e6d33a3717ee826353a404ba4618d1aeeb6879ad7936bce8ed5f46814924d",` +
		`"key":"gw-2026","owner":"acme-gmbh","seq":7,"time":"2026-03-14T09:26:53.589793238Z"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("Canonical() mismatch (-want, +got):\n%s", diff)
	}
	h, err := c.SigHash()
	if err != nil {
		t.Fatal(err)
	}
	const wantHash = "56889d2e22ab01910fea018a4814d41f22b98c16a6be856eba9b5f3a8a3f9070"
	if h.String() != wantHash {
		t.Errorf("SigHash() = %s, want frozen %s", h, wantHash)
	}
}

func TestLink(t *testing.T) {
	t.Parallel()
	first, err := receipt.Link(receipt.Receipt{Owner: "emma", Time: t0, Verdict: intent.Deny}, nil)
	if err != nil {
		t.Fatal(err)
	}
	berlin := time.FixedZone("CET", 3600)
	policies := []string{"b", "a", "c"}
	tests := []struct {
		name string
		in   receipt.Receipt
		prev *receipt.Receipt
		want receipt.Receipt // Hash is checked against ComputeHash
	}{
		{
			name: "first",
			in:   receipt.Receipt{Seq: 9, Prev: receipt.Hash{1}, Hash: receipt.Hash{2}, Owner: "emma", Time: t0, Verdict: intent.Deny},
			want: receipt.Receipt{Seq: 1, Owner: "emma", Time: t0, Verdict: intent.Deny},
		},
		{
			name: "after prev",
			in:   receipt.Receipt{Owner: "emma", Time: t0.Add(time.Second), Verdict: intent.Allow},
			prev: &first,
			want: receipt.Receipt{Seq: 2, Prev: first.Hash, Owner: "emma", Time: t0.Add(time.Second), Verdict: intent.Allow},
		},
		{
			name: "time in UTC",
			in:   receipt.Receipt{Owner: "emma", Time: t0.In(berlin)},
			want: receipt.Receipt{Seq: 1, Owner: "emma", Time: t0},
		},
		{
			name: "policies sorted",
			in:   receipt.Receipt{Owner: "emma", Time: t0, Policies: policies},
			want: receipt.Receipt{Seq: 1, Owner: "emma", Time: t0, Policies: []string{"a", "b", "c"}},
		},
		{
			name: "sent not UTF-8",
			in:   receipt.Receipt{Owner: "emma", Time: t0, Sent: "\xff{}"},
			want: receipt.Receipt{Seq: 1, Owner: "emma", Time: t0, Sent: "base64:/3t9"},
		},
		{
			name: "output not UTF-8",
			in:   receipt.Receipt{Owner: "emma", Time: t0, Output: "ok\xff"},
			want: receipt.Receipt{Seq: 1, Owner: "emma", Time: t0, Output: "ok\uFFFD"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			got, err := receipt.Link(tt.in, tt.prev)
			if err != nil {
				t.Fatalf("Link() error = %v", err)
			}
			h, err := got.ComputeHash()
			if err != nil {
				t.Fatal(err)
			}
			if got.Hash != h || h.IsZero() {
				t.Errorf("Link().Hash = %s, want ComputeHash() = %s", got.Hash, h)
			}
			if got.Time.Location() != time.UTC {
				t.Errorf("Link().Time location = %v, want UTC", got.Time.Location())
			}
			tt.want.Hash, tt.want.Version = h, receipt.CurrentVersion
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Link() mismatch (-want, +got):\n%s", diff)
			}
		})
	}
	if diff := cmp.Diff([]string{"b", "a", "c"}, policies); diff != "" {
		t.Errorf("Link() changed the caller's policies (-want, +got):\n%s", diff)
	}
}

func TestLinkErrors(t *testing.T) {
	t.Parallel()
	other, err := receipt.Link(receipt.Receipt{Owner: "noah", Time: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		in   receipt.Receipt
		prev *receipt.Receipt
	}{
		{name: "zero time", in: receipt.Receipt{Owner: "emma"}},
		{name: "prev of another owner", in: receipt.Receipt{Owner: "emma", Time: t0}, prev: &other},
		{name: "value of invalid kind", in: receipt.Receipt{Owner: "emma", Time: t0, Args: intent.Args{"x": {}}}},
		{name: "message not UTF-8", in: receipt.Receipt{Owner: "emma", Time: t0, Message: "\xff"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if _, err := receipt.Link(tt.in, tt.prev); !errors.Is(err, receipt.ErrInvalid) {
				t.Errorf("Link() error = %v, want ErrInvalid", err)
			}
		})
	}
}

// TestHashFields checks the rules of Canonical, in both versions: empty
// and nil are the same, values are hashed with their kind and scale, and
// the version is covered.
func TestHashFields(t *testing.T) {
	t.Parallel()
	for _, v := range []uint8{receipt.Version1, receipt.Version2, receipt.Version3} {
		t.Run(fmt.Sprintf("version %d", v), func(t *testing.T) {
			t.Parallel()
			testHashFields(t, v)
		})
	}
}

func testHashFields(t *testing.T, version uint8) {
	base := receipt.Receipt{Seq: 1, Owner: "emma", Time: t0, Args: intent.Args{"amount": intent.AmountValue(125000, 2)}, Version: version}
	hash := func(r receipt.Receipt) receipt.Hash {
		t.Helper()
		h, err := r.ComputeHash()
		if err != nil {
			t.Fatal(err)
		}
		return h
	}
	baseHash := hash(base)
	tests := []struct {
		name string
		edit func(*receipt.Receipt)
		same bool
	}{
		{name: "empty slices and maps", same: true, edit: func(r *receipt.Receipt) {
			r.Policies, r.Approvals, r.Resolved, r.Facts = []string{}, []receipt.Evidence{}, []intent.Resolved{}, map[string]intent.Value{}
		}},
		{name: "hash is not hashed", same: true, edit: func(r *receipt.Receipt) { r.Hash = receipt.Hash{7} }},
		{name: "scale", edit: func(r *receipt.Receipt) { r.Args = intent.Args{"amount": intent.AmountValue(125000, 0)} }},
		{name: "kind", edit: func(r *receipt.Receipt) { r.Args = intent.Args{"amount": intent.Int(125000)} }},
		{name: "one cent", edit: func(r *receipt.Receipt) { r.Args = intent.Args{"amount": intent.AmountValue(125001, 2)} }},
		{name: "nanosecond", edit: func(r *receipt.Receipt) { r.Time = r.Time.Add(1) }},
		{name: "empty args key", edit: func(r *receipt.Receipt) { r.Args[""] = intent.Str("") }},
		{name: "seq", edit: func(r *receipt.Receipt) { r.Seq = 2 }},
		{name: "empty approval", edit: func(r *receipt.Receipt) { r.Approvals = []receipt.Evidence{{}} }},
		{name: "version", edit: func(r *receipt.Receipt) { r.Version = r.Version%3 + 1 }},
		{name: "string moved to the next field", edit: func(r *receipt.Receipt) { r.Owner, r.MandateID = "", "emma" }},
	}
	if version == receipt.Version3 {
		pk := intent.Assertion{Signature: []byte{1}}
		tests = append(tests, []struct {
			name string
			edit func(*receipt.Receipt)
			same bool
		}{
			{name: "channel", edit: func(r *receipt.Receipt) { r.Approvals = []receipt.Evidence{{Channel: receipt.ChannelPage}} }},
			{name: "passkey", edit: func(r *receipt.Receipt) { r.Approvals = []receipt.Evidence{{Passkey: pk}} }},
			{name: "run", edit: func(r *receipt.Receipt) { r.Approvals = []receipt.Evidence{{Run: "ab"}} }},
			{name: "passkey bytes moved", edit: func(r *receipt.Receipt) {
				r.Approvals = []receipt.Evidence{{Passkey: intent.Assertion{ClientDataJSON: []byte{1}}}}
			}},
		}...)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := base
			r.Args = base.Args.Clone()
			tt.edit(&r)
			if got := hash(r) == baseHash; got != tt.same {
				t.Errorf("hash unchanged = %v, want %v", got, tt.same)
			}
		})
	}
}

func TestHashText(t *testing.T) {
	t.Parallel()
	h := receipt.Hash(sha256.Sum256([]byte("x")))
	b, err := h.MarshalText()
	if err != nil {
		t.Fatal(err)
	}
	var got receipt.Hash
	if err := got.UnmarshalText(b); err != nil || got != h {
		t.Errorf("UnmarshalText(MarshalText()) = %s, %v; want %s", got, err, h)
	}
	for _, s := range []string{"", "00", strings.ToUpper(h.String()), h.String() + "0", strings.Repeat("g", 64)} {
		if _, err := receipt.ParseHash(s); !errors.Is(err, intent.ErrBadHash) {
			t.Errorf("ParseHash(%q) error = %v, want ErrBadHash", s, err)
		}
	}
	if !(receipt.Hash{}).IsZero() || h.IsZero() {
		t.Error("IsZero wrong")
	}
}

func TestSentText(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{in: `{"action":"x"}`, want: `{"action":"x"}`},
		{in: "", want: ""},
		{in: "\xff", want: "base64:/w=="},
		{in: "base64:AAAA", want: "base64:YmFzZTY0OkFBQUE="},
	}
	for _, tt := range tests {
		if got := receipt.SentText([]byte(tt.in)); got != tt.want {
			t.Errorf("SentText(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestSignCheckpoint(t *testing.T) {
	t.Parallel()
	pub, priv := key(1)
	s := receipt.NewEd25519Signer("k1", priv)
	v := receipt.NewEd25519Verifier(map[string]ed25519.PublicKey{"k1": pub})
	head, err := receipt.Link(receipt.Receipt{Owner: "emma", Time: t0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c, err := receipt.SignCheckpoint(s, head, t0.In(time.FixedZone("X", 7200)))
	if err != nil {
		t.Fatal(err)
	}
	want := receipt.Checkpoint{Owner: "emma", Seq: 1, Head: head.Hash, Time: t0, KeyID: "k1", Sig: c.Sig}
	if diff := cmp.Diff(want, c); diff != "" {
		t.Errorf("SignCheckpoint() mismatch (-want, +got):\n%s", diff)
	}
	if err := c.Verify(v); err != nil {
		t.Errorf("Verify() = %v", err)
	}
	c.Seq = 2
	if err := c.Verify(v); !errors.Is(err, receipt.ErrBadSignature) {
		t.Errorf("Verify(changed seq) = %v, want ErrBadSignature", err)
	}
	c.KeyID = "k2"
	if err := c.Verify(v); !errors.Is(err, receipt.ErrUnknownKey) {
		t.Errorf("Verify(unknown key) = %v, want ErrUnknownKey", err)
	}
	head.Message = "edited"
	if _, err := receipt.SignCheckpoint(s, head, t0); !errors.Is(err, receipt.ErrInvalid) {
		t.Errorf("SignCheckpoint(edited head) = %v, want ErrInvalid", err)
	}
	if _, err := receipt.SignCheckpoint(s, receipt.Receipt{}, t0); !errors.Is(err, receipt.ErrInvalid) {
		t.Errorf("SignCheckpoint(no seq) = %v, want ErrInvalid", err)
	}
}

// key returns a deterministic Ed25519 key pair.
func key(seed byte) (ed25519.PublicKey, ed25519.PrivateKey) {
	priv := ed25519.NewKeyFromSeed(bytes32(seed))
	return priv.Public().(ed25519.PublicKey), priv
}

func bytes32(b byte) []byte {
	s := make([]byte, 32)
	for i := range s {
		s[i] = b
	}
	return s
}
