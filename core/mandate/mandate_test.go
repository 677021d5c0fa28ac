package mandate_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

const (
	keyID    = "emma-bank-app"
	audience = "intentplane"
)

var (
	// issuerKey is derived from a fixed seed, so that tokens are
	// reproducible (Ed25519 signatures are deterministic).
	issuerKey = ed25519.NewKeyFromSeed([]byte("intentplane-test-issuer-seed-32b"))
	otherKey  = ed25519.NewKeyFromSeed([]byte("intentplane-other-issuer-seed-32"))

	// now is the fake clock's time: inside the test mandate's window.
	now = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
)

func testMandate() mandate.Mandate {
	return mandate.Mandate{
		ID:       "m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6",
		Issuer:   keyID,
		Audience: audience,
		Owner:    "customer:emma",
		Scope:    []intent.Action{"banking.send_money", "banking.get_balance"},
		Budget:   intent.Money{Currency: "CHF", Amount: 125000},
		Claims: map[string][]string{
			"payees":  {"CH93 0076 2011 6238 5295 7", "DE89370400440532013000"},
			"subject": {"Rent \"December\""},
		},
		Mode:      mandate.ModeStrict,
		NotBefore: time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC),
		Expiry:    time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC),
	}
}

func issue(t testing.TB, m mandate.Mandate) string {
	t.Helper()
	tok, err := mandate.Issue(m, keyID, issuerKey)
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	return tok
}

func verifier() mandate.Verifier {
	return mandate.Verifier{
		Keys:     mandate.StaticKeys{keyID: issuerKey.Public().(ed25519.PublicKey)},
		Audience: audience,
		Now:      func() time.Time { return now },
	}
}

// sign builds a token around any payload, signed with priv: how an issuer
// that does not use Issue would spell it.
func sign(payload string, priv ed25519.PrivateKey) string {
	sig := ed25519.Sign(priv, append([]byte("intentplane-mandate-v1\x00"), payload...))
	enc := base64.RawURLEncoding
	return "ipm1." + enc.EncodeToString([]byte(payload)) + "." + enc.EncodeToString(sig)
}

// payloadOf returns the decoded payload of a token.
func payloadOf(t testing.TB, tok string) string {
	t.Helper()
	p, _, _ := strings.Cut(strings.TrimPrefix(tok, "ipm1."), ".")
	b, err := base64.RawURLEncoding.DecodeString(p)
	if err != nil {
		t.Fatalf("payload: %v", err)
	}
	return string(b)
}

// goldenPayload is the canonical payload of testMandate. It is frozen:
// mandates issued today must verify forever, so if this test fails, fix
// the code, not the constant.
const goldenPayload = `{"audience":"intentplane",` +
	`"budget":{"amount":125000,"currency":"CHF"},` +
	`"claims":{"payees":["CH93 0076 2011 6238 5295 7","DE89370400440532013000"],"subject":["Rent \"December\""]},` +
	`"expiry":"2026-11-30T10:00:00.000000000Z",` +
	`"id":"m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6",` +
	`"issuer":"emma-bank-app",` +
	`"mode":"strict",` +
	`"not_before":"2026-11-30T08:00:00.000000000Z",` +
	`"owner":"customer:emma",` +
	`"scope":["banking.get_balance","banking.send_money"]}`

// goldenToken is the whole token Issue makes of testMandate with
// issuerKey. It freezes the prefix, the base64 alphabet and the signing
// domain as well as the payload.
const goldenToken = "ipm1.eyJhdWRpZW5jZSI6ImludGVudHBsYW5lIiwiYnVkZ2V0Ijp7ImFtb3VudCI6MTI1MDAwLCJjdXJyZW5jeSI6IkNIRiJ9LCJjbGFpbXMiOnsicGF5ZWVzIjpbIkNIOTMgMDA3NiAyMDExIDYyMzggNTI5NSA3IiwiREU4OTM3MDQwMDQ0MDUzMjAxMzAwMCJdLCJzdWJqZWN0IjpbIlJlbnQgXCJEZWNlbWJlclwiIl19LCJleHBpcnkiOiIyMDI2LTExLTMwVDEwOjAwOjAwLjAwMDAwMDAwMFoiLCJpZCI6Im0tMWYzYTljMGU1YjdkMjQ2OGFjZTBmMWUyZDNjNGI1YTYiLCJpc3N1ZXIiOiJlbW1hLWJhbmstYXBwIiwibW9kZSI6InN0cmljdCIsIm5vdF9iZWZvcmUiOiIyMDI2LTExLTMwVDA4OjAwOjAwLjAwMDAwMDAwMFoiLCJvd25lciI6ImN1c3RvbWVyOmVtbWEiLCJzY29wZSI6WyJiYW5raW5nLmdldF9iYWxhbmNlIiwiYmFua2luZy5zZW5kX21vbmV5Il19.AM0GmSdhjWamUoleRsJ9pfExOYi04H3asmPaiWeV3s9bNkEfwZld_BzUnuxDgru8q1HYLLy5PCd8i5xndxZEBQ"

