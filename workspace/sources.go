package workspace

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/intentplane/intentplane/core/contract"
	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
	"github.com/intentplane/intentplane/core/resolve"
)

var (
	_ resolve.Registry        = Counterparties{}
	_ resolve.Registry        = Events{}
	_ gateway.ContextProvider = Facts{}
)

// known is what the live workspace tells about addresses: every address it
// holds, and those the owner reached out to.
type known struct {
	account string
	all     map[string]bool
	// outbound holds the owner's own address, the recipients, cc and bcc
	// of sent e-mails, the participants of calendar events and the sharees
	// of the owner's files: people the owner wrote to, meets or shares
	// with.
	outbound map[string]bool
}

func knownOf(w *Workspace) known {
	k := known{account: w.Account, all: map[string]bool{w.Account: true}, outbound: map[string]bool{w.Account: true}}
	for _, e := range w.Emails {
		for _, a := range e.Addresses() {
			k.all[a] = true
		}
		if e.Status == StatusSent {
			for _, a := range e.Addresses() {
				k.outbound[a] = true
			}
		}
	}
	for _, e := range w.Events {
		for _, a := range e.Participants {
			k.all[a], k.outbound[a] = true, true
		}
	}
	for _, f := range w.Files {
		k.all[f.Owner] = true
		for a := range f.SharedWith {
			k.all[a] = true
			if f.Owner == w.Account {
				k.outbound[a] = true
			}
		}
	}
	// The registry compares normalized addresses.
	for _, m := range []map[string]bool{k.all, k.outbound} {
		for a := range m {
			if n, err := normalize.EmailList(a); err == nil && n != a {
				m[n] = true
			}
		}
	}
	return k
}

func (m *Mem) known(owner intent.Owner) (known, error) {
	var k known
	err := m.with(owner, func(w *Workspace) error {
		k = knownOf(w)
		return nil
	})
	return k, err
}

// Counterparties is the registry of the addresses of the owner's live
// workspace (RegistryCounterparties), read at every lookup: senders,
// recipients, cc and bcc of the inbox's e-mails, participants of the
// calendar's events, owners and sharees of the drive's files, and the
// owner's own address. Contacts add nothing: the inbox derives them from
// its e-mails. Attackers who wrote to the owner are in it; the facts tell
// the policy which addresses the owner never reached out to.
//
// Lookup takes a normalized address list (see normalize.EmailList) and matches
// when every address of it is known; the record's ID is "counterparties"
// and its Value the list.
type Counterparties struct {
	WS *Mem
}

// Lookup implements resolve.Registry. It returns an error wrapping
// resolve.ErrNoMatch when an address is not known, including for an owner
// without a workspace.
func (c Counterparties) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	if err := ctx.Err(); err != nil {
		return resolve.Record{}, err
	}
	k, err := c.WS.known(owner)
	if errors.Is(err, ErrUnknownOwner) {
		return resolve.Record{}, fmt.Errorf("%w: no workspace", resolve.ErrNoMatch)
	}
	if err != nil {
		return resolve.Record{}, err
	}
	as := normalize.SplitList(value)
	if len(as) == 0 {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	for _, a := range as {
		if !k.all[a] {
			return resolve.Record{}, fmt.Errorf("%w: %s is not in the user's mail, calendar or drive", resolve.ErrNoMatch, a)
		}
	}
	return resolve.Record{ID: RegistryCounterparties, Value: value}, nil
}

// Events is the registry of the ids of the owner's live calendar events
// (RegistryEvents). The record's ID is "event:<id>".
type Events struct {
	WS *Mem
}

// Lookup implements resolve.Registry. It returns an error wrapping
// resolve.ErrNoMatch for an id the calendar does not hold.
func (e Events) Lookup(ctx context.Context, owner intent.Owner, value string) (resolve.Record, error) {
	if err := ctx.Err(); err != nil {
		return resolve.Record{}, err
	}
	found := false
	err := e.WS.with(owner, func(w *Workspace) error {
		_, found = w.Events[value]
		return nil
	})
	if errors.Is(err, ErrUnknownOwner) || err == nil && !found {
		return resolve.Record{}, resolve.ErrNoMatch
	}
	if err != nil {
		return resolve.Record{}, err
	}
	return resolve.Record{ID: "event:" + value, Value: value}, nil
}

