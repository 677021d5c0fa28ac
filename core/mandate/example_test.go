package mandate_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
)

func ExampleIssue() {
	// The issuer (the user's bank app) holds the private key; the gateway
	// knows only the public key.
	pub, priv, err := mandate.GenerateKey(nil)
	if err != nil {
		log.Fatal(err)
	}
	id, err := mandate.NewID(nil)
	if err != nil {
		log.Fatal(err)
	}
	issued := time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)
	token, err := mandate.Issue(mandate.Mandate{
		ID:        id,
		Audience:  "intentplane",
		Owner:     "customer:emma",
		Scope:     []intent.Action{"banking.send_money"},
		Budget:    intent.Money{Currency: "CHF", Amount: 125000}, // CHF 1250.00
		Claims:    map[string][]string{"payees": {"CH93 0076 2011 6238 5295 7"}},
		Mode:      mandate.ModeStrict,
		NotBefore: issued,
		Expiry:    issued.Add(time.Hour),
	}, "emma-bank-app", priv)
	if err != nil {
		log.Fatal(err)
	}

	// The gateway verifies the token it was handed with the session.
	clock := issued.Add(10 * time.Minute)
	v := mandate.Verifier{
		Keys:     mandate.StaticKeys{"emma-bank-app": pub},
		Audience: "intentplane",
		Now:      func() time.Time { return clock },
	}
	m, err := v.Verify(context.Background(), token)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("owner:", m.Owner, "issuer:", m.Issuer)
	fmt.Println("may send money:", m.Allows("banking.send_money"))
	fmt.Println("may change the password:", m.Allows("banking.update_password"))
	fmt.Println("payees:", m.Claim("payees"))

	// Two hours later the same token is refused.
	clock = issued.Add(2 * time.Hour)
	_, err = v.Verify(context.Background(), token)
	var merr *mandate.Error
	if errors.As(err, &merr) {
		fmt.Println(errors.Is(err, mandate.ErrExpired), merr.Code())
		fmt.Println(merr.Detail) // err.Error() also names the mandate
	}
	// Output:
	// owner: customer:emma issuer: emma-bank-app
	// may send money: true
	// may change the password: false
	// payees: [CH93 0076 2011 6238 5295 7]
	// true mandate.expired
	// expired at 2026-11-30T10:00:00Z (now 2026-11-30T11:00:00Z); ask the user to issue a new mandate
}
