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

// The one strict JSON decoder of the handler, for the bodies of /v1,
// /admin/v1 and /sms/v1 and the items of an SMS bulk: readJSON reads a
// body (no query, Content-Type application/json, at most the size limit,
// valid UTF-8, a JSON object), decodeObject decodes an object (no unknown
// members, the right JSON types, exactly one object, no NUL in any string;
// with strict.exact, member names exactly the fields', as /v1 and
// /admin/v1 want). Its refusals are *badJSON, which each API words as its
// own error: decode for the error envelope, smsDecodeError for the SMS
// API.

// badJSON is a refusal of the strict decoder: the field at fault ("body"
// for the whole document, else a member's path) and the rule it breaks.
// dataType marks a value of the wrong JSON type or a string holding NUL,
// which the SMS API answers with 1009 rather than 1010.
type badJSON struct {
	field, rule string
	dataType    bool
}

// Error implements the error interface.
func (e *badJSON) Error() string { return e.field + ": " + e.rule }

// strict are the options of the strict decoder.
type strict struct {
	// exact refuses a member name that matches a field only in another
	// case (the SMS API takes any case, as the gateways it is modelled on).
	exact bool
	// opaque names top-level members whose strings are not checked for
	// NUL: they hold items decoded one by one later.
	opaque []string
}

// decode reads the JSON object body of r into v strictly (see readJSON),
// member names exactly the fields'; its refusals are validation errors
// naming the field.
func (h *Handler) decode(w http.ResponseWriter, r *http.Request, v any) error {
	err := h.readJSON(w, r, v, strict{exact: true})
	if bj, ok := err.(*badJSON); ok {
		return badRequest(bj.field, "%s", bj.rule)
	}
	return err
}

// readJSON reads the body of r, which must be one JSON object, into v
// (see decodeObject): a query, a Content-Type other than
// application/json, an empty body or one that is not UTF-8 are refused; a
// body over the size limit is 413 (an *apiError).
func (h *Handler) readJSON(w http.ResponseWriter, r *http.Request, v any, o strict) error {
	if err := noQuery(r); err != nil {
		return err
	}
	ct := r.Header.Get("Content-Type")
	mt, params, err := mime.ParseMediaType(ct)
	if ct == "" || err != nil || mt != "application/json" || (params["charset"] != "" && !strings.EqualFold(params["charset"], "utf-8")) {
		return &badJSON{field: "Content-Type", rule: fmt.Sprintf("must be application/json (got %q)", ct)}
	}
	body, err := h.readBody(w, r)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return &badJSON{field: "body", rule: "is required: a JSON object"}
	}
	if !utf8.Valid(body) {
		return &badJSON{field: "body", rule: "must be valid UTF-8"}
	}
	if t := bytes.TrimLeft(body, " \t\r\n"); t[0] != '{' {
		return &badJSON{field: "body", rule: "must be a JSON object"}
	}
	return h.decodeObject(body, v, "body", o)
}

// decodeObject decodes b, one JSON object named whole in errors ("body",
// "smslist[3]"), into v: no unknown members, each of the right JSON type
// (see decodeMembers), member names exactly the fields' with o.exact,
// nothing after the object, and no NUL in a member name or string (but in
// the members o.opaque names). b must be valid UTF-8.
func (h *Handler) decodeObject(b []byte, v any, whole string, o strict) error {
	if t := bytes.TrimLeft(b, " \t\r\n"); len(t) == 0 || t[0] != '{' {
		return &badJSON{field: whole, rule: fmt.Sprintf("must be a JSON object (got a JSON %s)", jsonValueKind(t))}
	}
	dec, err := decodeMembers(b, v, whole)
	if err != nil {
		return err
	}
	// encoding/json matches member names case-insensitively ("Text" fills
	// text); refuse any name that is not exactly a field's.
	if o.exact {
		if f, found := h.inexactName(b[:dec.InputOffset()], reflect.TypeOf(v)); found {
			return &badJSON{field: f, rule: "unknown field (field names are case-sensitive)"}
		}
	}
	if dec.More() {
		return &badJSON{field: whole, rule: "must hold exactly one JSON object"}
	}
	if _, err := dec.Token(); err != io.EOF {
		return &badJSON{field: whole, rule: "must hold exactly one JSON object"}
	}
	if f := nulString(b, o.opaque...); f != "" {
		return &badJSON{field: f, rule: ruleNoNUL, dataType: true}
	}
	return nil
}

// decodeMembers decodes the JSON value at the start of b into v, refusing
// unknown members (see decodeError), and returns the decoder, past the
// value. It is the core of decodeObject, and of the UnmarshalJSON of the
// request types that check their members first (templatePatch).
func decodeMembers(b []byte, v any, whole string) (*json.Decoder, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return nil, decodeError(err, whole)
	}
	return dec, nil
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
	// templatePatch's UnmarshalJSON only refuses null members; its member
	// names are checked like any struct's.
	if t != nil && t != templatePatchType && reflect.PointerTo(t).Implements(unmarshalerType) {
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

// decodeError turns an encoding/json error of the value named whole into
// the refusal naming the field. The errors of the request types' own
// UnmarshalJSON (a *badJSON or a *messaging.Error) pass.
func decodeError(err error, whole string) error {
	var bj *badJSON
	var me *messaging.Error
	var te *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case errors.As(err, &bj):
		return bj
	case errors.As(err, &me):
		return me
	case errors.As(err, &te) && te.Field == "":
		return &badJSON{field: whole, rule: fmt.Sprintf("must be a JSON object (got a JSON %s)", te.Value)}
	case errors.As(err, &te):
		want := jsonKind(te.Type.Kind().String())
		if te.Type == flexStringType {
			want = "a string or an integer number"
		}
		return &badJSON{field: te.Field, rule: fmt.Sprintf("must be %s (got a JSON %s)", want, te.Value), dataType: true}
	case errors.As(err, &se) && strings.Contains(se.Error(), "exceeded max depth"):
		return &badJSON{field: whole, rule: fmt.Sprintf("JSON is nested too deeply (at byte %d)", se.Offset)}
	case errors.As(err, &se):
		return &badJSON{field: whole, rule: fmt.Sprintf("malformed JSON at byte %d", se.Offset)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &badJSON{field: whole, rule: "malformed JSON: unexpected end"}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &badJSON{field: f, rule: "unknown field"}
	}
	return &badJSON{field: whole, rule: "malformed JSON"}
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
