package approvals

import (
	"context"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/receipt"
	"github.com/intentplane/intentplane/store/mem"
	"github.com/intentplane/intentplane/store/storetest"
)

// BenchmarkEvidence: the call-back evidence of one owner (the receipts
// evidenceReceipts reads through the index) in a log of
// storetest.BenchReceipts receipts (1,000,000 by default) over ten owners
// (storetest.AuditDraft), whose one call-back and the change relying on it
// are the owner's two oldest receipts.
func BenchmarkEvidence(b *testing.B) {
	s := mem.New(func() time.Time { return time.Unix(1796000000, 0) })
	ctx := context.Background()
	owner := storetest.BenchOwners()[5]
	first := storetest.AuditDraft(owner, 0).Time.Add(-time.Hour)
	cb := callbackReceipt(CallbackEntry{ID: "cb-1", Owner: owner, Vendor: "V-1", IBAN: "DE89370400440532013000", Phone: "+49 30 1234567", CalledBy: "alice", At: first})
	cb.Verdict, cb.Result = intent.Allow, receipt.ResultExecuted
	change := receipt.Receipt{Owner: owner, Time: first.Add(time.Minute), Action: "ap.change_vendor_bank", Operation: "op-1",
		Verdict: intent.Allow, Result: receipt.ResultExecuted,
		Resolved: []intent.Resolved{{Param: "iban", Value: "DE89370400440532013000", Provenance: intent.Provenance{Source: "registry:callbacks", RecordID: "cb-1"}}}}
	for _, r := range []receipt.Receipt{cb, change} {
		if _, err := s.Append(ctx, r); err != nil {
			b.Fatal(err)
		}
	}
	n := storetest.BenchReceipts(b) / 10
	start := time.Now()
	for i := range n {
		for _, o := range storetest.BenchOwners() {
			if _, err := s.Append(ctx, storetest.AuditDraft(o, i)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Logf("appended %d receipts in %v", 10*n+2, time.Since(start).Round(time.Millisecond))
	a := &auditState{cfg: AuditConfig{Log: benchLog{s}}}
	b.ReportAllocs()
	for b.Loop() {
		rs, err := a.evidenceReceipts(ctx, owner)
		if err != nil {
			b.Fatal(err)
		}
		if rows := callbackEvidence(rs); len(rows) != 1 || rows[0].Status != "executed" {
			b.Fatalf("evidence: %+v", rows)
		}
	}
}

// benchLog is a mem.Store as an AuditLog with no checkpoints.
type benchLog struct{ *mem.Store }

func (benchLog) Checkpoints(context.Context, intent.Owner) ([]receipt.Checkpoint, error) {
	return nil, nil
}

func (l benchLog) Owners(context.Context) ([]intent.Owner, error) { return l.Store.Owners(), nil }

// BenchmarkChainStatus: the chain panel's status of one owner whose chain
// holds 10,000 receipts (storetest.AuditDraft) in store/mem: "full" reads
// and verifies it whole (the first load), "incremental" verifies from the
// remembered head on, after one receipt appended per load.
func BenchmarkChainStatus(b *testing.B) {
	ctx := context.Background()
	s := mem.New(func() time.Time { return time.Unix(1796000000, 0) })
	owner := storetest.BenchOwners()[0]
	for i := range 10000 {
		if _, err := s.Append(ctx, storetest.AuditDraft(owner, i)); err != nil {
			b.Fatal(err)
		}
	}
	fresh := func() *auditState {
		return &auditState{cfg: AuditConfig{Log: benchLog{s}, MaxReceipts: 1 << 20}, now: time.Now, verified: map[intent.Owner]verifiedHead{}}
	}
	b.Run("full", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if st, err := fresh().status(ctx, owner); err != nil || !st.OK {
				b.Fatal(st.Text, err)
			}
		}
	})
	b.Run("incremental", func(b *testing.B) {
		a := fresh()
		if _, err := a.status(ctx, owner); err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		i := 10000
		for b.Loop() {
			if _, err := s.Append(ctx, storetest.AuditDraft(owner, i)); err != nil {
				b.Fatal(err)
			}
			i++
			if st, err := a.status(ctx, owner); err != nil || !st.OK {
				b.Fatal(st.Text, err)
			}
		}
	})
}
