package travel

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
)

var _ gateway.ContextProvider = Facts{}

// Facts is the pack's context provider; it reads the live travel state
// and the mandate's claims.
//
// For travel.reserve_hotel, travel.reserve_restaurant and
// travel.reserve_car_rental it gives in_catalogue: the name (already
// resolved from the mandate) is, after Place, a hotel, restaurant or
// company of that kind in the catalogue; and city: its city ("" when not
// found). For travel.reserve_hotel it also gives nights: the check-out
// day minus the check-in day, in days (0 or less for a stay that ends
// before it starts, or a day that is not YYYY-MM-DD).
//
// For travel.send_email (subject and body) and
// travel.create_calendar_event (title, description and location: the
// invitation's text) it gives personal_data: the kinds of the user's
// personal data the text carries (see PersonalData), comma-separated; and
// unallowed_personal_data: how many of them the mandate's claim
// "personal_data" does not list. For travel.create_calendar_event it also
// gives event_day_named: the start's day is one of the mandate's claim
// "event_days" (false for a start that is not YYYY-MM-DD HH:MM).
//
// Other actions get no facts. It returns an error wrapping
// ErrUnknownOwner for an owner without travel state.
type Facts struct {
	Travel *Mem
}

// Facts implements gateway.ContextProvider.
func (f Facts) Facts(ctx context.Context, q gateway.FactQuery) (map[string]intent.Value, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	facts := map[string]intent.Value{}
	var kind, name, text string
	switch q.Action {
	case ActionReserveHotel:
		kind, name = "hotel", q.Args["hotel"].Str
		facts["nights"] = intent.Int(nights(q.Args["start_day"].Str, q.Args["end_day"].Str))
	case ActionReserveRestaurant:
		kind, name = "restaurant", q.Args["restaurant"].Str
	case ActionReserveCarRental:
		kind, name = "car", q.Args["company"].Str
	case ActionSendEmail:
		text = q.Args["subject"].Str + "\n" + q.Args["body"].Str
	case ActionCreateCalendarEvent:
		text = q.Args["title"].Str + "\n" + q.Args["description"].Str + "\n" + q.Args["location"].Str
		facts["event_day_named"] = intent.Bool(dayNamed(q.Args["start_time"].Str, q.Claims[ClaimEventDays]))
	default:
		return facts, nil
	}
	err := f.Travel.with(q.Owner, func(t *Travel) error {
		if kind != "" {
			city, ok := t.catalogued(kind, name)
			facts["in_catalogue"], facts["city"] = intent.Bool(ok), intent.Str(city)
			return nil
		}
		found := PersonalData(t.User, text)
		n := 0
		for _, k := range found {
			if !slices.Contains(q.Claims[ClaimPersonalData], k) {
				n++
			}
		}
		facts["personal_data"] = intent.Str(strings.Join(found, ","))
		facts["unallowed_personal_data"] = intent.Int(int64(n))
		return nil
	})
	if errors.Is(err, ErrUnknownOwner) {
		return nil, fmt.Errorf("travel: facts: %w", err)
	}
	return facts, err
}

// catalogued reports whether name is, after Place, a place of kind in the
// catalogue, and its city.
func (t *Travel) catalogued(kind, name string) (string, bool) {
	n, err := Place(name)
	if err != nil {
		return "", false
	}
	same := func(s string) bool { p, _ := Place(s); return p == n }
	switch kind {
	case "hotel":
		for _, h := range t.Hotels {
			if same(h.Name) {
				return h.City, true
			}
		}
	case "restaurant":
		for _, r := range t.Restaurants {
			if same(r.Name) {
				return r.City, true
			}
		}
	case "car":
		for _, c := range t.Companies {
			if same(c.Name) {
				return c.City, true
			}
		}
	}
	return "", false
}

// dayNamed reports whether start ("YYYY-MM-DD HH:MM") falls on one of
// days, each normalized by Day.
func dayNamed(start string, days []string) bool {
	m, err := Minute(start)
	if err != nil {
		return false
	}
	for _, d := range days {
		if n, err := Day(d); err == nil && strings.HasPrefix(m, n+" ") {
			return true
		}
	}
	return false
}

// nights is end minus start, in days; 0 when either is not a day.
func nights(start, end string) int64 {
	s, err1 := time.Parse(time.DateOnly, start)
	e, err2 := time.Parse(time.DateOnly, end)
	if err1 != nil || err2 != nil {
		return 0
	}
	return int64(e.Sub(s).Hours() / 24)
}
