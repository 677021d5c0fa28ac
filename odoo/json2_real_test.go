package odoo_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/odoo"
	"github.com/intentplane/intentplane/odoo/odootest"
)

// TestRealOdooJSON2Refused: a server without JSON-2 (Odoo 17 or 18) is
// refused at Login when the transport asks for it, with what to set.
func TestRealOdooJSON2Refused(t *testing.T) {
	url := odootest.RealOf(t, 17, 18).URL
	c, err := odoo.New(odoo.Config{URL: url, DB: "any", Reader: odoo.Identity{Login: "r", Password: "p"}, Transport: odoo.TransportJSON2})
	if err != nil {
		t.Fatal(err)
	}
	v, err := c.Version(context.Background())
	if err != nil || v.Major >= 19 {
		t.Skipf("needs Odoo 17 or 18: %+v, %v", v, err)
	}
	if err := c.Login(context.Background()); !errors.Is(err, odoo.ErrNoJSON2) || !strings.Contains(err.Error(), `"xmlrpc"`) {
		t.Errorf("json2 on Odoo %s: %v; want ErrNoJSON2", v.Server, err)
	} else {
		t.Log(err)
	}
}