// Facts is the pack's context provider. It reads the live workspace and
// the mandate's claims.
//
// For workspace.send_email, workspace.create_calendar_event,
// workspace.add_calendar_event_participants and workspace.share_file it
// gives, about the addresses (recipients, cc and bcc; participants; the
// sharee) that were not resolved from the mandate:
//
//   - unnamed_recipients: those addresses, comma-separated ("" if none),
//     and unnamed_count how many;
//   - unnamed_owner: the owner's own address is one of them;
//   - unnamed_inbound_only: one of them is known only from what others
//     sent (a sender of received mail, the owner of a file shared with the
//     owner): the owner never wrote to, met or shared with them;
//
// and about the outgoing text (subject and body; title, description and
// location of an invitation; none for the others):
//
//   - links: the links it carries, canonical (see CanonicalLink),
//     space-separated;
//   - unrequested_links: how many of them the user's request (claim
//     "links") did not contain.
//
// For workspace.share_file it also gives file_found and file_owned (the
// owner owns the file). For workspace.reschedule_calendar_event it gives
// event_named: the event was named in the mandate (claim "events"). Other
// actions get no facts.
type Facts struct {
	WS *Mem
}

// Facts implements gateway.ContextProvider. It returns an error when the
// owner has no workspace.
func (f Facts) Facts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	facts := map[string]intent.Value{}
	var fields []string
	var txt string
	switch q.Action {
	case ActionSendEmail:
		fields = []string{"recipients", "cc", "bcc"}
		txt = q.Args["subject"].Str + "\n" + q.Args["body"].Str
	case ActionCreateCalendarEvent:
		fields = []string{"participants"}
		txt = q.Args["title"].Str + "\n" + q.Args["description"].Str + "\n" + q.Args["location"].Str
	case ActionAddEventParticipants:
		fields = []string{"participants"}
	case ActionShareFile:
		fields = []string{"email"}
	case ActionRescheduleCalendarEvent:
		facts["event_named"] = intent.Bool(fromMandate(q.Resolved, "event_id"))
		return facts, nil
	default:
		return facts, nil
	}
	k, err := f.WS.known(q.Owner)
	if err != nil {
		return nil, err
	}
	var unnamed []string
	for _, name := range fields {
		v, ok := q.Args[name]
		if !ok || fromMandate(q.Resolved, name) {
			continue
		}
		unnamed = append(unnamed, normalize.SplitList(v.Str)...)
	}
	slices.Sort(unnamed)
	unnamed = slices.Compact(unnamed)
	owner, inbound := false, false
	for _, a := range unnamed {
		owner = owner || a == k.account
		inbound = inbound || !k.outbound[a]
	}
	facts["unnamed_recipients"] = intent.Str(strings.Join(unnamed, ","))
	facts["unnamed_count"] = intent.Int(int64(len(unnamed)))
	facts["unnamed_owner"] = intent.Bool(owner)
	facts["unnamed_inbound_only"] = intent.Bool(inbound)
	if q.Action == ActionShareFile {
		found, owned := false, false
		err := f.WS.with(q.Owner, func(w *Workspace) error {
			fl, ok := w.Files[strings.TrimSpace(q.Args["file_id"].Str)]
			found, owned = ok, ok && fl.Owner == w.Account
			return nil
		})
		if err != nil {
			return nil, err
		}
		facts["file_found"] = intent.Bool(found)
		facts["file_owned"] = intent.Bool(owned)
		return facts, nil
	}
	links := Links(txt)
	requested := map[string]bool{}
	for _, c := range q.Claims[ClaimLinks] {
		requested[CanonicalLink(c)] = true
	}
	n := 0
	for _, l := range links {
		if !requested[l] {
			n++
		}
	}
	facts["links"] = intent.Str(strings.Join(links, " "))
	facts["unrequested_links"] = intent.Int(int64(n))
	return facts, nil
}

// mandatePrefix starts the provenance source of every value resolved from
// a mandate claim ("mandate:recipients").
var mandatePrefix = contract.FromMandate("").String()

// fromMandate reports whether param was resolved from a mandate claim.
func fromMandate(rs []intent.Resolved, param string) bool {
	for _, r := range rs {
		if r.Param == param {
			return strings.HasPrefix(r.Provenance.Source, mandatePrefix)
		}
	}
	return false
}