func TestGolden(t *testing.T) {
	t.Parallel()
	tok := issue(t, testMandate())
	if got := payloadOf(t, tok); got != goldenPayload {
		t.Errorf("payload drifted (-want, +got):\n%s", cmp.Diff(goldenPayload, got))
	}
	if tok != goldenToken {
		t.Errorf("token drifted:\n got %s\nwant %s", tok, goldenToken)
	}
}

func TestRoundTrip(t *testing.T) {
	t.Parallel()
	m := testMandate()
	got, err := verifier().Verify(context.Background(), issue(t, m))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := m
	want.Scope = []intent.Action{"banking.get_balance", "banking.send_money"}
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("Verify (-want, +got):\n%s", diff)
	}
}

func TestIssueNormalizes(t *testing.T) {
	t.Parallel()
	zurich := time.FixedZone("CET", 3600)
	m := testMandate()
	m.Issuer = "" // set from the key id
	m.Scope = []intent.Action{"b.y", "a.x", "b.y", "a.x"}
	m.Claims = nil
	m.NotBefore = time.Date(2026, 11, 30, 9, 0, 0, 999_999_999, zurich)
	m.Expiry = time.Date(2026, 11, 30, 11, 0, 0, 1, zurich)
	got, err := verifier().Verify(context.Background(), issue(t, m))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := m
	want.Issuer = keyID
	want.Scope = []intent.Action{"a.x", "b.y"}
	want.NotBefore = time.Date(2026, 11, 30, 8, 0, 0, 0, time.UTC)
	want.Expiry = time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	if diff := cmp.Diff(&want, got); diff != "" {
		t.Errorf("Verify (-want, +got):\n%s", diff)
	}
	if strings.Contains(payloadOf(t, issue(t, m)), "claims") {
		t.Errorf("payload of a mandate without claims has a claims member")
	}
}

// TestBudgets: a mandate's further budgets are signed sorted by currency,
// survive verification, and BudgetIn finds each, the main one included; a
// mandate without them keeps the payload it always had (TestGolden).
func TestBudgets(t *testing.T) {
	t.Parallel()
	m := testMandate()
	m.Budgets = []intent.Money{{Currency: "USD", Amount: 200000}, {Currency: "EUR", Amount: 0}}
	tok := issue(t, m)
	if p := payloadOf(t, tok); !strings.Contains(p, `"budgets":[{"amount":0,"currency":"EUR"},{"amount":200000,"currency":"USD"}]`) {
		t.Errorf("payload %s lacks the sorted budgets", p)
	}
	got, err := verifier().Verify(context.Background(), tok)
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	want := []intent.Money{{Currency: "CHF", Amount: 125000}, {Currency: "EUR", Amount: 0}, {Currency: "USD", Amount: 200000}}
	if diff := cmp.Diff(want, got.AllBudgets()); diff != "" {
		t.Errorf("AllBudgets (-want, +got):\n%s", diff)
	}
	for _, b := range want {
		if got, ok := got.BudgetIn(b.Currency); !ok || got != b {
			t.Errorf("BudgetIn(%s) = %v, %v; want %v, true", b.Currency, got, ok, b)
		}
	}
	if b, ok := got.BudgetIn("GBP"); ok {
		t.Errorf("BudgetIn(GBP) = %v, true; want none", b)
	}
	if _, ok := (*mandate.Mandate)(nil).BudgetIn("CHF"); ok {
		t.Errorf("nil mandate has a budget")
	}
	// Unsorted budgets are not the canonical encoding.
	p := strings.Replace(payloadOf(t, tok), `[{"amount":0,"currency":"EUR"},{"amount":200000,"currency":"USD"}]`,
		`[{"amount":200000,"currency":"USD"},{"amount":0,"currency":"EUR"}]`, 1)
	if _, err := verifier().Verify(context.Background(), sign(p, issuerKey)); !errors.Is(err, mandate.ErrNotCanonical) {
		t.Errorf("Verify of unsorted budgets = %v; want ErrNotCanonical", err)
	}
}

func TestIssueRefuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		change func(m *mandate.Mandate)
		keyID  string
		priv   ed25519.PrivateKey
		want   error
	}{
		{name: "empty id", change: func(m *mandate.Mandate) { m.ID = "" }, want: mandate.ErrInvalid},
		{name: "id with a NUL byte", change: func(m *mandate.Mandate) { m.ID = "m-1\x00USD" }, want: mandate.ErrInvalid},
		{name: "issuer is not key id", change: func(m *mandate.Mandate) { m.Issuer = "mallory" }, want: mandate.ErrInvalid},
		{name: "empty key id", keyID: "-", change: func(m *mandate.Mandate) { m.Issuer = "" }, want: mandate.ErrInvalid},
		{name: "empty audience", change: func(m *mandate.Mandate) { m.Audience = "" }, want: mandate.ErrInvalid},
		{name: "empty owner", change: func(m *mandate.Mandate) { m.Owner = "" }, want: mandate.ErrInvalid},
		{name: "nil scope", change: func(m *mandate.Mandate) { m.Scope = nil }, want: mandate.ErrInvalid},
		{name: "empty action", change: func(m *mandate.Mandate) { m.Scope = []intent.Action{""} }, want: mandate.ErrInvalid},
		{name: "no mode", change: func(m *mandate.Mandate) { m.Mode = "" }, want: mandate.ErrInvalid},
		{name: "unknown mode", change: func(m *mandate.Mandate) { m.Mode = "lenient" }, want: mandate.ErrInvalid},
		{name: "expiry equals not-before", change: func(m *mandate.Mandate) { m.Expiry = m.NotBefore }, want: mandate.ErrInvalid},
		{name: "expiry within the same second", change: func(m *mandate.Mandate) { m.Expiry = m.NotBefore.Add(time.Millisecond) }, want: mandate.ErrInvalid},
		{name: "expiry before not-before", change: func(m *mandate.Mandate) { m.Expiry = m.NotBefore.Add(-time.Hour) }, want: mandate.ErrInvalid},
		{name: "zero not-before", change: func(m *mandate.Mandate) { m.NotBefore = time.Time{} }, want: mandate.ErrInvalid},
		{name: "year 10000", change: func(m *mandate.Mandate) { m.Expiry = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC) }, want: mandate.ErrInvalid},
		{name: "lower-case currency", change: func(m *mandate.Mandate) { m.Budget.Currency = "chf" }, want: mandate.ErrInvalid},
		{name: "no currency", change: func(m *mandate.Mandate) { m.Budget = intent.Money{} }, want: mandate.ErrInvalid},
		{name: "negative budget", change: func(m *mandate.Mandate) { m.Budget.Amount = -1 }, want: mandate.ErrInvalid},
		{name: "second budget in the main currency", change: func(m *mandate.Mandate) {
			m.Budgets = []intent.Money{{Currency: "CHF", Amount: 1}}
		}, want: mandate.ErrInvalid},
		{name: "two budgets in one currency", change: func(m *mandate.Mandate) {
			m.Budgets = []intent.Money{{Currency: "USD", Amount: 1}, {Currency: "EUR", Amount: 1}, {Currency: "USD", Amount: 2}}
		}, want: mandate.ErrInvalid},
		{name: "budget without currency", change: func(m *mandate.Mandate) { m.Budgets = []intent.Money{{Amount: 1}} }, want: mandate.ErrInvalid},
		{name: "lower-case budget currency", change: func(m *mandate.Mandate) { m.Budgets = []intent.Money{{Currency: "usd", Amount: 1}} }, want: mandate.ErrInvalid},
		{name: "negative second budget", change: func(m *mandate.Mandate) { m.Budgets = []intent.Money{{Currency: "USD", Amount: -1}} }, want: mandate.ErrInvalid},
		{name: "empty claim name", change: func(m *mandate.Mandate) { m.Claims[""] = []string{"x"} }, want: mandate.ErrInvalid},
		{name: "claim without values", change: func(m *mandate.Mandate) { m.Claims["payees"] = nil }, want: mandate.ErrInvalid},
		{name: "empty claim value", change: func(m *mandate.Mandate) { m.Claims["payees"] = []string{""} }, want: mandate.ErrInvalid},
		{name: "claim value not UTF-8", change: func(m *mandate.Mandate) { m.Claims["payees"] = []string{"\xff"} }, want: mandate.ErrInvalid},
		{name: "owner too long", change: func(m *mandate.Mandate) { m.Owner = intent.Owner(strings.Repeat("o", 1025)) }, want: mandate.ErrInvalid},
		{name: "token too large", change: func(m *mandate.Mandate) {
			m.Claims["payees"] = strings.Split(strings.Repeat(strings.Repeat("p", 1000)+",", 12), ",")[:12]
		}, want: mandate.ErrInvalid},
		{name: "short private key", priv: issuerKey[:32], want: mandate.ErrBadKey},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			m := testMandate()
			if tt.change != nil {
				tt.change(&m)
			}
			id, priv := keyID, issuerKey
			if tt.keyID == "-" {
				id = ""
			}
			if tt.priv != nil {
				priv = tt.priv
			}
			tok, err := mandate.Issue(m, id, priv)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Issue = %q, %v; want %v", tok, err, tt.want)
			}
		})
	}
}

// sentinels are the reasons Verify gives; each refusal matches exactly one.
var sentinels = []error{
	mandate.ErrMalformed, mandate.ErrNotCanonical, mandate.ErrUnknownIssuer,
	mandate.ErrBadSignature, mandate.ErrWrongAudience, mandate.ErrNotYetValid,
	mandate.ErrExpired, mandate.ErrRevoked, mandate.ErrRevocationUnavailable,
}

