package main

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/approvals/passkey/passkeytest"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/internal/pgtest"
	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/postgres"
)

// TestApprovalsPasskeysEmbedded: `approvals passkeys list|revoke` on an
// embedded store (passkeysRevoke).
func TestApprovalsPasskeysEmbedded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "state.db")
	passkeysRevoke(t, path, func() approvalStore {
		s, err := embedded.Open(path, embedded.Options{})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}, true)
}

// TestApprovalsPasskeysPostgres: the same on PostgreSQL, in a schema of
// its own (skipped without PG_URL, failed under CI=true).
func TestApprovalsPasskeysPostgres(t *testing.T) {
	t.Parallel()
	dsn, _ := pgtest.Schema(t)
	s, err := postgres.Open(context.Background(), dsn, postgres.Config{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	passkeysRevoke(t, dsn, func() approvalStore { return pgStore{s} }, false)
}

// passkeysRevoke: lena registered a phone and a security key on the page
// (kept and recorded as the page does) and approved a payment with the
// phone; the phone is lost. An operator lists her passkeys and revokes
// the phone: a receipt records who, which, when and why; the store keeps
// only the key, and `receipts verify` still accepts the earlier approval
// but refuses one made with the phone after the revocation. Revoking
// again is an error; --all revokes what remains. open opens the store
// for the test's own reads and writes; closeAfter says it must be closed
// before the command runs (an embedded file is held by one process).
func passkeysRevoke(t *testing.T, spec string, open func() approvalStore, closeAfter bool) {
	ctx := context.Background()
	now := time.Now().UTC().Truncate(time.Second)
	rp := passkey.RP{ID: "approve.example.com", Origin: "https://approve.example.com"}
	phone, key := passkeytest.New(rp, "lena-phone"), passkeytest.New(rp, "lena-key")
	op := intent.OperationHash{0x42}
	paid := func(at time.Time, id string) receipt.Receipt {
		return receipt.Receipt{Owner: "emma", Time: at, Action: "ap.pay_bill", Verdict: intent.Allow, Result: receipt.ResultExecuted, Operation: op.String(),
			Approvals: []receipt.Evidence{{ID: id, Approver: "lena", Level: "confirm", Channel: receipt.ChannelPasskey, IssuedAt: at, Passkey: phone.Assert(passkey.Challenge(op, id))}}}
	}
	use := func(fn func(st approvalStore)) {
		t.Helper()
		st := open()
		fn(st)
		if closeAfter {
			if err := st.Close(); err != nil {
				t.Fatal(err)
			}
		}
	}
	use(func(st approvalStore) {
		creds := []passkey.Credential{phone.Credential("lena", now.Add(-48*time.Hour)), key.Credential("lena", now.Add(-47*time.Hour))}
		creds[0].Name, creds[0].LastUsed = "lena's phone", now.Add(-time.Hour)
		for _, c := range creds {
			if _, err := st.Append(ctx, passkey.RegistrationReceipt(c)); err != nil {
				t.Fatal(err)
			}
		}
		b, err := json.Marshal(creds)
		if err != nil {
			t.Fatal(err)
		}
		if err := st.PutEntry(ctx, approvals.SpacePasskeys, "lena", b, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil { //clock:ok the page's "never"
			t.Fatal(err)
		}
		if _, err := st.Append(ctx, paid(now.Add(-time.Hour), "a-before")); err != nil {
			t.Fatal(err)
		}
	})
	b64 := base64.RawURLEncoding.EncodeToString
	out, err := runCLI(t, "approvals", "passkeys", "list", "--store", spec, "--approver", "lena")
	if err != nil || !strings.Contains(out, b64(phone.ID)+"  registered "+now.Add(-48*time.Hour).Format(time.RFC3339)+"  last used "+now.Add(-time.Hour).Format(time.RFC3339)+"  at https://approve.example.com  \"lena's phone\"") ||
		!strings.Contains(out, b64(key.ID)+"  registered "+now.Add(-47*time.Hour).Format(time.RFC3339)+"  last used never") {
		t.Fatalf("list: %v\n%s", err, out)
	}
	out, err = runCLI(t, "approvals", "passkeys", "list", "--store", spec, "--approver", "lena", "--json")
	if creds, rerr := passkey.ReadCredentials(strings.NewReader(out)); err != nil || rerr != nil || len(creds) != 2 {
		t.Fatalf("list --json, read as receipts verify --passkeys reads it: %v, %v\n%s", err, rerr, out)
	}
	out, err = runCLI(t, "approvals", "passkeys", "revoke", "--store", spec, "--approver", "lena", "--id", b64(phone.ID), "--by", "ops-anna", "--reason", "phone lost")
	if err != nil || !strings.Contains(out, "revoked: passkey "+b64(phone.ID)+" of lena") || strings.Contains(out, "no passkey left") {
		t.Fatalf("revoke --id: %v\n%s", err, out)
	}
	if _, err := runCLI(t, "approvals", "passkeys", "revoke", "--store", spec, "--approver", "lena", "--id", b64(phone.ID), "--by", "ops-anna"); err == nil || !strings.Contains(err.Error(), "no such passkey") {
		t.Fatalf("revoking the phone again: %v", err)
	}
	if _, err := runCLI(t, "approvals", "passkeys", "revoke", "--store", spec, "--approver", "lena", "--by", "ops-anna"); err == nil || !strings.Contains(err.Error(), "--id CREDID or --all") {
		t.Fatalf("revoke without --id or --all: %v", err)
	}
	if out, err := runCLI(t, "receipts", "verify", "--store", spec); err != nil || !strings.Contains(out, "1 passkey assertions") {
		t.Fatalf("verify before any later approval: %v\n%s", err, out)
	}
	use(func(st approvalStore) {
		creds, err := approvals.Passkeys(ctx, st, "lena")
		if err != nil || len(creds) != 1 || string(creds[0].ID) != string(key.ID) {
			t.Fatalf("passkeys kept after revoking the phone: %v, %v", creds, err)
		}
		rs, err := st.(receiptStore).Receipts(ctx, "", 1, 0)
		if err != nil || len(rs) != 3 || rs[2].Action != passkey.ActionRevoke || rs[2].Facts["passkey.revoked_by"].Str != "ops-anna" ||
			rs[2].Facts["passkey.means"].Str != passkey.MeansOperator || rs[2].Facts["passkey.reason"].Str != "phone lost" || rs[2].Facts["passkey.credential"].Str != b64(phone.ID) {
			t.Fatalf("receipts without owner %+v, %v; want the revocation last", rs, err)
		}
		// A cloned phone approves after the revocation.
		if _, err := st.Append(ctx, paid(rs[2].Time.Add(time.Minute), "a-after")); err != nil {
			t.Fatal(err)
		}
	})
	if _, err := runCLI(t, "receipts", "verify", "--store", spec); err == nil || !strings.Contains(err.Error(), "approval a-after by lena: passkey: credential revoked before the approval") ||
		strings.Contains(err.Error(), "a-before") {
		t.Fatalf("verify with an approval after the revocation: %v", err)
	}
	out, err = runCLI(t, "approvals", "passkeys", "revoke", "--store", spec, "--approver", "lena", "--all", "--by", "ops-anna")
	if err != nil || !strings.Contains(out, "revoked: passkey "+b64(key.ID)) || !strings.Contains(out, "lena has no passkey left") {
		t.Fatalf("revoke --all: %v\n%s", err, out)
	}
	if out, err := runCLI(t, "approvals", "passkeys", "list", "--store", spec, "--approver", "lena"); err != nil || !strings.Contains(out, "lena has no passkey") {
		t.Fatalf("list after --all: %v\n%s", err, out)
	}
}
