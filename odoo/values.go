package odoo

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/intentplane/intentplane/core/intent"
)

// Odoo's formats for dates and datetimes in answers: datetimes are UTC,
// cut to whole seconds.
const (
	dateFormat     = "2006-01-02"
	datetimeFormat = "2006-01-02 15:04:05"
)

// record is one row of a read or search_read answer.
type record map[string]any

// records decodes a list of records.
func records(v any) ([]record, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, badAnswer("a list of records", v)
	}
	out := make([]record, 0, len(list))
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, badAnswer("a record", x)
		}
		out = append(out, record(m))
	}
	return out, nil
}

func badAnswer(want string, got any) error {
	return fmt.Errorf("%w: want %s, got %T", ErrBadAnswer, want, got)
}

func fieldError(field string, err error) error {
	return fmt.Errorf("field %s: %w", field, err)
}

// asID decodes a record id: an int above zero.
func asID(v any) (int64, error) {
	n, ok := v.(int64)
	if !ok || n <= 0 {
		return 0, badAnswer("a record id", v)
	}
	return n, nil
}

// id returns the record's id.
func (r record) id() (int64, error) {
	n, err := asID(r["id"])
	if err != nil {
		return 0, fieldError("id", err)
	}
	return n, nil
}

// str returns a char, text or selection field: False is "".
func (r record) str(field string) (string, error) {
	switch v := r[field].(type) {
	case string:
		return v, nil
	case bool:
		if !v {
			return "", nil
		}
	}
	return "", fieldError(field, badAnswer("a string or False", r[field]))
}

// boolean returns a boolean field.
func (r record) boolean(field string) (bool, error) {
	v, ok := r[field].(bool)
	if !ok {
		return false, fieldError(field, badAnswer("a boolean", r[field]))
	}
	return v, nil
}

// integer returns an integer field.
func (r record) integer(field string) (int64, error) {
	v, ok := r[field].(int64)
	if !ok {
		return 0, fieldError(field, badAnswer("an int", r[field]))
	}
	return v, nil
}

// many2one returns a many2one field: [id, "name"] (read with Odoo's
// default load), a bare id (read with load "", see session.searchRead:
// the name is then ""), or 0 and "" for False.
func (r record) many2one(field string) (int64, string, error) {
	switch v := r[field].(type) {
	case bool:
		if !v {
			return 0, "", nil
		}
	case int64:
		if id, err := asID(v); err == nil {
			return id, "", nil
		}
	case []any:
		if len(v) == 2 {
			id, err := asID(v[0])
			name, ok := v[1].(string)
			if err == nil && ok {
				return id, name, nil
			}
		}
	}
	return 0, "", fieldError(field, badAnswer("a many2one pair, an id or False", r[field]))
}

// ids returns a one2many or many2many field: a list of ids.
func (r record) ids(field string) ([]int64, error) {
	list, ok := r[field].([]any)
	if !ok {
		return nil, fieldError(field, badAnswer("a list of ids", r[field]))
	}
	out := make([]int64, 0, len(list))
	for _, x := range list {
		id, err := asID(x)
		if err != nil {
			return nil, fieldError(field, err)
		}
		out = append(out, id)
	}
	return out, nil
}

// date returns a date field at 00:00 UTC; zero for False.
func (r record) date(field string) (time.Time, error) {
	s, err := r.str(field)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.ParseInLocation(dateFormat, s, time.UTC)
	if err != nil {
		return time.Time{}, fieldError(field, fmt.Errorf("%w: bad date", ErrBadAnswer))
	}
	return t, nil
}

// datetime returns a datetime field in UTC; zero for False.
func (r record) datetime(field string) (time.Time, error) {
	s, err := r.str(field)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.ParseInLocation(datetimeFormat, s, time.UTC)
	if err != nil {
		return time.Time{}, fieldError(field, fmt.Errorf("%w: bad datetime", ErrBadAnswer))
	}
	return t, nil
}

// amount returns a float or monetary field in minor units of a currency
// with the given number of decimal places, rounded half away from zero.
func (r record) amount(field string, decimals int) (intent.Amount, error) {
	var f float64
	switch v := r[field].(type) {
	case float64:
		f = v
	case int64:
		f = float64(v)
	default:
		return 0, fieldError(field, badAnswer("a number", r[field]))
	}
	a, err := toMinor(f, decimals)
	if err != nil {
		return 0, fieldError(field, err)
	}
	return a, nil
}

// maxMinor bounds amounts decoded from floats: beyond 2^53 a float64 no
// longer holds every integer.
const maxMinor = 1 << 53

// toMinor converts a float amount to minor units.
func toMinor(f float64, decimals int) (intent.Amount, error) {
	if decimals < 0 || decimals > 6 {
		return 0, fmt.Errorf("%w: %d decimal places", ErrBadAnswer, decimals)
	}
	m := math.Round(f * math.Pow10(decimals))
	if math.IsNaN(m) || math.IsInf(m, 0) || math.Abs(m) > maxMinor {
		return 0, fmt.Errorf("%w: amount out of range", ErrBadAnswer)
	}
	return intent.Amount(m), nil
}

// fromMinor converts minor units to the float Odoo expects. Exact for
// every amount below 2^53 minor units: the decimal text of the result
// parses back to the same value.
func fromMinor(a intent.Amount, decimals int) float64 {
	f, _ := strconv.ParseFloat(intent.FormatAmount(a, uint8(decimals)), 64)
	return f
}

func itoa(id int64) string { return strconv.FormatInt(id, 10) }

// parseID parses an erp record ID for this connector: a decimal id above
// zero, without leading zeros.
func parseID(s string) (int64, bool) {
	if s == "" || s[0] == '0' || len(s) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}
