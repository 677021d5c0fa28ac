package normalize_test

import (
	"errors"
	"fmt"

	"github.com/intentplane/intentplane/core/normalize"
)

func ExampleIBAN() {
	iban, err := normalize.IBAN("IBAN: de89 3704 0044 0532 0130 00")
	fmt.Println(iban, err)
	fmt.Println(normalize.FormatIBAN(iban))

	_, err = normalize.IBAN("DE89 3704 0044 0532 0130 01")
	fmt.Println(err)

	// A Cyrillic 'А' (U+0410) instead of the Latin 'A' is refused.
	_, err = normalize.IBAN("\u0410T61 1904 3002 3457 3201")
	fmt.Println(errors.Is(err, normalize.ErrInvalid))
	fmt.Println(err)
	// Output:
	// DE89370400440532013000 <nil>
	// DE89 3704 0044 0532 0130 00
	// iban: "DE89 3704 0044 0532 0130 01": check digits do not match (mod-97); the IBAN has a typo or was altered
	// true
	// iban: "\u0410T61 1904 3002 3457 3201": contains the non-ASCII character U+0410 at position 1; look-alike characters are refused, type the IBAN in plain ASCII
}

func ExampleAccountNumber() {
	for _, s := range []string{
		"US12 2000 0001 2121 2121 212",
		"gb29 nwbk 6016 1331 9268 19",
		"GB29 NWBK 6016 1331 9268 18",
	} {
		fmt.Println(normalize.AccountNumber(s))
	}
	// Output:
	// US122000000121212121212 <nil>
	// GB29NWBK60161331926819 <nil>
	//  account number: "GB29 NWBK 6016 1331 9268 18": check digits do not match (mod-97); the IBAN has a typo or was altered
}

func ExampleEmail() {
	fmt.Println(normalize.Email(" Mark.Black@Gmail.COM "))
	fmt.Println(normalize.Email("Mark <mark@gmail.com>"))
	// Output:
	// mark.black@gmail.com <nil>
	//  email: "Mark <mark@gmail.com>": contains '<' at position 6; display names and angle brackets are refused, give the bare address such as name@example.com
}

func ExampleIdentifier() {
	fmt.Println(normalize.Identifier(" INV-2290 "))
	fmt.Println(normalize.Identifier("bills/../vendors"))
	// Output:
	// INV-2290 <nil>
	//  identifier: "bills/../vendors": has a ".." path segment; it is refused so the identifier cannot climb a path
}
