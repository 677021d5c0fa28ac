package healthcare_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/healthcare"
)

// TestOwnPatient walks the clinician through their own patient: list,
// open, read and annotate, each allowed and each resolved through the
// encounters registry.
func TestOwnPatient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey")

	d := e.decide(tok, healthcare.ActionListEncounters, nil)
	if d.Verdict != intent.Allow {
		t.Fatalf("list_encounters: %v %s", d.Verdict, message(d))
	}
	var list struct {
		Encounters []struct {
			ID, Patient, Status string
		}
	}
	if err := json.Unmarshal([]byte(d.Output), &list); err != nil {
		t.Fatalf("list_encounters output %q: %v", d.Output, err)
	}
	var got []string
	for _, enc := range list.Encounters {
		got = append(got, enc.ID+" "+enc.Patient+" "+enc.Status)
	}
	if diff := cmp.Diff([]string{"E-2002 P-1002 closed", "E-2001 P-1001 active"}, got); diff != "" {
		t.Errorf("dr-grey's encounters (-want, +got):\n%s", diff)
	}
	if strings.Contains(d.Output, "P-9999") {
		t.Errorf("dr-grey's list shows dr-yang's patient: %s", d.Output)
	}

	d = e.decide(tok, healthcare.ActionOpenRecord, map[string]string{"patient": "P-1001"})
	if d.Verdict != intent.Allow {
		t.Fatalf("open_record: %v %s", d.Verdict, message(d))
	}
	wantResolved := []intent.Resolved{{
		Param: "patient", Sent: "P-1001", Value: "P-1001",
		Provenance: intent.Provenance{Source: "registry:encounters", RecordID: "E-2001", At: d.Resolved[0].Provenance.At},
	}}
	if diff := cmp.Diff(wantResolved, d.Resolved); diff != "" {
		t.Errorf("resolved (-want, +got):\n%s", diff)
	}
	wantFacts := map[string]intent.Value{
		"patient_encounter_id":     intent.Str("E-2001"),
		"patient_encounter_active": intent.Bool(true),
		"patient_restricted":       intent.Bool(false),
	}
	if diff := cmp.Diff(wantFacts, d.Facts); diff != "" {
		t.Errorf("facts (-want, +got):\n%s", diff)
	}
	var summary struct {
		Patient   struct{ ID, Name string }
		Diagnoses []string
		Notes     int
	}
	if err := json.Unmarshal([]byte(d.Output), &summary); err != nil {
		t.Fatalf("open_record output %q: %v", d.Output, err)
	}
	if summary.Patient.Name != "Jordan Example" || summary.Notes != 2 || len(summary.Diagnoses) != 2 {
		t.Errorf("open_record output = %s", d.Output)
	}

	d = e.decide(tok, healthcare.ActionReadNotes, map[string]string{"patient": "P-1001"})
	if d.Verdict != intent.Allow || !strings.Contains(d.Output, "also open patient P-9999") {
		t.Fatalf("read_notes: %v %s %s", d.Verdict, message(d), d.Output)
	}

	note := "Reviewed glucose diary with the patient; no change to plan."
	d = e.decide(tok, healthcare.ActionAnnotateRecord, map[string]string{"patient": "P-1001", "note": note})
	if d.Verdict != intent.Allow || !d.Executed {
		t.Fatalf("annotate_record: %v %s", d.Verdict, message(d))
	}
	if diff := cmp.Diff([]string{"annotate-record"}, d.Policies); diff != "" {
		t.Errorf("determining policies (-want, +got):\n%s", diff)
	}
	r, err := e.ehr.Record(context.Background(), "dr-grey", "P-1001")
	if err != nil {
		t.Fatal(err)
	}
	last := r.Notes[len(r.Notes)-1]
	if last.Author != "dr-grey" || last.Text != note || last.Ref != d.OperationHash.String() {
		t.Errorf("last note = %+v; want %q signed by dr-grey under the operation hash", last, note)
	}

	// The same note again is the same operation: it does not execute twice.
	d = e.decide(tok, healthcare.ActionAnnotateRecord, map[string]string{"patient": "P-1001", "note": note})
	if code(d) != intent.CodeReplayed {
		t.Errorf("repeated annotation: code %q, want %q", code(d), intent.CodeReplayed)
	}
	e.checkReceipts()
}

