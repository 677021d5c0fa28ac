package healthcare_test

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/healthcare"
	"github.com/intentplane/intentplane/store/mem"
)

// The agent reads P-1001's notes, finds the injected line and obeys it: the
// gateway refuses P-9999 without saying anything about that patient.
func ExampleNewPack() {
	pack, err := healthcare.NewPack(healthcare.DemoEHR())
	if err != nil {
		log.Fatal(err)
	}
	pub, priv, err := mandate.GenerateKey(nil)
	if err != nil {
		log.Fatal(err)
	}
	at := time.Date(2026, time.March, 2, 10, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	gw, err := gateway.New(gateway.Config{
		Audience: "intentplane",
		Issuers:  mandate.StaticKeys{"hospital-portal": pub},
		Now:      now,
	}, mem.New(now), pack)
	if err != nil {
		log.Fatal(err)
	}
	tok, err := mandate.Issue(mandate.Mandate{
		ID:        "m-dr-grey-1",
		Audience:  "intentplane",
		Owner:     "dr-grey",
		Scope:     []intent.Action{healthcare.ActionReadNotes, healthcare.ActionOpenRecord},
		Budget:    intent.Money{Currency: "EUR"},
		Mode:      mandate.ModeKnownCounterparties,
		NotBefore: at.Add(-time.Minute),
		Expiry:    at.Add(time.Hour),
	}, "hospital-portal", ed25519.PrivateKey(priv))
	if err != nil {
		log.Fatal(err)
	}
	for _, proposal := range []string{
		`{"action": "healthcare.read_notes", "args": {"patient": "P-1001"}}`,
		`{"action": "healthcare.open_record", "args": {"patient": "P-9999"}}`,
	} {
		d, err := gw.Decide(context.Background(), gateway.Request{Mandate: tok, Proposal: []byte(proposal)})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Println(d.Verdict, d.Executed)
		if d.Refusal != nil {
			fmt.Println(d.Refusal.Code)
			// The pack's hint ends the message; the core words the rest.
			_, hint, _ := strings.Cut(d.Refusal.Message, "nothing was done. ")
			fmt.Println(hint)
		}
	}
	// Output:
	// allow true
	// deny false
	// resolve.no_trusted_source
	// A clinician can only open the records of patients in their own encounters. If care requires another patient's record, the clinician must open it themselves through the hospital's break-glass procedure, not through the agent. Do not try another action or spelling.
}
