package approvals

import (
	"cmp"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-webauthn/webauthn/webauthn"
	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/approvals/passcode"
	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

// Approver is a person who may approve, as configured.
type Approver struct {
	// Name identifies the approver: it is the name they sign in with and
	// the Approver of their approvals. 1 to 64 bytes.
	Name string
	// Passcode is the scrypt hash of their passcode, as passcode.Hash
	// writes it (intentplane hash-passcode).
	Passcode string
	// Key signs the approver's approvals. The gateway verifies them with
	// its public key (see Server.Keys). The agent never holds it.
	Key ed25519.PrivateKey
	// Owners limits whose requests the approver sees and decides (the
	// gateway's approver scope should say the same); empty means every
	// owner's.
	Owners []intent.Owner
}

// ApproverError is an approver that New (or NewWebhook) refuses, with
// where the fault is, so that a caller can point at its configuration.
type ApproverError struct {
	// Index is the approver's position in Config.Approvers (or in
	// WebhookConfig.Approvers), from 0.
	Index int
	// Name is the approver's name, as configured.
	Name string
	// Field is the field at fault: "name", "key" or "passcode" (of
	// Approver), or "webhook" (a webhook approver that is not one of the
	// server's).
	Field string
	// Reason says what is wrong, in a few words ("declared twice").
	Reason string
	// Err is the underlying error, if any (passcode.ErrMalformed).
	Err error
}

func (e *ApproverError) Error() string {
	return fmt.Sprintf("approvals: approver %q: %s", e.Name, e.Reason)
}

func (e *ApproverError) Unwrap() error { return e.Err }

// ArgRoles names the arguments of an action that say who is paid and how
// much, for the audit view.
type ArgRoles struct {
	// Payee names the arguments whose values identify who is paid (a
	// contract's running totals' By: the payee on file), in order.
	Payee []string
	// Amount names the amount argument (a contract's Budget); empty means
	// none.
	Amount string
	// CurrencyFrom names the argument or fact holding the amount's
	// currency (a contract's BudgetCurrency); empty means Currency.
	CurrencyFrom string
	// Currency is the amount's currency when CurrencyFrom is empty (the
	// mandate's budget currency), an ISO 4217 code; empty means unknown.
	Currency string
}

// Config configures a Server. The zero value of each optional field means
// the default stated on it.
type Config struct {
	// Addr is the address ListenAndServe listens on; empty means
	// "127.0.0.1:8477" (loopback only). It must name a port.
	Addr string
	// BaseURL is the page's URL as approvers' browsers reach it, without a
	// trailing slash ("https://approve.example.com"); empty means
	// "http://" + Addr. Requests whose Host header is not BaseURL's host are
	// refused (against DNS rebinding); when BaseURL is empty and Addr is a
	// loopback address, localhost, 127.0.0.1 and [::1] with Addr's port are
	// all accepted.
	BaseURL string
	// TLS, when set, makes ListenAndServe serve HTTPS. Cookies are Secure
	// when the request came over TLS or BaseURL is https.
	TLS *tls.Config
	// Approvers are the people who may approve. Required: at least one,
	// with distinct names, a passcode hash and a key.
	Approvers []Approver
	// TTL is a request's lifetime when approval.Request.ExpiresAt is zero; zero
	// means 15 minutes.
	TTL time.Duration
	// SessionTTL is how long a sign-in lasts; zero means 30 minutes.
	SessionTTL time.Duration
	// Backoff bounds failed sign-ins; the zero value means its defaults.
	Backoff Backoff
	// Recent is how many recent decisions the page lists; zero means 20.
	Recent int
	// MaxPending bounds the requests pending at once; zero means 1000.
	MaxPending int
	// Retain is how long an ended request stays visible after it expires;
	// zero means one hour.
	Retain time.Duration
	// CallbackRetain is how long a call-back recorded on the page is kept
	// (listed, and read back through Server.Callbacks); zero means 30 days.
	CallbackRetain time.Duration
	// NotApprovers names facts (approval.Request.Facts) whose string value
	// names a person who may not approve the request: the ap pack's
	// "iban_called_by", who recorded the call-back a bank-detail change
	// relies on, so that the two approvers of four eyes are two people
	// other than the one who called. Their approval is refused with
	// ErrNotIndependent; they may still reject. Empty means none.
	NotApprovers []string
	// Phrasers say how each pack's actions read for the person asked to
	// approve them (approval.Phraser: ap, banking, healthcare and
	// workspace each have one); the first that phrases a request's action
	// leads its page. nil, or none that phrases it, means the page writes
	// a summary from the operation's arguments.
	Phrasers []approval.Phraser
	// Roles says, per action, which arguments the audit view, its export
	// and the decision page show as the payee and the amount, and in
	// which currency (ArgRoles; cmd/ reads them from the actions'
	// contracts). nil, or an action it does not know, means they are
	// guessed from the arguments' names (vendor, payee, recipient, iban;
	// amount; currency).
	Roles func(intent.Action) (ArgRoles, bool)
	// Callbacks, when set, takes the call-backs approvers record on the
	// page ("Record a call-back": they called a vendor back at the phone
	// number on file before a bank-detail change); nil means the page has
	// no call-back form. The page lists the last Recent call-backs.
	Callbacks CallbackSink
	// Passkeys says when an approval needs a passkey (WebAuthn) on the
	// page: PasskeysRegistered (the default: once an approver registers
	// one), PasskeysFourEyes or PasskeysAll. Passkeys need a BaseURL whose
	// host is a name (not an IP address): the RP ID is that host and the
	// origin BaseURL's; with another BaseURL they are off, and a rule
	// other than the default is an error of New.
	Passkeys PasskeyRule
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Rand is the source of ids, tokens and approval ids; nil means
	// crypto/rand.
	Rand io.Reader
	// Logger receives one line per request and decision; nil means discard.
	Logger *slog.Logger
}

// Server is the approval page channel: it holds requests, serves the page
// where approvers sign in and decide, and signs approvals with the
// approvers' keys. It implements Channel and is safe for concurrent use.
type Server struct {
	cfg       Config
	log       Log
	logger    *slog.Logger
	now       func() time.Time
	rand      io.Reader
	approvers map[string]*approverEntry
	names     []string // sorted
	dummy     passcode.Hashed
	lim       *limiter
	e         *echo.Echo
	tmpl      *template.Template
	base      string                     // BaseURL, no trailing slash
	host      string                     // BaseURL's host
	hosts     map[string]bool            // every Host accepted (host and its loopback aliases)
	secure    bool                       // BaseURL is https
	audit     atomic.Pointer[auditState] // nil: no audit view (EnableAudit)

	st Store // requests, sessions, call-backs

	wa *webauthn.WebAuthn // nil: passkeys off (setPasskeys)
	rp passkey.RP

	decideMu sync.Mutex // serializes this process's decisions, so that each sees the last

	mu      sync.Mutex
	waiters map[string]chan struct{} // closed when this process decides the request
}

var _ Channel = (*Server)(nil)

type approverEntry struct {
	name   string
	hash   passcode.Hashed
	key    ed25519.PrivateKey
	owners map[intent.Owner]bool // nil: every owner
}

// mayDecide reports whether a may see and decide requests of owner.
func (a *approverEntry) mayDecide(owner intent.Owner) bool {
	return a != nil && (a.owners == nil || a.owners[owner])
}

type request struct {
	id        string
	op        intent.Operation // args cloned at intake
	hash      intent.OperationHash
	level     intent.Level
	resolved  []intent.Resolved
	facts     map[string]intent.Value // shown, not hashed
	reason    string
	policies  []string // the approval guards that asked (approval.Request.Policies)
	currency  string
	requester string
	created   time.Time
	expires   time.Time
	via       string
	status    Status
	refusal   string // why it was refused
	approvals []approval.Approval
	votes     []Vote
	receipt   receipt.Receipt // the request's receipt
	// lines, for a run (approval.Request.Lines), are its operations, each
	// with its op, hash, level, resolved values, facts, reason, policies
	// and currency; nil for one operation.
	lines []*request
}

type recentEntry struct {
	req  *request
	vote Vote
}

// New returns a Server with cfg that records receipts through log and
// keeps its requests, sign-ins and recorded call-backs in st, so that a
// restart, or another replica sharing st, sees them (see Store). It
// returns an error if log or st is nil, cfg has no approver or a malformed
// BaseURL, and an *ApproverError for an approver without a name (or one
// over 64 bytes), key or valid passcode hash, or whose name an earlier
// approver has.
func New(cfg Config, log Log, st Store) (*Server, error) {
	if log == nil {
		return nil, errors.New("approvals: a receipt log is required")
	}
	if st == nil {
		return nil, errors.New("approvals: a store is required")
	}
	if len(cfg.Approvers) == 0 {
		return nil, errors.New("approvals: at least one approver is required")
	}
	s := &Server{
		cfg: cfg, log: log, logger: cfg.Logger, now: cfg.Now,
		approvers: map[string]*approverEntry{},
		lim:       newLimiter(cfg.Backoff),
		st:        st,
		waiters:   map[string]chan struct{}{},
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.rand = rand.Reader
	if cfg.Rand != nil {
		s.rand = &lockedReader{r: cfg.Rand}
	}
	s.cfg.setDefaults()
	if err := s.addApprovers(cfg.Approvers); err != nil {
		return nil, err
	}
	// Unknown names are checked against a hash of the same cost, so that
	// timing does not tell which names exist.
	first := s.approvers[cfg.Approvers[0].Name].hash
	var err error
	if s.dummy, err = first.Decoy(s.rand); err != nil {
		return nil, err
	}
	if err := s.setBase(); err != nil {
		return nil, err
	}
	if err := s.setPasskeys(); err != nil {
		return nil, err
	}
	s.tmpl, err = parseTemplates()
	if err != nil {
		return nil, err
	}
	s.e = s.routes()
	return s, nil
}

// setDefaults gives each optional field of c that is zero its default.
func (c *Config) setDefaults() {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:8477"
	}
	if c.TTL <= 0 {
		c.TTL = 15 * time.Minute
	}
	if c.SessionTTL <= 0 {
		c.SessionTTL = 30 * time.Minute
	}
	if c.Recent <= 0 {
		c.Recent = 20
	}
	if c.MaxPending <= 0 {
		c.MaxPending = 1000
	}
	if c.Retain <= 0 {
		c.Retain = time.Hour
	}
	if c.CallbackRetain <= 0 {
		c.CallbackRetain = 30 * 24 * time.Hour
	}
}

// addApprovers records approvers, refusing (with an *ApproverError) a name
// empty, over 64 bytes or given twice, a key that is not an Ed25519
// private key, and a malformed passcode hash.
func (s *Server) addApprovers(approvers []Approver) error {
	for i, a := range approvers {
		switch {
		case a.Name == "" || len(a.Name) > 64:
			return &ApproverError{Index: i, Name: a.Name, Field: "name", Reason: "a name has 1 to 64 bytes"}
		case s.approvers[a.Name] != nil:
			return &ApproverError{Index: i, Name: a.Name, Field: "name", Reason: "declared twice"}
		case len(a.Key) != ed25519.PrivateKeySize:
			return &ApproverError{Index: i, Name: a.Name, Field: "key", Reason: "no valid Ed25519 private key"}
		}
		h, err := passcode.Parse(a.Passcode)
		if err != nil {
			return &ApproverError{Index: i, Name: a.Name, Field: "passcode", Reason: "malformed passcode hash", Err: err}
		}
		e := &approverEntry{name: a.Name, hash: h, key: a.Key}
		if len(a.Owners) > 0 {
			e.owners = map[intent.Owner]bool{}
			for _, o := range a.Owners {
				e.owners[o] = true
			}
		}
		s.approvers[a.Name] = e
		s.names = append(s.names, a.Name)
	}
	return nil
}

// setBase sets the page's base URL (cfg.BaseURL, or http:// and Addr) and
// the hosts it answers to: the base's, and for a loopback Addr without
// BaseURL its other loopback names.
func (s *Server) setBase() error {
	s.base = s.cfg.BaseURL
	if s.base == "" {
		s.base = "http://" + s.cfg.Addr
	}
	u, err := url.Parse(s.base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || (u.Path != "" && u.Path != "/") {
		return fmt.Errorf("approvals: BaseURL %q must be http(s)://host[:port]", s.base)
	}
	s.base = u.Scheme + "://" + u.Host
	s.host, s.secure = u.Host, u.Scheme == "https"
	s.hosts = map[string]bool{s.host: true}
	if s.cfg.BaseURL == "" {
		if h, port, err := net.SplitHostPort(s.cfg.Addr); err == nil && isLoopback(h) {
			for _, alias := range []string{"localhost", "127.0.0.1", "[::1]"} {
				s.hosts[alias+":"+port] = true
			}
		}
	}
	return nil
}

// isLoopback reports whether host names only this machine.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// lockedReader makes a caller's io.Reader safe for concurrent use.
type lockedReader struct {
	mu sync.Mutex
	r  io.Reader
}

func (l *lockedReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.Read(p)
}

func (s *Server) token(n int) (string, error) {
	b := make([]byte, n)
	if _, err := io.ReadFull(s.rand, b); err != nil {
		return "", err
	}
	return hex.EncodeToString(b), nil
}

// Keys returns the approvers' public keys, for the gateway's
// Config.Approvers.
func (s *Server) Keys() approval.StaticKeys {
	k := approval.StaticKeys{}
	for name, a := range s.approvers {
		k[name] = a.key.Public().(ed25519.PublicKey)
	}
	return k
}

// Handler returns the page's HTTP handler, to serve with a listener of the
// caller's choice (ListenAndServe uses it).
func (s *Server) Handler() http.Handler { return s.e }

// URL returns the page's base URL (Config.BaseURL or its default).
func (s *Server) URL() string { return s.base }

// ListenAndServe serves the page on Config.Addr (HTTPS with Config.TLS)
// until ctx is done, then shuts down gracefully. It returns the listener's
// error, or nil after ctx ends.
func (s *Server) ListenAndServe(ctx context.Context) error {
	ln, err := s.Listen()
	if err != nil {
		return err
	}
	return s.Serve(ctx, ln, nil)
}

// Listen binds Config.Addr, with TLS when Config.TLS is set, for Serve; a
// caller that must report a busy address before serving calls it first.
func (s *Server) Listen() (net.Listener, error) {
	ln, err := net.Listen("tcp", s.cfg.Addr)
	if err != nil {
		return nil, err
	}
	if s.cfg.TLS != nil {
		ln = tls.NewListener(ln, s.cfg.TLS)
	}
	return ln, nil
}

// Serve serves the page on ln, and w's signed callbacks at /webhook when w
// is not nil, until ctx is done; it then shuts down gracefully (for up to 5
// seconds) and returns nil. Otherwise it returns the listener's error. It
// closes ln.
func (s *Server) Serve(ctx context.Context, ln net.Listener, w *Webhook) error {
	h := http.Handler(s.e)
	if w != nil {
		mux := http.NewServeMux()
		mux.Handle("/webhook", w)
		mux.Handle("/", s.e)
		h = mux
	}
	hs := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       15 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       60 * time.Second,
		MaxHeaderBytes:    16 << 10,
	}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_ = hs.Shutdown(sctx)
		return nil
	}
}

