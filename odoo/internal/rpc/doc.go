// Package rpc is the Odoo connector's RPC layer, shared by the connector
// (package odoo) and its database provisioning (package odoo/provision):
// it calls an Odoo 17, 18 or 19 server and decodes the answers, and
// knows nothing of bills, payments or erp.Source.
//
//   - Transport makes the calls to one server: XML-RPC (/xmlrpc/2, Call)
//     and JSON-2 (/json/2, chosen by Options.Mode and the server's
//     version), naming the database in the X-Odoo-Database header and,
//     on 17 and 18, with the cookie of a session of the database
//     (UseDatabase). It reads the server's Version once and refuses one
//     other than Supported. It holds no credentials: Options.Secrets are
//     removed from every message.
//   - Session is one identity's login (Identity: a login and a password
//     or API key): UID, Execute (execute_kw, or its JSON-2 translation
//     through the method signatures of json2.go) and SearchRead.
//   - Web makes the requests Odoo serves its web client only
//     (/web/session/authenticate, /web/dataset/call_kw), for making an
//     API key.
//   - Record decodes the values of an answer (Str, Many2one, Amount in
//     minor units, ...); Leaf and Scope build domains and contexts;
//     ParseID reads a connector record ID.
//   - Every fault is a *Fault matching one of ErrAccessDenied, ErrAccess,
//     ErrUser (ErrMissing), ErrServer; transport failures wrap
//     ErrNetwork, undecodable answers ErrBadAnswer. Package odoo names
//     these for its callers; Translate maps the faults of a write Odoo
//     rolled back onto erp's sentinels.
//
// The behaviour of Odoo it is built on is measured in
// ../shared/odoo17-api.md and ../shared/odoo18-19-api.md. Package rpc
// may import core/intent, erp (for Translate) and the XML-RPC library;
// it must never import package odoo, its provisioning, a pack or a
// store.
package rpc
