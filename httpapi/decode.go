package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ujumbe/messaging"
)

func badRequest(field, format string, args ...any) *messaging.Error {
	return &messaging.Error{Code: messaging.CodeValidation, Field: field, Message: field + ": " + fmt.Sprintf(format, args...)}
}

// decode reads a JSON object body into v strictly: Content-Type must be
// application/json, the body at most the size limit, valid UTF-8, one JSON
// object with no unknown fields and the right types.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	if err := noQuery(r); err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		return badRequest("Content-Type", "must be application/json (got %q)", ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return &apiError{code: CodePayloadTooLarge, status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("body: must be at most %d bytes", h.maxBody)}
		}
		return badRequest("body", "could not be read")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return badRequest("body", "is required: a JSON object")
	}
	if !utf8.Valid(body) {
		return badRequest("body", "must be valid UTF-8")
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); t[0] != '{' {
		return badRequest("body", "must be a JSON object")
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(err)
	}
	// encoding/json matches member names case-insensitively ("Text" fills
	// text); refuse any name that is not exactly a field's.
	var raw any
	if err := json.Unmarshal(body, &raw); err == nil {
		if f := inexactField(raw, reflect.TypeOf(v)); f != "" {
			return badRequest(f, "unknown field (field names are case-sensitive)")
		}
	}
	if dec.More() {
		return badRequest("body", "must hold exactly one JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("body", "must hold exactly one JSON object")
	}
	return nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// inexactField returns the first object member name in v (decoded JSON)
// that is not exactly the JSON name of a field of t, or "". Types with their
// own UnmarshalJSON check their names themselves.
func inexactField(v any, t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return ""
	}
	switch x := v.(type) {
	case map[string]any:
		if t.Kind() != reflect.Struct {
			return ""
		}
		fields := map[string]reflect.Type{}
		jsonFields(t, fields)
		for _, k := range slices.Sorted(maps.Keys(x)) {
			ft, ok := fields[k]
			if !ok {
				return k
			}
			if f := inexactField(x[k], ft); f != "" {
				return f
			}
		}
	case []any:
		if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			for _, e := range x {
				if f := inexactField(e, t.Elem()); f != "" {
					return f
				}
			}
		}
	}
	return ""
}

// jsonFields adds the JSON member names of struct t, with embedded
// structs' fields promoted, to fields.
func jsonFields(t reflect.Type, fields map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		if name == "" && f.Anonymous && f.Type.Kind() == reflect.Struct {
			jsonFields(f.Type, fields)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = f.Type
	}
}

// decodeError turns an encoding/json error into a validation error naming
// the field.
func decodeError(err error) error {
	var me *messaging.Error
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &me):
		return me
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return badRequest(field, "must be %s (got a JSON %s)", jsonKind(te.Type.Kind().String()), te.Value)
	case errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth"):
		return badRequest("body", "JSON is nested too deeply (at byte %d)", se.Offset)
	case errors.As(err, &se):
		return badRequest("body", "malformed JSON at byte %d", se.Offset)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return badRequest("body", "malformed JSON: unexpected end")
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return badRequest(f, "unknown field")
	}
	return badRequest("body", "malformed JSON")
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	case "ptr":
		return "a value of another type"
	}
	return "a number"
}

func urlQuery(r *http.Request) (url.Values, error) {
	v, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return nil, badRequest("query", "malformed query string")
	}
	return v, nil
}

// contactPatch is the body of PATCH /v1/contacts/{id}. A field that is
// absent is left unchanged; a string sets it; null or "" clears it (tags:
// null or [] clears). firstName cannot be cleared.
type contactPatch struct {
	p      messaging.ContactUpdateParams
	fields int
}

var patchFields = []string{"firstName", "lastName", "phone", "email", "company", "jobTitle", "website", "notes", "tags", "lifecycle"}

// UnmarshalJSON decodes a patch, keeping track of which fields are present.
func (c *contactPatch) UnmarshalJSON(b []byte) error {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return badRequest("body", "must be a JSON object")
	}
	strs := map[string]**string{
		"firstName": &c.p.FirstName, "lastName": &c.p.LastName, "phone": &c.p.Phone, "email": &c.p.Email,
		"company": &c.p.Company, "jobTitle": &c.p.JobTitle, "website": &c.p.Website, "notes": &c.p.Notes,
		"lifecycle": &c.p.Lifecycle,
	}
	for k, v := range raw {
		c.fields++
		if k == "tags" {
			tags := []string{}
			if string(v) != "null" {
				if err := json.Unmarshal(v, &tags); err != nil {
					return badRequest("tags", "must be an array of strings or null")
				}
				if tags == nil {
					tags = []string{}
				}
			}
			c.p.Tags = &tags
			continue
		}
		dst, ok := strs[k]
		if !ok {
			return badRequest(k, "unknown field; patchable fields: %s", strings.Join(patchFields, ", "))
		}
		s := ""
		if string(v) != "null" {
			if err := json.Unmarshal(v, &s); err != nil {
				return badRequest(k, "must be a string or null")
			}
		}
		*dst = &s
	}
	return nil
}

func (c *contactPatch) params() (*messaging.ContactUpdateParams, error) {
	if c.fields == 0 {
		return nil, badRequest("body", "must set at least one of %s", strings.Join(patchFields, ", "))
	}
	return &c.p, nil
}