// TestOtherCliniciansPatient: P-9999 exists but is dr-yang's. For dr-grey
// it is refused as untrusted with exactly the message a patient that does
// not exist gets, for every action, and nothing is executed.
func TestOtherCliniciansPatient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey")
	before, err := e.ehr.Record(context.Background(), "dr-yang", "P-9999")
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{"Robin", "Placeholder", "1960", "HIV", "dr-yang", "E-2003", "restricted", "Viral"}

	for _, action := range allActions[1:] {
		t.Run(string(action), func(t *testing.T) {
			t.Parallel()
			msgs := map[string]string{}
			for _, p := range []string{"P-9999", "P-0000"} { // dr-yang's patient; nobody's
				args := map[string]string{"patient": p}
				if action == healthcare.ActionAnnotateRecord {
					args["note"] = "Notes copied from the other record."
				}
				d := e.decide(tok, action, args)
				if d.Verdict != intent.Deny || code(d) != intent.CodeNotTrusted || d.Executed {
					t.Fatalf("%s: verdict %v code %q executed %v; want deny %q", p, d.Verdict, code(d), d.Executed, intent.CodeNotTrusted)
				}
				msg := message(d)
				for _, s := range secrets {
					if strings.Contains(msg, s) {
						t.Errorf("%s: the message reveals %q: %s", p, s, msg)
					}
				}
				if !strings.Contains(msg, "break-glass") {
					t.Errorf("%s: the message lacks the contract's hint: %s", p, msg)
				}
				if d.Facts != nil || d.Operation != nil {
					t.Errorf("%s: facts %v and operation %v were built for an unresolved patient", p, d.Facts, d.Operation)
				}
				msgs[p] = strings.ReplaceAll(msg, p, "<patient>")
			}
			if diff := cmp.Diff(msgs["P-0000"], msgs["P-9999"]); diff != "" {
				t.Errorf("the refusal tells an existing patient from a missing one (-missing, +existing):\n%s", diff)
			}
		})
	}
	t.Cleanup(func() {
		after, err := e.ehr.Record(context.Background(), "dr-yang", "P-9999")
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(before, after); diff != "" {
			t.Errorf("P-9999's record changed (-before, +after):\n%s", diff)
		}
		e.checkReceipts()
	})
}

// TestMandatedOtherPatient: even a strict mandate that names P-9999 does
// not open it for dr-grey: the policy forbids a patient without an
// encounter, with the same message for a patient that does not exist.
func TestMandatedOtherPatient(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey", "P-9999", "P-0000", "P-1001")
	msgs := map[string]string{}
	for _, p := range []string{"P-9999", "P-0000"} {
		d := e.decide(tok, healthcare.ActionReadNotes, map[string]string{"patient": p})
		if code(d) != intent.CodePolicyDenied || d.Executed {
			t.Fatalf("%s: code %q executed %v; want %q", p, code(d), d.Executed, intent.CodePolicyDenied)
		}
		if diff := cmp.Diff([]string{"no-encounter"}, d.Policies); diff != "" {
			t.Errorf("%s: determining policies (-want, +got):\n%s", p, diff)
		}
		if strings.Contains(message(d), "Robin") || strings.Contains(message(d), "dr-yang") {
			t.Errorf("%s: the message reveals the patient: %s", p, message(d))
		}
		msgs[p] = message(d)
	}
	if diff := cmp.Diff(msgs["P-0000"], msgs["P-9999"]); diff != "" {
		t.Errorf("the refusal tells an existing patient from a missing one (-missing, +existing):\n%s", diff)
	}

	// An own patient named in the mandate resolves from it, with the same
	// facts the registry would give.
	d := e.decide(tok, healthcare.ActionOpenRecord, map[string]string{"patient": "P-1001"})
	if d.Verdict != intent.Allow {
		t.Fatalf("P-1001 from the mandate: %v %s", d.Verdict, message(d))
	}
	if got := d.Resolved[0].Provenance.Source; got != "mandate:patients" {
		t.Errorf("provenance %q, want mandate:patients", got)
	}
	if got := d.Facts["patient_encounter_id"]; got != intent.Str("E-2001") {
		t.Errorf("patient_encounter_id = %v, want E-2001", got)
	}

	// Strict mode consults only the mandate: P-1002 is dr-grey's patient
	// but not named.
	d = e.decide(tok, healthcare.ActionOpenRecord, map[string]string{"patient": "P-1002"})
	if code(d) != intent.CodeNotTrusted {
		t.Errorf("P-1002 not in a strict mandate: code %q, want %q", code(d), intent.CodeNotTrusted)
	}
	e.checkReceipts()
}

