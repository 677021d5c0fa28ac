// Package apdemo plays the CFO's accounts-payable scenario, for
// `intentplane demo ap`: the inbox of a company's AP assistant holds a "we
// changed banks" email from its vendor ACME Supplies, and the assistant
// obeys it. Every proposal goes through a real gateway (the ap pack over
// the in-memory ERP, an in-memory store) and the demo prints, for each one,
// the decision, the reason the agent reads and the receipt: the payment to
// the email's IBAN and the bank change without a call-back are refused, the
// bills are paid to the account on file however the agent spells it, a
// second payment and a duplicate bill are refused, and a payment above the
// confirmation threshold executes only once a person confirmed it. Run
// returns an error when any decision differs from the one the scenario
// expects, so CI catches a regression by running the demo.
//
// All data is fictional. It is a composition root like cmd/: it may import
// packs, erp, core and store/mem, and nothing imports it but cmd/.
package apdemo
