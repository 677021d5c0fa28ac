package approvals_test

import (
	"context"
	"fmt"
	"time"

	"github.com/intentplane/intentplane/approvals"
	"github.com/intentplane/intentplane/core/approval"
)

// A front door that got a step-up submits the operation to the page and
// waits up to the configured time (wait = N) for a person; with wait = 0 it
// would give the agent the link at once and let it call again.
func ExampleAwait() {
	var page *approvals.Server // approvals.New(cfg, gatewayReceiptLog, gatewayStore)
	var p approval.Request     // built from the gateway's StepUp decision
	wait := 30 * time.Second   // from the front door's configuration
	ctx := context.Background()

	tk, err := page.Request(ctx, p)
	if err != nil {
		return // refused (tampered, invalid, expired): nothing to approve
	}
	out, err := approvals.Await(ctx, page, tk.ID, wait)
	if err != nil {
		return
	}
	switch out.Status {
	case approvals.StatusApproved:
		// Present out.Approvals with the same proposal to gateway.Decide.
	case approvals.StatusPending:
		fmt.Println("Approve on", tk.URL, "then ask again")
	default:
		fmt.Println("not approved:", out.Status)
	}
}
