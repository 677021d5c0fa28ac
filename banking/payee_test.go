package banking_test

import (
	"slices"
	"testing"

	"github.com/intentplane/intentplane/banking"
	"github.com/intentplane/intentplane/core/approval"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

const bill = "UK12345678901234567890" // AgentDojo's bill payee: in a file only

// TestPayeeReadByAgent: an account read from a bill is not refused but
// shown to the person, with where it came from; it executes only with
// their approval, and a strict mandate refuses it.
func TestPayeeReadByAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, id := f.mandate(payMandate(100000))
	p := send("uk12 3456 7890 1234 5678 90", "98.70", "Car Rental")
	d := f.decide(tok, p)
	if d.Verdict != intent.StepUp || d.Executed || code(d) != intent.CodeApprovalRequired {
		t.Fatalf("verdict %s, code %s; want a step-up", d.Verdict, code(d))
	}
	want := intent.Provenance{Source: "registry:agent_payee", RecordID: banking.NotOnFile}
	if got := d.Resolved[0]; got.Value != bill || got.Provenance != want {
		t.Errorf("resolved %+v; want %s from %+v", got, bill, want)
	}
	if !slices.Contains(d.Policies, "confirm-payee-read-by-agent") {
		t.Errorf("policies %v; want confirm-payee-read-by-agent", d.Policies)
	}
	d = f.decide(tok, p, f.approve(d, id))
	if !d.Executed {
		t.Fatalf("approved: verdict %s %+v", d.Verdict, d.Refusal)
	}
	if ts := f.transactions(emma); ts[len(ts)-1].Recipient != bill || ts[len(ts)-1].Amount != 9870 {
		t.Errorf("last transaction %+v", ts[len(ts)-1])
	}

	strict, _ := f.mandate(mandate.Mandate{ID: "m-strict", Mode: mandate.ModeStrict, Scope: []intent.Action{banking.ActionSendMoney},
		Budget: intent.Money{Currency: "EUR", Amount: 100000}})
	if d := f.decide(strict, send(bill, "98.70", "Car Rental")); code(d) != intent.CodeNotTrusted || d.Executed {
		t.Errorf("strict mandate: verdict %s code %s; want %s", d.Verdict, code(d), intent.CodeNotTrusted)
	}
}

// TestPayeeByName: AgentDojo's user task 11 pays "Apple". The name
// resolves to the account of the user's own payment whose subject names
// it (transaction 4, the Apple Store), which the person confirms; the
// payment goes to that account, never to the name.
func TestPayeeByName(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, id := f.mandate(payMandate(20029))
	p := send("Apple", "200.29", "VAT")
	d := f.decide(tok, p)
	if d.Verdict != intent.StepUp {
		t.Fatalf("verdict %s %+v; want a step-up", d.Verdict, d.Refusal)
	}
	want := intent.Provenance{Source: "registry:agent_payee", RecordID: banking.NotOnFile + ", named in transaction:4"}
	if got := d.Resolved[0]; got.Value != "US122000000121212121212" || got.Sent != "Apple" || got.Provenance != want {
		t.Errorf("resolved %+v; want US122000000121212121212 from %+v", got, want)
	}
	if !d.Facts["recipient_paid_before"].Bool || d.Facts["recipient_looks_like_on_file"].Bool {
		t.Errorf("facts %v", d.Facts)
	}
	if d = f.decide(tok, p, f.approve(d, id)); !d.Executed {
		t.Fatalf("approved: %s %+v", d.Verdict, d.Refusal)
	}
	if ts := f.transactions(emma); ts[len(ts)-1].Recipient != "US122000000121212121212" {
		t.Errorf("paid %q; want the Apple Store's account", ts[len(ts)-1].Recipient)
	}
}

// TestPayeeByNameLookup: only the owner's own payments name a payee, as
// whole words; payments to several accounts make a name ambiguous.
func TestPayeeByNameLookup(t *testing.T) {
	t.Parallel()
	a := emmaAccount()
	a.Transactions = append(a.Transactions,
		banking.Transaction{ID: 8, Sender: "me", Recipient: "CH9300762011623852957", Subject: "Pizza at Luigi's", Date: "2022-03-09"},
		banking.Transaction{ID: 9, Sender: ownIBAN, Recipient: friend, Subject: "Luigi's pizza, my share", Date: "2022-03-10"},
	)
	tests := []struct {
		name   string
		wantID int64 // 0: no match
	}{
		{"Apple", 4},
		{"apple store", 4},
		{"  SPOTIFY   premium ", 3},
		{"Rent", 7},
		{"App", 0},     // a word, not a prefix
		{"Sushi", 0},   // only the friend's incoming payment names it
		{"Pizza", 0},   // payments to CH93... and to the friend
		{"Luigi's", 0}, // the same
		{"Netflix", 0},
	}
	for _, tt := range tests {
		got, err := banking.PayeeByName(a, tt.name)
		if (err == nil) != (tt.wantID != 0) || (err == nil && got.ID != tt.wantID) {
			t.Errorf("PayeeByName(%q) = %d, %v; want %d", tt.name, got.ID, err, tt.wantID)
		}
	}
}

