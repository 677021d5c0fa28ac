package provision

import (
	"context"

	"fmt"

	"time"

	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/internal/rpc"
)

// KeyDays is the lifetime, in days, of the API keys Setup makes when
// SetupConfig.KeyDays is zero: the longest Odoo 19 lets a user without
// Settings rights give its own key (base.group_user's "API Keys maximum
// duration days"; users in no group with a duration get 1 day). Only
// Settings users may have keys that never expire, and the connector's
// users must not be Settings users.
const KeyDays = 90

// APIKey is an API key Setup made for one of the connector's users.
type APIKey struct {
	// Login is its user's.
	Login string
	// Key is the key: 40 hex digits, the identity's Password.
	Key string
	// Expires is when Odoo stops taking it: midnight (the server's
	// calendar, UTC) of the day KeyDays after the day it was made.
	Expires time.Time
}

// NewAPIKey makes an API key for the user id (its login and password)
// valid for days days (1 to 365; a user without Settings rights may not
// exceed its groups' maximum, 90 for internal users), named name in the
// user's Preferences, and returns it. Odoo 19 makes the first key of a
// user only through its web client: the method is @check_identity, which
// refuses XML-RPC. NewAPIKey does what the web client does, over four
// JSON-RPC requests (not counted as calls): logs in with a web session
// (/web/session/authenticate), creates the key's description
// (res.users.apikeys.description, name and duration), asks for the key
// (make_key), and confirms the user's password (res.users.identitycheck
// run_check), which answers the key. It needs Odoo 19 or later. The key
// is never logged; an error never holds it or the password.
func (a *Admin) NewAPIKey(ctx context.Context, id odoo.Identity, name string, days int) (APIKey, error) {
	if days < 1 || days > 365 {
		return APIKey{}, fmt.Errorf("odoo: an API key lasts 1 to 365 days, not %d", days)
	}
	w := a.t.Web(id.Password)
	if _, err := w.Call(ctx, "/web/session/authenticate", map[string]any{"db": a.db, "login": id.Login, "password": id.Password}); err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: logging in to the web client: %w", id.Login, err)
	}
	if !w.LoggedIn() {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: logging in to the web client: %w", id.Login, rpc.BadAnswer("a session cookie", nil))
	}
	made := time.Now().UTC()
	v, err := w.CallKw(ctx, "res.users.apikeys.description", "create", []any{map[string]any{"name": name, "duration": fmt.Sprint(days)}}, nil)
	if err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: %w", id.Login, err)
	}
	desc, err := rpc.AsID(v)
	if err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: res.users.apikeys.description.create: %w", id.Login, err)
	}
	v, err = w.CallKw(ctx, "res.users.apikeys.description", "make_key", []any{[]any{desc}}, nil)
	if err != nil {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: %w", id.Login, err)
	}
	if act, _ := v.(map[string]any); act["res_model"] == "res.users.identitycheck" {
		check, err := rpc.AsID(act["res_id"])
		if err != nil {
			return APIKey{}, fmt.Errorf("odoo: API key for %s: make_key: %w", id.Login, err)
		}
		v, err = w.CallKw(ctx, "res.users.identitycheck", "run_check", []any{[]any{check}}, map[string]any{"context": map[string]any{"password": id.Password}})
		if err != nil {
			return APIKey{}, fmt.Errorf("odoo: API key for %s: confirming the password: %w", id.Login, err)
		}
	}
	act, _ := v.(map[string]any)
	actx, _ := act["context"].(map[string]any)
	key, _ := actx["default_key"].(string)
	if act["res_model"] != "res.users.apikeys.show" || key == "" {
		return APIKey{}, fmt.Errorf("odoo: API key for %s: %w", id.Login, rpc.BadAnswer("the action showing the key", v))
	}
	day := time.Date(made.Year(), made.Month(), made.Day(), 0, 0, 0, 0, time.UTC)
	return APIKey{Login: id.Login, Key: key, Expires: day.AddDate(0, 0, days)}, nil
}
