package policy_test

import (
	"fmt"
	"os"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/policy"
)

func ExampleEngine_Evaluate() {
	e, err := policy.Load(os.DirFS("testdata/bank"))
	if err != nil {
		fmt.Println(err)
		return
	}
	res := e.Evaluate(policy.Request{
		Principal: "alice",
		Action:    "bank.send_money",
		Resource:  "acct-1",
		Standard: &policy.Standard{
			Args:  intent.Args{"recipient": intent.Str("DE89370400440532013000"), "amount": intent.AmountValue(150000, 2), "subject": intent.Str("rent")},
			Facts: map[string]intent.Value{"beneficiary_known": intent.Bool(true), "daily_total": intent.Int(0)},
			Mode:  "normal", Amount: 150000,
		},
	})
	fmt.Println(res.Verdict, res.Level, res.Policies, res.Reasons)
	// Output: step_up confirm [confirm-large] [payments above 1,000.00 need a human to confirm]
}
