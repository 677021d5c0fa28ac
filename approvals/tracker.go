package approvals

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
)

// TrackerConfig configures a Tracker. The zero value of each optional
// field means the default stated on it.
type TrackerConfig struct {
	// Currency is the ISO 4217 code of the mandate's budget, set on every
	// request whose Currency is empty, so that the page shows amounts with
	// it; empty shows amounts without a currency.
	Currency string
	// Until is the mandate's expiry: rejections are remembered until then,
	// and forgotten after (an operation names its mandate, so none of it
	// can execute later). Zero means rejections are never remembered.
	Until time.Time
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger receives a line when a webhook missed a request that is on
	// the page; nil means discard.
	Logger *slog.Logger
	// Used reports whether approval a was already used: the gateway
	// consumed its single-use key (state.ApprovalKey), or, for the
	// approval of a run, the key of any of its lines
	// (state.LineApprovalKey); nil means never asked. Await forgets an
	// approved request whose approvals were used and returns none, so
	// that the next call opens a new request: after a crash during the
	// operation's execution, reconciliation may let the identical
	// operation be decided again; after the system of record refused
	// every line of a run (nothing executed), the same run may be asked
	// again; and the approvals consumed can never serve again.
	Used func(ctx context.Context, a approval.Approval) (bool, error)
}

// Tracker is a front door's memory of its step-ups on a Channel: the open
// request of each operation hash, so that the agent's second call of the
// same operation finds the approvals given on the page instead of opening
// a second request, and the operations a person rejected. A rejection is
// final for the mandate's life: asking again is refused without a new
// request, so that approvers are not worn down. Both are kept in its
// Store. Its Request and Await methods are what
// mcpproxy.Approvals asks for. It is safe for concurrent use.
type Tracker struct {
	ch  Channel
	cfg TrackerConfig
	now func() time.Time
	log *slog.Logger
	st  Store
	mu  sync.Mutex // serializes this process's Request, so that one operation opens one request
}

// NewTracker returns a Tracker over ch that keeps the open request of each
// operation (SpaceOperations) and the rejected operations (SpaceRejections)
// in st, so that after a restart, or on another replica sharing st, the
// agent's retry finds the request approved meanwhile and a rejection stays
// final. st must not be nil.
func NewTracker(ch Channel, st Store, cfg TrackerConfig) *Tracker {
	t := &Tracker{ch: ch, cfg: cfg, now: cfg.Now, log: cfg.Logger, st: st}
	if t.now == nil {
		t.now = time.Now
	}
	if t.log == nil {
		t.log = slog.New(slog.DiscardHandler)
	}
	return t
}

// ticketRecord is a Ticket as kept in SpaceOperations under its operation
// hash (hex).
type ticketRecord struct {
	V         int       `json:"v"`
	ID        string    `json:"id"`
	URL       string    `json:"url"`
	ExpiresAt time.Time `json:"expires"`
	// Lines are a run's lines' operation hashes (hex): rejected with it.
	Lines []string `json:"lines,omitempty"`
}

// ticket returns op's open request, if one is kept and unexpired.
func (t *Tracker) ticket(ctx context.Context, op intent.OperationHash) (Ticket, bool, error) {
	rec, ok, err := t.kept(ctx, op)
	return Ticket{ID: rec.ID, URL: rec.URL, ExpiresAt: rec.ExpiresAt}, ok, err
}

// kept returns op's open request as kept, if one is and is unexpired.
func (t *Tracker) kept(ctx context.Context, op intent.OperationHash) (ticketRecord, bool, error) {
	b, ok, err := t.st.Entry(ctx, SpaceOperations, op.String())
	if err != nil || !ok {
		return ticketRecord{}, false, err
	}
	var rec ticketRecord
	if err := json.Unmarshal(b, &rec); err != nil || rec.V != recordVersion || !t.now().Before(rec.ExpiresAt) {
		return ticketRecord{}, false, nil
	}
	return rec, true, nil
}

// Request submits r to the channel (with the configured currency when r has
// none), or returns the link of the request already open for the same
// operation. It returns an error wrapping approval.ErrRejected, without a
// new request, for an operation a person rejected; one wrapping
// approval.ErrTooManyRequests (and ErrTooMany) when the channel holds as
// many pending requests as it accepts; and the channel's error otherwise,
// except ErrNotDelivered for a request that is on the page anyway.
func (t *Tracker) Request(ctx context.Context, r approval.Request) (link string, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := t.rejected(ctx, r.Hash); err != nil {
		return "", err
	}
	var lines []string
	for _, l := range r.Lines {
		// A run holding a line rejected before is refused: rejected
		// stays rejected, in a run or alone.
		if err := t.rejected(ctx, l.Hash); err != nil {
			return "", err
		}
		lines = append(lines, l.Hash.String())
	}
	if tk, ok, err := t.ticket(ctx, r.Hash); err != nil || ok {
		return tk.URL, err
	}
	if r.Currency == "" {
		r.Currency = t.cfg.Currency
	}
	tk, err := t.ch.Request(ctx, r)
	if err != nil {
		if errors.Is(err, ErrTooMany) {
			return "", fmt.Errorf("%w: %w", approval.ErrTooManyRequests, err)
		}
		if !errors.Is(err, ErrNotDelivered) || tk.ID == "" {
			return "", err
		}
		// The webhook missed it, but the request is on the page.
		t.log.Warn("approval request not delivered to the webhook; it is on the page", "id", tk.ID, "err", err)
	}
	b, err := json.Marshal(ticketRecord{V: recordVersion, ID: tk.ID, URL: tk.URL, ExpiresAt: tk.ExpiresAt, Lines: lines})
	if err != nil {
		return "", err
	}
	if err := t.st.PutEntry(ctx, SpaceOperations, r.Hash.String(), b, tk.ExpiresAt); err != nil {
		return "", fmt.Errorf("approvals: request %s opened but not kept: %w", tk.ID, err)
	}
	return tk.URL, nil
}

