package intent

import (
	"encoding/json"
	"time"
)

// Action names what a proposal asks to do, as "<pack>.<verb>", for example
// "banking.send_money" or "ap.pay_bill".
type Action string

// Owner names the party every record lookup is scoped to: a bank customer, a
// company, a clinician. It comes from the mandate, never from the agent.
type Owner string

// Proposal is the only thing an agent can send: an action and its arguments,
// still raw. Args maps each argument name to its undecoded JSON value; the
// action's contract decodes them strictly (see package contract).
type Proposal struct {
	Action Action
	Args   map[string]json.RawMessage
}

// Amount is a sum of money in integer minor units of a currency (cents for
// EUR and USD). No float ever holds money.
type Amount int64

// Money is an Amount with its ISO 4217 currency code ("EUR").
type Money struct {
	Currency string
	Amount   Amount
}

// Provenance records where a trusted value came from.
type Provenance struct {
	// Source is "mandate:<claim>" or "registry:<name>".
	Source string
	// RecordID identifies the record in its source (a mandate id, a
	// registry key such as a beneficiary id or a res.partner.bank id).
	RecordID string
	// Version is the record's version as its source reports it; empty if
	// the source has none.
	Version string
	// At is when the record was last set, in UTC; zero if unknown. The
	// record's age is measured from it.
	At time.Time
}

// Resolved is one critical argument after resolution: what the agent sent,
// the trusted value that replaces it, and where that value came from.
type Resolved struct {
	Param      string
	Sent       string
	Value      string
	Provenance Provenance
}