func TestVerifyRefuses(t *testing.T) {
	t.Parallel()
	good := issue(t, testMandate())
	payload, sig, _ := strings.Cut(strings.TrimPrefix(good, "ipm1."), ".")
	enc := base64.RawURLEncoding
	withMandate := func(change func(m *mandate.Mandate)) string {
		m := testMandate()
		change(&m)
		return issue(t, m)
	}
	// resigned replaces old by new in the golden payload and signs the
	// result with the right key.
	resigned := func(old, new string) string {
		if !strings.Contains(goldenPayload, old) {
			t.Fatalf("golden payload has no %q", old)
		}
		return sign(strings.Replace(goldenPayload, old, new, 1), issuerKey)
	}
	flipSig := func() string {
		b, _ := enc.DecodeString(sig)
		b[10] ^= 0x01
		return "ipm1." + payload + "." + enc.EncodeToString(b)
	}
	errRevoker := errors.New("revocation list: connection refused")

	tests := []struct {
		name   string
		token  string
		change func(v *mandate.Verifier)
		want   error
	}{
		// Signature and issuer.
		{name: "tampered payload byte", token: "ipm1." + enc.EncodeToString([]byte(strings.Replace(goldenPayload, "customer:emma", "customer:emmb", 1))) + "." + sig, want: mandate.ErrBadSignature},
		{name: "tampered budget", token: "ipm1." + enc.EncodeToString([]byte(strings.Replace(goldenPayload, "125000", "925000", 1))) + "." + sig, want: mandate.ErrBadSignature},
		{name: "tampered signature", token: flipSig(), want: mandate.ErrBadSignature},
		{name: "signature of another token", token: "ipm1." + payload + "." + strings.SplitN(withMandate(func(m *mandate.Mandate) { m.ID = "m-2" }), ".", 3)[2], want: mandate.ErrBadSignature},
		{name: "signed without domain", token: "ipm1." + payload + "." + enc.EncodeToString(ed25519.Sign(issuerKey, []byte(goldenPayload))), want: mandate.ErrBadSignature},
		{name: "other key, same issuer", token: sign(goldenPayload, otherKey), want: mandate.ErrBadSignature},
		{name: "unknown issuer", token: resigned(`"issuer":"emma-bank-app"`, `"issuer":"mallory"`), want: mandate.ErrUnknownIssuer},
		{name: "no keys", token: good, change: func(v *mandate.Verifier) { v.Keys = nil }, want: mandate.ErrUnknownIssuer},
		{name: "key of wrong size", token: good, change: func(v *mandate.Verifier) { v.Keys = mandate.StaticKeys{keyID: make([]byte, 31)} }, want: mandate.ErrUnknownIssuer},

		// Audience, time, revocation.
		{name: "wrong audience", token: withMandate(func(m *mandate.Mandate) { m.Audience = "other-gateway" }), want: mandate.ErrWrongAudience},
		{name: "verifier without audience", token: good, change: func(v *mandate.Verifier) { v.Audience = "" }, want: mandate.ErrWrongAudience},
		{name: "not yet valid", token: good, change: at(testMandate().NotBefore.Add(-31 * time.Second)), want: mandate.ErrNotYetValid},
		{name: "not yet valid without skew", token: good, change: func(v *mandate.Verifier) {
			v.Now = func() time.Time { return testMandate().NotBefore.Add(-time.Second) }
			v.Skew = -1
		}, want: mandate.ErrNotYetValid},
		{name: "expired", token: good, change: at(testMandate().Expiry.Add(30 * time.Second)), want: mandate.ErrExpired},
		{name: "expired with larger skew", token: good, change: func(v *mandate.Verifier) {
			v.Now = func() time.Time { return testMandate().Expiry.Add(time.Hour) }
			v.Skew = time.Hour
		}, want: mandate.ErrExpired},
		{name: "revoked", token: good, change: func(v *mandate.Verifier) {
			v.Revoker = mandate.RevokerFunc(func(context.Context, string) (bool, error) { return true, nil })
		}, want: mandate.ErrRevoked},
		{name: "revoker error", token: good, change: func(v *mandate.Verifier) {
			v.Revoker = mandate.RevokerFunc(func(context.Context, string) (bool, error) { return false, errRevoker })
		}, want: mandate.ErrRevocationUnavailable},

		// Correctly signed, but not what Issue writes.
		{name: "keys reordered", token: resigned(`{"audience":"intentplane","budget":{"amount":125000,"currency":"CHF"},`, `{"budget":{"amount":125000,"currency":"CHF"},"audience":"intentplane",`), want: mandate.ErrNotCanonical},
		{name: "nested keys reordered", token: resigned(`{"amount":125000,"currency":"CHF"}`, `{"currency":"CHF","amount":125000}`), want: mandate.ErrNotCanonical},
		{name: "space after colon", token: resigned(`"mode":"strict"`, `"mode": "strict"`), want: mandate.ErrNotCanonical},
		{name: "leading space", token: resigned(`{"audience"`, ` {"audience"`), want: mandate.ErrNotCanonical},
		{name: "trailing newline", token: sign(goldenPayload+"\n", issuerKey), want: mandate.ErrNotCanonical},
		{name: "escaped letter", token: resigned(`"intentplane"`, `"intent\u0070lane"`), want: mandate.ErrNotCanonical},
		{name: "escaped colon", token: resigned(`"customer:emma"`, `"customer\u003aemma"`), want: mandate.ErrNotCanonical},
		{name: "unknown field", token: resigned(`,"scope"`, `,"admin":true,"scope"`), want: mandate.ErrNotCanonical},
		{name: "unknown field last", token: resigned(`"banking.send_money"]}`, `"banking.send_money"],"zz":1}`), want: mandate.ErrNotCanonical},
		{name: "duplicate key", token: resigned(`"id":`, `"id":"m-evil","id":`), want: mandate.ErrNotCanonical},
		{name: "duplicate scope key", token: resigned(`"scope":`, `"scope":["admin.all"],"scope":`), want: mandate.ErrNotCanonical},
		{name: "key in other case", token: resigned(`"owner"`, `"Owner"`), want: mandate.ErrNotCanonical},
		{name: "scope unsorted", token: resigned(`["banking.get_balance","banking.send_money"]`, `["banking.send_money","banking.get_balance"]`), want: mandate.ErrNotCanonical},
		{name: "scope duplicated", token: resigned(`["banking.get_balance",`, `["banking.get_balance","banking.get_balance",`), want: mandate.ErrNotCanonical},
		{name: "sub-second time", token: resigned(`08:00:00.000000000Z`, `08:00:00.000000001Z`), want: mandate.ErrNotCanonical},
		{name: "empty claims object", token: sign(strings.Replace(goldenPayload, goldenPayload[strings.Index(goldenPayload, `"claims"`):strings.Index(goldenPayload, `"expiry"`)], `"claims":{},`, 1), issuerKey), want: mandate.ErrNotCanonical},
		{name: "null claim values", token: resigned(`"subject":["Rent \"December\""]`, `"subject":null`), want: mandate.ErrNotCanonical},
		{name: "missing mode", token: resigned(`"mode":"strict",`, ``), want: mandate.ErrNotCanonical},
		{name: "signed unknown mode", token: resigned(`"mode":"strict"`, `"mode":"lenient"`), want: mandate.ErrMalformed},
		{name: "signed empty scope", token: resigned(`["banking.get_balance","banking.send_money"]`, `[]`), want: mandate.ErrMalformed},
		{name: "signed negative budget", token: resigned(`125000`, `-125000`), want: mandate.ErrMalformed},
		{name: "signed expiry before not-before", token: resigned(`"expiry":"2026-11-30T10`, `"expiry":"2026-11-30T07`), want: mandate.ErrMalformed},
		{name: "amount as decimal", token: resigned(`125000`, `125000.0`), want: mandate.ErrMalformed},
		{name: "amount in exponent form", token: resigned(`125000`, `1.25e5`), want: mandate.ErrMalformed},
		{name: "amount as string", token: resigned(`125000`, `"125000"`), want: mandate.ErrMalformed},
		{name: "time in other format", token: resigned(`2026-11-30T08:00:00.000000000Z`, `2026-11-30T08:00:00Z`), want: mandate.ErrMalformed},
		{name: "payload not JSON", token: sign("not json", issuerKey), want: mandate.ErrMalformed},
		{name: "payload null", token: sign("null", issuerKey), want: mandate.ErrMalformed},
		{name: "payload empty object", token: sign("{}", issuerKey), want: mandate.ErrMalformed},
		{name: "two payloads", token: sign(goldenPayload+goldenPayload, issuerKey), want: mandate.ErrMalformed},

		// Not a token.
		{name: "empty", token: "", want: mandate.ErrMalformed},
		{name: "wrong prefix", token: "ipm2." + payload + "." + sig, want: mandate.ErrMalformed},
		{name: "prefix in upper case", token: "IPM1." + payload + "." + sig, want: mandate.ErrMalformed},
		{name: "no prefix", token: payload + "." + sig, want: mandate.ErrMalformed},
		{name: "JWT with alg none", token: "eyJhbGciOiJub25lIn0." + payload + ".", want: mandate.ErrMalformed},
		{name: "no signature", token: "ipm1." + payload, want: mandate.ErrMalformed},
		{name: "empty signature", token: "ipm1." + payload + ".", want: mandate.ErrMalformed},
		{name: "three parts", token: good + "." + sig, want: mandate.ErrMalformed},
		{name: "truncated signature", token: good[:len(good)-1], want: mandate.ErrMalformed},
		{name: "truncated payload", token: "ipm1." + payload[:len(payload)-4] + "." + sig, want: mandate.ErrMalformed},
		{name: "short signature", token: "ipm1." + payload + "." + sig[:len(sig)-4], want: mandate.ErrMalformed},
		{name: "padded signature", token: good + "==", want: mandate.ErrMalformed},
		{name: "newline in payload", token: "ipm1." + payload[:10] + "\n" + payload[10:] + "." + sig, want: mandate.ErrMalformed},
		{name: "standard base64 alphabet", token: "ipm1." + strings.NewReplacer("-", "+", "_", "/").Replace(payload) + "." + strings.NewReplacer("-", "+", "_", "/").Replace(sig), want: mandate.ErrMalformed},
		{name: "non-zero trailing bits", token: good[:len(good)-1] + string(good[len(good)-1]+1), want: mandate.ErrMalformed},
		{name: "oversized", token: "ipm1." + strings.Repeat("A", 16<<10) + "." + sig, want: mandate.ErrMalformed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verifier()
			if tt.change != nil {
				tt.change(&v)
			}
			m, err := v.Verify(context.Background(), tt.token)
			if m != nil || !errors.Is(err, tt.want) {
				t.Fatalf("Verify = %+v, %v; want nil, %v", m, err, tt.want)
			}
			var e *mandate.Error
			if !errors.As(err, &e) {
				t.Fatalf("Verify error %T is not a *mandate.Error", err)
			}
			for _, s := range sentinels {
				if s != tt.want && errors.Is(err, s) {
					t.Errorf("Verify error %q also matches %v", err, s)
				}
			}
			if tt.name == "revoker error" && !errors.Is(err, errRevoker) {
				t.Errorf("Verify error %q does not wrap the revoker's error", err)
			}
			if strings.Contains(err.Error(), "connection refused") {
				t.Errorf("Verify error %q leaks the revoker's error", err)
			}
		})
	}
}

