package approvals

import (
	"bytes"
	"crypto/subtle"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"maps"
	"net/http"
	"net/netip"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/labstack/echo/v4"

	"github.com/intentplane/intentplane/approvals/passkey"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
)

//go:embed templates/*.html static/page.css static/passkey.js
var assets embed.FS

// contentSecurityPolicy allows the page's own stylesheet and nothing else:
// no script at all, no frames, forms only to itself.
const contentSecurityPolicy = "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

const (
	maxBody       = 16 << 10 // bytes of a form post
	loginCookie   = "ip_login"
	sessionCookie = "ip_session"
	maxSessions   = 1000
)

var idPattern = regexp.MustCompile(`^[0-9a-f]{32}$`)

type session struct {
	approver string
	csrf     string
	expires  time.Time
}

func parseTemplates() (*template.Template, error) {
	return template.New("").Funcs(template.FuncMap{"list3": func(a, b, c string) []string { return []string{a, b, c} }}).ParseFS(assets, "templates/*.html")
}

func (s *Server) routes() *echo.Echo {
	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	// The client address is the connection's: headers such as
	// X-Forwarded-For are the client's to forge and must not reset its
	// back-off.
	e.IPExtractor = echo.ExtractIPDirect()
	e.HTTPErrorHandler = s.errorHandler
	e.Use(s.harden)
	e.GET("/", func(c echo.Context) error { return c.Redirect(http.StatusSeeOther, "/requests") })
	e.GET("/static/page.css", s.css)
	e.GET("/static/passkey.js", s.passkeyJS)
	e.GET("/login", s.loginForm)
	e.POST("/login", s.login)
	e.POST("/logout", s.logout, s.auth)
	e.GET("/requests", s.list, s.auth)
	e.GET("/requests/:id", s.show, s.auth)
	e.POST("/requests/:id/approve", s.approveForm, s.auth)
	e.POST("/requests/:id/passkey", s.passkeyApproveOptions, s.auth)
	e.GET("/passkeys", s.passkeyPage, s.auth)
	e.POST("/passkeys/options", s.passkeyRegisterOptions, s.auth)
	e.POST("/passkeys", s.passkeyRegister, s.auth)
	e.POST("/passkeys/add/options", s.passkeyAddOptions, s.auth)
	e.POST("/passkeys/remove/options", s.passkeyRemoveOptions, s.auth)
	e.POST("/passkeys/remove", s.passkeyRemove, s.auth)
	e.GET("/requests/:id/reject", s.rejectForm, s.auth)
	e.POST("/requests/:id/reject", s.rejectPost, s.auth)
	e.GET("/audit", s.auditList, s.auditOn, s.auth)
	e.GET("/audit.csv", s.auditCSV, s.auditOn, s.auth)
	e.GET("/audit/decision", s.auditReceipt, s.auditOn, s.auth)
	e.GET("/audit/callbacks", s.evidenceList, s.auditOn, s.auth)
	e.GET("/audit/callbacks.csv", s.evidenceCSV, s.auditOn, s.auth)
	if s.cfg.Callbacks != nil {
		e.GET("/callbacks", s.callbackForm, s.auth)
		e.POST("/callbacks", s.recordCallbackForm, s.auth)
	}
	return e
}

// harden sets the security headers on every response, refuses requests for
// another host (DNS rebinding) and cross-site posts, and bounds bodies.
func (s *Server) harden(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", contentSecurityPolicy)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Referrer-Policy", "same-origin") // no-referrer would make the browser send "Origin: null"
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Opener-Policy", "same-origin")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		if s.secure {
			h.Set("Strict-Transport-Security", "max-age=31536000")
		}
		req := c.Request()
		if !s.hosts[req.Host] {
			return s.page(c, http.StatusMisdirectedRequest, "message", msg("Wrong address", "This page is served only at "+s.base+"."))
		}
		if req.Method == http.MethodPost {
			if site := req.Header.Get("Sec-Fetch-Site"); site != "" && site != "same-origin" {
				return s.page(c, http.StatusForbidden, "message", msg("Refused", "A form from another site was refused. Use the approval page itself."))
			}
			if o := req.Header.Get("Origin"); o != "" && o != s.base && !s.sameOrigin(o, req.Host) {
				return s.page(c, http.StatusForbidden, "message", msg("Refused", "A form from another site was refused. Use the approval page itself."))
			}
			req.Body = http.MaxBytesReader(c.Response(), req.Body, maxBody)
		}
		return next(c)
	}
}

