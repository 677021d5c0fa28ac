package rpc

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
	DateFormat     = "2006-01-02"
	datetimeFormat = "2006-01-02 15:04:05"
)

// Record is one row of a read or search_read answer, as Records decodes
// it. Its accessors return an error wrapping ErrBadAnswer, naming the
// field, for a value of another type.
type Record map[string]any

// Records decodes a list of records; an error wraps ErrBadAnswer.
func Records(v any) ([]Record, error) {
	list, ok := v.([]any)
	if !ok {
		return nil, BadAnswer("a list of records", v)
	}
	out := make([]Record, 0, len(list))
	for _, x := range list {
		m, ok := x.(map[string]any)
		if !ok {
			return nil, BadAnswer("a record", x)
		}
		out = append(out, Record(m))
	}
	return out, nil
}

// BadAnswer is the error for an answer that is not what was wanted: want
// names it ("a record id"), got is what came, shown by its Go type only.
func BadAnswer(want string, got any) error {
	return fmt.Errorf("%w: want %s, got %T", ErrBadAnswer, want, got)
}

// FieldError names the field of a record in err.
func FieldError(field string, err error) error {
	return fmt.Errorf("field %s: %w", field, err)
}

// AsID decodes a record id: an int above zero.
func AsID(v any) (int64, error) {
	n, ok := v.(int64)
	if !ok || n <= 0 {
		return 0, BadAnswer("a record id", v)
	}
	return n, nil
}

// ID returns the record's id.
func (r Record) ID() (int64, error) {
	n, err := AsID(r["id"])
	if err != nil {
		return 0, FieldError("id", err)
	}
	return n, nil
}

// Str returns a char, text or selection field: False is "".
func (r Record) Str(field string) (string, error) {
	switch v := r[field].(type) {
	case string:
		return v, nil
	case bool:
		if !v {
			return "", nil
		}
	}
	return "", FieldError(field, BadAnswer("a string or False", r[field]))
}

// Bool returns a boolean field.
func (r Record) Bool(field string) (bool, error) {
	v, ok := r[field].(bool)
	if !ok {
		return false, FieldError(field, BadAnswer("a boolean", r[field]))
	}
	return v, nil
}

// Int returns an integer field.
func (r Record) Int(field string) (int64, error) {
	v, ok := r[field].(int64)
	if !ok {
		return 0, FieldError(field, BadAnswer("an int", r[field]))
	}
	return v, nil
}

// Many2one returns a many2one field: [id, "name"] (read with Odoo's
// default load), a bare id (read with load "", see Session.SearchRead:
// the name is then ""), or 0 and "" for False.
func (r Record) Many2one(field string) (int64, string, error) {
	switch v := r[field].(type) {
	case bool:
		if !v {
			return 0, "", nil
		}
	case int64:
		if id, err := AsID(v); err == nil {
			return id, "", nil
		}
	case []any:
		if len(v) == 2 {
			id, err := AsID(v[0])
			name, ok := v[1].(string)
			if err == nil && ok {
				return id, name, nil
			}
		}
	}
	return 0, "", FieldError(field, BadAnswer("a many2one pair, an id or False", r[field]))
}

// IDs returns a one2many or many2many field: a list of ids.
func (r Record) IDs(field string) ([]int64, error) {
	list, ok := r[field].([]any)
	if !ok {
		return nil, FieldError(field, BadAnswer("a list of ids", r[field]))
	}
	out := make([]int64, 0, len(list))
	for _, x := range list {
		id, err := AsID(x)
		if err != nil {
			return nil, FieldError(field, err)
		}
		out = append(out, id)
	}
	return out, nil
}

// Date returns a date field at 00:00 UTC; zero for False.
func (r Record) Date(field string) (time.Time, error) {
	s, err := r.Str(field)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.ParseInLocation(DateFormat, s, time.UTC)
	if err != nil {
		return time.Time{}, FieldError(field, fmt.Errorf("%w: bad date", ErrBadAnswer))
	}
	return t, nil
}

// Datetime returns a datetime field in UTC; zero for False.
func (r Record) Datetime(field string) (time.Time, error) {
	s, err := r.Str(field)
	if err != nil || s == "" {
		return time.Time{}, err
	}
	t, err := time.ParseInLocation(datetimeFormat, s, time.UTC)
	if err != nil {
		return time.Time{}, FieldError(field, fmt.Errorf("%w: bad datetime", ErrBadAnswer))
	}
	return t, nil
}

// Amount returns a float or monetary field in minor units of a currency
// with the given number of decimal places, rounded half away from zero.
func (r Record) Amount(field string, decimals int) (intent.Amount, error) {
	var f float64
	switch v := r[field].(type) {
	case float64:
		f = v
	case int64:
		f = float64(v)
	default:
		return 0, FieldError(field, BadAnswer("a number", r[field]))
	}
	a, err := toMinor(f, decimals)
	if err != nil {
		return 0, FieldError(field, err)
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

// FromMinor converts minor units to the float Odoo expects. Exact for
// every amount below 2^53 minor units: the decimal text of the result
// parses back to the same value.
func FromMinor(a intent.Amount, decimals int) float64 {
	f, _ := strconv.ParseFloat(intent.FormatAmount(a, uint8(decimals)), 64)
	return f
}

// ParseID parses an erp record ID of the connector: a decimal id above
// zero, without leading zeros.
func ParseID(s string) (int64, bool) {
	if s == "" || s[0] == '0' || len(s) > 18 {
		return 0, false
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 {
		return 0, false
	}
	return n, true
}

// ActionResID returns the record id (res_id) of the window action a
// method returns, such as action_create_payments for one payment: one
// id, or none.
func ActionResID(v any) []int64 {
	m, ok := v.(map[string]any)
	if !ok {
		return nil
	}
	if id, err := AsID(m["res_id"]); err == nil {
		return []int64{id}
	}
	return nil
}
