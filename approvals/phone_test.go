package approvals_test

import (
	"context"
	"errors"
	"html"
	"net/http"
	"strings"
	"testing"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/intent"
)

var _ approvals.PhoneDirectory = (*sink)(nil)

// PhoneOnFile makes the fake sink a PhoneDirectory: vendor "acme" ("v1")
// of any company has "+49 30 1234567" on file.
func (s *sink) PhoneOnFile(ctx context.Context, owner intent.Owner, vendor string) (approvals.CallbackEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.broken {
		return approvals.CallbackEntry{}, errors.New("erp: connection refused at 10.0.0.7")
	}
	if vendor != "acme" && vendor != "v1" {
		return approvals.CallbackEntry{}, &approvals.CallbackError{Field: "vendor", Text: "No such vendor on file."}
	}
	return approvals.CallbackEntry{Owner: owner, Vendor: "v1", VendorName: "ACME Supplies", Phone: "+49 30 1234567"}, nil
}

func TestCallbackPageShowsPhoneOnFile(t *testing.T) {
	f, sk := callbackFixture(t)
	alice := f.signedIn("alice")
	p := alice.do("GET", "/callbacks", nil, nil)
	if !strings.Contains(p.body, `id="lookup"`) || strings.Contains(p.body, `id="on-file"`) {
		t.Fatalf("the look-up form: %.2000s", p.body)
	}
	p = alice.do("GET", "/callbacks?company=emma&vendor=acme&lookup=1", nil, nil)
	p.body = html.UnescapeString(p.body)
	if p.code != http.StatusOK || !strings.Contains(p.body, `<strong id="phone-on-file">+49 30 1234567</strong>`) || !strings.Contains(p.body, "ACME Supplies") {
		t.Fatalf("phone on file: %d %.3000s", p.code, p.body)
	}
	// The number dialled is still the person's to type: never pre-filled.
	if strings.Contains(p.body, `name="phone" type="tel" required maxlength="40" value="+49`) {
		t.Fatal("the dialled number is pre-filled")
	}
	for q, want := range map[string]string{
		"company=bob&vendor=acme&lookup=1":   "Choose one of your companies", // not alice's
		"company=emma&vendor=&lookup=1":      "Type the vendor",
		"company=emma&vendor=other&lookup=1": "No such vendor on file",
	} {
		p := alice.do("GET", "/callbacks?"+q, nil, nil)
		if !strings.Contains(p.body, want) || strings.Contains(p.body, "phone-on-file") {
			t.Errorf("%s: want %q, got %.1500s", q, want, p.body)
		}
	}
	sk.broken = true
	if p := alice.do("GET", "/callbacks?company=emma&vendor=acme&lookup=1", nil, nil); p.code != http.StatusInternalServerError || strings.Contains(p.body, "10.0.0.7") {
		t.Fatalf("ERP down: %d %.500s", p.code, p.body)
	}
}