// sameOrigin reports whether origin is the page itself as reached at host
// (one of its accepted hosts).
func (s *Server) sameOrigin(origin, host string) bool {
	scheme := "http://"
	if s.secure {
		scheme = "https://"
	}
	return s.hosts[host] && origin == scheme+host
}

type message struct {
	Title, Text string
	Session     *session
	CSRF        string
}

func msg(title, text string) *message { return &message{Title: title, Text: text} }

func (s *Server) errorHandler(err error, c echo.Context) {
	if c.Response().Committed {
		return
	}
	code := http.StatusInternalServerError
	text := "Something went wrong; nothing was approved."
	var he *echo.HTTPError
	if errors.As(err, &he) {
		code = he.Code
		text = http.StatusText(code) + "."
	} else {
		s.logger.Error("approval page", "path", c.Path(), "err", err)
	}
	_ = s.page(c, code, "message", msg(http.StatusText(code), text))
}

func (s *Server) page(c echo.Context, code int, name string, data any) error {
	var buf bytes.Buffer
	if err := s.tmpl.ExecuteTemplate(&buf, name, data); err != nil {
		s.logger.Error("approval page template", "template", name, "err", err)
		return c.String(http.StatusInternalServerError, "internal error")
	}
	return c.HTMLBlob(code, buf.Bytes())
}

func (s *Server) css(c echo.Context) error {
	b, err := assets.ReadFile("static/page.css")
	if err != nil {
		return err
	}
	return c.Blob(http.StatusOK, "text/css; charset=utf-8", b)
}

func (s *Server) cookie(c echo.Context, name, value, path string, maxAge int) {
	secure := s.secure || c.Request().TLS != nil
	c.SetCookie(&http.Cookie{
		Name: name, Value: value, Path: path, MaxAge: maxAge,
		HttpOnly: true, Secure: secure, SameSite: http.SameSiteStrictMode,
	})
}

// sameToken compares a form token with the expected one in constant time.
func sameToken(got, want string) bool {
	return want != "" && len(got) == len(want) && subtle.ConstantTimeCompare([]byte(got), []byte(want)) == 1
}

type loginView struct {
	CSRF, Next, Name, Error string
	Session                 *session
}

// safeNext keeps a post-login destination only if it is one of the page's
// own pages: a request, the list, the call-backs or the audit (with its
// query, re-encoded); anything else (another host, a scheme, another
// path) is "/requests" (no open redirect).
func safeNext(next string) string {
	u, err := url.Parse(next)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" || u.Fragment != "" {
		return "/requests"
	}
	switch id, isRequest := strings.CutPrefix(u.Path, "/requests/"); {
	case isRequest && idPattern.MatchString(id):
		return u.Path
	case u.Path == "/callbacks", u.Path == "/passkeys", u.Path == "/audit", u.Path == "/audit/decision", u.Path == "/audit/callbacks":
		if q := u.Query().Encode(); q != "" {
			return u.Path + "?" + q
		}
		return u.Path
	}
	return "/requests"
}

func (s *Server) loginForm(c echo.Context) error {
	tok, err := s.token(32)
	if err != nil {
		return err
	}
	s.cookie(c, loginCookie, tok, "/login", 600)
	return s.page(c, http.StatusOK, "login", loginView{CSRF: tok, Next: safeNext(c.QueryParam("next"))})
}

// clientKey is the address failed sign-ins are counted under: every
// loopback address is one client (a local process can use any of
// 127.0.0.0/8), and an IPv6 address counts by its /64, the block one host
// usually holds.
func clientKey(ip string) string {
	addr, err := netip.ParseAddr(ip)
	if err != nil {
		return ip
	}
	addr = addr.Unmap()
	switch {
	case addr.IsLoopback():
		return "loopback"
	case addr.Is6():
		p, err := addr.Prefix(64)
		if err == nil {
			return p.String()
		}
	}
	return addr.String()
}