// TestVerifyEveryPrefix checks that no truncation of a token verifies.
func TestVerifyEveryPrefix(t *testing.T) {
	t.Parallel()
	good := issue(t, testMandate())
	v := verifier()
	for i := range len(good) {
		if m, err := v.Verify(context.Background(), good[:i]); err == nil {
			t.Fatalf("Verify(token[:%d]) = %+v, nil; want an error", i, m)
		}
	}
}

func TestVerifyAccepts(t *testing.T) {
	t.Parallel()
	nbf, exp := testMandate().NotBefore, testMandate().Expiry
	tests := []struct {
		name   string
		change func(v *mandate.Verifier)
	}{
		{name: "inside the window", change: func(*mandate.Verifier) {}},
		{name: "at not-before", change: at(nbf)},
		{name: "within skew before not-before", change: at(nbf.Add(-30 * time.Second))},
		{name: "within skew after expiry", change: at(exp.Add(29 * time.Second))},
		{name: "just before expiry without skew", change: func(v *mandate.Verifier) {
			v.Now = func() time.Time { return exp.Add(-time.Nanosecond) }
			v.Skew = -1
		}},
		{name: "not revoked", change: func(v *mandate.Verifier) {
			v.Revoker = mandate.RevokerFunc(func(_ context.Context, id string) (bool, error) {
				return id != testMandate().ID, nil
			})
		}},
		{name: "clock in another zone", change: at(now.In(time.FixedZone("PST", -8*3600)))},
	}
	tok := issue(t, testMandate())
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verifier()
			tt.change(&v)
			if _, err := v.Verify(context.Background(), tok); err != nil {
				t.Fatalf("Verify: %v", err)
			}
		})
	}
}

