package embedded_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/intentplane/intentplane/store/embedded"
	"github.com/intentplane/intentplane/store/storetest"
)

// BenchmarkAuditPage: pages of a log of storetest.BenchReceipts receipts
// (1,000,000 by default) over ten owners (storetest.BenchAudit), in a
// file on disk. The receipts are appended deferred, committed by the
// store's loop in transactions of up to 4,096.
func BenchmarkAuditPage(b *testing.B) {
	ctx := context.Background()
	s, err := embedded.Open(filepath.Join(b.TempDir(), "state.db"), embedded.Options{MaxBatch: 4096, MaxQueue: 16384})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	n := storetest.BenchReceipts(b) / 10
	start := time.Now()
	for i := range n {
		for _, o := range storetest.BenchOwners() {
			if err := s.AppendDeferred(ctx, storetest.AuditDraft(o, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	if _, err := s.Owners(ctx); err != nil { // waits for the deferred receipts
		b.Fatal(err)
	}
	b.Logf("appended %d receipts in %v", 10*n, time.Since(start).Round(time.Millisecond))
	storetest.BenchAudit(b, s, n)
}