func (s *Server) login(c echo.Context) error {
	now := s.now()
	ck, err := c.Cookie(loginCookie)
	if err != nil || !sameToken(c.FormValue("csrf"), ck.Value) {
		return s.page(c, http.StatusForbidden, "message", msg("Refused", "The sign-in form expired or came from another site. Open the sign-in page again."))
	}
	name := c.FormValue("approver")
	pass := c.FormValue("passcode")
	next := safeNext(c.FormValue("next"))
	a := s.approvers[name]
	// Failures count per client address, and per approver from that
	// address: a process that fails sign-ins locks out its own address,
	// not an approver everywhere.
	ip := clientKey(c.RealIP())
	keys := []string{"ip:" + ip, "approver:?@" + ip}
	if a != nil {
		keys[1] = "approver:" + name + "@" + ip
	}
	if wait := s.lim.wait(now, keys...); wait > 0 {
		secs := int(wait.Round(time.Second) / time.Second)
		secs = max(secs, 1)
		c.Response().Header().Set("Retry-After", strconv.Itoa(secs))
		return s.page(c, http.StatusTooManyRequests, "login", loginView{CSRF: ck.Value, Next: next, Name: name,
			Error: fmt.Sprintf("Too many failed sign-ins. Try again in %d seconds.", secs)})
	}
	// The attempt counts as a failure before the (slow) passcode check, so
	// concurrent attempts from one address cannot all slip through the
	// back-off; a success clears it below.
	s.lim.fail(now, keys...)
	ok := false
	if a != nil {
		ok = a.hash.Check(pass)
	} else {
		s.dummy.Check(pass)
	}
	if !ok {
		s.logger.Warn("approval page: failed sign-in", "approver", name, "ip", c.RealIP())
		return s.page(c, http.StatusUnauthorized, "login", loginView{CSRF: ck.Value, Next: next, Name: name,
			Error: "Wrong approver name or passcode."})
	}
	s.lim.reset(keys...)
	tok, err := s.token(32)
	if err != nil {
		return err
	}
	ctx := c.Request().Context()
	n, err := s.countSessions(ctx)
	if err != nil {
		return err
	}
	if n >= maxSessions {
		return s.page(c, http.StatusServiceUnavailable, "message", msg("Busy", "Too many people are signed in. Try again later."))
	}
	// Kept hashed (putSession), with the store's expiry: a restart keeps
	// the sign-in until it expires.
	if err := s.putSession(ctx, tok, name, now.Add(s.cfg.SessionTTL)); err != nil {
		return err
	}
	s.cookie(c, loginCookie, "", "/login", -1)
	s.cookie(c, sessionCookie, tok, "/", int(s.cfg.SessionTTL/time.Second))
	s.logger.Info("approval page: signed in", "approver", name)
	return c.Redirect(http.StatusSeeOther, next)
}

// auth requires a live session; the session is then in c.Get("session").
func (s *Server) auth(next echo.HandlerFunc) echo.HandlerFunc {
	return func(c echo.Context) error {
		var ss *session
		if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
			if ss, err = s.session(c.Request().Context(), ck.Value); err != nil {
				return err
			}
		}
		if ss == nil {
			if c.Request().Method == http.MethodGet {
				// Back to the page asked for once signed in, query
				// included (safeNext keeps only the page's own).
				return c.Redirect(http.StatusSeeOther, "/login?next="+url.QueryEscape(c.Request().URL.RequestURI()))
			}
			return s.page(c, http.StatusForbidden, "message", msg("Signed out", "You are not signed in, so nothing was done. Sign in and try again."))
		}
		if c.Request().Method == http.MethodPost && !sameToken(c.FormValue("csrf"), ss.csrf) {
			return s.page(c, http.StatusForbidden, "message", msg("Refused", "The form expired or came from another site, so nothing was done. Open the request again."))
		}
		c.Set("session", ss)
		return next(c)
	}
}

