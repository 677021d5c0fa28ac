package scenarios_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/mandate"
	"github.com/intentplane/intentplane/healthcare"
)

// TestHealthcare: a clinician opens and annotates their own patient's
// record, and is refused another clinician's patient (the demo record's
// injection), on every store.
func TestHealthcare(t *testing.T) {
	t.Parallel()
	eachStore(t, func(t *testing.T, k storeKind) {
		ehr := healthcare.DemoEHR()
		pack, err := healthcare.NewPack(ehr)
		if err != nil {
			t.Fatal(err)
		}
		h := newHarness(t, k, time.Date(2026, time.March, 2, 10, 0, 0, 0, time.UTC), pack, nil)
		tok := h.mandate(mandate.Mandate{ID: "m-grey", Owner: "dr-grey", Budget: intent.Money{Currency: "EUR"},
			Scope: []intent.Action{healthcare.ActionListEncounters, healthcare.ActionOpenRecord, healthcare.ActionReadNotes, healthcare.ActionAnnotateRecord}})

		d := h.decide(tok, healthcare.ActionOpenRecord, map[string]any{"patient": "P-1001"})
		if d.Verdict != intent.Allow || !strings.Contains(d.Output, "Jordan Example") {
			t.Fatalf("own patient: %s %s %s", d.Verdict, code(d), message(d))
		}
		note := map[string]any{"patient": "P-1001", "note": "Reviewed on the ward."}
		if d := h.decide(tok, healthcare.ActionAnnotateRecord, note); d.Verdict != intent.Allow || !d.Executed {
			t.Fatalf("annotate own patient: %s %s %s", d.Verdict, code(d), message(d))
		}
		if d := h.decide(tok, healthcare.ActionAnnotateRecord, note); d.Executed || code(d) != intent.CodeReplayed {
			t.Fatalf("same note again: %s %s %s", d.Verdict, code(d), message(d))
		}
		for _, action := range []intent.Action{healthcare.ActionOpenRecord, healthcare.ActionReadNotes} {
			d := h.decide(tok, action, map[string]any{"patient": "P-9999"})
			if d.Verdict != intent.Deny || code(d) != intent.CodeNotTrusted || d.Executed || strings.Contains(message(d), "Robin") {
				t.Fatalf("%s of another clinician's patient: %s %s %s", action, d.Verdict, code(d), message(d))
			}
		}
		r, err := ehr.Record(context.Background(), "dr-yang", "P-9999")
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Notes) != 1 {
			t.Errorf("P-9999 has %d notes, want 1", len(r.Notes))
		}
		h.checkReceipts()
	})
}
