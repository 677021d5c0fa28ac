// Package emma plays intentplane's main scenario on embedded defaults, for
// `intentplane demo`: Emma's assistant reads a bill whose hidden white text
// tells it to send the payment, and to redirect her rent standing order, to
// an attacker's IBAN; then a clinician's assistant reads a record that tells
// it to open another clinician's patient. Every proposal goes through a real
// gateway (banking and healthcare packs, in-memory store) and the demo
// prints, for each one, the decision, the reason the agent reads and the
// receipt. Run returns an error when any decision differs from the one the
// scenario expects, so CI catches a regression by running the demo.
//
// All data is fictional. It is a composition root like cmd/: it may import
// packs and stores, and nothing imports it but cmd/ (it is internal, beside
// the other demo, internal/demo/apdemo).
package emma