func TestErrorMessages(t *testing.T) {
	t.Parallel()
	tok := issue(t, testMandate())
	tests := []struct {
		name   string
		token  string
		change func(v *mandate.Verifier)
		want   string
		code   intent.Code
	}{
		{
			name:   "expired",
			token:  tok,
			change: at(time.Date(2026, 11, 30, 10, 5, 12, 0, time.UTC)),
			want:   "mandate m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6: expired at 2026-11-30T10:00:00Z (now 2026-11-30T10:05:12Z); ask the user to issue a new mandate",
			code:   intent.CodeMandateExpired,
		},
		{
			name:   "not yet valid",
			token:  tok,
			change: at(time.Date(2026, 11, 30, 7, 0, 0, 0, time.UTC)),
			want:   "mandate m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6: not valid before 2026-11-30T08:00:00Z (now 2026-11-30T07:00:00Z)",
			code:   intent.CodeMandateExpired,
		},
		{
			name:   "wrong audience",
			token:  tok,
			change: func(v *mandate.Verifier) { v.Audience = "other" },
			want:   `mandate m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6: issued for audience "intentplane", not "other"`,
			code:   intent.CodeMandateAudience,
		},
		{
			name: "revoked",
			change: func(v *mandate.Verifier) {
				v.Revoker = mandate.RevokerFunc(func(context.Context, string) (bool, error) { return true, nil })
			},
			token: tok,
			want:  "mandate m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6: revoked by its issuer; ask the user to issue a new mandate",
			code:  intent.CodeMandateRevoked,
		},
		{
			name: "revocation unavailable",
			change: func(v *mandate.Verifier) {
				v.Revoker = mandate.RevokerFunc(func(context.Context, string) (bool, error) { return false, errors.New("db down") })
			},
			token: tok,
			want:  "mandate m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6: revocation status unavailable; the mandate is refused until it can be checked",
			code:  intent.CodeUnavailable,
		},
		{
			name:  "bad signature names no mandate",
			token: sign(goldenPayload, otherKey),
			want:  `mandate: bad signature: it does not verify with the key of issuer "emma-bank-app"`,
			code:  intent.CodeMandateInvalid,
		},
		{
			name:  "unknown issuer",
			token: sign(strings.Replace(goldenPayload, keyID, "mallory", 1), otherKey),
			want:  `mandate: unknown issuer "mallory"`,
			code:  intent.CodeMandateInvalid,
		},
		{
			name:  "malformed",
			token: "eyJhbGciOiJub25lIn0.e30.",
			want:  `mandate: malformed token: does not start with "ipm1."`,
			code:  intent.CodeMandateInvalid,
		},
		{
			name:  "not canonical",
			token: sign(strings.Replace(goldenPayload, `"mode":"strict"`, `"mode": "strict"`, 1), issuerKey),
			want:  "mandate m-1f3a9c0e5b7d2468ace0f1e2d3c4b5a6: payload is not canonical (first difference at byte 294); it was not produced by Issue",
			code:  intent.CodeMandateInvalid,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			v := verifier()
			if tt.change != nil {
				tt.change(&v)
			}
			_, err := v.Verify(context.Background(), tt.token)
			var e *mandate.Error
			if !errors.As(err, &e) {
				t.Fatalf("Verify error = %v, want a *mandate.Error", err)
			}
			if got := err.Error(); got != tt.want {
				t.Errorf("Error() = %q\n           want %q", got, tt.want)
			}
			if got := e.Code(); got != tt.code {
				t.Errorf("Code() = %q, want %q", got, tt.code)
			}
		})
	}
}