// Request submits p to the page and returns its ticket, whose URL is the
// request's page. It records a receipt for the request; if that fails,
// nothing is submitted.
//
// A request whose operation does not hash to p.Hash, or whose trusted values
// do not match the operation's arguments, is refused: it is recorded and
// listed on the page as refused, so that approvers see the attempt, and
// Request returns its Ticket with an error wrapping ErrTampered. Nothing can
// ever be approved for it.
func (s *Server) Request(ctx context.Context, p approval.Request) (Ticket, error) {
	return s.submit(ctx, p, "page")
}

func (s *Server) submit(ctx context.Context, p approval.Request, via string) (Ticket, error) {
	now := s.now().UTC()
	if p.Level != intent.LevelConfirm && p.Level != intent.LevelFourEyes {
		return Ticket{}, fmt.Errorf("%w: level %q is not confirm or four_eyes", ErrInvalid, p.Level)
	}
	if p.Level == intent.LevelFourEyes && len(s.approvers) < 2 {
		return Ticket{}, fmt.Errorf("%w: four eyes needs two approvers, %d configured", ErrInvalid, len(s.approvers))
	}
	if p.Hash.IsZero() || p.Operation.Action == "" || p.Operation.MandateID == "" {
		return Ticket{}, fmt.Errorf("%w: operation, mandate and hash are required", ErrInvalid)
	}
	exp := p.ExpiresAt.UTC()
	if p.ExpiresAt.IsZero() {
		exp = now.Add(s.cfg.TTL)
	}
	if !exp.After(now) {
		return Ticket{}, ErrExpired
	}
	id, err := s.token(16)
	if err != nil {
		return Ticket{}, err
	}
	r := &request{
		id: id, op: p.Operation, hash: p.Hash, level: p.Level,
		resolved: append([]intent.Resolved(nil), p.Resolved...),
		facts:    maps.Clone(p.Facts),
		reason:   p.Reason, policies: slices.Clone(p.Policies), currency: p.Currency, requester: p.Requester,
		created: now, expires: exp, via: via, status: StatusPending,
	}
	r.op.Args = p.Operation.Args.Clone()
	for _, l := range p.Lines {
		r.lines = append(r.lines, lineOf(l, p.Currency))
	}
	if why := r.check(); why != "" {
		r.status, r.refusal = StatusRefused, why
	}

	if r.status == StatusPending {
		if err := s.room(ctx); err != nil {
			return Ticket{}, err
		}
	}

	rec := r.baseReceipt(now)
	if r.status == StatusRefused {
		rec.Verdict, rec.Code = intent.Deny, intent.CodeApprovalInvalid
		rec.Message = fmt.Sprintf("Approval request %s refused: %s. Nothing can be approved for it.", id, r.refusal)
	} else {
		rec.Verdict, rec.Code = intent.StepUp, intent.CodeApprovalRequired
		rec.Message = fmt.Sprintf("Approval requested (%s) as request %s on the %s channel; it expires at %s.", r.level, id, via, exp.Format(time.RFC3339))
	}
	stored, err := s.log.Append(ctx, rec)
	if err != nil {
		return Ticket{}, fmt.Errorf("approvals: request not recorded: %w", err)
	}
	r.receipt = stored
	if err := s.save(ctx, r); err != nil {
		return Ticket{}, fmt.Errorf("approvals: request recorded (receipt %d) but not kept, so not submitted: %w", stored.Seq, err)
	}
	t := Ticket{ID: id, URL: s.base + "/requests/" + id, ExpiresAt: exp}
	s.logger.Info("approval requested", "id", id, "action", r.op.Action, "level", r.level, "status", r.status)
	if r.status == StatusRefused {
		return t, fmt.Errorf("%w: %s", ErrTampered, r.refusal)
	}
	return t, nil
}

