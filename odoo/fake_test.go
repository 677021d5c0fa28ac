package odoo_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/intentplane/intentplane/erp/erptest"
	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
	"github.com/intentplane/intentplane/odoo/provision"
)

const fakeMaster = "fake-master-password"

// fakeEnv is a database on a fake Odoo set up as Setup does, with two
// companies, the three users and an administrator.
type fakeEnv struct {
	srv    *odootest.Server
	admin  *provision.Admin
	cfg    odoo.Config
	client *odoo.Client
}

var fakeDBs atomic.Int64

func newFake(t testing.TB, srv *odootest.Server, demo bool) fakeEnv {
	t.Helper()
	return newFakeOn(t, srv, fakeTransport{version: 17}, demo)
}

// newFakeXMLRPC is newFake with the connector on XML-RPC whatever the
// fake's version, for the tests of XML-RPC itself (cookies, answers).
func newFakeXMLRPC(t testing.TB, srv *odootest.Server, demo bool) fakeEnv {
	t.Helper()
	return newFakeOn(t, srv, fakeTransport{version: 17, transport: odoo.TransportXMLRPC}, demo)
}

// fakeTransport is a version of the fake Odoo and the connector's
// transport to it.
type fakeTransport struct {
	name      string
	version   int
	transport string // Config.Transport
}

// fakeTransports are the fake Odoo 17 and 18 over XML-RPC, and the fake
// Odoo 19 over XML-RPC (configured) and over JSON-2 (automatic, with the
// API keys Setup makes).
var fakeTransports = []fakeTransport{
	{"17-xmlrpc", 17, odoo.TransportAuto},
	{"18-xmlrpc", 18, odoo.TransportAuto},
	{"19-xmlrpc", 19, odoo.TransportXMLRPC},
	{"19-json2", 19, odoo.TransportAuto},
}

// onTransports runs test as a parallel subtest for each fakeTransports.
func onTransports(t *testing.T, test func(t *testing.T, ft fakeTransport)) {
	for _, ft := range fakeTransports {
		t.Run(ft.name, func(t *testing.T) {
			t.Parallel()
			test(t, ft)
		})
	}
}

// json2 reports whether the connector's calls go over JSON-2.
func (ft fakeTransport) json2() bool { return ft.version >= 19 && ft.transport != odoo.TransportXMLRPC }

// answerFault makes every later call of model.method answer a fault of
// code with msg, on ft's transport (a JSON-2 error as Odoo 19 gives it
// for the same exception); an empty msg removes it.
func answerFault(e fakeEnv, ft fakeTransport, model, method string, code int, msg string) {
	if !ft.json2() {
		body := ""
		if msg != "" {
			body = fmt.Sprintf(`<?xml version="1.0"?><methodResponse><fault><value><struct>`+
				`<member><name>faultCode</name><value><int>%d</int></value></member>`+
				`<member><name>faultString</name><value><string>%s</string></value></member>`+
				`</struct></value></fault></methodResponse>`, code, msg)
		}
		e.srv.Answer(model, method, body)
		return
	}
	if msg == "" {
		e.srv.AnswerJSON2(model, method, 0, "")
		return
	}
	status, name := map[int]int{1: 500, 2: 422, 3: 401, 4: 403}[code], map[int]string{1: "builtins.ValueError", 2: "odoo.exceptions.UserError",
		3: "werkzeug.exceptions.Unauthorized", 4: "odoo.exceptions.AccessError"}[code]
	b, _ := json.Marshal(map[string]any{"name": name, "message": msg, "arguments": []any{msg}, "context": map[string]any{},
		"debug": "Traceback (most recent call last):\n  File \"/opt/odoo/odoo/http.py\", line 1\n" + name + ": " + msg})
	e.srv.AnswerJSON2(model, method, status, string(b))
}

// newFakeOn is newFake on a fake Odoo of ft's version (a new one if srv
// is nil), the connector on ft's transport.
func newFakeOn(t testing.TB, srv *odootest.Server, ft fakeTransport, demo bool) fakeEnv {
	t.Helper()
	if srv == nil {
		srv = odootest.NewServer(fakeMaster)
		srv.SetVersion(ft.version)
		t.Cleanup(srv.Close)
	}
	db := fmt.Sprintf("fake_%d", fakeDBs.Add(1))
	a, err := provision.NewAdmin(provision.AdminConfig{URL: srv.URL, DB: db, MasterPassword: fakeMaster, Admin: odoo.Identity{Login: "admin", Password: "admin-pw"}})
	if err != nil {
		t.Fatal(err)
	}
	r, p, b := identities(t)
	cfg, err := provision.Setup(context.Background(), a, provision.SetupConfig{
		Others: map[string]string{"southwind": "Southwind"}, Reader: r, Payer: p, BankAdmin: b, DemoData: demo, Transport: ft.transport,
	})
	if err != nil {
		t.Fatalf("setup: %v", err)
	}
	c, err := odoo.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return fakeEnv{srv: srv, admin: a, cfg: cfg, client: c}
}

// fakeOf returns a fake Odoo of the major version, closed with the test.
func fakeOf(t testing.TB, major int) *odootest.Server {
	srv := odootest.NewServer(fakeMaster)
	srv.SetVersion(major)
	t.Cleanup(srv.Close)
	return srv
}

// eachVersion runs f as a subtest per Odoo version the fake serves
// (odootest.Versions), named by it ("17"), each on its own fake server.
func eachVersion(t *testing.T, f func(t *testing.T, srv *odootest.Server)) {
	for _, v := range odootest.Versions {
		t.Run(fmt.Sprint(v), func(t *testing.T) {
			t.Parallel()
			f(t, fakeOf(t, v))
		})
	}
}

func TestFakeConformance(t *testing.T) {
	t.Parallel()
	onTransports(t, func(t *testing.T, ft fakeTransport) {
		srv := odootest.NewServer(fakeMaster)
		defer srv.Close()
		srv.SetVersion(ft.version)
		erptest.Run(t, func(t *testing.T) erptest.Env {
			e := newFakeOn(t, srv, ft, false)
			return erptest.Env{Source: e.client, Seeder: e.admin, Company: "northwind", Other: "southwind"}
		})
	})
}
