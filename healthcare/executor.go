package healthcare

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

// executor carries out allowed operations on the EHR, as the clinician who
// owns the mandate and with resolved values only. Its outputs are JSON
// text.
type executor struct{ ehr *Mem }

var _ gateway.Executor = executor{}

// The JSON shapes of the outputs.
type (
	encounterJSON struct {
		ID      string `json:"id"`
		Patient string `json:"patient"`
		Name    string `json:"patient_name,omitempty"`
		Status  Status `json:"status"`
		Start   string `json:"start"`
		End     string `json:"end,omitempty"`
	}
	patientJSON struct {
		ID        string `json:"id"`
		Name      string `json:"name"`
		BirthDate string `json:"birth_date"`
	}
	noteJSON struct {
		Author string `json:"author"`
		At     string `json:"at"`
		Text   string `json:"text,omitempty"`
	}
	summaryJSON struct {
		Patient    patientJSON   `json:"patient"`
		Restricted bool          `json:"restricted"`
		Diagnoses  []string      `json:"diagnoses"`
		Notes      int           `json:"notes"`
		Encounter  encounterJSON `json:"encounter"`
	}
	notesJSON struct {
		Patient string     `json:"patient"`
		Notes   []noteJSON `json:"notes"`
	}
	annotatedJSON struct {
		Patient string   `json:"patient"`
		Note    noteJSON `json:"note"`
	}
	listJSON struct {
		Encounters []encounterJSON `json:"encounters"`
	}
)

func (x executor) Execute(ctx context.Context, op intent.Operation, hash intent.OperationHash) (gateway.Result, error) {
	clinician := string(op.Owner)
	patient := op.Args["patient"].Str
	var out any
	switch op.Action {
	case ActionListEncounters:
		es, err := x.ehr.Encounters(ctx, clinician)
		if err != nil {
			return gateway.Result{}, err
		}
		l := listJSON{Encounters: make([]encounterJSON, len(es))}
		for i, e := range es {
			l.Encounters[i] = encounterOut(e)
			if r, err := x.ehr.Record(ctx, clinician, e.Patient); err == nil {
				l.Encounters[i].Name = r.Patient.Name
			}
		}
		out = l
	case ActionOpenRecord:
		r, err := x.ehr.Record(ctx, clinician, patient)
		if err != nil {
			return gateway.Result{}, refused(err)
		}
		e, err := x.ehr.Encounter(ctx, clinician, patient)
		if err != nil {
			return gateway.Result{}, refused(err)
		}
		out = summaryJSON{
			Patient:    patientJSON{ID: r.Patient.ID, Name: r.Patient.Name, BirthDate: r.Patient.BirthDate},
			Restricted: r.Restricted,
			Diagnoses:  append([]string{}, r.Diagnoses...),
			Notes:      len(r.Notes),
			Encounter:  encounterOut(e),
		}
	case ActionReadNotes:
		r, err := x.ehr.Record(ctx, clinician, patient)
		if err != nil {
			return gateway.Result{}, refused(err)
		}
		n := notesJSON{Patient: r.Patient.ID, Notes: make([]noteJSON, len(r.Notes))}
		for i, note := range r.Notes {
			n.Notes[i] = noteJSON{Author: note.Author, At: timeOut(note.At), Text: note.Text}
		}
		out = n
	case ActionAnnotateRecord:
		note, err := x.ehr.Annotate(ctx, clinician, patient, op.Args["note"].Str, hash.String())
		if err != nil {
			return gateway.Result{}, refused(err)
		}
		out = annotatedJSON{Patient: patient, Note: noteJSON{Author: note.Author, At: timeOut(note.At)}}
	default:
		return gateway.Result{}, fmt.Errorf("%w: healthcare: no executor for %q", gateway.ErrNotExecuted, op.Action)
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, err
	}
	return gateway.Result{Output: string(b)}, nil
}

// refused marks the EHR's refusals as certain to have changed nothing.
// Their text is shown to the agent; it never names the patient.
func refused(err error) error {
	if errors.Is(err, ErrNotFound) || errors.Is(err, ErrEncounterClosed) || errors.Is(err, ErrInvalid) {
		return fmt.Errorf("%w: %w", gateway.ErrNotExecuted, err)
	}
	return err
}

func encounterOut(e Encounter) encounterJSON {
	return encounterJSON{ID: e.ID, Patient: e.Patient, Status: e.Status, Start: timeOut(e.Start), End: timeOut(e.End)}
}

// timeOut formats a time for outputs: RFC 3339 in UTC, "" for zero.
func timeOut(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339)
}