// room returns ErrTooMany when Config.MaxPending requests are pending
// (in the store: on every replica sharing it).
func (s *Server) room(ctx context.Context) error {
	kept, err := s.all(ctx)
	if err != nil {
		return err
	}
	n := 0
	for _, q := range kept {
		if q.status == StatusPending {
			n++
		}
	}
	if n >= s.cfg.MaxPending {
		return ErrTooMany
	}
	return nil
}

// lineOf is a line of a run as the request keeps it: its currency, when
// it has none, the run's.
func lineOf(l approval.Request, currency string) *request {
	r := &request{
		op: l.Operation, hash: l.Hash, level: l.Level,
		resolved: append([]intent.Resolved(nil), l.Resolved...),
		facts:    maps.Clone(l.Facts), reason: l.Reason, policies: slices.Clone(l.Policies), currency: cmp.Or(l.Currency, currency),
	}
	r.op.Args = l.Operation.Args.Clone()
	return r
}

// check returns why r must be refused, or "" if what it shows is exactly
// the operation its hash names (for a run, each line's too, and the run
// is the run of its lines).
func (r *request) check() string {
	h, err := r.op.Hash()
	if err != nil || h != r.hash {
		return "what it shows does not hash to the operation hash the gateway named"
	}
	if len(r.lines) > 0 || r.op.Action == approval.RunAction {
		return r.checkRun()
	}
	for _, res := range r.resolved {
		v, ok := r.op.Args[res.Param]
		if !ok || v.String() != res.Value {
			return fmt.Sprintf("the trusted value shown for %q is not the operation's argument", res.Param)
		}
	}
	return ""
}

