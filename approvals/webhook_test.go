package approvals_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// TestWebhook: each request is posted, signed, to the receiver; decisions
// come back through signed callbacks, for the approvers the callback key
// may speak for.
func TestWebhook(t *testing.T) {
	t.Parallel()
	f := newFixture(t, nil)
	hookKey, botKey := key(21), key(22)
	var mu sync.Mutex
	var got []approvals.WebhookPayload
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if err := approvals.VerifyWebhook(hookKey.Public().(ed25519.PublicKey), r.Header.Get(approvals.SignatureHeader), body, f.clock.Now(), time.Minute, false); err != nil {
			t.Errorf("payload signature: %v", err)
			http.Error(w, "bad signature", http.StatusUnauthorized)
			return
		}
		var p approvals.WebhookPayload
		if err := json.Unmarshal(body, &p); err != nil {
			t.Error(err)
		}
		mu.Lock()
		got = append(got, p)
		mu.Unlock()
	}))
	defer receiver.Close()
	hook, err := approvals.NewWebhook(f.srv, approvals.WebhookConfig{
		URL: receiver.URL, Key: hookKey, CallbackKey: botKey.Public().(ed25519.PublicKey), Approvers: []string{"alice", "bob"},
	})
	if err != nil {
		t.Fatal(err)
	}
	callbacks := httptest.NewServer(hook)
	defer callbacks.Close()

	p := pending(t, 2000000, "", intent.LevelFourEyes)
	p.Facts = map[string]intent.Value{"vendor_name": intent.Str("ACME Supplies"), "open_credit": intent.Int(0)}
	tk, err := hook.Request(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	if len(got) != 1 || got[0].ID != tk.ID || got[0].Operation != p.Hash.String() || got[0].URL != tk.URL ||
		got[0].Args["amount"].Text != "20,000.00 EUR" || *got[0].Args["amount"].Minor != 2000000 || got[0].Resolved[0].Source != "registry:beneficiaries" ||
		got[0].Facts["vendor_name"] != (approvals.WebhookArg{Kind: "string", Text: "ACME Supplies"}) || got[0].Facts["open_credit"].Text != "0" {
		t.Fatalf("payload %+v", got)
	}
	mu.Unlock()

	post := func(cb approvals.WebhookCallback, signer ed25519.PrivateKey, at time.Time) (int, string) {
		t.Helper()
		body, _ := json.Marshal(cb)
		req, _ := http.NewRequest("POST", callbacks.URL, bytes.NewReader(body))
		req.Header.Set(approvals.SignatureHeader, approvals.SignCallback(signer, body, at))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		text, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(text)
	}
	cb := func(approver, nonce string) approvals.WebhookCallback {
		return approvals.WebhookCallback{ID: tk.ID, Operation: p.Hash.String(), Approver: approver, Decision: "approve", Nonce: nonce}
	}
	now := f.clock.Now()
	for _, tt := range []struct {
		name string
		cb   approvals.WebhookCallback
		key  ed25519.PrivateKey
		at   time.Time
		want int
		says string // in the answer's body
	}{
		{"forged", cb("alice", "nonce-forged-0001"), key(23), now, http.StatusUnauthorized, ""},
		{"stale", cb("alice", "nonce-stale-00001"), botKey, now.Add(-time.Hour), http.StatusUnauthorized, ""},
		{"approver it may not speak for", cb("carol", "nonce-carol-00001"), botKey, now, http.StatusForbidden, ""},
		{"another operation", approvals.WebhookCallback{ID: tk.ID, Operation: intent.OperationHash{1}.String(), Approver: "alice", Decision: "approve", Nonce: "nonce-other-00001"}, botKey, now, http.StatusConflict, "refused: decision is for another operation"},
		{"alice", cb("alice", "nonce-alice-00001"), botKey, now, http.StatusOK, "pending"},
		{"replayed callback", cb("alice", "nonce-alice-00001"), botKey, now, http.StatusUnauthorized, "nonce already used"},
		{"alice twice", cb("alice", "nonce-alice-00002"), botKey, now, http.StatusConflict, "refused: approver already decided on this request"},
	} {
		if code, text := post(tt.cb, tt.key, tt.at); code != tt.want || !strings.Contains(text, tt.says) {
			t.Errorf("%s: %d %q, want %d %q", tt.name, code, text, tt.want, tt.says)
		}
	}
	if out := f.outcome(tk.ID); out.Status != approvals.StatusPending || len(out.Approvals) != 1 {
		t.Fatalf("after alice: %+v", out)
	}
	// The second approver decides on the page instead.
	if r := f.signedIn("bob").decide(tk.ID, true); r.code != http.StatusSeeOther {
		t.Fatalf("bob on the page: %d", r.code)
	}
	out := f.outcome(tk.ID)
	g, err := approval.Evaluate(f.srv.Keys(), p.Hash, "m-emma", f.clock.Now(), out.Approvals)
	if err != nil || !g.FourEyes || out.Votes[0].Via != "webhook" || out.Votes[1].Via != "page" {
		t.Fatalf("outcome %+v, %v", out, err)
	}

	// Callbacks disabled: decisions only through the page.
	pageOnly, _ := approvals.NewWebhook(f.srv, approvals.WebhookConfig{URL: receiver.URL, Key: hookKey})
	rec := httptest.NewRecorder()
	pageOnly.ServeHTTP(rec, httptest.NewRequest("POST", "/", bytes.NewReader([]byte("{}"))))
	if rec.Code != http.StatusForbidden {
		t.Fatalf("callback with callbacks disabled: %d", rec.Code)
	}
	// A receiver that is down: the request stays on the page.
	down, _ := approvals.NewWebhook(f.srv, approvals.WebhookConfig{URL: "http://127.0.0.1:1/", Key: hookKey})
	tk, err = down.Request(context.Background(), pending(t, 150000, "down", intent.LevelConfirm))
	if !errors.Is(err, approvals.ErrNotDelivered) || f.outcome(tk.ID).Status != approvals.StatusPending {
		t.Fatalf("undelivered: %v", err)
	}
	_, err = approvals.NewWebhook(f.srv, approvals.WebhookConfig{URL: receiver.URL, Key: hookKey, Approvers: []string{"alice", "mallory"}})
	var ae *approvals.ApproverError
	if !errors.As(err, &ae) || ae.Index != 1 || ae.Name != "mallory" || ae.Field != "webhook" {
		t.Fatalf("webhook for an unknown approver: %v", err)
	}
}
