package odoo

import "github.com/intentplane/intentplane/odoo/internal/rpc"

// The connector's errors and settings are those of its RPC layer
// (odoo/internal/rpc), named here so that callers of the connector
// branch on them without seeing that layer.

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
	ErrAccessDenied = rpc.ErrAccessDenied
	// ErrAccess: fault 4, Odoo's AccessError: the identity lacks the
	// group for this model or operation, or called a private method.
	ErrAccess = rpc.ErrAccess
	// ErrUser: fault 2, Odoo's UserError or ValidationError: Odoo refused
	// the call and rolled back everything it did.
	ErrUser = rpc.ErrUser
	// ErrMissing: fault 2 "Record does not exist or has been deleted"
	// (MissingError), or an unknown model; it also matches ErrUser.
	ErrMissing = rpc.ErrMissing
	// ErrServer: fault 1, any other exception (a Python traceback).
	ErrServer = rpc.ErrServer
	// ErrNetwork: the call did not complete: connection refused or lost,
	// a timeout, an HTTP status other than 200. A write whose answer was
	// lost may have been committed.
	ErrNetwork = rpc.ErrNetwork
	// ErrNotSent: the connection could not be made (refused, no route,
	// an unknown host), so the call never reached Odoo and nothing it
	// would have written was written; it also matches ErrNetwork.
	ErrNotSent = rpc.ErrNotSent
	// ErrBadAnswer: the server answered with something the connector
	// cannot decode (not XML-RPC, or values of unexpected types).
	ErrBadAnswer = rpc.ErrBadAnswer
	// ErrKeyRefused: an identity's API key was refused: over JSON-2 an
	// HTTP 401 ("Invalid apikey": expired, revoked, wrong, or a password
	// given as a key), over XML-RPC a refused login whose password has
	// the form of an API key (40 hex digits). It also matches
	// ErrAccessDenied. The error names the identity and the setting to
	// change (Identity.Setting).
	ErrKeyRefused = rpc.ErrKeyRefused
	// ErrNoIdentity is returned by a call that needs an identity the
	// Config does not give (an empty Login).
	ErrNoIdentity = rpc.ErrNoIdentity
	// ErrNoJSON2 is returned, by Login and by every call, when
	// Config.Transport is "json2" and the server runs Odoo 17 or 18,
	// which have no JSON-2 API.
	ErrNoJSON2 = rpc.ErrNoJSON2
	// ErrUnsupportedVersion is returned, wrapped in a *VersionError, when
	// the server runs an Odoo major version the connector does not speak.
	ErrUnsupportedVersion = rpc.ErrUnsupportedVersion
)

// Fault is an XML-RPC fault from Odoo's /xmlrpc/2 endpoints, or a JSON-2
// error answer mapped onto the fault the same failure gives over
// XML-RPC: Code 1 server error, 2 user error, 3 access denied, 4 access
// error; Call names what was called; Message is the fault string cut to
// the last line of its traceback, without the connector's credentials;
// Status and Name are the HTTP status and error class of a JSON-2 answer.
type Fault = rpc.Fault

// Identity is one Odoo user the connector logs in as: Login, and
// Password (a password or an API key; never logged, removed from every
// error), and Setting, where the operator sets Password, named in the
// error of a refused key or login.
type Identity = rpc.Identity

// Version is the server's Odoo version as common.version (or, over
// JSON-2, GET /web/version) gives it: Major (17, 18 or 19) and Server
// ("18.0-20250506").
type Version = rpc.Version

// VersionError reports the version a server announced (Announced) when
// the connector does not support it; it wraps ErrUnsupportedVersion.
type VersionError = rpc.VersionError

// Supported are the Odoo major versions the connector speaks to. Their
// differences (fields, states, faults) are measured in
// ../shared/odoo17-api.md and ../shared/odoo18-19-api.md and live in the
// connector's dialect, never in a pack.
var Supported = rpc.Supported

// DefaultTimeout is the time limit of one call to Odoo when
// Config.Timeout is zero.
const DefaultTimeout = rpc.DefaultTimeout

// Transports are the values of Config.Transport.
const (
	// TransportAuto is JSON-2 on Odoo 19 and later, XML-RPC on 17 and 18.
	TransportAuto = rpc.TransportAuto
	// TransportXMLRPC is /xmlrpc/2 on every version. Odoo 19 logs a
	// deprecation warning for each such call and announces its removal
	// for Odoo 22.
	TransportXMLRPC = rpc.TransportXMLRPC
	// TransportJSON2 is /json/2 (Odoo 19 and later): the identities'
	// passwords must be API keys. It is refused at Login on 17 and 18.
	TransportJSON2 = rpc.TransportJSON2
)