// checkRun returns why the run r must be refused, or "": each line shows
// exactly its operation, under the run's mandate and owner, at a level the
// run's covers, and the run's operation is the run of the lines' hashes.
func (r *request) checkRun() string {
	hashes := make([]intent.OperationHash, 0, len(r.lines))
	for i, l := range r.lines {
		if why := l.check(); why != "" {
			return fmt.Sprintf("line %d: %s", i+1, why)
		}
		if l.op.MandateID != r.op.MandateID || l.op.Owner != r.op.Owner || l.op.Action == approval.RunAction {
			return fmt.Sprintf("line %d is not an operation of the run's mandate", i+1)
		}
		if !l.level.Valid() || l.level.Rank() > r.level.Rank() {
			return fmt.Sprintf("line %d needs more than the run asks", i+1)
		}
		hashes = append(hashes, l.hash)
	}
	run, err := approval.RunOperation(r.op.MandateID, r.op.Owner, hashes)
	if err != nil {
		return "it is not a run of operations: " + err.Error()
	}
	if h, err := run.Hash(); err != nil || h != r.hash {
		return "the run's hash is not the hash of its lines"
	}
	return ""
}

// baseReceipt is the receipt of r's request or of a decision on it at
// now. Its facts are the payee's name the approvers were shown (the facts
// payeeNames, when r has them), so that the audit names the payee of
// every receipt of the operation, not only the gateway's.
func (r *request) baseReceipt(now time.Time) receipt.Receipt {
	var names map[string]intent.Value
	for _, k := range payeeNames {
		if v, ok := r.facts[k]; ok {
			if names == nil {
				names = map[string]intent.Value{}
			}
			names[k] = v
		}
	}
	return receipt.Receipt{
		Owner: r.op.Owner, Time: now, MandateID: r.op.MandateID, Action: r.op.Action,
		Args: r.op.Args, Resolved: r.resolved, Facts: names, Operation: r.hash.String(),
		Result: receipt.ResultNotExecuted,
	}
}

