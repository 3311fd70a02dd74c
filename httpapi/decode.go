package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"reflect"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/ujumbe/messaging"
)

// decode reads a JSON object body into v strictly: Content-Type must be
// application/json, the body at most the size limit, valid UTF-8, one JSON
// object with no unknown fields and the right types, and no NUL character
// in any string (see text.go).
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	return h.decodeBody(w, r, v, true)
}

// decodeBody is decode, with the NUL check of strings only when text is
// set: the SMS decoder, reading the body raw, checks them itself.
func (h *Handler) decodeBody(w http.ResponseWriter, r *http.Request, v any, text bool) error {
	if err := noQuery(r); err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		return badRequest("Content-Type", "must be application/json (got %q)", ct)
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return err
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
	if f, found := h.inexactName(body[:dec.InputOffset()], reflect.TypeOf(v)); found {
		return badRequest(f, "unknown field (field names are case-sensitive)")
	}
	if dec.More() {
		return badRequest("body", "must hold exactly one JSON object")
	}
	if _, err := dec.Token(); err != io.EOF {
		return badRequest("body", "must hold exactly one JSON object")
	}
	if !text {
		return nil
	}
	if f := nulString(body); f != "" {
		return badRequest(f, ruleNoNUL)
	}
	return nil
}

// decodeEmpty reads the body of an action that takes no arguments: no body
// at all, or an empty JSON object (with Content-Type application/json, as
// decode checks); anything else is refused as decode refuses it.
func (h *Handler) decodeEmpty(w http.ResponseWriter, r *http.Request) error {
	if err := noQuery(r); err != nil {
		return err
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return err
	}
	if len(body) == 0 {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	return h.decode(w, r, &struct{}{})
}

var (
	unmarshalerType   = reflect.TypeFor[json.Unmarshaler]()
	sendComponentType = reflect.TypeFor[messaging.SendComponent]()
	templatePatchType = reflect.TypeFor[templatePatch]()
)

// inexactName returns the first object member name of the JSON value b,
// read as a t, that is not exactly the JSON name of a field of its struct,
// and whether there is one (the name may be empty). Types with their own UnmarshalJSON check their names themselves,
// and maps take any name. b must be valid JSON (the decoder accepted it):
// it is scanned once, nothing is decoded but member names.
func (h *Handler) inexactName(b []byte, t reflect.Type) (name string, found bool) {
	s := nameScan{b: b, fields: h.structFields}
	found = s.value(t)
	return s.found, found
}

// structFields returns the JSON member names of struct t and their types,
// computed once per type and handler.
func (h *Handler) structFields(t reflect.Type) map[string]reflect.Type {
	if f, ok := h.fields.Load(t); ok {
		return f.(map[string]reflect.Type)
	}
	f := map[string]reflect.Type{}
	jsonFields(t, f)
	h.fields.Store(t, f)
	return f
}

// nameScan walks a valid JSON document, checking member names.
type nameScan struct {
	b      []byte
	i      int
	fields func(reflect.Type) map[string]reflect.Type
	// found is the inexact name, once value reported one (it may be "").
	found string
}

func (s *nameScan) space() {
	for s.i < len(s.b) && (s.b[s.i] == ' ' || s.b[s.i] == '\t' || s.b[s.i] == '\r' || s.b[s.i] == '\n') {
		s.i++
	}
}

// next moves to the next member of the object or element of the array
// being read, past white space and a comma. At the end, close, it moves
// past close and returns false.
func (s *nameScan) next(close byte) bool {
	s.space()
	if s.i < len(s.b) && s.b[s.i] == ',' {
		s.i++
		s.space()
	}
	if s.i >= len(s.b) || s.b[s.i] == close {
		s.i++
		return false
	}
	return true
}

// rawStr moves past the string at s.i and returns its bytes between the
// quotes (raw) and with them (quoted), and whether it holds an escape. It
// allocates nothing.
func (s *nameScan) rawStr() (raw, quoted []byte, escaped bool) {
	start := s.i
	j := start + 1
	for ; j < len(s.b) && s.b[j] != '"'; j++ {
		if s.b[j] == '\\' {
			escaped = true
			j++
		}
	}
	s.i = j + 1
	return s.b[start+1 : min(j, len(s.b))], s.b[start:min(j+1, len(s.b))], escaped
}

// unescape returns the JSON string quoted (with its quotes) unescaped.
func unescape(quoted []byte) string {
	var out string
	_ = json.Unmarshal(quoted, &out)
	return out
}

// value reads the value at s.i as a t (nil: of no checked type). It
// reports whether it found an inexact name, then kept in s.found, and
// stops there.
func (s *nameScan) value(t reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// messaging.SendComponent's UnmarshalJSON only widens the type of
	// "index" (a string of digits or a number), and templatePatch's only
	// refuses null members; their member names are checked like any
	// struct's.
	if t != nil && t != sendComponentType && t != templatePatchType && reflect.PointerTo(t).Implements(unmarshalerType) {
		t = nil
	}
	s.space()
	if s.i >= len(s.b) {
		return false
	}
	switch s.b[s.i] {
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = s.fields(t)
		}
		s.i++
		for s.next('}') {
			raw, quoted, escaped := s.rawStr()
			s.space()
			s.i++ // ':'
			var ft reflect.Type
			if fields != nil {
				var ok bool
				if escaped {
					name := unescape(quoted)
					if ft, ok = fields[name]; !ok {
						s.found = name
						return true
					}
				} else if ft, ok = fields[string(raw)]; !ok { // no allocation for the lookup
					s.found = string(raw)
					return true
				}
			}
			if s.value(ft) {
				return true
			}
		}
	case '[':
		var et reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			et = t.Elem()
		}
		s.i++
		for s.next(']') {
			if s.value(et) {
				return true
			}
		}
	case '"':
		s.rawStr()
	default: // a number, true, false or null
		for s.i < len(s.b) && !strings.ContainsRune(",]} \t\r\n", rune(s.b[s.i])) {
			s.i++
		}
	}
	return false
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

// query returns the query parameters of r, refusing unknown or repeated
// ones, and values that are not valid UTF-8 or hold NUL (see text.go).
func query(r *http.Request, allowed ...string) (map[string]string, error) {
	vals, err := urlQuery(r)
	if err != nil {
		return nil, err
	}
	out := map[string]string{}
	for k, v := range vals {
		if len(allowed) == 0 {
			return nil, badRequest(k, "unknown query parameter; this endpoint takes none")
		}
		if !slices.Contains(allowed, k) {
			return nil, badRequest(k, "unknown query parameter; allowed: %s", strings.Join(allowed, ", "))
		}
		if len(v) != 1 {
			return nil, badRequest(k, "must be given once")
		}
		if !utf8.ValidString(v[0]) {
			return nil, badRequest(k, "must be valid UTF-8")
		}
		if strings.IndexByte(v[0], 0) >= 0 {
			return nil, badRequest(k, ruleNoNUL)
		}
		out[k] = v[0]
	}
	return out, nil
}

func noQuery(r *http.Request) error {
	_, err := query(r)
	return err
}

// readBody reads r's body, at most Options.MaxBodyBytes: a longer one is
// 413 payload_too_large.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, h.maxBody))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, &apiError{code: CodePayloadTooLarge, status: http.StatusRequestEntityTooLarge,
				message: fmt.Sprintf("body: must be at most %d bytes", h.maxBody)}
		}
		return nil, badRequest("body", "could not be read")
	}
	return body, nil
}