func (s *Server) logout(c echo.Context) error {
	if ck, err := c.Cookie(sessionCookie); err == nil && ck.Value != "" {
		if err := s.st.DeleteEntry(c.Request().Context(), SpaceSessions, sessionKey(ck.Value)); err != nil {
			return err
		}
	}
	s.cookie(c, sessionCookie, "", "/", -1)
	return c.Redirect(http.StatusSeeOther, "/login")
}

func sessionOf(c echo.Context) *session {
	ss, _ := c.Get("session").(*session)
	return ss
}

// Views: everything the templates show, already formatted as text. The
// templates escape it (html/template), so an argument's content can never
// become markup or script.

type summaryView struct {
	ID, Action, Owner, Amount, Payee, Level, Status, Expires, Hash, Refusal string
	Have, Need                                                              int
}

type recentView struct {
	At, Approver, Verdict, ID, Action, Amount, Hash, Receipt, ReceiptHash string
	Approve                                                               bool
}

type listView struct {
	Session   *session
	CSRF      string
	Callbacks bool // the page records call-backs
	Audit     bool // the audit view is on
	Pending   []summaryView
	Ended     []summaryView
	Recent    []recentView
}

type trustedView struct {
	Param, Value, Quoted, Source, Record, Version, Since, Sent, SentQuoted string
	Name                                                                   string // the record's name on file (vendor name, bill reference); "" if none
	Spelled                                                                string // the agent's spelling, when it differs only in spacing
	Differs                                                                bool
}

type argView struct {
	Name, Label, Value, Quoted, Kind string
}

type requestView struct {
	Session                                                       *session
	CSRF                                                          string
	ID, Action, Owner, Mandate, Level, LevelText, Hash, Requester string
	Reason, Expires, ExpiresIn, Status, Refusal, Created          string
	Summary                                                       string             // one sentence in the approver's words (Phrase.Summary)
	Why                                                           []string           // why a person is asked, in words (Phrase.Why)
	Ask                                                           string             // what the level asks of approvers, and what is given
	Values                                                        []valueView        // the critical values, labelled, with names on file
	Sections                                                      []approval.Section // the pack's facts that matter
	Trusted                                                       []trustedView      // Details: the critical values' provenance
	Amounts                                                       []argView
	Others                                                        []argView
	Args                                                          []argView // Details: the arguments as hashed
	Facts                                                         []argView // Details: the raw facts
	Approvers                                                     []string
	Rejected, RejectReason                                        string
	Have, Need                                                    int
	CanDecide, Decided                                            bool
	NotApprover                                                   string         // the fact that names the signed-in approver as one who may not approve; "" if none
	Execution                                                     *executionView // nil: not executed yet, or unknown
	Watch                                                         bool           // approved: the page can tell once it executes
	Run                                                           *runView       // a run's lines; nil for one operation
	Passkey                                                       bool           // approving asks for the approver's passkey
	PasskeyNeeded                                                 bool           // a passkey is needed, and the approver has none
}

func (s *Server) list(c echo.Context) error {
	ss := sessionOf(c)
	v := listView{Session: ss, CSRF: ss.csrf, Callbacks: s.cfg.Callbacks != nil, Audit: s.auditOf() != nil}
	me := s.approvers[ss.approver]
	kept, err := s.all(c.Request().Context())
	if err != nil {
		return err
	}
	var recent []recentEntry
	for i := len(kept) - 1; i >= 0; i-- {
		r := kept[i]
		if !me.mayDecide(r.op.Owner) {
			continue // another owner's: not this approver's to see
		}
		_, amount, payee := s.headline(r)
		sv := summaryView{ID: r.id, Action: string(r.op.Action), Owner: string(r.op.Owner), Amount: amount, Payee: payee,
			Level: string(r.level), Status: string(r.status), Expires: r.expires.Format("15:04:05 UTC"),
			Hash: r.hash.String()[:16], Refusal: r.refusal, Have: len(r.approvals), Need: r.need()}
		if r.status == StatusPending {
			v.Pending = append(v.Pending, sv)
		} else {
			v.Ended = append(v.Ended, sv)
		}
		for _, vote := range r.votes {
			recent = append(recent, recentEntry{req: r, vote: vote})
		}
	}
	// The last Recent decisions, newest first, of the requests kept.
	slices.SortStableFunc(recent, func(a, b recentEntry) int { return b.vote.At.Compare(a.vote.At) })
	for _, e := range recent[:min(len(recent), s.cfg.Recent)] {
		verdict := "rejected"
		if e.vote.Approve {
			verdict = "approved"
		}
		v.Recent = append(v.Recent, recentView{
			At: e.vote.At.Format("2006-01-02 15:04:05 UTC"), Approver: e.vote.Approver, Verdict: verdict,
			Approve: e.vote.Approve, ID: e.req.id, Action: string(e.req.op.Action), Amount: e.req.amountText(),
			Hash:        e.req.hash.String()[:16],
			Receipt:     fmt.Sprintf("%s #%d", ownerText(e.vote.Receipt.Owner), e.vote.Receipt.Seq),
			ReceiptHash: e.vote.Receipt.Hash.String(),
		})
	}
	return s.page(c, http.StatusOK, "list", v)
}

