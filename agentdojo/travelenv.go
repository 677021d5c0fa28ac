package agentdojo

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/intentplane/intentplane/travel"
)

// TravelData is the travel suite's environment as AgentDojo's data files
// give it, with its injection vectors still unfilled ("{name}" in the
// reviews), and the vectors' defaults.
type TravelData struct {
	base     *travel.Travel
	defaults map[string]string
}

// yamlTravel mirrors travel/environment.yaml; times stay text.
type yamlTravel struct {
	User  travelUserYAML `yaml:"user"`
	Inbox struct {
		Account string      `yaml:"account_email"`
		Emails  []yamlEmail `yaml:"initial_emails"`
	} `yaml:"inbox"`
	Reservation struct {
		Type    string `yaml:"reservation_type"`
		Title   string `yaml:"title"`
		Start   string `yaml:"start_time"`
		End     string `yaml:"end_time"`
		Contact string `yaml:"contact_information"`
	} `yaml:"reservation"`
	Flights struct {
		List []struct {
			Airline   string  `yaml:"airline"`
			Number    string  `yaml:"flight_number"`
			From      string  `yaml:"departure_city"`
			To        string  `yaml:"arrival_city"`
			Departure string  `yaml:"departure_time"`
			Arrival   string  `yaml:"arrival_time"`
			Price     float64 `yaml:"price"`
			Contact   string  `yaml:"contact_information"`
		} `yaml:"flight_list"`
	} `yaml:"flights"`
	Hotels struct {
		List []struct {
			Name     string   `yaml:"name"`
			City     string   `yaml:"city"`
			Rating   float64  `yaml:"rating"`
			PriceMin float64  `yaml:"price_min"`
			PriceMax float64  `yaml:"price_max"`
			Address  string   `yaml:"address"`
			Reviews  []string `yaml:"reviews"`
		} `yaml:"hotel_list"`
	} `yaml:"hotels"`
	Restaurants struct {
		List []struct {
			Name           string   `yaml:"name"`
			City           string   `yaml:"city"`
			Address        string   `yaml:"address"`
			Rating         float64  `yaml:"rating"`
			PricePerPerson float64  `yaml:"price_per_person"`
			OperatingHours string   `yaml:"operating_hours"`
			Reviews        []string `yaml:"reviews"`
			Contact        string   `yaml:"contact_information"`
			Cuisine        string   `yaml:"cuisine_type"`
			Dietary        string   `yaml:"dietary_restrictions"`
		} `yaml:"restaurant_list"`
	} `yaml:"restaurants"`
	CarRental struct {
		List []struct {
			Name        string   `yaml:"name"`
			City        string   `yaml:"city"`
			Address     string   `yaml:"address"`
			Rating      float64  `yaml:"rating"`
			PricePerDay float64  `yaml:"price_per_day"`
			Reviews     []string `yaml:"reviews"`
			Contact     string   `yaml:"contact_information"`
			CarTypes    []string `yaml:"car_types_available"`
			FuelOptions []string `yaml:"fuel_options"`
		} `yaml:"company_list"`
	} `yaml:"car_rental"`
	Calendar struct {
		Account    string      `yaml:"account_email"`
		CurrentDay string      `yaml:"current_day"`
		Events     []yamlEvent `yaml:"initial_events"`
	} `yaml:"calendar"`
}

type travelUserYAML struct {
	FirstName   string `yaml:"first_name"`
	LastName    string `yaml:"last_name"`
	IDNumber    string `yaml:"ID_number"`
	Email       string `yaml:"email"`
	Phone       string `yaml:"phone_number"`
	Address     string `yaml:"address"`
	Passport    string `yaml:"passport_number"`
	BankAccount string `yaml:"bank_account_number"`
	CreditCard  string `yaml:"credit_card_number"`
}

// LoadTravelData reads the travel suite from dir, the suite data
// directory (see DataDir): travel/environment.yaml and
// travel/injection_vectors.yaml. It returns an error naming the file for
// a file that is missing or does not parse, for an environment without
// account, current day or catalogue, and for a placeholder that no vector
// declares.
func LoadTravelData(dir string) (*TravelData, error) {
	root := filepath.Join(dir, "travel")
	read := func(name string) ([]byte, error) {
		b, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return nil, fmt.Errorf("agentdojo: travel data: %w (set --data or %s to AgentDojo's suite data)", err, DataDirEnv)
		}
		return b, nil
	}
	envText, err := read("environment.yaml")
	if err != nil {
		return nil, err
	}
	var y yamlTravel
	if err := yaml.Unmarshal(envText, &y); err != nil {
		return nil, fmt.Errorf("agentdojo: travel data: environment.yaml: %w", err)
	}
	vecText, err := read("injection_vectors.yaml")
	if err != nil {
		return nil, err
	}
	var vecs map[string]struct {
		Default string `yaml:"default"`
	}
	if err := yaml.Unmarshal(vecText, &vecs); err != nil {
		return nil, fmt.Errorf("agentdojo: travel data: injection_vectors.yaml: %w", err)
	}
	d := &TravelData{defaults: map[string]string{}, base: buildTravel(&y)}
	for k, v := range vecs {
		d.defaults[k] = v.Default
	}
	b := d.base
	if b.Account == "" || b.Today == "" || len(b.Hotels) == 0 || len(b.Restaurants) == 0 || len(b.Companies) == 0 {
		return nil, fmt.Errorf("agentdojo: travel data in %s is incomplete: account, current day, hotels, restaurants and car rental companies are required", root)
	}
	for _, p := range travelPlaceholders(b) {
		if _, ok := d.defaults[p]; !ok {
			return nil, fmt.Errorf("agentdojo: travel data: placeholder {%s} has no injection vector", p)
		}
	}
	return d, nil
}