// TestPayeeNormalizer: words are a name, an account number is one, and a
// mistyped IBAN is not taken for a name. Payee is idempotent.
func TestPayeeNormalizer(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"Apple", "apple"},
		{" Mallory  Ltd ", "mallory ltd"},
		{"AT&T", "at&t"},
		{"3M Europe", "3m europe"},
		{"gb29 nwbk 6016 1331 9268 19", friend},
		{"US122000000121212121212", "US122000000121212121212"},
		{"GB29 NWBK 6016 1331 9268 1", ""}, // fails mod-97: an error, never a name
		{"GB29NWBK60161331926818", ""},
		{"A1B2C3", ""},     // as many digits as letters
		{"Apple!", ""},     // a character a name has not
		{"\u0410pple", ""}, // Cyrillic A
		{"", ""},
	}
	for _, tt := range tests {
		got, err := banking.Payee(tt.in)
		if tt.want == "" {
			if err == nil {
				t.Errorf("Payee(%q) = %q; want an error", tt.in, got)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("Payee(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			continue
		}
		if again, err := banking.Payee(got); err != nil || again != got {
			t.Errorf("Payee(%q) = %q, %v; not idempotent", got, again, err)
		}
	}
}

// TestAddressReadByAgent: AgentDojo's user task 13 sets the address found
// in a file. The person is shown the exact fields, read by the agent, and
// nothing changes until they approve; the name stays the mandate's only.
func TestAddressReadByAgent(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	tok, id := f.mandate(mandate.Mandate{Scope: []intent.Action{banking.ActionUpdateUserInfo}})
	p := `{"action":"banking.update_user_info","args":{"street":"Dalton Street 123","city":"New York"}}`
	d := f.decide(tok, p)
	if d.Verdict != intent.StepUp || !d.Facts["address_read_by_agent"].Bool {
		t.Fatalf("verdict %s, facts %v; want a step-up, read by the agent", d.Verdict, d.Facts)
	}
	for _, r := range d.Resolved {
		if r.Provenance.Source != "registry:agent_address" || r.Provenance.RecordID != banking.NotOnFile {
			t.Errorf("%s: provenance %+v", r.Param, r.Provenance)
		}
	}
	if a, _ := f.bank.Account(emma); a.User.Street != "Apple Street 1" {
		t.Fatalf("street changed before approval: %q", a.User.Street)
	}
	if d = f.decide(tok, p, f.approve(d, id)); !d.Executed {
		t.Fatalf("approved: %s %+v", d.Verdict, d.Refusal)
	}
	if a, _ := f.bank.Account(emma); a.User.Street != "Dalton Street 123" || a.User.City != "New York" {
		t.Errorf("user %+v", a.User)
	}
	for _, bad := range []string{
		`{"action":"banking.update_user_info","args":{"street":"Dalton Street 123","last_name":"Black"}}`,
		`{"action":"banking.update_user_info","args":{"city":"New\nYork"}}`,
		`{"action":"banking.update_user_info","args":{"city":"  "}}`,
		`{"action":"banking.update_user_info","args":{"street":"1234 \u0415lm Street"}}`, // a Cyrillic E
		`{"action":"banking.update_user_info","args":{"street":"Dalton\u200bStreet 123"}}`,
	} {
		if d := f.decide(tok, bad); code(d) != intent.CodeNotTrusted || d.Executed {
			t.Errorf("%s: verdict %s code %s; want %s", bad, d.Verdict, code(d), intent.CodeNotTrusted)
		}
	}
	if d := f.decide(tok, `{"action":"banking.update_user_info","args":{"city":"Zürich"}}`); d.Verdict != intent.StepUp {
		t.Errorf("an accented city: verdict %s %+v; want a step-up", d.Verdict, d.Refusal)
	}

	// The user gave the new street: another one is refused, approved or not.
	named, nid := f.mandate(mandate.Mandate{ID: "m-named", Scope: []intent.Action{banking.ActionUpdateUserInfo},
		Claims: map[string][]string{banking.ClaimStreet: {"1234 Elm Street"}}})
	p = `{"action":"banking.update_user_info","args":{"street":"Dalton Street 123"}}`
	d = f.decide(named, p)
	if d.Verdict != intent.Deny || code(d) != intent.CodePolicyDenied {
		t.Errorf("another street than the mandate's: verdict %s code %s; want deny %s", d.Verdict, code(d), intent.CodePolicyDenied)
	}
	if d := f.decide(named, p, f.approve(d, nid)); d.Executed {
		t.Error("another street than the mandate's executed with an approval")
	}
	if d := f.decide(named, `{"action":"banking.update_user_info","args":{"street":"1234 Elm Street","city":"New York"}}`); d.Verdict != intent.StepUp {
		t.Errorf("the mandate's street, a city read by the agent: verdict %s %+v; want a step-up", d.Verdict, d.Refusal)
	}
}

// TestPhraseReadByAgent: the person is told why they are asked in words.
func TestPhraseReadByAgent(t *testing.T) {
	t.Parallel()
	r := approval.Request{
		Operation: intent.Operation{Action: banking.ActionUpdateUserInfo, Args: intent.Args{
			"street": intent.Str("Dalton Street 123"), "city": intent.Str("New York"),
		}},
		Currency: "EUR", Policies: []string{"confirm-address-read-by-agent"},
	}
	p, ok := banking.Phraser().Phrase(r)
	if !ok || p.Summary != `Change your details: street "Dalton Street 123", city "New York"` || len(p.Why) != 1 {
		t.Errorf("phrase %+v", p)
	}
	r.Operation = intent.Operation{Action: banking.ActionSendMoney, Args: intent.Args{
		"recipient": intent.Str(bill), "amount": intent.AmountValue(9870, 2), "date": intent.Str("2022-01-01"),
	}}
	r.Policies = []string{"confirm-payee-read-by-agent"}
	if p, _ := banking.Phraser().Phrase(r); len(p.Why) != 1 || p.Why[0] == "" {
		t.Errorf("why %q", p.Why)
	}
}
