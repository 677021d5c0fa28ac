package odootest

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// none is the result of a Python method that returns None: Odoo cannot
// marshal it and answers fault 1 after committing.
type none struct{}

// decodeCall parses an XML-RPC methodCall into its method name and
// parameters: int64, float64, bool, string, []any, map[string]any, or nil
// for <nil/>.
func decodeCall(r io.Reader) (string, []any, error) {
	d := xml.NewDecoder(r)
	var method string
	var params []any
	for {
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return "", nil, err
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "methodName":
			var s string
			if err := d.DecodeElement(&s, &se); err != nil {
				return "", nil, err
			}
			method = strings.TrimSpace(s)
		case "value":
			v, err := decodeValue(d)
			if err != nil {
				return "", nil, err
			}
			params = append(params, v)
		}
	}
	if method == "" {
		return "", nil, errors.New("no methodName")
	}
	return method, params, nil
}

// decodeValue decodes the content of a <value> whose start was read,
// through its end.
func decodeValue(d *xml.Decoder) (any, error) {
	var text strings.Builder
	var v any
	typed := false
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			if !typed {
				return text.String(), nil
			}
			return v, nil
		case xml.StartElement:
			typed = true
			if v, err = decodeTyped(d, t); err != nil {
				return nil, err
			}
		}
	}
}

func decodeTyped(d *xml.Decoder, se xml.StartElement) (any, error) {
	switch se.Name.Local {
	case "array":
		out, err := decodeArray(d)
		if err != nil {
			return nil, err
		}
		return out, nil
	case "struct":
		out, err := decodeStruct(d)
		if err != nil {
			return nil, err
		}
		return out, nil
	case "nil":
		return nil, d.Skip()
	}
	var s string
	if err := d.DecodeElement(&s, &se); err != nil {
		return nil, err
	}
	switch se.Name.Local {
	case "int", "i4", "i8":
		return strconv.ParseInt(strings.TrimSpace(s), 10, 64)
	case "double":
		return strconv.ParseFloat(strings.TrimSpace(s), 64)
	case "boolean":
		return strings.TrimSpace(s) == "1", nil
	case "string", "dateTime.iso8601", "base64":
		return s, nil
	}
	return nil, fmt.Errorf("unknown type %s", se.Name.Local)
}

// decodeArray decodes the values of an <array> whose start tag d has just
// read, up to its end tag: an empty array is an empty slice, never nil.
func decodeArray(d *xml.Decoder) ([]any, error) {
	var out []any
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if t.Name.Local == "value" {
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				out = append(out, v)
			}
		case xml.EndElement:
			if t.Name.Local == "array" {
				if out == nil {
					out = []any{}
				}
				return out, nil
			}
		}
	}
}

// decodeStruct decodes the members of a <struct> whose start tag d has
// just read, up to its end tag, by name.
func decodeStruct(d *xml.Decoder) (map[string]any, error) {
	out := map[string]any{}
	var name string
	for {
		tok, err := d.Token()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "name":
				if err := d.DecodeElement(&name, &t); err != nil {
					return nil, err
				}
			case "value":
				v, err := decodeValue(d)
				if err != nil {
					return nil, err
				}
				out[name] = v
			}
		case xml.EndElement:
			if t.Name.Local == "struct" {
				return out, nil
			}
		}
	}
}

// encodeValue writes v as Odoo does: explicit <string>, <int>, <double>,
// <boolean>, arrays and structs (sorted keys), never <nil/>.
func encodeValue(b *bytes.Buffer, v any) error {
	b.WriteString("<value>")
	switch x := v.(type) {
	case nil:
		return errors.New("cannot marshal None unless allow_none is enabled")
	case bool:
		if x {
			b.WriteString("<boolean>1</boolean>")
		} else {
			b.WriteString("<boolean>0</boolean>")
		}
	case int:
		fmt.Fprintf(b, "<int>%d</int>", x)
	case int64:
		fmt.Fprintf(b, "<int>%d</int>", x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return errors.New("cannot marshal a non-finite float")
		}
		b.WriteString("<double>" + strconv.FormatFloat(x, 'g', -1, 64) + "</double>")
	case string:
		b.WriteString("<string>")
		if err := xml.EscapeText(b, []byte(x)); err != nil {
			return err
		}
		b.WriteString("</string>")
	case []int64:
		b.WriteString("<array><data>\n")
		for _, e := range x {
			if err := encodeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteString("</data></array>")
	case []any:
		b.WriteString("<array><data>\n")
		for _, e := range x {
			if err := encodeValue(b, e); err != nil {
				return err
			}
		}
		b.WriteString("</data></array>")
	case map[string]any:
		if err := encodeStruct(b, x); err != nil {
			return err
		}
	default:
		return fmt.Errorf("cannot marshal %T", v)
	}
	b.WriteString("</value>")
	return nil
}

// encodeStruct writes m as an XML-RPC <struct>, its members in the order
// of their names.
func encodeStruct(b *bytes.Buffer, m map[string]any) error {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b.WriteString("<struct>\n")
	for _, k := range keys {
		b.WriteString("<member>\n<name>")
		_ = xml.EscapeText(b, []byte(k))
		b.WriteString("</name>\n")
		if err := encodeValue(b, m[k]); err != nil {
			return err
		}
		b.WriteString("\n</member>\n")
	}
	b.WriteString("</struct>")
	return nil
}

func encodeResponse(v any) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<?xml version='1.0'?>\n<methodResponse>\n<params>\n<param>\n")
	if err := encodeValue(&b, v); err != nil {
		return nil, err
	}
	b.WriteString("\n</param>\n</params>\n</methodResponse>\n")
	return b.Bytes(), nil
}

func encodeFault(code int, msg string) []byte {
	var b bytes.Buffer
	b.WriteString("<?xml version='1.0'?>\n<methodResponse>\n<fault>\n")
	_ = encodeValue(&b, map[string]any{"faultCode": code, "faultString": msg})
	b.WriteString("\n</fault>\n</methodResponse>\n")
	return b.Bytes()
}
