package travel

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/intentplane/intentplane/core/gateway"
	"github.com/intentplane/intentplane/core/intent"
	"github.com/intentplane/intentplane/core/normalize"
)

var _ gateway.Executor = Executor{}

// Executor carries out the pack's operations on a Mem, with the resolved
// arguments only. Its outputs are what AgentDojo's travel tools return:
// text for the city listings, flights and reservations, JSON objects
// keyed by name for the catalogue's details, the profile as an object,
// events and e-mails as objects with AgentDojo's field names. Lists of
// names arrive as comma-separated text. Every error wraps
// gateway.ErrNotExecuted: the in-memory state applies an operation whole
// or not at all.
type Executor struct {
	Travel *Mem
}

// Execute implements gateway.Executor.
func (e Executor) Execute(ctx context.Context, op intent.Operation, _ intent.OperationHash) (gateway.Result, error) {
	if err := ctx.Err(); err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	out, err := e.execute(op)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %w", gateway.ErrNotExecuted, gateway.Visible(err.Error(), err))
	}
	if s, ok := out.(string); ok {
		return gateway.Result{Output: s}, nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return gateway.Result{}, fmt.Errorf("%w: %v", gateway.ErrNotExecuted, err)
	}
	return gateway.Result{Output: string(b)}, nil
}

func (e Executor) execute(op intent.Operation) (any, error) {
	a := opArgs(op.Args)
	if run, ok := writes[op.Action]; ok {
		return run(e.Travel, op.Owner, a)
	}
	if run, ok := reads[op.Action]; ok {
		var out any
		err := e.Travel.with(op.Owner, func(t *Travel) error {
			var err error
			out, err = run(t, a)
			return err
		})
		return out, err
	}
	return nil, fmt.Errorf("travel: unknown action %q", op.Action)
}

type opArgs intent.Args

func (a opArgs) str(name string) string { return a[name].Str }

func (a opArgs) list(name string) []string { return normalize.SplitList(a[name].Str) }

// writes are the actions that change the state; Mem locks for them.
var writes = map[intent.Action]func(m *Mem, o intent.Owner, a opArgs) (any, error){
	ActionReserveHotel: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		return m.Reserve(o, "hotel", a.str("hotel"), a.str("start_day"), a.str("end_day"))
	},
	ActionReserveRestaurant: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		return m.Reserve(o, "restaurant", a.str("restaurant"), a.str("start_time"), "")
	},
	ActionReserveCarRental: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		return m.Reserve(o, "car", a.str("company"), a.str("start_time"), a.str("end_time"))
	},
	ActionCreateCalendarEvent: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		return m.CreateEvent(o, a.str("title"), a.str("start_time"), a.str("end_time"), a.str("description"), a.list("participants"), a.str("location"))
	},
	ActionCancelCalendarEvent: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		id := a.str("event_id")
		return fmt.Sprintf("Event with ID %s has been canceled and participants have been notified.", id), m.CancelEvent(o, id)
	},
	ActionSearchCalendarEvents: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		return m.SearchEvents(o, a.str("query"), a.str("date"))
	},
	ActionGetDayCalendarEvents: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		return m.DayEvents(o, a.str("day"))
	},
	ActionSendEmail: func(m *Mem, o intent.Owner, a opArgs) (any, error) {
		return m.SendEmail(o, a.list("recipients"), a.list("cc"), a.list("bcc"), a.str("subject"), a.str("body"))
	},
}

// byName builds AgentDojo's {name: detail} answers for the catalogue
// entries whose name is in names.
func byName[T any](list []T, name func(T) string, names []string, detail func(T) any) map[string]any {
	out := map[string]any{}
	for _, x := range list {
		if named(names, name(x)) {
			out[name(x)] = detail(x)
		}
	}
	return out
}

func rating(r float64, reviews []string) string {
	return fmt.Sprintf("Rating: %s\nReviews: %s", pyFloat(r), strings.Join(reviews, "\n"))
}

// pyFloat writes f as Python's str(float) does for the catalogue's
// values ("4.0", "4.2", "120.0").
func pyFloat(f float64) string {
	s := fmt.Sprintf("%g", f)
	if !strings.ContainsAny(s, ".e") {
		s += ".0"
	}
	return s
}

func hotelName(h Hotel) string           { return h.Name }
func restaurantName(r Restaurant) string { return r.Name }
func companyName(c Company) string       { return c.Name }

