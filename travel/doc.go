// Package travel is intentplane's travel pack: the 28 tools of the
// AgentDojo travel suite (hotels, restaurants, car rental, flights, the
// user's profile, calendar and e-mail) as gateway actions
// ("travel.reserve_hotel", "travel.send_email", ...), their contracts, a
// facts provider that reads the live travel state, an executor, and an
// in-memory travel state, Mem, with AgentDojo's semantics.
//
// The values that book or send are critical parameters and resolve from
// the mandate only: which hotel, restaurant or car rental company is
// reserved (claims "hotels", "restaurants", "car_companies": names from
// the suite's catalogue, as the user named them or as the user's criteria
// picked them when the mandate was issued) and for which days and times
// (claims "days" and "times"); who receives an e-mail (claim
// "recipients"); the participants of a calendar event (claim
// "participants"); the event cancelled (claim "cancel_events"). A name found only in a review, an e-mail or any other
// text the agent read resolves nowhere.
//
// The facts provider adds what the policy in policies/travel needs: a
// reserved place is in the catalogue (of the right kind), a new event
// falls on a day the user asked for one (claim "event_days"), and which of the
// user's personal data (passport, credit card, ID and bank account
// numbers, from the profile) outgoing text carries; personal data not
// named in the mandate (claim "personal_data") is never sent, even to a
// recipient the user named.
//
// Free text (subjects, bodies, event titles and descriptions) and
// recommendations are not protected; docs/travel.md draws that boundary.
// Lists (recipients, participants) travel in a proposal as one text
// value, comma-separated, and resolve as a whole.
//
// The package may import core/* and policies; it must never import another
// pack, a connector, a store, a front door or cmd.
package travel