// expire ends r if it lapsed undecided. The store forgets a request
// Config.Retain after it expires.
func (r *request) expire(now time.Time) {
	if r.status == StatusPending && !now.Before(r.expires) {
		r.status = StatusExpired
	}
}

func (r *request) outcome() Outcome {
	return Outcome{
		ID: r.id, Status: r.status, Level: r.level, Hash: r.hash,
		Approvals: append([]approval.Approval(nil), r.approvals...),
		Votes:     append([]Vote(nil), r.votes...),
		ExpiresAt: r.expires,
	}
}

// named returns the fact of Config.NotApprovers that names approver in
// r's facts (or a run's line's), or "" when none does.
func (s *Server) named(r *request, approver string) string {
	for _, f := range s.cfg.NotApprovers {
		if v, ok := r.facts[f]; ok && v.Kind == intent.KindString && v.Str == approver {
			return f
		}
	}
	// A run's approval approves each line: a person a line's facts name
	// may not approve the run.
	for _, l := range r.lines {
		if f := s.named(l, approver); f != "" {
			return f
		}
	}
	return ""
}

// need is the number of distinct approvers r's level requires.
func (r *request) need() int {
	if r.level == intent.LevelFourEyes {
		return 2
	}
	return 1
}

// Outcome returns the request's current state. It returns ErrNotFound for
// an unknown id.
func (s *Server) Outcome(ctx context.Context, id string) (Outcome, error) {
	r, err := s.get(ctx, id)
	if err != nil {
		return Outcome{}, err
	}
	return r.outcome(), nil
}

