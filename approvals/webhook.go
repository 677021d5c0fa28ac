package approvals

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// The webhook's wire format.
//
// Request: Webhook.Request POSTs a WebhookPayload as JSON to
// WebhookConfig.URL with the header
//
//	Intentplane-Signature: t=<unix seconds>,ed25519=<base64 signature>
//
// The signature is WebhookConfig.Key's Ed25519 signature over
// "intentplane-webhook-v1\x00" + t + "\x00" + body; receivers verify it with
// the public key and refuse a t far from their clock.
//
// Callback: the receiver (a chat tool's bot, after its user chose) POSTs a
// WebhookCallback as JSON to the Webhook's handler with the same header,
// signed with the private key matching WebhookConfig.CallbackKey over
// "intentplane-callback-v1\x00" + t + "\x00" + body.
const (
	// SignatureHeader carries the timestamp and signature of a webhook
	// payload or callback.
	SignatureHeader = "Intentplane-Signature"

	webhookContext  = "intentplane-webhook-v1\x00"
	callbackContext = "intentplane-callback-v1\x00"
	maxCallbackBody = 4 << 10
)

// WebhookConfig configures a Webhook. The zero value of each optional field
// means the default stated on it.
type WebhookConfig struct {
	// URL receives each request as a signed POST. Required.
	URL string
	// Key signs payloads; receivers verify them with its public key.
	// Required.
	Key ed25519.PrivateKey
	// Client posts payloads; nil means a client with a 10 second timeout.
	Client *http.Client
	// CallbackKey verifies signed callbacks; nil means callbacks are
	// refused and decisions come only through the page.
	CallbackKey ed25519.PublicKey
	// Approvers names the approvers a callback may decide for: the holder
	// of the callback key vouches for their identity (it authenticated the
	// person in the chat tool). Empty means none.
	Approvers []string
	// MaxSkew is how far a callback's timestamp may be from now; zero
	// means 5 minutes.
	MaxSkew time.Duration
}

// Webhook is a Channel that posts each request, signed, to a URL, and takes
// decisions back through signed callbacks (ServeHTTP) or through the
// Server's page, where the request is listed too. Approvals are signed by
// the Server with the deciding approver's key, as on the page. It is safe
// for concurrent use.
type Webhook struct {
	s   *Server
	cfg WebhookConfig

	mu     sync.Mutex
	nonces map[string]time.Time // callback nonces seen, until when they are kept
}

var (
	_ Channel      = (*Webhook)(nil)
	_ http.Handler = (*Webhook)(nil)
)

// ErrNotDelivered is wrapped by Webhook.Request when the payload could not
// be delivered; the request is then still listed on the page.
var ErrNotDelivered = errors.New("approvals: webhook not delivered")