// Await returns the approvals given for op once its request is approved
// (waiting up to wait for it, as the package-level Await does), none while
// it is pending, when there is no live request, or when its approvals were
// already used (TrackerConfig.Used), and an error wrapping
// approval.ErrRejected, naming the request and who rejected it, when a
// person rejected it. A rejected, expired, used or refused request is forgotten,
// so that a later call opens a new one (a rejected operation's is refused
// until Until).
func (t *Tracker) Await(ctx context.Context, op intent.OperationHash, wait time.Duration) ([]approval.Approval, error) {
	if err := t.rejected(ctx, op); err != nil {
		return nil, err
	}
	tk, ok, err := t.kept(ctx, op)
	if err != nil || !ok {
		return nil, err
	}
	out, err := Await(ctx, t.ch, tk.ID, wait)
	if errors.Is(err, ErrNotFound) {
		return nil, t.forget(ctx, op, tk.ID)
	}
	if err != nil {
		return nil, err
	}
	switch out.Status {
	case StatusPending:
		return nil, nil
	case StatusApproved:
		if !t.now().Before(out.ExpiresAt) {
			break
		}
		// The lines an approver left out of a run are rejected.
		for _, v := range out.Votes {
			for _, h := range v.Left {
				if err := t.reject(ctx, h.String(), fmt.Sprintf("left out of run request %s by %s", tk.ID, v.Approver)); err != nil {
					return nil, err
				}
			}
		}
		used, err := t.used(ctx, out.Approvals)
		if err != nil {
			return nil, err
		}
		if !used {
			return out.Approvals, nil
		}
	case StatusRejected:
		who := ""
		for _, v := range out.Votes {
			if !v.Approve {
				who = v.Approver
			}
		}
		why := fmt.Sprintf("request %s, by %s", tk.ID, who)
		// A run's rejection rejects each of its lines too.
		for _, h := range append([]string{op.String()}, tk.Lines...) {
			if err := t.reject(ctx, h, why); err != nil {
				return nil, err
			}
		}
		if err := t.forget(ctx, op, tk.ID); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w (%s)", approval.ErrRejected, why)
	}
	return nil, t.forget(ctx, op, tk.ID)
}

// used reports whether any of as was already used (TrackerConfig.Used).
func (t *Tracker) used(ctx context.Context, as []approval.Approval) (bool, error) {
	if t.cfg.Used == nil {
		return false, nil
	}
	for _, a := range as {
		used, err := t.cfg.Used(ctx, a)
		if err != nil {
			return false, fmt.Errorf("approvals: reading whether approval %s was used: %w", a.ID, err)
		}
		if used {
			return true, nil
		}
	}
	return false, nil
}

// reject keeps the operation of hash h (hex) rejected, for why, until the
// mandate expires: no operation of it can run after.
func (t *Tracker) reject(ctx context.Context, h, why string) error {
	if !t.now().Before(t.cfg.Until) {
		return nil
	}
	if err := t.st.PutEntry(ctx, SpaceRejections, h, []byte(why), t.cfg.Until); err != nil {
		return fmt.Errorf("approvals: rejection (%s) not kept: %w", why, err)
	}
	return nil
}

// rejected returns an error wrapping approval.ErrRejected if a person
// rejected op (and the mandate has not expired).
func (t *Tracker) rejected(ctx context.Context, op intent.OperationHash) error {
	if !t.now().Before(t.cfg.Until) {
		return nil // the mandate expired: no operation of it can run
	}
	why, ok, err := t.st.Entry(ctx, SpaceRejections, op.String())
	if err != nil {
		return fmt.Errorf("approvals: reading the rejections: %w", err)
	}
	if ok {
		return fmt.Errorf("%w (%s)", approval.ErrRejected, why)
	}
	return nil
}

// forget drops op's request if it is still the one named id.
func (t *Tracker) forget(ctx context.Context, op intent.OperationHash, id string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	tk, ok, err := t.ticket(ctx, op)
	if err != nil || !ok || tk.ID != id {
		return err
	}
	return t.st.DeleteEntry(ctx, SpaceOperations, op.String())
}
