package rpc

import (
	"errors"
	"fmt"
	"strings"

	"github.com/intentplane/intentplane/erp"
)

// Kinds of failure, for errors.Is. Every error the connector returns for a
// fault is a *Fault that matches exactly one of ErrAccessDenied,
// ErrAccess, ErrUser (with ErrMissing for a missing record) or ErrServer;
// every transport failure wraps ErrNetwork, and every answer that cannot
// be decoded wraps ErrBadAnswer. Methods of erp.Source translate the
// faults that mean "refused, nothing written" into erp.ErrRefused and
// "no such record" into erp.ErrNotFound as well.
var (
	// ErrAccessDenied: fault 3, a wrong password or master password, a
	// login that authenticate refused, or (JSON-2) an API key refused.
	ErrAccessDenied = errors.New("odoo: access denied")
	// ErrAccess: fault 4, Odoo's AccessError: the identity lacks the
	// group for this model or operation, or called a private method.
	ErrAccess = errors.New("odoo: access error")
	// ErrUser: fault 2, Odoo's UserError or ValidationError: Odoo refused
	// the call and rolled back everything it did.
	ErrUser = errors.New("odoo: refused")
	// ErrMissing: fault 2 "Record does not exist or has been deleted"
	// (MissingError), or an unknown model; it also matches ErrUser.
	ErrMissing = errors.New("odoo: missing record")
	// ErrServer: fault 1, any other exception (a Python traceback).
	ErrServer = errors.New("odoo: server error")
	// ErrNetwork: the call did not complete: connection refused or lost,
	// a timeout, an HTTP status other than 200. A write whose answer was
	// lost may have been committed.
	ErrNetwork = errors.New("odoo: network error")
	// ErrNotSent: the connection could not be made (refused, no route,
	// an unknown host), so the call never reached Odoo and nothing it
	// would have written was written; it also matches ErrNetwork.
	ErrNotSent = errors.New("odoo: not sent")
	// ErrBadAnswer: the server answered with something the connector
	// cannot decode (not XML-RPC, or values of unexpected types).
	ErrBadAnswer = errors.New("odoo: bad answer")
	// ErrKeyRefused: an identity's API key was refused: over JSON-2 an
	// HTTP 401 ("Invalid apikey": expired, revoked, wrong, or a password
	// given as a key), over XML-RPC a refused login whose password has
	// the form of an API key (40 hex digits). It also matches
	// ErrAccessDenied. The error names the identity and the setting to
	// change (Identity.Setting).
	ErrKeyRefused = errors.New("odoo: API key refused")
)

// ErrNoneResult marks fault 1 "cannot marshal None": the method ran and
// its transaction was committed; only its None result could not be sent.
var ErrNoneResult = errors.New("odoo: committed, result None")

// Fault is an XML-RPC fault from Odoo's /xmlrpc/2 endpoints, or a JSON-2
// error answer mapped onto the fault the same failure gives over
// XML-RPC (see json2Fault). Message is the fault string with the Python
// traceback cut to its last line (JSON-2: the error's message; its
// traceback is never kept), and with the connector's credentials
// removed.
type Fault struct {
	// Code is Odoo's fault code: 1 server error, 2 user error, 3 access
	// denied, 4 access error.
	Code int
	// Call names what was called: "object res.partner.bank.create",
	// "common authenticate" or "json2 res.partner.bank.create".
	Call string
	// Message is the fault string, a traceback cut to its last line.
	Message string
	// Status is the HTTP status of a JSON-2 error answer (401, 403, 404,
	// 422, 500, ...); 0 for an XML-RPC fault.
	Status int
	// Name is the JSON-2 error's class ("odoo.exceptions.UserError",
	// "werkzeug.exceptions.Unauthorized"); "" for an XML-RPC fault or a
	// JSON-2 answer in HTML.
	Name string
}

// Error returns the call, the code (JSON-2: the HTTP status and the
// error's class) and the message.
func (f *Fault) Error() string {
	if f.Status != 0 && (f.Code == 1 || f.Name == "") { // the message starts with the exception's class
		return fmt.Sprintf("odoo: %s: HTTP %d: %s", f.Call, f.Status, f.Message)
	} else if f.Status != 0 {
		return fmt.Sprintf("odoo: %s: HTTP %d %s: %s", f.Call, f.Status, f.Name, f.Message)
	}
	return fmt.Sprintf("odoo: %s: fault %d: %s", f.Call, f.Code, f.Message)
}

// Is reports whether target is the kind of f: ErrServer, ErrUser,
// ErrMissing, ErrAccessDenied, ErrAccess or, for a JSON-2 401,
// ErrKeyRefused.
func (f *Fault) Is(target error) bool {
	if f.Status != 0 {
		switch target {
		case ErrMissing:
			return f.Code == 2 && (f.Name == "odoo.exceptions.MissingError" || f.Name == "werkzeug.exceptions.NotFound")
		case ErrKeyRefused:
			return f.Status == 401
		case ErrNoneResult:
			return false
		}
	}
	switch target {
	case ErrServer:
		return f.Code == 1 && !f.noneResult()
	case ErrNoneResult:
		return f.noneResult()
	case ErrUser:
		return f.Code == 2
	case ErrMissing:
		return f.Code == 2 && (strings.HasPrefix(f.Message, "Record does not exist or has been deleted") ||
			(strings.HasPrefix(f.Message, "Object ") && strings.HasSuffix(f.Message, " doesn't exist")))
	case ErrAccessDenied:
		return f.Code == 3
	case ErrAccess:
		return f.Code == 4
	}
	return false
}

func (f *Fault) noneResult() bool {
	return f.Code == 1 && strings.Contains(f.Message, "cannot marshal None")
}

// lastLine returns the last non-empty line of a fault string: for fault 1
// the "Type: message" line ending a Python traceback.
func lastLine(s string) string {
	s = strings.TrimRight(s, "\n ")
	if !strings.Contains(s, "Traceback (most recent call last)") {
		return s
	}
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		return strings.TrimSpace(s[i+1:])
	}
	return s
}

// Translate maps the faults of a write that Odoo rolled back onto erp's
// sentinels: a missing record is erp.ErrNotFound, any other user error
// erp.ErrRefused. The *Fault stays in the chain.
func Translate(err error) error {
	switch {
	case errors.Is(err, ErrMissing):
		return fmt.Errorf("%w: %w", erp.ErrNotFound, err)
	case errors.Is(err, ErrUser):
		return fmt.Errorf("%w: %w", erp.ErrRefused, err)
	}
	return err
}