// Wait blocks until the request ends (approved, rejected, expired or
// refused) or ctx is done, and returns its state; when ctx ends first it
// returns the state then and ctx's error. It returns ErrNotFound for an
// unknown id. A decision made by another process sharing the store is
// seen within a second.
func (s *Server) Wait(ctx context.Context, id string) (Outcome, error) {
	for {
		done := s.waiter(id)
		r, err := s.get(ctx, id)
		if err != nil {
			s.unwait(id, done)
			return Outcome{}, err
		}
		out := r.outcome()
		if out.Status != StatusPending {
			s.unwait(id, done)
			return out, nil
		}
		// Wake at expiry, and at least every second so that an injected
		// clock, and another process's decision, are followed too.
		d := min(max(out.ExpiresAt.Sub(s.now()), time.Millisecond), time.Second)
		t := time.NewTimer(d)
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			// Forget the waiter: a request decided elsewhere or left to
			// expire would otherwise keep it for the process's life (other
			// waiters of the same request still wake within a second).
			s.unwait(id, done)
			return out, ctx.Err()
		}
		t.Stop()
	}
}

// waiter returns the channel closed when this process decides request id.
func (s *Server) waiter(id string) chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	ch := s.waiters[id]
	if ch == nil {
		ch = make(chan struct{})
		s.waiters[id] = ch
	}
	return ch
}

// unwait forgets ch, request id's waiter, once its request ended.
func (s *Server) unwait(id string, ch chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiters[id] == ch {
		delete(s.waiters, id)
	}
}

// notify wakes the waiters of request id.
func (s *Server) notify(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch := s.waiters[id]; ch != nil {
		close(ch)
		delete(s.waiters, id)
	}
}

// decide records approver's vote on request id. shown is the operation
// hash the approver was shown; it must be the request's. reason is a
// rejection's reason as the approver gave it ("" for an approval, or none
// given). An approval is signed with the approver's key over the
// operation hash, bound to the mandate and expiring with the request.
//
// The vote is kept with a compare-and-swap of the request as read, so that
// of two decisions made at the same moment on replicas sharing the store
// neither is lost silently: the later one is applied to the request as
// the earlier left it (a second four-eyes approval completes it), or, if
// that decided it meanwhile, does not count, and the approver is told so
// with ErrVoteLost and a receipt saying that the vote did not count.
func (s *Server) decide(ctx context.Context, id, approver string, shown intent.OperationHash, approve bool, via, reason string) (Outcome, error) {
	return s.decideLines(ctx, id, shown, ballot{approver: approver, approve: approve, via: via, reason: reason})
}