// isoMinute turns AgentDojo's "2024-05-15T10:00" into "2024-05-15 10:00"
// and "2024-05-16T09:00:00" into "2024-05-16 09:00:00".
func isoMinute(s string) string { return strings.Replace(s, "T", " ", 1) }

func buildTravel(y *yamlTravel) *travel.Travel {
	u := y.User
	t := &travel.Travel{
		User: travel.User{FirstName: u.FirstName, LastName: u.LastName, IDNumber: u.IDNumber, Email: u.Email, Phone: u.Phone,
			Address: u.Address, Passport: u.Passport, BankAccount: u.BankAccount, CreditCard: u.CreditCard},
		Account: y.Inbox.Account, Today: y.Calendar.CurrentDay,
		Events: map[string]*travel.Event{}, Emails: map[string]*travel.Email{},
		Reservation: travel.Reservation{Type: y.Reservation.Type, Title: y.Reservation.Title, Start: isoMinute(y.Reservation.Start),
			End: isoMinute(y.Reservation.End), Contact: y.Reservation.Contact},
	}
	for _, f := range y.Flights.List {
		t.Flights = append(t.Flights, travel.Flight{Airline: f.Airline, Number: f.Number, From: f.From, To: f.To,
			Departure: isoMinute(f.Departure), Arrival: isoMinute(f.Arrival), Price: f.Price, Contact: f.Contact})
	}
	for _, h := range y.Hotels.List {
		t.Hotels = append(t.Hotels, travel.Hotel{Name: h.Name, City: h.City, Rating: h.Rating, PriceMin: h.PriceMin, PriceMax: h.PriceMax,
			Address: h.Address, Reviews: h.Reviews})
	}
	for _, r := range y.Restaurants.List {
		t.Restaurants = append(t.Restaurants, travel.Restaurant{Name: r.Name, City: r.City, Address: r.Address, Rating: r.Rating,
			PricePerPerson: r.PricePerPerson, OperatingHours: r.OperatingHours, Reviews: r.Reviews, Contact: r.Contact,
			Cuisine: r.Cuisine, Dietary: r.Dietary})
	}
	for _, c := range y.CarRental.List {
		t.Companies = append(t.Companies, travel.Company{Name: c.Name, City: c.City, Address: c.Address, Rating: c.Rating,
			PricePerDay: c.PricePerDay, Reviews: c.Reviews, Contact: c.Contact, CarTypes: c.CarTypes, FuelOptions: c.FuelOptions})
	}
	for _, e := range y.Calendar.Events {
		t.Events[e.ID] = &travel.Event{ID: e.ID, Title: e.Title, Description: e.Description, Start: isoMinute(e.Start),
			End: isoMinute(e.End), Location: e.Location, Participants: e.Participants, AllDay: e.AllDay, Status: e.Status}
	}
	for _, e := range y.Inbox.Emails {
		t.Emails[e.ID] = &travel.Email{ID: e.ID, Sender: e.Sender, Recipients: e.Recipients, CC: e.CC, BCC: e.BCC,
			Subject: e.Subject, Body: e.Body, Status: e.Status, Read: e.Read, Timestamp: isoMinute(e.Timestamp)}
	}
	return t
}

var travelPlaceholderRE = regexp.MustCompile(`\{(injection_[a-z0-9_]+)\}`)

// reviews returns pointers to every review of the catalogue: the only
// fields of the suite that carry injection vectors.
func reviews(t *travel.Travel) []*string {
	var out []*string
	for i := range t.Hotels {
		for j := range t.Hotels[i].Reviews {
			out = append(out, &t.Hotels[i].Reviews[j])
		}
	}
	for i := range t.Restaurants {
		for j := range t.Restaurants[i].Reviews {
			out = append(out, &t.Restaurants[i].Reviews[j])
		}
	}
	for i := range t.Companies {
		for j := range t.Companies[i].Reviews {
			out = append(out, &t.Companies[i].Reviews[j])
		}
	}
	return out
}

func travelPlaceholders(t *travel.Travel) []string {
	var out []string
	for _, r := range reviews(t) {
		for _, m := range travelPlaceholderRE.FindAllStringSubmatch(*r, -1) {
			out = append(out, m[1])
		}
	}
	return out
}

// Environment returns a fresh copy of the travel environment with each
// vector filled: injections[name] when given, else the vector's default.
func (d *TravelData) Environment(injections map[string]string) *travel.Travel {
	t := d.base.Clone()
	t.Hotels = cloneEach(t.Hotels, func(h *travel.Hotel) { h.Reviews = append([]string(nil), h.Reviews...) })
	t.Restaurants = cloneEach(t.Restaurants, func(r *travel.Restaurant) { r.Reviews = append([]string(nil), r.Reviews...) })
	t.Companies = cloneEach(t.Companies, func(c *travel.Company) { c.Reviews = append([]string(nil), c.Reviews...) })
	for _, r := range reviews(t) {
		*r = travelPlaceholderRE.ReplaceAllStringFunc(*r, func(m string) string {
			name := m[1 : len(m)-1]
			if v, ok := injections[name]; ok {
				return v
			}
			return d.defaults[name]
		})
	}
	return t
}

// Vectors returns the names of the suite's injection vectors.
func (d *TravelData) Vectors() []string {
	var out []string
	for k := range d.defaults {
		out = append(out, k)
	}
	return out
}

func cloneEach[T any](in []T, deep func(*T)) []T {
	out := append([]T(nil), in...)
	for i := range out {
		deep(&out[i])
	}
	return out
}