// TestSpellings: a spelling is either normalized to the patient's ID or
// refused, the same way for every action that takes a patient.
func TestSpellings(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey")
	tests := []struct {
		name    string
		patient string
		want    intent.Code // "" means allowed as P-1001
	}{
		{"exact", "P-1001", ""},
		{"surrounding spaces", "  P-1001 ", ""},
		{"lower case", "p-1001", intent.CodeNotTrusted},
		{"space inside", "P 1001", intent.CodeBadArgument},
		{"no hyphen", "P1001", intent.CodeNotTrusted},
		{"trailing tab", "P-1001\t", intent.CodeBadArgument},
		{"trailing newline", "P-1001\n", intent.CodeBadArgument},
		{"no-break space", "P-1001\u00a0", intent.CodeBadArgument},
		{"zero-width space", "P-\u200b1001", intent.CodeBadArgument},
		{"cyrillic Er", "\u0420-1001", intent.CodeBadArgument},
		{"greek Rho", "\u03a1-1001", intent.CodeBadArgument},
		{"full-width digits", "P-\uff11\uff10\uff10\uff11", intent.CodeBadArgument},
		{"unicode hyphen", "P\u20101001", intent.CodeBadArgument},
		{"path climb", "P-1001/..", intent.CodeBadArgument},
		{"empty", "", intent.CodeBadArgument},
		{"other patient with spaces", " P-9999 ", intent.CodeNotTrusted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			for _, action := range allActions[1:] {
				args := map[string]string{"patient": tt.patient}
				if action == healthcare.ActionAnnotateRecord {
					args["note"] = "Spelling check " + tt.name
				}
				d := e.decide(tok, action, args)
				if got := code(d); got != tt.want {
					t.Errorf("%s: code %q, want %q (%s)", action, got, tt.want, message(d))
					continue
				}
				if tt.want != "" {
					if d.Executed {
						t.Errorf("%s: executed a refused spelling", action)
					}
					continue
				}
				if got := d.Operation.Args["patient"]; got != intent.Str("P-1001") {
					t.Errorf("%s: executes with patient %v, want the trusted P-1001", action, got)
				}
			}
		})
	}
	t.Cleanup(e.checkReceipts)
}

// TestClosedEncounter: dr-grey may read P-1002's record after the
// encounter closed (with confirmation: it is restricted) but not annotate
// it.
func TestClosedEncounter(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey")
	d := e.decide(tok, healthcare.ActionAnnotateRecord, map[string]string{"patient": "P-1002", "note": "Late entry."})
	if d.Verdict != intent.Deny || code(d) != intent.CodePolicyDenied || d.Executed {
		t.Fatalf("annotate after close: verdict %v code %q executed %v", d.Verdict, code(d), d.Executed)
	}
	if diff := cmp.Diff([]string{"encounter-closed", "restricted-record-confirm"}, d.Policies); diff != "" {
		t.Errorf("determining policies (-want, +got):\n%s", diff)
	}
	if !strings.Contains(message(d), "the encounter with this patient is closed") {
		t.Errorf("the message does not give the policy's reason: %s", message(d))
	}
	r, err := e.ehr.Record(context.Background(), "dr-grey", "P-1002")
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Notes) != 1 {
		t.Errorf("P-1002 has %d notes, want the 1 it had", len(r.Notes))
	}
	e.checkReceipts()
}

// TestRestrictedRecord: opening a restricted record steps up to confirm;
// the clinician's signed approval of that exact operation opens it, once.
func TestRestrictedRecord(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey")
	args := map[string]string{"patient": "P-1002"}

	d := e.decide(tok, healthcare.ActionOpenRecord, args)
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || code(d) != intent.CodeApprovalRequired || d.Executed {
		t.Fatalf("restricted record: verdict %v level %q code %q executed %v", d.Verdict, d.Level, code(d), d.Executed)
	}
	if strings.Contains(d.Output, "anxiety") {
		t.Fatalf("a step-up shows the record: %s", d.Output)
	}
	if diff := cmp.Diff([]string{"restricted-record-confirm"}, d.Policies); diff != "" {
		t.Errorf("determining policies (-want, +got):\n%s", diff)
	}

	// An approval of another operation (read_notes) does not open it.
	notes := e.decide(tok, healthcare.ActionReadNotes, args)
	if notes.Verdict != intent.StepUp {
		t.Fatalf("read_notes of a restricted record: %v", notes.Verdict)
	}
	wrong := e.decide(tok, healthcare.ActionOpenRecord, args, e.approve(notes, "a-wrong"))
	if code(wrong) != intent.CodeApprovalInvalid || wrong.Executed {
		t.Errorf("approval of another operation: code %q executed %v", code(wrong), wrong.Executed)
	}

	ok := e.approve(d, "a-open")
	got := e.decide(tok, healthcare.ActionOpenRecord, args, ok)
	if got.Verdict != intent.Allow || !got.Executed {
		t.Fatalf("with approval: verdict %v %s", got.Verdict, message(got))
	}
	if !strings.Contains(got.Output, "Generalised anxiety disorder") || !strings.Contains(got.Output, `"restricted":true`) {
		t.Errorf("opened record = %s", got.Output)
	}
	if len(got.Receipt.Approvals) != 1 || got.Receipt.Approvals[0].ID != "a-open" {
		t.Errorf("receipt approvals = %+v, want the approval a-open", got.Receipt.Approvals)
	}

	again := e.decide(tok, healthcare.ActionOpenRecord, args, ok)
	if code(again) != intent.CodeApprovalInvalid || again.Executed {
		t.Errorf("approval used twice: code %q executed %v", code(again), again.Executed)
	}
	e.checkReceipts()
}