// decideLines is decide of ballot b, which for a run names the lines its
// approver ticked: the approval covers those of the run's open lines, and
// the others are left out, rejected (Vote.Left). Nil ticked means every
// open line (and is what one operation's decision passes).
func (s *Server) decideLines(ctx context.Context, id string, shown intent.OperationHash, b ballot) (Outcome, error) {
	approver, approve := b.approver, b.approve
	s.decideMu.Lock()
	defer s.decideMu.Unlock()
	now := s.now().UTC()
	var v *vote // the vote, signed and recorded, once made
	for attempt := 0; attempt < maxSwapAttempts; attempt++ {
		r, kept, err := s.getKept(ctx, id)
		if err == nil {
			err = s.mayVote(r, approver, shown, approve)
		}
		if err != nil {
			if v != nil {
				return Outcome{}, s.voteLost(ctx, id, r, v, err)
			}
			return Outcome{}, err
		}
		if v == nil {
			if v, err = s.makeVote(ctx, r, b, now); err != nil {
				return Outcome{}, err
			}
		}
		r.apply(v)
		next, err := json.Marshal(r.record())
		if err != nil {
			return Outcome{}, err
		}
		swapped, err := s.st.SwapEntry(ctx, SpaceRequests, id, kept, next, r.expires.Add(s.cfg.Retain))
		if err != nil {
			// The store did not answer: the vote may or may not be kept
			// (a write can succeed with its answer lost).
			return Outcome{}, fmt.Errorf("approvals: decision recorded (receipt %d), but keeping it failed, so it may not count: reload the request to see: %w", v.Receipt.Seq, err)
		}
		if swapped {
			s.notify(id)
			s.logger.Info("approval decision", "id", id, "approver", approver, "approve", approve, "status", r.status)
			return r.outcome(), nil
		}
		// Another process changed the request since it was read: read it
		// again and apply the vote to what it holds now.
	}
	return Outcome{}, fmt.Errorf("approvals: decision recorded (receipt %d) but not kept after %d attempts (the request kept changing), so it does not count; try again", v.Receipt.Seq, maxSwapAttempts)
}

// maxSwapAttempts bounds how often decide rereads a request that other
// processes keep changing.
const maxSwapAttempts = 8

// vote is an approver's decision, made once: signed (an approval) and
// recorded in the receipt chain, then applied to the request as kept.
type vote struct {
	Vote
	approval *approval.Approval // nil for a rejection
}

// mayVote returns why approver may not cast this vote on r as it is now,
// or nil.
func (s *Server) mayVote(r *request, approver string, shown intent.OperationHash, approve bool) error {
	switch r.status {
	case StatusRefused:
		return ErrTampered
	case StatusExpired:
		return ErrExpired
	case StatusApproved, StatusRejected:
		return ErrDecided
	}
	if shown != r.hash {
		return ErrOtherOperation
	}
	for _, d := range r.votes {
		if d.Approver == approver {
			return ErrSameApprover
		}
	}
	a := s.approvers[approver]
	if a == nil {
		return ErrUnknownApprover
	}
	if !a.mayDecide(r.op.Owner) {
		return ErrOtherOwner
	}
	if approve && s.named(r, approver) != "" {
		return ErrNotIndependent
	}
	// What is signed is checked once more against the hash.
	if why := r.check(); why != "" {
		return fmt.Errorf("%w: %s", ErrTampered, why)
	}
	return nil
}

// ballot is what an approver decided: approve or reject, on which
// channel, why (a rejection's reason), for a run which lines they ticked
// (nil: all), and the passkey assertion they approved with (nil: none).
type ballot struct {
	approver, via, reason string
	approve               bool
	ticked                []intent.OperationHash
	passkey               *passkeyBallot
}

