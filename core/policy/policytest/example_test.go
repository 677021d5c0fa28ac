package policytest_test

import (
	"fmt"
	"os"

	"github.com/intentplane/intentplane/core/policy/policytest"
)

func ExampleMutate() {
	r, err := policytest.Mutate(os.DirFS("../testdata/equiv"))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, m := range r.Survivors() {
		fmt.Printf("%s equivalent=%t\n", m.ID, m.Equivalent)
	}
	// Output:
	// block-large-read-only:remove equivalent=true
	// pay-known:cond1.1 equivalent=true
	// block-large-read-only:cond1.2 equivalent=true
}
