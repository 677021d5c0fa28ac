package rpc

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// DefaultTimeout is the time limit of one call to Odoo when
// Options.Timeout is zero.
const DefaultTimeout = 30 * time.Second

// ErrNoIdentity is returned by a call that needs an identity the Config
// does not give (an empty Login).
var ErrNoIdentity = errors.New("odoo: identity not configured")

// Identity is one Odoo user the connector logs in as.
type Identity struct {
	// Login is the user's login.
	Login string
	// Password is the user's password or API key. It is sent with every
	// call, never logged, and removed from every error message. Over
	// JSON-2 it must be an API key (Odoo: Preferences, Account Security,
	// New API Key; or intentplane odoo setup, which makes them); over
	// XML-RPC an API key works as the password too.
	Password string
	// Setting names where the operator sets Password, for the error of a
	// refused key or login ("environment variable ODOO_PAYER_KEY");
	// "" names the configuration field (odoo.Config.Payer.Password).
	Setting string
}

// Session is one identity's login on a Transport's server: it
// authenticates once, at its first call, and caches the uid. It is safe
// for concurrent use.
type Session struct {
	t     *Transport
	db    string
	role  string
	ident Identity

	mu     sync.Mutex
	cached int64
}

// NewSession returns the Session of id on database db over t; role
// names the identity in errors ("payer"). It makes no call.
func NewSession(t *Transport, db, role string, id Identity) *Session {
	return &Session{t: t, db: db, role: role, ident: id}
}

// Identity returns the identity the Session logs in as.
func (s *Session) Identity() Identity { return s.ident }

// Transport returns the Transport the Session calls over.
func (s *Session) Transport() *Transport { return s.t }

// Role returns the name of the identity in errors ("payer").
func (s *Session) Role() string { return s.role }

// UID returns the cached uid, logging in first if needed: over XML-RPC
// common.authenticate; over JSON-2, which has no login, res.users's
// context_get (the key's user) and a read of that user's login, which
// must be the identity's: a key of another user is refused before any
// call runs with it. A refused login is not cached.
func (s *Session) UID(ctx context.Context) (int64, error) {
	if s.ident.Login == "" {
		return 0, fmt.Errorf("%w: %s", ErrNoIdentity, s.role)
	}
	j, err := s.t.json2(ctx)
	if err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cached > 0 {
		return s.cached, nil
	}
	if j {
		return s.keyLogin(ctx)
	}
	v, err := s.t.Call(ctx, "common", "authenticate", "authenticate", s.db, s.ident.Login, s.ident.Password, map[string]any{})
	if err != nil {
		return 0, fmt.Errorf("odoo: logging in as the %s: %w", s.role, err)
	}
	switch u := v.(type) {
	case int64:
		if u > 0 {
			s.cached = u
			return u, nil
		}
	case bool:
		if !u && APIKeyForm(s.ident.Password) {
			return 0, fmt.Errorf("%w: %w: the %s's API key (login %q) was refused at login: %s", ErrAccessDenied, ErrKeyRefused, s.role, s.ident.Login, s.renewal())
		}
		if !u {
			return 0, fmt.Errorf("%w: the %s's login was refused (login %q): wrong login or password; set the right password in %s", ErrAccessDenied, s.role, s.ident.Login, s.ident.Setting)
		}
	}
	return 0, fmt.Errorf("odoo: logging in as the %s: %w", s.role, BadAnswer("a uid or False", v))
}

// keyLogin logs in over JSON-2 (see UID); s.mu is held.
func (s *Session) keyLogin(ctx context.Context) (int64, error) {
	v, err := s.t.callJSON2(ctx, s.ident.Password, "res.users", "context_get", nil, nil)
	if err != nil {
		return 0, s.loginError(err)
	}
	m, _ := v.(map[string]any)
	uid, err := AsID(m["uid"])
	if err != nil {
		return 0, fmt.Errorf("odoo: logging in as the %s: res.users.context_get: %w", s.role, err)
	}
	v, err = s.t.callJSON2(ctx, s.ident.Password, "res.users", "read", []any{[]any{uid}}, map[string]any{"fields": []any{"login"}})
	if err != nil {
		return 0, s.loginError(err)
	}
	rs, err := Records(v)
	if err != nil || len(rs) != 1 {
		return 0, fmt.Errorf("odoo: logging in as the %s: res.users.read: %w", s.role, errors.Join(err, ErrBadAnswer))
	}
	if login, _ := rs[0].Str("login"); login != s.ident.Login {
		return 0, fmt.Errorf("%w: %w: the %s's API key (%s) is a key of Odoo user %q, not of its login %q", ErrAccessDenied, ErrKeyRefused, s.role, s.ident.Setting, login, s.ident.Login)
	}
	s.cached = uid
	return uid, nil
}

