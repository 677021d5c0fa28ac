package mem_test

import (
	"context"
	"testing"
	"time"

	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/storetest"
)

// BenchmarkAuditPage: pages of a log of storetest.BenchReceipts receipts
// (1,000,000 by default) over ten owners (storetest.BenchAudit).
func BenchmarkAuditPage(b *testing.B) {
	s := mem.New(func() time.Time { return time.Unix(1796000000, 0) })
	n := storetest.BenchReceipts(b) / 10
	start := time.Now()
	for i := range n {
		for _, o := range storetest.BenchOwners() {
			if _, err := s.Append(context.Background(), storetest.AuditDraft(o, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("appended %d receipts in %v", 10*n, time.Since(start).Round(time.Millisecond))
	storetest.BenchAudit(b, s, n)
}