// makeVote signs the approver's approval (if b.approve) and records the
// vote's receipt, as decided on r as read at now.
func (s *Server) makeVote(ctx context.Context, r *request, b ballot, now time.Time) (*vote, error) {
	rec := r.baseReceipt(now)
	rec.Code = intent.CodeApprovalRequired
	v := &vote{Vote: Vote{Approver: b.approver, Approve: b.approve, At: now, Via: b.via, Reason: b.reason}}
	if !b.approve {
		rec.Verdict = intent.Deny
		rec.Message = fmt.Sprintf("Request %s rejected by %s on the %s channel; nothing will be approved for it.", r.id, b.approver, b.via)
		if b.reason != "" {
			rec.Message += " Reason: " + b.reason
		}
	} else {
		if b.passkey == nil {
			need, err := s.passkeyNeeded(ctx, r, b.approver)
			if err != nil {
				return nil, err
			}
			if need {
				return nil, ErrPasskeyRequired
			}
		}
		ap, err := s.sign(r, &v.Vote, b, now)
		if err != nil {
			return nil, err
		}
		v.approval = ap
		rec.Verdict = intent.StepUp
		rec.Message = fmt.Sprintf("Request %s approved by %s on the %s channel (%d of %d for %s).", r.id, b.approver, b.via, len(r.approvals)+1, r.need(), r.level)
		if len(r.lines) > 0 {
			rec.Message += fmt.Sprintf(" The approval covers %d of the run's %d lines%s.", len(ap.Lines), len(r.lines), leftText(v.Left))
		}
		rec.Approvals = []receipt.Evidence{{ID: ap.ID, Approver: b.approver, Level: string(r.level), IssuedAt: ap.IssuedAt, ExpiresAt: ap.ExpiresAt, Channel: ap.Channel, Run: ap.RunHash(), Passkey: ap.Passkey}}
	}
	stored, err := s.log.Append(ctx, rec)
	if err != nil {
		return nil, fmt.Errorf("approvals: decision not recorded, nothing was approved: %w", err)
	}
	v.Receipt = stored
	if b.passkey != nil {
		s.touchPasskey(ctx, b.approver, b.passkey.cred.ID, now)
	}
	return v, nil
}

// sign signs v.Approver's approval of r: over its operation hash, or for
// a run over the run of the open lines b ticked, the others set in
// v.Left; with b's passkey assertion, once it verifies for what is
// signed.
func (s *Server) sign(r *request, v *Vote, b ballot, now time.Time) (*approval.Approval, error) {
	ticked := b.ticked
	aid, err := approval.NewID(s.rand)
	if err != nil {
		return nil, err
	}
	a := approval.Approval{ID: aid, Operation: r.hash, MandateID: r.op.MandateID, Approver: v.Approver, IssuedAt: now, ExpiresAt: r.expires, Channel: v.Via}
	if len(r.lines) > 0 {
		lines, left, err := r.chosen(ticked)
		if err != nil {
			return nil, err
		}
		if a.Operation, err = approval.RunHash(r.op.MandateID, lines); err != nil {
			return nil, err
		}
		a.Lines, v.Left = approval.SortedLines(lines), left
	}
	if b.passkey != nil {
		if err := b.passkey.verify(&a); err != nil {
			return nil, err
		}
	}
	ap, err := approval.Sign(a, s.approvers[v.Approver].key)
	if err != nil {
		return nil, err
	}
	return &ap, nil
}

// leftText names how many lines an approval of a run left out, if any.
func leftText(left []intent.OperationHash) string {
	if len(left) == 0 {
		return ""
	}
	return fmt.Sprintf("; it leaves out, and so rejects, %d: %s", len(left), strings.Join(shortHashes(left), ", "))
}

func shortHashes(hs []intent.OperationHash) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.String()[:16]
	}
	return out
}

// apply adds v to r and sets r's status: approved once it holds the
// approvals its level needs, rejected by a rejection.
func (r *request) apply(v *vote) {
	r.votes = append(r.votes, v.Vote)
	if v.approval == nil {
		r.status = StatusRejected
		return
	}
	r.approvals = append(r.approvals, *v.approval)
	if len(r.approvals) >= r.need() {
		r.status = StatusApproved
	}
}

// voteLost records that v, already in the receipt chain, did not count
// because the request changed under it (why: decided or expired
// meanwhile, on another replica), and returns why, wrapped, for the
// approver.
func (s *Server) voteLost(ctx context.Context, id string, r *request, v *vote, why error) error {
	what := "rejection"
	if v.Approve {
		what = "approval"
	}
	msg := fmt.Sprintf("The %s of request %s by %s (receipt %d) did not count: the request changed at the same moment (%v).", what, id, v.Approver, v.Receipt.Seq, why)
	if r != nil {
		rec := r.baseReceipt(s.now().UTC())
		rec.Verdict, rec.Code, rec.Message = intent.Deny, intent.CodeApprovalInvalid, msg
		if _, err := s.log.Append(ctx, rec); err != nil {
			s.logger.Error("approval vote lost, not recorded", "id", id, "approver", v.Approver, "err", err)
		}
	}
	s.logger.Warn("approval vote lost to a simultaneous change", "id", id, "approver", v.Approver, "receipt", v.Receipt.Seq, "why", why)
	return fmt.Errorf("%w (your %s, receipt %d): %w", ErrVoteLost, what, v.Receipt.Seq, why)
}
