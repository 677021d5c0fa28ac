package healthcare

import (
	"context"
	"errors"
	"fmt"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
	"github.com/intentplane/intentplane/policies"
)

// Name is the pack's name and the prefix of its actions.
const Name = "healthcare"

// The actions of the pack.
const (
	// ActionListEncounters lists the clinician's own encounters; read-only,
	// no arguments.
	ActionListEncounters intent.Action = "healthcare.list_encounters"
	// ActionOpenRecord returns the summary of a patient's record (patient,
	// diagnoses, restriction, encounter); read-only.
	ActionOpenRecord intent.Action = "healthcare.open_record"
	// ActionReadNotes returns the notes of a patient's record; read-only.
	ActionReadNotes intent.Action = "healthcare.read_notes"
	// ActionAnnotateRecord appends a note signed by the clinician to a
	// patient's record; allowed only during an active encounter.
	ActionAnnotateRecord intent.Action = "healthcare.annotate_record"
)

// The names of the patient's trusted sources.
const (
	// PatientsClaim is the mandate claim listing the patients the user
	// named.
	PatientsClaim = "patients"
	// EncountersRegistry is the registry of the clinician's encounters.
	EncountersRegistry = "encounters"
)

// MaxNoteLen is the longest note annotate_record accepts, in bytes of
// UTF-8; a longer one is refused when the proposal is decoded.
const MaxNoteLen = 2000

// The attributes of an encounters registry record. Each becomes the fact
// "patient_<attr>" the policy reads.
const (
	attrEncounterID     = "encounter_id"     // string: the encounter's ID
	attrEncounterActive = "encounter_active" // bool: the encounter is active
	attrRestricted      = "restricted"       // bool: the record is restricted
)

// onNoMatch is what the agent is told when a patient is not one of the
// clinician's. It is the same for every such patient, existing or not.
const onNoMatch = "A clinician can only open the records of patients in their own encounters. " +
	"If care requires another patient's record, the clinician must open it themselves through " +
	"the hospital's break-glass procedure, not through the agent. Do not try another action or spelling."

// NewPack returns the healthcare pack over ehr: its four contracts, the
// encounters registry, the context provider for patients named in the
// mandate, the executor and the policy policies.Pack("healthcare"). It
// returns an error if ehr is nil or the policy files cannot be found; the
// gateway validates the policy itself when it is given the pack.
func NewPack(ehr *Mem) (gateway.Pack, error) {
	if ehr == nil {
		return gateway.Pack{}, errors.New("healthcare: NewPack needs an EHR")
	}
	fsys, err := policies.Pack(Name)
	if err != nil {
		return gateway.Pack{}, fmt.Errorf("healthcare: %w", err)
	}
	cs, err := contracts()
	if err != nil {
		return gateway.Pack{}, err
	}
	return gateway.Pack{
		Name:       Name,
		Contracts:  cs,
		Policies:   fsys,
		Registries: map[string]resolve.Registry{EncountersRegistry: encounters{ehr}},
		Context:    []gateway.ContextProvider{mandatedPatients{ehr}},
		Executor:   executor{ehr},
	}, nil
}