func TestAllowsAndClaim(t *testing.T) {
	t.Parallel()
	m, err := verifier().Verify(context.Background(), issue(t, testMandate()))
	if err != nil {
		t.Fatalf("Verify: %v", err)
	}
	tests := []struct {
		name   string
		m      *mandate.Mandate
		action intent.Action
		allows bool
		claim  string
		values []string
	}{
		{name: "in scope", m: m, action: "banking.send_money", allows: true, claim: "payees", values: []string{"CH93 0076 2011 6238 5295 7", "DE89370400440532013000"}},
		{name: "out of scope", m: m, action: "banking.update_password", claim: "recipients"},
		{name: "prefix of an action", m: m, action: "banking.send", claim: "payee"},
		{name: "empty action", m: m, action: ""},
		{name: "nil mandate", m: nil, action: "banking.send_money", claim: "payees"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := tt.m.Allows(tt.action); got != tt.allows {
				t.Errorf("Allows(%q) = %v, want %v", tt.action, got, tt.allows)
			}
			if diff := cmp.Diff(tt.values, tt.m.Claim(tt.claim)); diff != "" {
				t.Errorf("Claim(%q) (-want, +got):\n%s", tt.claim, diff)
			}
		})
	}
}

func TestClaimReturnsACopy(t *testing.T) {
	t.Parallel()
	m := testMandate()
	m.Claim("payees")[0] = "attacker"
	if got := m.Claims["payees"][0]; got == "attacker" {
		t.Errorf("changing Claim's result changed the mandate")
	}
}

func TestNewID(t *testing.T) {
	t.Parallel()
	a, err := mandate.NewID(nil)
	if err != nil {
		t.Fatalf("NewID: %v", err)
	}
	b, _ := mandate.NewID(nil)
	if len(a) != 34 || !strings.HasPrefix(a, "m-") || a == b {
		t.Errorf("NewID = %q, %q; want two different m-<32 hex>", a, b)
	}
	got, err := mandate.NewID(strings.NewReader(strings.Repeat("\x01", 16)))
	if want := "m-01010101010101010101010101010101"; err != nil || got != want {
		t.Errorf("NewID(fixed) = %q, %v; want %q", got, err, want)
	}
	if _, err := mandate.NewID(strings.NewReader("short")); err == nil {
		t.Errorf("NewID(short reader) succeeded")
	}
}

