package ap

// The pack's payment run (issue 25): the bills an AP clerk pays in one go,
// of several vendors, proposed together and approved once on the approval
// page. A front door offers it as one tool over ap.pay_bill
// (mcpproxy.RunTool), named RunTool, whose input is RunItems: a list of
// ap.pay_bill's arguments. The gateway decides the run as a whole
// (gateway.DecideRun: the running totals count every payment of the run,
// so the run asks what its payments together need) and each payment
// still executes once, with its own receipt.
const (
	// RunTool is the tool's name (after the mount's prefix).
	RunTool = "propose_payment_run"
	// RunItems is its input's one property: the payments.
	RunItems = "payments"
	// RunDoc is the tool's description for the agent.
	RunDoc = `Propose a payment run: several bills, of one or several vendors, paid together, as an AP clerk pays the bills due on a day. ` +
		`"payments" lists each payment with exactly the arguments of pay_bill (vendor, bill, iban, amount, currency, and residual for a further instalment), ` +
		`each read first with get_vendor and list_open_bills as for pay_bill. The run is checked as a whole: what it pays to a vendor in a day adds up over its payments, ` +
		`so it asks the approval the payments need together. When a person must approve it, the answer gives a link for the user: one approval for the whole run, ` +
		`on the approval page; once approved, call this tool again with exactly the same payments, and each approved payment executes once. ` +
		`The answer says, payment by payment, what executed and what was refused and why. A payment rejected by the approver stays rejected: do not propose it again.`
)