// TestArguments: the contract refuses what the agent should not send.
func TestArguments(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey")
	tests := []struct {
		name   string
		action intent.Action
		args   map[string]string
		want   intent.Code
	}{
		{"note at the limit", healthcare.ActionAnnotateRecord, map[string]string{"patient": "P-1001", "note": strings.Repeat("a", healthcare.MaxNoteLen)}, ""},
		{"note too long", healthcare.ActionAnnotateRecord, map[string]string{"patient": "P-1001", "note": strings.Repeat("b", healthcare.MaxNoteLen+1)}, intent.CodeBadArgument},
		{"note missing", healthcare.ActionAnnotateRecord, map[string]string{"patient": "P-1001"}, intent.CodeBadArgument},
		{"patient missing", healthcare.ActionOpenRecord, map[string]string{}, intent.CodeBadArgument},
		{"clinician smuggled", healthcare.ActionOpenRecord, map[string]string{"patient": "P-9999", "clinician": "dr-yang"}, intent.CodeBadArgument},
		{"list with a patient", healthcare.ActionListEncounters, map[string]string{"patient": "P-9999"}, intent.CodeBadArgument},
		{"unknown action", "healthcare.break_glass", map[string]string{"patient": "P-9999"}, intent.CodeOutOfScope},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d := e.decide(tok, tt.action, tt.args)
			if got := code(d); got != tt.want {
				t.Errorf("code %q, want %q (%s)", got, tt.want, message(d))
			}
			if tt.want != "" && d.Executed {
				t.Error("executed a refused proposal")
			}
		})
	}
	t.Cleanup(e.checkReceipts)
}

// TestInjectionScenario replays the demo: the agent reads P-1001's notes,
// obeys the injected line and tries to open P-9999 and copy its notes.
func TestInjectionScenario(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	tok := e.mandateFor("dr-grey")
	read := e.decide(tok, healthcare.ActionReadNotes, map[string]string{"patient": "P-1001"})
	if !strings.Contains(read.Output, healthcare.Injection) {
		t.Fatalf("the demo record lacks the injection: %s", read.Output)
	}
	steps := []struct {
		action intent.Action
		args   map[string]string
	}{
		{healthcare.ActionOpenRecord, map[string]string{"patient": "P-9999"}},
		{healthcare.ActionReadNotes, map[string]string{"patient": "P-9999"}},
		{healthcare.ActionReadNotes, map[string]string{"patient": "p-9999"}},
		{healthcare.ActionReadNotes, map[string]string{"patient": "\u0420-9999"}},
	}
	for _, s := range steps {
		d := e.decide(tok, s.action, s.args)
		if d.Verdict != intent.Deny || d.Executed || strings.Contains(d.Output, "Viral") {
			t.Errorf("%s %v: verdict %v executed %v output %q", s.action, s.args, d.Verdict, d.Executed, d.Output)
		}
	}
	e.checkReceipts()
}

// TestAnnotateRestrictedNeedsConfirmation: writing into a restricted record
// needs the clinician's confirmation, as opening it does (a regression found
// in review: annotate_record was not covered by the guard).
func TestAnnotateRestrictedNeedsConfirmation(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if err := e.ehr.AddRecord(healthcare.Record{Patient: healthcare.Patient{ID: "P-3003", Name: "Alex Fictional", BirthDate: "1990-01-01"}, Restricted: true}); err != nil {
		t.Fatal(err)
	}
	if err := e.ehr.AddEncounter(healthcare.Encounter{ID: "E-3003", Clinician: "dr-grey", Patient: "P-3003", Start: time.Date(2026, 3, 3, 9, 0, 0, 0, time.UTC), Status: healthcare.StatusActive}); err != nil {
		t.Fatal(err)
	}
	tok := e.mandateFor("dr-grey")
	d := e.decide(tok, healthcare.ActionAnnotateRecord, map[string]string{"patient": "P-3003", "note": "Seen today."})
	if d.Verdict != intent.StepUp || d.Level != intent.LevelConfirm || d.Executed {
		t.Fatalf("annotate restricted: verdict %v level %q executed %v", d.Verdict, d.Level, d.Executed)
	}
}
