package healthcare_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/intentplane/intentplane/healthcare"
)

func TestMemScoping(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ehr := healthcare.DemoEHR()
	tests := []struct {
		name      string
		clinician string
		patient   string
		want      error
	}{
		{"own active", "dr-grey", "P-1001", nil},
		{"own closed", "dr-grey", "P-1002", nil},
		{"other's patient", "dr-grey", "P-9999", healthcare.ErrNotFound},
		{"missing patient", "dr-grey", "P-0000", healthcare.ErrNotFound},
		{"other clinician", "dr-yang", "P-1001", healthcare.ErrNotFound},
		{"no clinician", "", "P-1001", healthcare.ErrNotFound},
		{"lower case", "dr-grey", "p-1001", healthcare.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r, err := ehr.Record(ctx, tt.clinician, tt.patient)
			if !errors.Is(err, tt.want) {
				t.Fatalf("Record: %v, want %v", err, tt.want)
			}
			if err == nil && r.Patient.ID != tt.patient {
				t.Errorf("Record returned patient %q", r.Patient.ID)
			}
			if _, err := ehr.Encounter(ctx, tt.clinician, tt.patient); !errors.Is(err, tt.want) {
				t.Errorf("Encounter: %v, want %v", err, tt.want)
			}
		})
	}
}

func TestMemEncounters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ehr := healthcare.DemoEHR()
	ids := func(clinician string) []string {
		es, err := ehr.Encounters(ctx, clinician)
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, e := range es {
			out = append(out, e.ID+" "+e.Patient)
		}
		return out
	}
	if diff := cmp.Diff([]string{"E-2002 P-1002", "E-2001 P-1001"}, ids("dr-grey")); diff != "" {
		t.Errorf("dr-grey (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"E-2003 P-9999"}, ids("dr-yang")); diff != "" {
		t.Errorf("dr-yang (-want, +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{}, ids("dr-nobody")); diff != "" {
		t.Errorf("dr-nobody (-want, +got):\n%s", diff)
	}
}

func TestMemAnnotate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	at := time.Date(2026, time.March, 2, 12, 0, 0, 0, time.UTC)
	ehr := healthcare.NewMem(func() time.Time { return at })
	if err := ehr.AddRecord(healthcare.Record{Patient: healthcare.Patient{ID: "P-1", Name: "Test Patient", BirthDate: "2000-01-01"}}); err != nil {
		t.Fatal(err)
	}
	if err := ehr.AddEncounter(healthcare.Encounter{ID: "E-1", Clinician: "dr-a", Patient: "P-1", Start: at.Add(-time.Hour)}); err != nil {
		t.Fatal(err)
	}

	n, err := ehr.Annotate(ctx, "dr-a", "P-1", "first", "ref-1")
	if err != nil {
		t.Fatal(err)
	}
	want := healthcare.Note{Author: "dr-a", At: at, Text: "first", Ref: "ref-1"}
	if diff := cmp.Diff(want, n); diff != "" {
		t.Errorf("note (-want, +got):\n%s", diff)
	}
	// Same ref: the same note, not a second one.
	if n2, err := ehr.Annotate(ctx, "dr-a", "P-1", "first", "ref-1"); err != nil || n2 != n {
		t.Errorf("repeated ref: %+v, %v", n2, err)
	}
	if _, err := ehr.Annotate(ctx, "dr-b", "P-1", "intruder", ""); !errors.Is(err, healthcare.ErrNotFound) {
		t.Errorf("another clinician: %v, want ErrNotFound", err)
	}
	if _, err := ehr.Annotate(ctx, "dr-a", "P-1", "", ""); !errors.Is(err, healthcare.ErrInvalid) {
		t.Errorf("empty note: %v, want ErrInvalid", err)
	}
	if err := ehr.CloseEncounter("E-1", at); err != nil {
		t.Fatal(err)
	}
	if _, err := ehr.Annotate(ctx, "dr-a", "P-1", "late", ""); !errors.Is(err, healthcare.ErrEncounterClosed) {
		t.Errorf("closed encounter: %v, want ErrEncounterClosed", err)
	}
	r, err := ehr.Record(ctx, "dr-a", "P-1")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]healthcare.Note{want}, r.Notes); diff != "" {
		t.Errorf("notes (-want, +got):\n%s", diff)
	}
	// A new active encounter is preferred over the closed one.
	if err := ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Clinician: "dr-a", Patient: "P-1", Start: at}); err != nil {
		t.Fatal(err)
	}
	if e, err := ehr.Encounter(ctx, "dr-a", "P-1"); err != nil || e.ID != "E-2" {
		t.Errorf("Encounter = %+v, %v; want the active E-2", e, err)
	}
}

func TestMemRecordIsACopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	ehr := healthcare.DemoEHR()
	r, err := ehr.Record(ctx, "dr-grey", "P-1001")
	if err != nil {
		t.Fatal(err)
	}
	r.Notes[0].Text = "tampered"
	r.Diagnoses[0] = "tampered"
	again, err := ehr.Record(ctx, "dr-grey", "P-1001")
	if err != nil {
		t.Fatal(err)
	}
	if again.Notes[0].Text == "tampered" || again.Diagnoses[0] == "tampered" {
		t.Error("Record shares its slices with the EHR")
	}
}

func TestMemRefuses(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, time.March, 1, 9, 0, 0, 0, time.UTC)
	patient := func(id string) healthcare.Record {
		return healthcare.Record{Patient: healthcare.Patient{ID: id, Name: "Test Patient", BirthDate: "2000-01-01"}}
	}
	tests := []struct {
		name string
		do   func(ehr *healthcare.Mem) error
	}{
		{"patient ID with spaces", func(ehr *healthcare.Mem) error { return ehr.AddRecord(patient(" P-2 ")) }},
		{"patient ID look-alike", func(ehr *healthcare.Mem) error { return ehr.AddRecord(patient("\u0420-2")) }},
		{"duplicate patient", func(ehr *healthcare.Mem) error { return ehr.AddRecord(patient("P-1")) }},
		{"no name", func(ehr *healthcare.Mem) error {
			return ehr.AddRecord(healthcare.Record{Patient: healthcare.Patient{ID: "P-2", BirthDate: "2000-01-01"}})
		}},
		{"bad birth date", func(ehr *healthcare.Mem) error {
			return ehr.AddRecord(healthcare.Record{Patient: healthcare.Patient{ID: "P-2", Name: "X", BirthDate: "01/01/2000"}})
		}},
		{"encounter of unknown patient", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Clinician: "dr-a", Patient: "P-2", Start: start})
		}},
		{"encounter without clinician", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Patient: "P-1", Start: start})
		}},
		{"encounter without start", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Clinician: "dr-a", Patient: "P-1"})
		}},
		{"encounter ends before start", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Clinician: "dr-a", Patient: "P-1", Start: start, End: start.Add(-time.Hour)})
		}},
		{"active encounter with an end", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Clinician: "dr-a", Patient: "P-1", Start: start, End: start.Add(time.Hour), Status: healthcare.StatusActive})
		}},
		{"closed encounter without end", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Clinician: "dr-a", Patient: "P-1", Start: start, Status: healthcare.StatusClosed})
		}},
		{"unknown status", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-2", Clinician: "dr-a", Patient: "P-1", Start: start, Status: "paused"})
		}},
		{"duplicate encounter", func(ehr *healthcare.Mem) error {
			return ehr.AddEncounter(healthcare.Encounter{ID: "E-1", Clinician: "dr-a", Patient: "P-1", Start: start})
		}},
		{"close unknown encounter", func(ehr *healthcare.Mem) error { return ehr.CloseEncounter("E-9", start) }},
		{"close before start", func(ehr *healthcare.Mem) error { return ehr.CloseEncounter("E-1", start.Add(-time.Hour)) }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			ehr := healthcare.NewMem(func() time.Time { return start })
			if err := ehr.AddRecord(patient("P-1")); err != nil {
				t.Fatal(err)
			}
			if err := ehr.AddEncounter(healthcare.Encounter{ID: "E-1", Clinician: "dr-a", Patient: "P-1", Start: start}); err != nil {
				t.Fatal(err)
			}
			if err := tt.do(ehr); !errors.Is(err, healthcare.ErrInvalid) {
				t.Errorf("got %v, want an error wrapping ErrInvalid", err)
			}
		})
	}
}