func ownerText(o intent.Owner) string {
	if o == "" {
		return "(no owner)"
	}
	return string(o)
}

func (s *Server) lookup(c echo.Context) (*request, error) {
	id := c.Param("id")
	if !idPattern.MatchString(id) {
		return nil, ErrNotFound
	}
	return s.get(c.Request().Context(), id)
}

func (s *Server) show(c echo.Context) error {
	ss := sessionOf(c)
	r, err := s.lookup(c)
	if err == nil && !s.approvers[ss.approver].mayDecide(r.op.Owner) {
		err = ErrNotFound // another owner's request is not shown at all
	}
	if err != nil {
		return s.decisionError(c, err)
	}
	now := s.now().UTC()
	v := requestView{
		Session: ss, CSRF: ss.csrf, ID: r.id, Action: string(r.op.Action), Owner: string(r.op.Owner),
		Mandate: r.op.MandateID, Level: string(r.level), LevelText: levelText(r.level), Hash: r.hash.String(),
		Requester: r.requester, Reason: visible(r.reason), Status: string(r.status), Refusal: r.refusal,
		Created: r.created.Format("2006-01-02 15:04:05 UTC"),
		Expires: r.expires.Format("2006-01-02 15:04:05 UTC"), ExpiresIn: until(now, r.expires),
		Have: len(r.approvals), Need: r.need(), Ask: askText(r.level, len(r.approvals)),
	}
	for _, d := range r.votes {
		if d.Approve {
			v.Approvers = append(v.Approvers, d.Approver)
		} else {
			v.Rejected, v.RejectReason = d.Approver, d.Reason
		}
		if d.Approver == ss.approver {
			v.Decided = true
		}
	}
	v.CanDecide = r.status == StatusPending && !v.Decided
	v.NotApprover = s.named(r, ss.approver)
	if v.CanDecide {
		if err := s.passkeyView(c, r, &v); err != nil {
			return err
		}
	}
	switch {
	case r.status != StatusRefused && len(r.lines) > 0:
		var exec map[intent.OperationHash]*executionView
		if r.status == StatusApproved {
			if exec, err = s.executions(c.Request().Context(), r, r.lineHashList()); err != nil {
				s.logger.Error("approval page: reading the executions", "id", r.id, "err", err)
			}
		}
		rv, why := s.runView(r, exec)
		v.Run, v.Summary, v.Why, v.Args = &rv, runSummary(rv), why, r.argViews()
	case r.status != StatusRefused:
		// Shown only if it is what the hash names; a refused request
		// shows no operation at all, only why it was refused.
		p := s.phrase(r)
		v.Summary, v.Why, v.Sections = p.Summary, whyViews(p), sectionViews(p)
		v.Values, v.Amounts, v.Others = r.valueViews(p), r.amountViews(p), r.otherViews(p)
		v.Trusted, v.Args, v.Facts = r.views(now, p), r.argViews(), r.factViews()
	}
	if r.status == StatusApproved && s.auditOf() != nil && len(r.lines) == 0 {
		v.Watch = true
		if v.Execution, err = s.executionOf(c.Request().Context(), r); err != nil {
			s.logger.Error("approval page: reading the execution", "id", r.id, "err", err)
		}
	}
	return s.page(c, http.StatusOK, "request", v)
}