// NewWebhook returns a webhook channel whose requests are held, and whose
// approvals are signed, by s. It returns an error without URL or Key, and
// an *ApproverError (Field "webhook") for an approver s does not know.
func NewWebhook(s *Server, cfg WebhookConfig) (*Webhook, error) {
	if s == nil || cfg.URL == "" || len(cfg.Key) != ed25519.PrivateKeySize {
		return nil, errors.New("approvals: a webhook needs a server, a URL and an Ed25519 key")
	}
	if cfg.CallbackKey != nil && len(cfg.CallbackKey) != ed25519.PublicKeySize {
		return nil, errors.New("approvals: invalid webhook callback key")
	}
	for i, a := range cfg.Approvers {
		if s.approvers[a] == nil {
			return nil, &ApproverError{Index: i, Name: a, Field: "webhook", Reason: "not an approver of the page, so no webhook callback may decide for it"}
		}
	}
	if cfg.Client == nil {
		cfg.Client = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.MaxSkew <= 0 {
		cfg.MaxSkew = 5 * time.Minute
	}
	return &Webhook{s: s, cfg: cfg, nonces: map[string]time.Time{}}, nil
}

// WebhookPayload is what Webhook.Request posts.
type WebhookPayload struct {
	// Type is "approval.requested".
	Type string `json:"type"`
	// ID identifies the request; a callback names it.
	ID string `json:"id"`
	// URL is the request's page, where approvers can decide too.
	URL string `json:"url"`
	// Level is "confirm" or "four_eyes".
	Level string `json:"level"`
	// Operation is the hash, in hex, a callback must name.
	Operation string `json:"operation"`
	// Action, Owner and Mandate describe the operation.
	Action  string `json:"action"`
	Owner   string `json:"owner"`
	Mandate string `json:"mandate"`
	// Args are the operation's arguments by name.
	Args map[string]WebhookArg `json:"args"`
	// Resolved lists each critical value with its provenance.
	Resolved []WebhookResolved `json:"resolved,omitempty"`
	// Reason says why a person must approve.
	Reason string `json:"reason,omitempty"`
	// Facts are the facts read from the systems of record when the request
	// was made (approval.Request.Facts), by name; the operation hash does not cover
	// them.
	Facts map[string]WebhookArg `json:"facts,omitempty"`
	// Currency is the ISO 4217 code of amounts, if known.
	Currency string `json:"currency,omitempty"`
	// Expires is when the request lapses (RFC 3339, UTC).
	Expires time.Time `json:"expires"`
	// Lines, for a payment run (action "run"), are its operations, each
	// described as a payload of type "run.line" (without ID, URL and
	// Expires): what an approval of the run approves, line by line. A
	// callback approves every line; approving some only is done on the page.
	Lines []WebhookPayload `json:"lines,omitempty"`
}

// WebhookArg is one argument: its kind ("string", "int", "amount",
// "bool"), its text as the page shows it, and for amounts the exact minor
// units and scale.
type WebhookArg struct {
	// Kind is the argument's kind.
	Kind string `json:"kind"`
	// Text is the argument as the page shows it ("1,500.00 EUR").
	Text string `json:"text"`
	// Minor is an amount in minor units; absent for other kinds.
	Minor *int64 `json:"minor,omitempty"`
	// Scale is an amount's number of decimals; absent for other kinds.
	Scale *uint8 `json:"scale,omitempty"`
}

// WebhookResolved is one critical value with its provenance.
type WebhookResolved struct {
	// Param is the critical parameter's name.
	Param string `json:"param"`
	// Value is the trusted value that executes.
	Value string `json:"value"`
	// Sent is what the agent sent for it.
	Sent string `json:"sent"`
	// Source, Record, Version and At are the value's provenance (see
	// intent.Provenance); Version and At are absent when unknown.
	Source  string    `json:"source"`
	Record  string    `json:"record"`
	Version string    `json:"version,omitempty"`
	At      time.Time `json:"at,omitzero"`
}

// WebhookCallback is a decision sent back to the Webhook.
type WebhookCallback struct {
	// ID is the request's id.
	ID string `json:"id"`
	// Operation is the operation hash, in hex, the person was shown.
	Operation string `json:"operation"`
	// Approver names who decided; it must be in WebhookConfig.Approvers.
	Approver string `json:"approver"`
	// Decision is "approve" or "reject".
	Decision string `json:"decision"`
	// Nonce is 16 to 64 characters, never reused.
	Nonce string `json:"nonce"`
}

// Request submits p like Server.Request (the request is listed on the
// page) and posts it to the webhook's URL. If the post fails, it returns
// the Ticket and an error wrapping ErrNotDelivered.
func (w *Webhook) Request(ctx context.Context, p approval.Request) (Ticket, error) {
	t, err := w.s.submit(ctx, p, "webhook")
	if err != nil {
		return t, err
	}
	r, err := w.s.get(ctx, t.ID)
	if err != nil {
		return t, fmt.Errorf("%w: %v", ErrNotDelivered, err)
	}
	body, err := json.Marshal(r.payload(t))
	if err != nil {
		return t, err
	}
	ts := strconv.FormatInt(w.s.now().Unix(), 10)
	sig := ed25519.Sign(w.cfg.Key, signedMessage(webhookContext, ts, body))
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, w.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return t, fmt.Errorf("%w: %v", ErrNotDelivered, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(SignatureHeader, "t="+ts+",ed25519="+base64.StdEncoding.EncodeToString(sig))
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		return t, fmt.Errorf("%w: %v", ErrNotDelivered, err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return t, fmt.Errorf("%w: status %d", ErrNotDelivered, resp.StatusCode)
	}
	return t, nil
}

func signedMessage(context, ts string, body []byte) []byte {
	m := make([]byte, 0, len(context)+len(ts)+1+len(body))
	m = append(m, context...)
	m = append(m, ts...)
	m = append(m, 0)
	return append(m, body...)
}

func (r *request) payload(t Ticket) WebhookPayload {
	p := WebhookPayload{
		Type: "approval.requested", ID: r.id, URL: t.URL, Level: string(r.level), Operation: r.hash.String(),
		Action: string(r.op.Action), Owner: string(r.op.Owner), Mandate: r.op.MandateID,
		Args: map[string]WebhookArg{}, Reason: r.reason, Currency: r.currency, Expires: r.expires,
	}
	for name, v := range r.op.Args {
		a := WebhookArg{Kind: v.Kind.String(), Text: v.String()}
		if v.Kind == intent.KindAmount {
			minor, scale := v.Int, v.Scale
			a.Text, a.Minor, a.Scale = formatAmount(v, r.currency), &minor, &scale
		}
		p.Args[name] = a
	}
	for name, v := range r.facts {
		if p.Facts == nil {
			p.Facts = map[string]WebhookArg{}
		}
		p.Facts[name] = WebhookArg{Kind: v.Kind.String(), Text: v.String()}
	}
	for _, res := range r.resolved {
		p.Resolved = append(p.Resolved, WebhookResolved{Param: res.Param, Value: res.Value, Sent: res.Sent,
			Source: res.Provenance.Source, Record: res.Provenance.RecordID, Version: res.Provenance.Version, At: res.Provenance.At})
	}
	for _, l := range r.lines {
		lp := l.payload(Ticket{})
		lp.Type, lp.Expires = "run.line", time.Time{}
		p.Lines = append(p.Lines, lp)
	}
	return p
}

// VerifyWebhook checks a webhook payload's or callback's signature header
// against pub at now, allowing maxSkew between its timestamp and now;
// callback selects the callback context. Receivers of payloads call it with
// callback false. It returns an error if the header is malformed, the
// timestamp is out of range, or the signature does not verify.
func VerifyWebhook(pub ed25519.PublicKey, header string, body []byte, now time.Time, maxSkew time.Duration, callback bool) error {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(strings.TrimSpace(part), "=")
		switch k {
		case "t":
			ts = v
		case "ed25519":
			sig = v
		}
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil {
		return errors.New("approvals: signature header has no timestamp")
	}
	if d := now.Sub(time.Unix(sec, 0)); d > maxSkew || d < -maxSkew {
		return errors.New("approvals: signature timestamp out of range")
	}
	raw, err := base64.StdEncoding.DecodeString(sig)
	if err != nil || len(pub) != ed25519.PublicKeySize {
		return errors.New("approvals: malformed signature")
	}
	ctx := webhookContext
	if callback {
		ctx = callbackContext
	}
	if !ed25519.Verify(pub, signedMessage(ctx, ts, body), raw) {
		return errors.New("approvals: signature does not verify")
	}
	return nil
}

// SignCallback returns the SignatureHeader value for a callback body signed
// with priv at now, for the receiver's side (and tests).
func SignCallback(priv ed25519.PrivateKey, body []byte, now time.Time) string {
	ts := strconv.FormatInt(now.Unix(), 10)
	return "t=" + ts + ",ed25519=" + base64.StdEncoding.EncodeToString(ed25519.Sign(priv, signedMessage(callbackContext, ts, body)))
}

// ServeHTTP takes a signed callback (a POSTed WebhookCallback) and records
// the decision it carries. It answers 200 with {"status": ...} on success;
// 401 for a missing, stale or bad signature or a reused nonce; 403 for an
// approver the callback may not speak for; 404, 409 or 410 when the
// decision is refused (unknown, decided or refused, expired).
func (w *Webhook) ServeHTTP(rw http.ResponseWriter, req *http.Request) {
	reply := func(code int, status string) {
		rw.Header().Set("Content-Type", "application/json")
		rw.Header().Set("Cache-Control", "no-store")
		rw.WriteHeader(code)
		_ = json.NewEncoder(rw).Encode(map[string]string{"status": status})
	}
	if req.Method != http.MethodPost {
		reply(http.StatusMethodNotAllowed, "method not allowed")
		return
	}
	if w.cfg.CallbackKey == nil {
		reply(http.StatusForbidden, "callbacks are disabled; decide on the approval page")
		return
	}
	body, err := io.ReadAll(http.MaxBytesReader(rw, req.Body, maxCallbackBody))
	if err != nil {
		reply(http.StatusRequestEntityTooLarge, "body too large")
		return
	}
	now := w.s.now()
	if err := VerifyWebhook(w.cfg.CallbackKey, req.Header.Get(SignatureHeader), body, now, w.cfg.MaxSkew, true); err != nil {
		reply(http.StatusUnauthorized, "bad signature")
		return
	}
	var cb WebhookCallback
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cb); err != nil || (cb.Decision != "approve" && cb.Decision != "reject") || len(cb.Nonce) < 16 || len(cb.Nonce) > 64 {
		reply(http.StatusBadRequest, "malformed callback")
		return
	}
	if !slices.Contains(w.cfg.Approvers, cb.Approver) {
		reply(http.StatusForbidden, "this callback may not decide for that approver")
		return
	}
	if !w.fresh(cb.Nonce, now) {
		reply(http.StatusUnauthorized, "nonce already used")
		return
	}
	hash, err := intent.ParseOperationHash(cb.Operation)
	if err != nil {
		reply(http.StatusBadRequest, "malformed operation hash")
		return
	}
	out, err := w.s.decide(req.Context(), cb.ID, cb.Approver, hash, cb.Decision == "approve", receipt.ChannelWebhook, "")
	if err != nil {
		code, status := refusal(err)
		if code == http.StatusInternalServerError {
			w.s.logger.Error("webhook callback", "err", err)
		}
		reply(code, status)
		return
	}
	reply(http.StatusOK, string(out.Status))
}

// refusal is the answer to a callback whose decision failed with err.
func refusal(err error) (int, string) {
	switch {
	case errors.Is(err, ErrNotFound):
		return http.StatusNotFound, "no such request"
	case errors.Is(err, ErrExpired):
		return http.StatusGone, "request expired"
	case errors.Is(err, ErrVoteLost):
		return http.StatusConflict, "not counted: the request was decided at the same moment on another replica"
	case errors.Is(err, ErrDecided):
		return http.StatusConflict, "refused: request already decided"
	case errors.Is(err, ErrSameApprover):
		return http.StatusConflict, "refused: approver already decided on this request"
	case errors.Is(err, ErrNotIndependent):
		return http.StatusConflict, "refused: the request's facts name this approver as one who may not approve it"
	case errors.Is(err, ErrOtherOperation):
		return http.StatusConflict, "refused: decision is for another operation"
	case errors.Is(err, ErrTampered):
		return http.StatusConflict, "refused: shown content does not match the operation hash"
	case errors.Is(err, ErrPasskeyRequired):
		return http.StatusForbidden, "refused: this approval needs the approver's passkey, on the approval page"
	}
	return http.StatusInternalServerError, "not recorded"
}

// fresh records nonce and reports whether it was unused. Nonces are kept
// for twice the allowed skew, past which their callbacks are stale anyway.
func (w *Webhook) fresh(nonce string, now time.Time) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	for n, until := range w.nonces {
		if now.After(until) {
			delete(w.nonces, n)
		}
	}
	if _, seen := w.nonces[nonce]; seen {
		return false
	}
	w.nonces[nonce] = now.Add(2 * w.cfg.MaxSkew)
	return true
}

// Outcome returns the request's current state (see Server.Outcome).
func (w *Webhook) Outcome(ctx context.Context, id string) (Outcome, error) {
	return w.s.Outcome(ctx, id)
}

// Wait blocks until the request ends or ctx is done (see Server.Wait).
func (w *Webhook) Wait(ctx context.Context, id string) (Outcome, error) {
	return w.s.Wait(ctx, id)
}