// contracts builds the pack's contracts.
func contracts() ([]*contract.Contract, error) {
	patient := contract.Parameter{
		Name:       "patient",
		Type:       contract.String(128),
		Required:   true,
		Critical:   true,
		Sources:    []contract.Source{contract.FromMandate(PatientsClaim), contract.FromRegistry(EncountersRegistry)},
		Normalizer: normalize.Identifier,
		Doc:        `The patient's ID, as listed by healthcare.list_encounters (for example "P-1001").`,
		OnNoMatch:  onNoMatch,
	}
	note := contract.Parameter{
		Name:     "note",
		Type:     contract.String(MaxNoteLen),
		Required: true,
		// The note belongs in the record, not in the append-only receipt
		// chain, which keeps only its digest.
		Sensitive: true,
		Doc:       fmt.Sprintf("The note to append, signed by the clinician; at most %d bytes.", MaxNoteLen),
	}
	specs := []contract.Contract{
		{
			Action:   ActionListEncounters,
			ReadOnly: true,
			Doc:      "Lists the clinician's own encounters: encounter, patient, status, start and end.",
		},
		{
			Action:   ActionOpenRecord,
			Params:   []contract.Parameter{patient},
			ReadOnly: true,
			Resource: "patient",
			Doc:      "Returns the summary of the record of a patient in one of the clinician's encounters.",
		},
		{
			Action:   ActionReadNotes,
			Params:   []contract.Parameter{patient},
			ReadOnly: true,
			Resource: "patient",
			Doc:      "Returns the notes of the record of a patient in one of the clinician's encounters.",
		},
		{
			Action:   ActionAnnotateRecord,
			Params:   []contract.Parameter{patient, note},
			Resource: "patient",
			Doc:      "Appends a note, signed by the clinician, to the record of a patient in one of the clinician's active encounters.",
		},
	}
	out, err := contract.NewAll(specs)
	if err != nil {
		return nil, fmt.Errorf("healthcare: %w", err)
	}
	return out, nil
}

// encounters is the encounters registry: it resolves a patient ID to the
// patient only if the owner, a clinician, has an encounter with them.
type encounters struct{ ehr *Mem }

var _ resolve.Registry = encounters{}

// Lookup returns the clinician's encounter with the patient as a record
// whose value is the patient's ID, or an error wrapping resolve.ErrNoMatch
// when the clinician has none: the same for another clinician's patient
// and for a patient who does not exist.
func (r encounters) Lookup(ctx context.Context, owner intent.Owner, patient string) (resolve.Record, error) {
	e, restricted, err := r.ehr.lookup(ctx, string(owner), patient)
	if errors.Is(err, ErrNotFound) {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	if err != nil {
		return resolve.Record{}, err
	}
	return resolve.Record{
		ID:    e.ID,
		Value: e.Patient,
		At:    e.Start,
		Attrs: careAttrs(e.ID, e.Status == StatusActive, restricted),
	}, nil
}

func careAttrs(encounterID string, active, restricted bool) map[string]intent.Value {
	return map[string]intent.Value{
		attrEncounterID:     intent.Str(encounterID),
		attrEncounterActive: intent.Bool(active),
		attrRestricted:      intent.Bool(restricted),
	}
}

// mandatedPatients is the context provider for a patient resolved from the
// mandate's claim, who comes without the registry's attributes: it reads
// the same facts from the clinician's encounters, so the policy sees the
// same facts whatever the source. When the clinician has no encounter with
// the patient it reports an empty encounter ID, which the policy forbids
// (and the EHR refuses), and says nothing true about the record: the
// record counts as not restricted, so that the refusal is the same for
// every patient outside the clinician's encounters, existing or not.
type mandatedPatients struct{ ehr *Mem }

var _ gateway.ContextProvider = mandatedPatients{}

var registrySource = contract.FromRegistry(EncountersRegistry).String()

func (p mandatedPatients) Facts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	for _, res := range q.Resolved {
		if res.Param != "patient" || res.Provenance.Source == registrySource {
			continue
		}
		e, restricted, err := p.ehr.lookup(ctx, string(q.Owner), res.Value)
		switch {
		case errors.Is(err, ErrNotFound):
			return facts(careAttrs("", false, false)), nil
		case err != nil:
			return nil, err
		}
		return facts(careAttrs(e.ID, e.Status == StatusActive, restricted)), nil
	}
	return nil, nil
}

// facts names attributes as the gateway names a registry's: "patient_<attr>".
func facts(attrs map[string]intent.Value) map[string]intent.Value {
	out := make(map[string]intent.Value, len(attrs))
	for k, v := range attrs {
		out["patient_"+k] = v
	}
	return out
}