// loginError names a refused key as such, with what to change.
func (s *Session) loginError(err error) error {
	if errors.Is(err, ErrKeyRefused) {
		return fmt.Errorf("odoo: the %s's API key (login %q) was refused: %s (%w)", s.role, s.ident.Login, s.renewal(), err)
	}
	return fmt.Errorf("odoo: logging in as the %s: %w", s.role, err)
}

// renewal tells the operator what to do about a refused API key.
func (s *Session) renewal() string {
	return fmt.Sprintf("the key expired, was revoked or is wrong; make a new API key for %s (intentplane odoo setup, or in Odoo: the user's Preferences, Account Security, New API Key) and set it in %s", s.ident.Login, s.ident.Setting)
}

// APIKeyForm reports whether p has the form of an Odoo API key: 40
// lowercase hex digits.
func APIKeyForm(p string) bool {
	if len(p) != 40 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if c := p[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// Execute calls model.method as this identity: over XML-RPC through
// execute_kw, over JSON-2 with the arguments named (see named). args are
// the positional arguments (for most methods a list of ids first); kw
// the keyword arguments, nil for none.
func (s *Session) Execute(ctx context.Context, model, method string, args []any, kw map[string]any) (any, error) {
	uid, err := s.UID(ctx)
	if err != nil {
		return nil, err
	}
	if j, _ := s.t.json2(ctx); j { // uid decided it
		v, err := s.t.callJSON2(ctx, s.ident.Password, model, method, args, kw)
		if errors.Is(err, ErrKeyRefused) { // revoked or expired since the login
			err = s.loginError(err)
		}
		return v, err
	}
	if args == nil {
		args = []any{}
	}
	if kw == nil {
		kw = map[string]any{}
	}
	v, err := s.t.Call(ctx, "object", model+"."+method, "execute_kw", s.db, uid, s.ident.Password, model, method, args, kw)
	if errors.Is(err, ErrAccessDenied) && APIKeyForm(s.ident.Password) { // revoked or expired since the login
		err = fmt.Errorf("odoo: the %s's API key (login %q) was refused: %s (%w: %w)", s.role, s.ident.Login, s.renewal(), ErrKeyRefused, err)
	}
	return v, err
}

// SearchRead runs search_read and decodes the records, ordered by id
// unless kw names an order. Each many2one comes as its id alone (load "",
// so many2one decodes a name of ""): Odoo computes a display name for
// every many2one value it names, which was a third of the time of the
// five reads of a payment on Odoo 17 (medians: 79 ms with the names, 54
// ms without). A read that shows a name asks for it with kw's load set to
// LoadNames.
func (s *Session) SearchRead(ctx context.Context, model string, domain []any, fields []string, kw map[string]any) ([]Record, error) {
	if kw == nil {
		kw = map[string]any{}
	}
	kw["fields"] = Strs(fields)
	if _, ok := kw["load"]; !ok {
		kw["load"] = ""
	}
	if _, ok := kw["order"]; !ok {
		kw["order"] = "id"
	}
	v, err := s.Execute(ctx, model, "search_read", []any{domain}, kw)
	if err != nil {
		return nil, err
	}
	rs, err := Records(v)
	if err != nil {
		return nil, fmt.Errorf("odoo: %s.search_read: %w", model, err)
	}
	return rs, nil
}

// Strs returns ss as the []any a call's arguments are.
func Strs(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// LoadNames is the keyword load of a read whose many2one values come with
// their display names, Odoo's default (see SearchRead).
const LoadNames = "_classic_read"

// Leaf is one domain condition: field op value.
func Leaf(field, op string, value any) []any { return []any{field, op, value} }

// Scope is the context of a call scoped to one company; archived lets
// it see archived records too (active_test false).
func Scope(company int64, archived bool) map[string]any {
	ctx := map[string]any{"allowed_company_ids": []any{company}}
	if archived {
		ctx["active_test"] = false
	}
	return ctx
}