func levelText(l intent.Level) string {
	if l == intent.LevelFourEyes {
		return "Four eyes: two different approvers must each approve"
	}
	return "Confirm: one approver must approve"
}

func until(now, t time.Time) string {
	d := t.Sub(now)
	if d <= 0 {
		return "expired"
	}
	return "in " + d.Round(time.Second).String()
}

func age(now, t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	d := now.Sub(t)
	switch {
	case d < 0:
		return "in the future (" + t.UTC().Format("2006-01-02") + ")"
	case d < time.Hour:
		return fmt.Sprintf("%d minutes ago", int(d/time.Minute))
	case d < 48*time.Hour:
		return fmt.Sprintf("%d hours ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%d days ago (%s)", int(d/(24*time.Hour)), t.UTC().Format("2006-01-02"))
}

// quoted returns s with every invisible, control or non-ASCII character
// escaped when s has any, so that look-alikes and hidden text are visible;
// "" when s is plain printable ASCII.
func quoted(s string) string {
	for _, r := range s {
		if r > unicode.MaxASCII || !unicode.IsPrint(r) {
			return strconv.QuoteToASCII(s)
		}
	}
	return ""
}

// formatAmount formats minor units exactly, grouping thousands:
// 125000 at scale 2 is "1,250.00" (approval.FormatAmount).
func formatAmount(v intent.Value, currency string) string {
	return approval.FormatAmount(intent.Amount(v.Int), v.Scale, currency)
}

func (r *request) amountText() string {
	var parts []string
	for _, name := range r.op.Args.Names() {
		if v := r.op.Args[name]; v.Kind == intent.KindAmount {
			parts = append(parts, formatAmount(v, r.currency))
		}
	}
	return strings.Join(parts, ", ")
}

// views returns r's critical values with their provenance, for the
// auditor (the page's Details).
func (r *request) views(now time.Time, p approval.Phrase) []trustedView {
	var trusted []trustedView
	for _, res := range r.resolved {
		tv := trustedView{
			Param: res.Param, Value: displayValue(res.Value), Quoted: quoted(res.Value), Name: visible(r.recordName(res.Param, p)),
			Source: res.Provenance.Source, Record: res.Provenance.RecordID, Version: res.Provenance.Version,
			Since: age(now, res.Provenance.At), Differs: !asked(res.Sent, res.Value, r.names(res.Param, p)),
		}
		if tv.Differs {
			tv.Sent, tv.SentQuoted = res.Sent, quoted(res.Sent)
		} else if res.Sent != res.Value {
			tv.Spelled = res.Sent
		}
		trusted = append(trusted, tv)
	}
	return trusted
}

// factViews returns r's facts sorted by name, each as text with its kind,
// flagged like every other value when it holds anything but printable
// ASCII.
func (r *request) factViews() []argView {
	out := make([]argView, 0, len(r.facts))
	for _, name := range slices.Sorted(maps.Keys(r.facts)) {
		v := r.facts[name]
		out = append(out, argView{Name: name, Value: v.String(), Quoted: quoted(v.String()), Kind: v.Kind.String()})
	}
	return out
}

func (s *Server) approveForm(c echo.Context) error { return s.voteForm(c, true, "") }

// voteForm records the signed-in approver's vote on the request the path
// names, over the operation hash the form carried, then shows the request.
func (s *Server) voteForm(c echo.Context, approve bool, reason string) error {
	ss := sessionOf(c)
	id := c.Param("id")
	if !idPattern.MatchString(id) {
		return s.decisionError(c, ErrNotFound)
	}
	shown, err := intent.ParseOperationHash(c.FormValue("operation"))
	if err != nil {
		return s.decisionError(c, ErrOtherOperation)
	}
	ticked, err := tickedLines(c, approve)
	if err != nil {
		return s.decisionError(c, err)
	}
	b := ballot{approver: ss.approver, approve: approve, via: receipt.ChannelPage, reason: reason, ticked: ticked}
	if approve {
		if b.passkey, err = s.ballotPasskey(c, id, ss.approver); err != nil {
			return s.decisionError(c, err)
		}
	}
	if _, err := s.decideLines(c.Request().Context(), id, shown, b); err != nil {
		return s.decisionError(c, err)
	}
	return c.Redirect(http.StatusSeeOther, "/requests/"+id)
}

// tickedLines returns the lines of a run ticked on its approval form (the
// form says run=1): their operation hashes, none when none is ticked; nil
// for any other form, whose approval covers every open line.
func tickedLines(c echo.Context, approve bool) ([]intent.OperationHash, error) {
	if !approve || c.FormValue("run") != "1" {
		return nil, nil
	}
	form, err := c.FormParams()
	if err != nil {
		return nil, ErrOtherOperation
	}
	ticked := []intent.OperationHash{}
	for _, v := range form["line"] {
		h, err := intent.ParseOperationHash(v)
		if err != nil {
			return nil, ErrOtherOperation
		}
		ticked = append(ticked, h)
	}
	return ticked, nil
}

// decisionError shows a refused decision in fixed words: no internal
// detail reaches the page.
func (s *Server) decisionError(c echo.Context, err error) error {
	code, title, text := http.StatusInternalServerError, "Not recorded", "The decision could not be recorded, so nothing was approved. Try again."
	switch {
	case errors.Is(err, ErrNotFound), errors.Is(err, ErrOtherOwner):
		code, title, text = http.StatusNotFound, "No such request", "There is no such request; it may have been forgotten some time after it ended."
	case errors.Is(err, ErrTampered):
		code, title, text = http.StatusConflict, "Refused", "This request was refused: what it shows does not hash to the operation the gateway named. Nothing can be approved for it."
	case errors.Is(err, ErrExpired):
		code, title, text = http.StatusGone, "Expired", "This request expired, so nothing was approved. It can execute only if the assistant asks for it again and someone approves it then."
	case errors.Is(err, ErrVoteLost):
		code, title, text = http.StatusConflict, "Not counted", "Someone decided this request at the same moment, so your decision did not count. It is in the audit trail, marked as not counted. Open the request to see what counts."
	case errors.Is(err, ErrDecided):
		code, title, text = http.StatusConflict, "Already decided", "This request was already decided; nothing more was recorded."
	case errors.Is(err, ErrNotIndependent):
		code, title, text = http.StatusConflict, "Not yours to approve", "The request's facts name you as someone who may not approve it (you recorded the call-back it relies on), so nothing was approved. Two other approvers must approve it; you may still reject it."
	case errors.Is(err, ErrSameApprover):
		code, title, text = http.StatusConflict, "Already decided by you", "You already decided on this request; your approval never counts twice. Four eyes need a second, different approver."
	case errors.Is(err, ErrNoLines):
		code, title, text = http.StatusConflict, "No payment ticked", "You ticked none of the run's payments, so nothing was approved. Tick the payments to approve, or reject the run."
	case errors.Is(err, ErrPasskeyRequired):
		code, title, text = http.StatusForbidden, "Passkey needed", "This approval needs your passkey, so nothing was approved. Approve with your passkey (register one under Passkeys if you have none)."
	case errors.Is(err, passkey.ErrChallenge):
		code, title, text = http.StatusForbidden, "Passkey refused", "Your passkey signed another operation or approval than this one, so nothing was approved. Open the request again and approve it with your passkey."
	case errors.Is(err, ErrPasskey):
		code, title, text = http.StatusForbidden, "Passkey refused", "Your passkey's answer did not verify (or came too late), so nothing was approved. Open the request again and approve it with your passkey."
	case errors.Is(err, ErrOtherOperation):
		code, title, text = http.StatusConflict, "Operation changed", "The form does not name this request's operation, so nothing was approved. Open the request again and check it."
	default:
		s.logger.Error("approval decision", "err", err)
	}
	m := msg(title, text)
	if ss := sessionOf(c); ss != nil {
		m.Session, m.CSRF = ss, ss.csrf
	}
	return s.page(c, code, "message", m)
}

// Name returns the signed-in approver's name, for the templates.
func (s *session) Name() string { return s.approver }