func TestKeyText(t *testing.T) {
	t.Parallel()
	pub, priv, err := mandate.GenerateKey(nil)
	if err != nil {
		t.Fatalf("GenerateKey: %v", err)
	}
	gotPriv, err := mandate.ParsePrivateKey(mandate.EncodePrivateKey(priv) + "\n")
	if err != nil || !priv.Equal(gotPriv) {
		t.Errorf("ParsePrivateKey(EncodePrivateKey(k)) = %v, %v; want k", gotPriv, err)
	}
	gotPub, err := mandate.ParsePublicKey(" " + mandate.EncodePublicKey(pub) + "\r\n")
	if err != nil || !pub.Equal(gotPub) {
		t.Errorf("ParsePublicKey(EncodePublicKey(k)) = %v, %v; want k", gotPub, err)
	}

	// Frozen text forms of the test issuer's key.
	if got, want := mandate.EncodePrivateKey(issuerKey), "ed25519-priv:aW50ZW50cGxhbmUtdGVzdC1pc3N1ZXItc2VlZC0zMmI="; got != want {
		t.Errorf("EncodePrivateKey = %q, want %q", got, want)
	}

	encPub := mandate.EncodePublicKey(pub)
	encPriv := mandate.EncodePrivateKey(priv)
	bad := []struct {
		name  string
		text  string
		parse func(string) error
	}{
		{name: "public as private", text: encPub, parse: parsePriv},
		{name: "private as public", text: encPriv, parse: parsePub},
		{name: "no prefix", text: strings.TrimPrefix(encPub, "ed25519-pub:"), parse: parsePub},
		{name: "short", text: "ed25519-pub:AAAA", parse: parsePub},
		{name: "not base64", text: "ed25519-pub:!!!!", parse: parsePub},
		{name: "unpadded", text: strings.TrimRight(encPub, "="), parse: parsePub},
		{name: "line break inside", text: encPub[:20] + "\n" + encPub[20:], parse: parsePub},
		{name: "full private key instead of seed", text: "ed25519-priv:" + base64.StdEncoding.EncodeToString(priv), parse: parsePriv},
		{name: "empty", text: "", parse: parsePriv},
	}
	for _, tt := range bad {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if err := tt.parse(tt.text); !errors.Is(err, mandate.ErrBadKey) {
				t.Errorf("parse(%q) = %v, want %v", tt.text, err, mandate.ErrBadKey)
			}
		})
	}
	// A private key given where a public one is expected (intentplane
	// receipts verify --pub) is named as such, and never echoed.
	err = parsePub(encPriv)
	if err == nil || !strings.Contains(err.Error(), "this is a private key") || !strings.Contains(err.Error(), ".pub") || strings.Contains(err.Error(), strings.TrimPrefix(encPriv, "ed25519-priv:")) {
		t.Errorf("ParsePublicKey(private key) error = %v; want it to say it is a private key, ask for the .pub file, and not echo the key", err)
	}
}

func parsePriv(s string) error { _, err := mandate.ParsePrivateKey(s); return err }
func parsePub(s string) error  { _, err := mandate.ParsePublicKey(s); return err }

func FuzzVerify(f *testing.F) {
	good := issue(f, testMandate())
	f.Add(good)
	f.Add(goldenToken)
	f.Add(good[:len(good)/2])
	f.Add(sign(strings.Replace(goldenPayload, `"mode":"strict"`, `"mode": "strict"`, 1), issuerKey))
	f.Add(sign(strings.Replace(goldenPayload, `"id":`, `"id":"x","id":`, 1), issuerKey))
	f.Add(sign("{}", issuerKey))
	f.Add("ipm1..")
	f.Add("")
	v := verifier()
	f.Fuzz(func(t *testing.T, token string) {
		m, err := v.Verify(context.Background(), token)
		if err != nil {
			var e *mandate.Error
			if m != nil || !errors.As(err, &e) {
				t.Fatalf("Verify = %+v, %v; want nil, *mandate.Error", m, err)
			}
			return
		}
		// Accepted: the token must be exactly what Issue makes of the
		// mandate with the known key (Ed25519 signing is deterministic).
		again, err := mandate.Issue(*m, keyID, issuerKey)
		if err != nil {
			t.Fatalf("Verify accepted %q, but Issue refuses its mandate: %v", token, err)
		}
		if again != token {
			t.Fatalf("Verify accepted %q, which Issue did not produce (Issue gives %q)", token, again)
		}
	})
}

func BenchmarkVerify(b *testing.B) {
	tok := issue(b, testMandate())
	v := verifier()
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := v.Verify(ctx, tok); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkEd25519Verify is the floor for BenchmarkVerify: the signature
// check alone, over a message of the same size.
func BenchmarkEd25519Verify(b *testing.B) {
	msg := append([]byte("intentplane-mandate-v1\x00"), goldenPayload...)
	pub := issuerKey.Public().(ed25519.PublicKey)
	sig := ed25519.Sign(issuerKey, msg)
	b.ReportAllocs()
	for b.Loop() {
		if !ed25519.Verify(pub, msg, sig) {
			b.Fatal("bad signature")
		}
	}
}

// at returns a change that sets the verifier's clock to t.
func at(t time.Time) func(v *mandate.Verifier) {
	return func(v *mandate.Verifier) { v.Now = func() time.Time { return t } }
}
