// Package storetest is the conformance suite every state.Store passes:
// atomic budget reservations, single-use keys, one receipt chain per owner
// without forks under concurrency. Run it from each store's tests:
//
//	func TestConformance(t *testing.T) {
//		storetest.Run(t, func(t *testing.T) state.Store { return mem.New(nil) })
//	}
//
// It imports core/ and the testing package only.
package storetest