// reads answer from the state under Mem's lock.
var reads = map[intent.Action]func(t *Travel, a opArgs) (any, error){
	ActionGetUserInformation: func(t *Travel, _ opArgs) (any, error) {
		u := t.User
		return map[string]string{
			"First Name": u.FirstName, "Last Name": u.LastName, "ID Number": u.IDNumber, "Email": u.Email,
			"Phone Number": u.Phone, "Address": u.Address, "Passport Number": u.Passport,
			"Bank Account Number": u.BankAccount, "Credit Card Number": u.CreditCard,
		}, nil
	},
	ActionGetAllHotelsInCity: func(t *Travel, a opArgs) (any, error) {
		var ns []string
		for _, h := range t.Hotels {
			if h.City == a.str("city") {
				ns = append(ns, h.Name)
			}
		}
		return "Hotel Names: " + strings.Join(ns, "\n") + "\n", nil
	},
	ActionGetHotelsPrices: func(t *Travel, a opArgs) (any, error) {
		return byName(t.Hotels, hotelName, a.list("hotel_names"), func(h Hotel) any {
			return "Price range: " + pyFloat(h.PriceMin) + " - " + pyFloat(h.PriceMax)
		}), nil
	},
	ActionGetRatingReviewsHotels: func(t *Travel, a opArgs) (any, error) {
		return byName(t.Hotels, hotelName, a.list("hotel_names"), func(h Hotel) any { return rating(h.Rating, h.Reviews) }), nil
	},
	ActionGetHotelsAddress: func(t *Travel, a opArgs) (any, error) {
		return byName(t.Hotels, hotelName, []string{a.str("hotel_name")}, func(h Hotel) any { return h.Address }), nil
	},
	ActionGetAllRestaurantsInCity: func(t *Travel, a opArgs) (any, error) {
		var ns []string
		for _, r := range t.Restaurants {
			if r.City == a.str("city") {
				ns = append(ns, r.Name)
			}
		}
		return "Restaurant in " + a.str("city") + ": " + strings.Join(ns, "\n") + "\n", nil
	},
	ActionGetCuisineType:        restaurantDetail(func(r Restaurant) any { return r.Cuisine }),
	ActionGetRestaurantsAddress: restaurantDetail(func(r Restaurant) any { return r.Address }),
	ActionGetRatingReviewsRests: restaurantDetail(func(r Restaurant) any { return rating(r.Rating, r.Reviews) }),
	// AgentDojo looks each name up in the requested names joined with
	// ", ", so a part of a requested name matches too.
	ActionGetDietaryRestrictions: func(t *Travel, a opArgs) (any, error) {
		joined := strings.Join(a.list("restaurant_names"), ", ")
		out := map[string]any{}
		for _, r := range t.Restaurants {
			if strings.Contains(joined, r.Name) {
				out[r.Name] = r.Dietary
			}
		}
		return out, nil
	},
	ActionGetRestaurantContact: restaurantDetail(func(r Restaurant) any { return r.Contact }),
	ActionGetRestaurantPrice:   restaurantDetail(func(r Restaurant) any { return r.PricePerPerson }),
	ActionCheckOpeningHours:    restaurantDetail(func(r Restaurant) any { return r.OperatingHours }),
	ActionGetAllCompaniesInCity: func(t *Travel, a opArgs) (any, error) {
		var ns []string
		for _, c := range t.Companies {
			if c.City == a.str("city") {
				ns = append(ns, c.Name)
			}
		}
		return "Car Rental Companies in " + a.str("city") + ": " + strings.Join(ns, "\n") + "\n", nil
	},
	ActionGetCarTypes:          companyDetail(func(c Company) any { return c.CarTypes }),
	ActionGetRatingReviewsCars: companyDetail(func(c Company) any { return rating(c.Rating, c.Reviews) }),
	ActionGetCarFuelOptions:    companyDetail(func(c Company) any { return c.FuelOptions }),
	ActionGetCarRentalAddress:  companyDetail(func(c Company) any { return c.Address }),
	ActionGetCarPricePerDay:    companyDetail(func(c Company) any { return c.PricePerDay }),
	ActionGetFlightInformation: func(t *Travel, a opArgs) (any, error) {
		var ls []string
		for _, f := range t.Flights {
			if f.From == a.str("departure_city") && f.To == a.str("arrival_city") {
				ls = append(ls, fmt.Sprintf("Airline: %s, Flight Number: %s, Departure Time: %s, Arrival Time: %s, Price: %s, Contact Information: %s",
					f.Airline, f.Number, f.Departure, f.Arrival, pyFloat(f.Price), f.Contact))
			}
		}
		return strings.Join(ls, "\n"), nil
	},
}

func restaurantDetail(detail func(Restaurant) any) func(t *Travel, a opArgs) (any, error) {
	return func(t *Travel, a opArgs) (any, error) {
		return byName(t.Restaurants, restaurantName, a.list("restaurant_names"), detail), nil
	}
}

func companyDetail(detail func(Company) any) func(t *Travel, a opArgs) (any, error) {
	return func(t *Travel, a opArgs) (any, error) {
		return byName(t.Companies, companyName, a.list("company_name"), detail), nil
	}
}
