package httpapi_test

// These tests keep openapi.json true: every route of httpapi.Routes() is in
// the document with its scopes, and real responses of the handler, for every
// route and most error statuses, are validated against the document with a
// small JSON Schema validator (the subset the document uses). Identifiers
// carry the prefix "oa" so that they do not collide with the other test files
// of the package.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"mime"
	"net/http"
	"net/http/httptest"
	"net/mail"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/provider/fakeprovider"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// ---------------------------------------------------------------------------
// The document and a JSON Schema validator for the subset it uses.

// oaDoc parses the embedded document.
func oaDoc(t *testing.T) map[string]any {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json does not parse as JSON: %v", err)
	}
	return doc
}

// oaValidator validates JSON values (as decoded by encoding/json into any)
// against the schemas of doc.
type oaValidator struct {
	doc map[string]any
	res map[string]*regexp.Regexp
}

func newOAValidator(doc map[string]any) *oaValidator {
	return &oaValidator{doc: doc, res: map[string]*regexp.Regexp{}}
}

// oaAnnotations are schema keywords that do not constrain values.
var oaAnnotations = map[string]bool{
	"description": true, "title": true, "default": true, "example": true, "examples": true,
	"deprecated": true, "readOnly": true, "writeOnly": true,
}

// oaKeywords are the keywords the validator checks. A document keyword
// outside oaKeywords and oaAnnotations is an error, so the document cannot
// carry a constraint this test silently ignores.
var oaKeywords = map[string]bool{
	"$ref": true, "type": true, "enum": true, "const": true, "properties": true, "required": true,
	"additionalProperties": true, "minProperties": true, "items": true, "minItems": true, "maxItems": true,
	"minLength": true, "maxLength": true, "pattern": true, "minimum": true, "maximum": true, "format": true,
	"oneOf": true, "anyOf": true,
}

// resolve returns the value at a local reference "#/a/b".
func (v *oaValidator) resolve(ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("unsupported $ref %q: only local references", ref)
	}
	var cur any = v.doc
	for _, tok := range strings.Split(ref[2:], "/") {
		tok = strings.NewReplacer("~1", "/", "~0", "~").Replace(tok)
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("$ref %q: %q is not inside an object", ref, tok)
		}
		if cur, ok = m[tok]; !ok {
			return nil, fmt.Errorf("$ref %q does not resolve", ref)
		}
	}
	return cur, nil
}

// deref follows $ref of an OpenAPI object (response, header, parameter).
func (v *oaValidator) deref(o any) (map[string]any, error) {
	for range 10 {
		m, ok := o.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("%v is not an object", o)
		}
		ref, ok := m["$ref"].(string)
		if !ok {
			return m, nil
		}
		var err error
		if o, err = v.resolve(ref); err != nil {
			return nil, err
		}
	}
	return nil, fmt.Errorf("$ref chain too long")
}

func oaJSONType(val any) string {
	switch x := val.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return "integer"
		}
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", val)
}

func oaTypeIs(val any, typ string) bool {
	got := oaJSONType(val)
	return got == typ || (typ == "number" && got == "integer")
}

// Validate returns the violations of schema by val; at names the location.
func (v *oaValidator) Validate(schema, val any, at string) []string {
	if b, ok := schema.(bool); ok {
		if b {
			return nil
		}
		return []string{at + ": no value is allowed here"}
	}
	sm, ok := schema.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s: schema is a %T, not an object", at, schema)}
	}
	var errs []string
	fail := func(format string, args ...any) { errs = append(errs, at+": "+fmt.Sprintf(format, args...)) }
	obj, isObj := val.(map[string]any)
	arr, isArr := val.([]any)
	str, isStr := val.(string)
	num, isNum := val.(float64)
	num2 := func(kw any) float64 { f, _ := kw.(float64); return f }
	keys := make([]string, 0, len(sm))
	for k := range sm {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		kw := sm[k]
		switch k {
		case "$ref":
			ref, _ := kw.(string)
			target, err := v.resolve(ref)
			if err != nil {
				fail("%v", err)
				continue
			}
			errs = append(errs, v.Validate(target, val, at)...)
		case "type":
			var types []string
			switch x := kw.(type) {
			case string:
				types = []string{x}
			case []any:
				for _, e := range x {
					s, _ := e.(string)
					types = append(types, s)
				}
			default:
				fail("type is a %T", kw)
			}
			if !slices.ContainsFunc(types, func(t string) bool { return oaTypeIs(val, t) }) {
				fail("is %s %s, want type %s", oaJSONType(val), oaShort(val), strings.Join(types, " or "))
			}
		case "enum":
			list, _ := kw.([]any)
			if !slices.ContainsFunc(list, func(e any) bool { return reflect.DeepEqual(e, val) }) {
				fail("%s is not one of %v", oaShort(val), list)
			}
		case "const":
			if !reflect.DeepEqual(kw, val) {
				fail("%s is not %v", oaShort(val), kw)
			}
		case "properties":
			props, _ := kw.(map[string]any)
			if isObj {
				for name, sub := range props {
					if pv, ok := obj[name]; ok {
						errs = append(errs, v.Validate(sub, pv, at+"."+name)...)
					}
				}
			}
		case "required":
			req, _ := kw.([]any)
			if isObj {
				for _, r := range req {
					name, _ := r.(string)
					if _, ok := obj[name]; !ok {
						fail("required property %q is missing", name)
					}
				}
			}
		case "additionalProperties":
			props, _ := sm["properties"].(map[string]any)
			if isObj {
				extra := make([]string, 0)
				for name := range obj {
					if _, ok := props[name]; !ok {
						extra = append(extra, name)
					}
				}
				sort.Strings(extra)
				for _, name := range extra {
					if kw == false {
						fail("property %q is not allowed", name)
					} else {
						errs = append(errs, v.Validate(kw, obj[name], at+"."+name)...)
					}
				}
			}
		case "minProperties":
			if isObj && float64(len(obj)) < num2(kw) {
				fail("has %d properties, want at least %v", len(obj), kw)
			}
		case "items":
			if isArr {
				for i, e := range arr {
					errs = append(errs, v.Validate(kw, e, fmt.Sprintf("%s[%d]", at, i))...)
				}
			}
		case "minItems":
			if isArr && float64(len(arr)) < num2(kw) {
				fail("has %d items, want at least %v", len(arr), kw)
			}
		case "maxItems":
			if isArr && float64(len(arr)) > num2(kw) {
				fail("has %d items, want at most %v", len(arr), kw)
			}
		case "minLength":
			if isStr && float64(utf8.RuneCountInString(str)) < num2(kw) {
				fail("has %d characters, want at least %v", utf8.RuneCountInString(str), kw)
			}
		case "maxLength":
			if isStr && float64(utf8.RuneCountInString(str)) > num2(kw) {
				fail("has %d characters, want at most %v", utf8.RuneCountInString(str), kw)
			}
		case "pattern":
			p, _ := kw.(string)
			re := v.res[p]
			if re == nil {
				var err error
				if re, err = regexp.Compile(p); err != nil {
					fail("pattern %q does not compile: %v", p, err)
					continue
				}
				v.res[p] = re
			}
			if isStr && !re.MatchString(str) {
				fail("%s does not match %s", oaShort(val), p)
			}
		case "minimum":
			if isNum && num < num2(kw) {
				fail("%v is less than %v", num, kw)
			}
		case "maximum":
			if isNum && num > num2(kw) {
				fail("%v is more than %v", num, kw)
			}
		case "format":
			if isStr {
				if err := oaFormat(kw, str); err != nil {
					fail("%s: %v", oaShort(val), err)
				} else if kw == "date-time" && !strings.HasPrefix(at, "request") && !oaMillis(str) {
					// Requests take any RFC 3339 time; answers are UTC
					// with millisecond precision, as the document says.
					fail("%s: not a UTC time with millisecond precision (2006-01-02T15:04:05.000Z)", oaShort(val))
				}
			}
		case "oneOf", "anyOf":
			subs, _ := kw.([]any)
			n := 0
			var sub []string
			for i, s := range subs {
				e := v.Validate(s, val, fmt.Sprintf("%s(%s %d)", at, k, i))
				if len(e) == 0 {
					n++
				}
				sub = append(sub, e...)
			}
			if (k == "oneOf" && n != 1) || (k == "anyOf" && n == 0) {
				fail("matches %d of the %d %s schemas: %s", n, len(subs), k, strings.Join(sub, "; "))
			}
		default:
			if !oaAnnotations[k] {
				fail("unsupported schema keyword %q", k)
			}
		}
	}
	return errs
}

// oaMillis reports whether s is written as the API writes times: UTC
// with millisecond precision.
func oaMillis(s string) bool {
	return len(s) == len("2006-01-02T15:04:05.000Z") && s[19] == '.' && s[len(s)-1] == 'Z'
}

// oaFormat checks the formats the document uses.
func oaFormat(format any, s string) error {
	switch format {
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return fmt.Errorf("not an RFC 3339 date-time: %v", err)
		}

	case "uri":
		if u, err := url.Parse(s); err != nil || !u.IsAbs() || u.Host == "" {
			return errors.New("not an absolute URI")
		}
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return errors.New("not an email address")
		}
	case "binary":
		// The bytes of a multipart file part: any value.
	default:
		return fmt.Errorf("unsupported format %v", format)
	}
	return nil
}

func oaShort(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 60 {
		return string(b[:57]) + "..."
	}
	return string(b)
}

// oaSchema returns the component schema name as a $ref schema.
func oaSchema(name string) map[string]any {
	return map[string]any{"$ref": "#/components/schemas/" + name}
}

// ---------------------------------------------------------------------------
// Tests of the document itself.

func TestOpenAPIDocument(t *testing.T) {
	doc := oaDoc(t)
	v := newOAValidator(doc)
	if doc["openapi"] != "3.1.0" {
		t.Errorf("openapi = %v, want 3.1.0", doc["openapi"])
	}
	info, _ := doc["info"].(map[string]any)
	if info["title"] == nil || info["title"] == "" || info["version"] != "v1" {
		t.Errorf("info = %v, want a title and version v1", info)
	}
	if servers, _ := doc["servers"].([]any); len(servers) == 0 {
		t.Errorf("servers is empty")
	}
	comps, _ := doc["components"].(map[string]any)
	ss, _ := comps["securitySchemes"].(map[string]any)
	want := map[string]any{"type": "apiKey", "in": "header", "name": "X-API-Key"}
	if got, _ := ss["apiKey"].(map[string]any); got == nil || got["type"] != want["type"] || got["in"] != want["in"] || got["name"] != want["name"] {
		t.Errorf("securitySchemes.apiKey = %v, want %v", ss["apiKey"], want)
	}
	if got, _ := ss["operatorToken"].(map[string]any); got == nil || got["type"] != "http" || got["scheme"] != "bearer" {
		t.Errorf("securitySchemes.operatorToken = %v, want type http, scheme bearer", ss["operatorToken"])
	}
	if sec, _ := doc["security"].([]any); len(sec) != 1 || !reflect.DeepEqual(sec[0], map[string]any{"apiKey": []any{}}) {
		t.Errorf("security = %v, want [{apiKey: []}]", doc["security"])
	}

	// Every $ref resolves, and every schema uses only keywords the validator
	// checks (or annotations).
	var walk func(at string, n any, inSchema bool)
	walk = func(at string, n any, inSchema bool) {
		switch x := n.(type) {
		case map[string]any:
			if ref, ok := x["$ref"].(string); ok {
				if _, err := v.resolve(ref); err != nil {
					t.Errorf("%s: %v", at, err)
				}
			}
			for k, c := range x {
				if inSchema {
					if !oaKeywords[k] && !oaAnnotations[k] {
						t.Errorf("%s: schema keyword %q is not checked by the test's validator", at, k)
					}
					switch k {
					case "properties":
						for name, s := range c.(map[string]any) {
							walk(at+".properties."+name, s, true)
						}
					case "items", "additionalProperties":
						walk(at+"."+k, c, true)
					case "oneOf", "anyOf":
						for i, s := range c.([]any) {
							walk(fmt.Sprintf("%s.%s[%d]", at, k, i), s, true)
						}
					}
					continue
				}
				walk(at+"."+k, c, k == "schema")
			}
		case []any:
			for i, c := range x {
				walk(fmt.Sprintf("%s[%d]", at, i), c, false)
			}
		}
	}
	for name, s := range comps["schemas"].(map[string]any) {
		walk("#/components/schemas/"+name, s, true)
	}
	walk("#/paths", doc["paths"], false)
	for _, k := range []string{"parameters", "headers", "responses"} {
		walk("#/components/"+k, comps[k], false)
	}

	// Object schemas of components are closed (additionalProperties false),
	// except the document itself, so that an extra field fails validation.
	for name, s := range comps["schemas"].(map[string]any) {
		sm := s.(map[string]any)
		if sm["type"] == "object" && name != "OpenAPIDocument" && sm["additionalProperties"] != false {
			t.Errorf("schema %s: additionalProperties = %v, want false", name, sm["additionalProperties"])
		}
	}

	// The error code enum is exactly the codes of the service.
	codes := []messaging.Code{
		messaging.CodeUnauthorized, messaging.CodeInvalidAPIKey, messaging.CodeForbidden, messaging.CodeNotFound,
		messaging.CodeConflict, messaging.CodeValidation, messaging.CodeChannelUnavailable,
		messaging.CodeTemplateNotFound, messaging.CodeRateLimitExceeded, messaging.CodeInternal, messaging.CodeServiceUnavailable,
		messaging.CodeRecipientOptedOut, messaging.CodeOutsideWindow,
		httpapi.CodeMethodNotAllowed, httpapi.CodePayloadTooLarge,
	}
	var wantCodes []string
	wantStatuses := map[float64]bool{405: true, 413: true}
	for _, c := range codes {
		wantCodes = append(wantCodes, string(c))
		if c != httpapi.CodeMethodNotAllowed && c != httpapi.CodePayloadTooLarge {
			wantStatuses[float64(httpapi.StatusOf(c))] = true
		}
	}
	gotCodes := oaStrings(oaAt(t, doc, "components", "schemas", "ErrorCode", "enum"))
	slices.Sort(wantCodes)
	slices.Sort(gotCodes)
	if !slices.Equal(gotCodes, wantCodes) {
		t.Errorf("ErrorCode enum = %v, want %v", gotCodes, wantCodes)
	}
	var gotStatuses []float64
	for _, s := range oaAt(t, doc, "components", "schemas", "Error", "properties", "error", "properties", "statusCode", "enum").([]any) {
		gotStatuses = append(gotStatuses, s.(float64))
		if !wantStatuses[s.(float64)] {
			t.Errorf("Error statusCode enum holds %v, which no code has", s)
		}
	}
	if len(gotStatuses) != len(wantStatuses) {
		t.Errorf("Error statusCode enum = %v, want the statuses of %v", gotStatuses, wantCodes)
	}
}

// oaAt returns the value at a path of keys in doc.
func oaAt(t *testing.T, doc any, keys ...string) any {
	t.Helper()
	cur := doc
	for _, k := range keys {
		m, ok := cur.(map[string]any)
		if !ok || m[k] == nil {
			t.Fatalf("document has no %s", strings.Join(keys, "."))
		}
		cur = m[k]
	}
	return cur
}

func oaStrings(v any) []string {
	var out []string
	for _, e := range v.([]any) {
		s, _ := e.(string)
		out = append(out, s)
	}
	return out
}

// oaPathParams returns the {names} of a pattern.
func oaPathParams(pattern string) []string {
	var out []string
	for _, seg := range strings.Split(pattern, "/") {
		if strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") {
			out = append(out, strings.Trim(seg, "{}"))
		}
	}
	return out
}

func TestOpenAPIRoutes(t *testing.T) {
	doc := oaDoc(t)
	v := newOAValidator(doc)
	paths := doc["paths"].(map[string]any)
	inRoutes := map[string]bool{}
	for _, rt := range append(httpapi.Routes(), httpapi.OperatorRoutes()...) {
		name := rt.Name()
		operator := strings.HasPrefix(rt.Pattern, "/admin/")
		inRoutes[strings.ToLower(rt.Method)+" "+rt.Pattern] = true
		item, _ := paths[rt.Pattern].(map[string]any)
		op, _ := item[strings.ToLower(rt.Method)].(map[string]any)
		if op == nil {
			t.Errorf("%s: not in the document", name)
			continue
		}
		if d, _ := op["description"].(string); d == "" {
			t.Errorf("%s: no description", name)
		}
		if id, _ := op["operationId"].(string); id == "" {
			t.Errorf("%s: no operationId", name)
		}
		scopes, ok := op["x-scopes"].([]any)
		if !ok {
			t.Errorf("%s: no x-scopes array", name)
		}
		got := oaStrings(append([]any{}, scopes...))
		if !slices.Equal(got, rt.Scopes) && (len(got) != 0 || len(rt.Scopes) != 0) {
			t.Errorf("%s: x-scopes = %v, want %v", name, got, rt.Scopes)
		}
		if desc, _ := op["description"].(string); !slices.ContainsFunc(rt.Scopes, func(s string) bool { return strings.Contains(desc, s) }) && len(rt.Scopes) > 0 {
			t.Errorf("%s: description does not mention its scopes %v", name, rt.Scopes)
		}
		if pm, _ := op["x-rate-limit-per-minute"].(float64); int(pm) != rt.PerMinute {
			t.Errorf("%s: x-rate-limit-per-minute = %v, want %d", name, op["x-rate-limit-per-minute"], rt.PerMinute)
		}
		sec, hasSec := op["security"]
		responses, _ := op["responses"].(map[string]any)
		if operator {
			if !reflect.DeepEqual(sec, []any{map[string]any{"operatorToken": []any{}}}) {
				t.Errorf("%s: operator route has security %v, want [{operatorToken: []}]", name, sec)
			}
			if tags, _ := op["tags"].([]any); len(tags) != 1 || tags[0] != "operator" {
				t.Errorf("%s: tags %v, want [operator]", name, tags)
			}
			if responses["401"] == nil {
				t.Errorf("%s: does not declare 401", name)
			}
		} else if rt.Scopes == nil {
			if s, ok := sec.([]any); !hasSec || !ok || len(s) != 0 {
				t.Errorf("%s: public route has security %v, want []", name, sec)
			}
		} else {
			if hasSec {
				t.Errorf("%s: overrides security with %v; it needs the API key", name, sec)
			}
			for _, st := range []string{"401", "403"} {
				if responses[st] == nil {
					t.Errorf("%s: does not declare %s", name, st)
				}
			}
		}
		for _, st := range []string{"429", "500"} {
			if responses[st] == nil {
				t.Errorf("%s: does not declare %s", name, st)
			}
		}
		success := 0
		for st := range responses {
			if strings.HasPrefix(st, "2") {
				success++
			}
		}
		if success != 1 {
			t.Errorf("%s: declares %d success statuses, want 1", name, success)
		}
		// Path parameters are declared, and nothing else is.
		var declared []string
		ps, _ := op["parameters"].([]any)
		for _, p := range ps {
			pm, err := v.deref(p)
			if err != nil {
				t.Errorf("%s: parameter: %v", name, err)
				continue
			}
			if pm["in"] == "path" {
				declared = append(declared, pm["name"].(string))
				if pm["required"] != true {
					t.Errorf("%s: path parameter %v is not required", name, pm["name"])
				}
			}
		}
		if want := oaPathParams(rt.Pattern); !slices.Equal(declared, want) {
			t.Errorf("%s: path parameters %v, want %v", name, declared, want)
		}
		rb, hasBody := op["requestBody"].(map[string]any)
		if wantBody := rt.Method == "POST" || rt.Method == "PATCH" || rt.Method == "PUT"; wantBody != hasBody {
			t.Errorf("%s: requestBody present = %v, want %v", name, hasBody, wantBody)
		} else if hasBody {
			// An action without arguments (POST .../submit, .../rotate-secret)
			// takes no body or an empty object: its body is optional, and
			// its schema Empty or an inline empty object; every other body
			// is required.
			// An upload takes multipart/form-data only, and its body is
			// required. An action with options only (POST
			// .../read) takes no body or an object of optional members.
			content, _ := rb["content"].(map[string]any)
			if _, multipart := content["multipart/form-data"]; multipart {
				if len(content) != 1 || rb["required"] != true {
					t.Errorf("%s: a multipart body must be the only content and required", name)
				}
			} else {
				schema, _ := oaAt(t, rb, "content", "application/json", "schema").(map[string]any)
				props, _ := schema["properties"].(map[string]any)
				empty := schema["$ref"] == "#/components/schemas/Empty" ||
					(schema["type"] == "object" && len(props) == 0 && schema["additionalProperties"] == false)
				options := schema["type"] == "object" && schema["required"] == nil && len(props) > 0 && schema["additionalProperties"] == false
				if rb["required"] != !empty && !(options && rb["required"] == false) {
					t.Errorf("%s: requestBody required = %v, want %v", name, rb["required"], !empty)
				}
			}
			for _, st := range []string{"400", "413"} {
				if responses[st] == nil {
					t.Errorf("%s: takes a body but does not declare %s", name, st)
				}
			}
		}
	}
	for p, item := range paths {
		for m := range item.(map[string]any) {
			if strings.HasPrefix(m, "x-") || m == "summary" || m == "description" || m == "parameters" {
				continue
			}
			if !inRoutes[m+" "+p] {
				t.Errorf("document has %s %s, which httpapi.Routes() does not serve", strings.ToUpper(m), p)
			}
		}
	}
}

func TestOpenAPIValidatorRejects(t *testing.T) {
	v := newOAValidator(oaDoc(t))
	valid := func() map[string]any {
		return map[string]any{
			"message_id": "msg_1", "conversation_id": "conv_1", "channel": "whatsapp", "direction": "outbound",
			"status": "failed", "failure_reason": "[131008] Required parameter is missing", "type": "text",
			"created_at": "2026-03-01T09:00:00.000Z", "updated_at": "2026-03-01T09:00:01.000Z",
		}
	}
	if errs := v.Validate(oaSchema("Message"), valid(), "Message"); len(errs) != 0 {
		t.Fatalf("a valid Message is rejected: %v", errs)
	}
	noReason := valid()
	delete(noReason, "failure_reason")
	if errs := v.Validate(oaSchema("Message"), noReason, "Message"); len(errs) != 0 {
		t.Errorf("a Message without the optional failure_reason is rejected: %v", errs)
	}
	bad := []struct {
		name   string
		schema string
		mutate func(m map[string]any)
		want   string
	}{
		{"extra field", "Message", func(m map[string]any) { m["to"] = "+254712345678" }, `property "to" is not allowed`},
		{"missing required", "Message", func(m map[string]any) { delete(m, "status") }, `required property "status" is missing`},
		{"wrong enum", "Message", func(m map[string]any) { m["status"] = "lost" }, "is not one of"},
		{"wrong type", "Message", func(m map[string]any) { m["type"] = 3.0 }, "want type string"},
		{"null not allowed", "Message", func(m map[string]any) { m["channel"] = nil }, "want type string"},
		{"bad date-time", "Message", func(m map[string]any) { m["created_at"] = "2026-03-01 09:00" }, "RFC 3339"},
		{"extra field in $ref'd item", "ContactPage", func(m map[string]any) {
			clear(m)
			m["items"] = []any{map[string]any{"id": "x", "secret": true}}
			m["total"], m["page"], m["limit"], m["totalPages"] = 1.0, 1.0, 25.0, 1.0
		}, `property "secret" is not allowed`},
		{"non-integer", "ContactPage", func(m map[string]any) {
			clear(m)
			m["items"] = []any{}
			m["total"], m["page"], m["limit"], m["totalPages"] = 1.5, 1.0, 25.0, 1.0
		}, "want type integer"},
		{"error without request_id", "Error", func(m map[string]any) {
			clear(m)
			m["error"] = map[string]any{"code": "not_found", "message": "x", "statusCode": 404.0, "docs": "/v1/errors/not_found"}
		}, `required property "request_id" is missing`},
		{"oneOf: text without text", "SendRequest", func(m map[string]any) {
			clear(m)
			m["channel"], m["to"], m["type"] = "whatsapp", "+254712345678", "text"
		}, "matches 0 of the 6 oneOf schemas"},
		{"anyOf: contact without phone or email", "ContactCreate", func(m map[string]any) {
			clear(m)
			m["firstName"] = "Amina"
		}, "matches 0 of the 2 anyOf schemas"},
		{"pattern", "ContactCreate", func(m map[string]any) {
			clear(m)
			m["firstName"], m["phone"] = "Amina", "0712345678"
		}, "does not match"},
		{"maxLength", "SendRequest", func(m map[string]any) {
			clear(m)
			m["channel"], m["to"], m["type"], m["text"] = "whatsapp", "+254712345678", "text", strings.Repeat("é", 4097)
		}, "want at most 4096"},
		{"minProperties", "ContactPatch", func(m map[string]any) { clear(m) }, "want at least 1"},
		{"patch firstName null", "ContactPatch", func(m map[string]any) { clear(m); m["firstName"] = nil }, "want type string"},
	}
	for _, c := range bad {
		m := valid()
		c.mutate(m)
		errs := v.Validate(oaSchema(c.schema), m, c.schema)
		if len(errs) == 0 {
			t.Errorf("%s: %s %v validates, want an error", c.name, c.schema, m)
		} else if !strings.Contains(strings.Join(errs, "\n"), c.want) {
			t.Errorf("%s: errors %q do not mention %q", c.name, errs, c.want)
		}
	}
	// Nullable fields accept null.
	patch := map[string]any{"lastName": nil, "tags": nil, "lifecycle": nil, "phone": ""}
	if errs := v.Validate(oaSchema("ContactPatch"), patch, "ContactPatch"); len(errs) != 0 {
		t.Errorf("ContactPatch %v is rejected: %v", patch, errs)
	}
	// An unknown keyword is an error, not ignored.
	if errs := v.Validate(map[string]any{"multipleOf": 2.0}, 3.0, "x"); len(errs) == 0 {
		t.Errorf("an unsupported keyword is ignored")
	}
}

// ---------------------------------------------------------------------------
// Real responses.

// oaFailingStore fails contact listings, to produce a 500.
type oaFailingStore struct{ driver.Store }

func (oaFailingStore) ContactList(context.Context, *driver.ContactListParams) ([]*messaging.Contact, int, error) {
	return nil, 0, errors.New("disk on fire")
}

// oaMultipart is the Content-Type of the uploads of TestOpenAPIResponses.
const oaMultipart = "multipart/form-data; boundary=oa-boundary"

// oaJPEG is the start of a JPEG file.
const oaJPEG = "\xff\xd8\xff\xe0\x00\x10JFIF\x00 a small picture"

// oaUpload is a body of POST /v1/media (boundary oa-boundary): the text
// fields kv (name, value pairs), then the file part named file with
// filename and content; filename "-" leaves the file part out.
func oaUpload(filename, content string, kv ...string) string {
	var b strings.Builder
	for i := 0; i+1 < len(kv); i += 2 {
		fmt.Fprintf(&b, "--oa-boundary\r\nContent-Disposition: form-data; name=%q\r\n\r\n%s\r\n", kv[i], kv[i+1])
	}
	if filename != "-" {
		fmt.Fprintf(&b, "--oa-boundary\r\nContent-Disposition: form-data; name=\"file\"; filename=%q\r\nContent-Type: application/octet-stream\r\n\r\n%s\r\n", filename, content)
	}
	b.WriteString("--oa-boundary--\r\n")
	return b.String()
}

// oaOpToken is the operator token of the servers of TestOpenAPIResponses.
const oaOpToken = "oa-operator-token-0123456789abcdef"

// oaEnv holds the servers, keys and ids of TestOpenAPIResponses.
type oaEnv struct {
	main, limited, failing, lister *httptest.Server
	vars                           map[string]string
}

func oaSetup(t *testing.T) *oaEnv {
	t.Helper()
	ctx := context.Background()
	e := &oaEnv{vars: map[string]string{}}
	sealKey := bytes.Repeat([]byte{9}, 32)
	st := memstore.New()
	fp := fakeprovider.New()
	svc, err := messaging.New(st, fp, &messaging.Options{SecretKey: sealKey,
		Webhooks: messaging.WebhookOptions{AllowLoopback: true}})
	if err != nil {
		t.Fatal(err)
	}
	// The fake marks read only the messages it received.
	fp.SetSink(svc)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	_, err = svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Name: "Acme", Channels: svc.Channels()})
	must(err)
	_, err = svc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "narrow", Name: "Narrow", Channels: []string{messaging.ChannelMessenger}})
	must(err)
	key := func(name, ws string, scopes ...string) *messaging.APIKey {
		k, plain, err := svc.Workspace(ws).APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: scopes})
		must(err)
		e.vars[name] = plain
		return k
	}
	key("full", "acme", record.AllScopes()...)
	key("readContacts", "acme", record.ScopeReadContacts)
	key("writeMessages", "acme", record.ScopeWriteMessages)
	key("writeContacts", "acme", record.ScopeWriteContacts)
	key("readTemplates", "acme", record.ScopeReadTemplates)
	key("narrow", "narrow", record.AllScopes()...)
	revoked := key("revoked", "acme", record.AllScopes()...)
	_, err = svc.Workspace("acme").APIKeys.Revoke(ctx, revoked.ID)
	must(err)
	e.vars["revoked_id"] = revoked.ID
	key("manageKeys", "acme", record.ScopeManageKeys, record.ScopeWriteMessages)

	acme := svc.Workspace("acme")
	tpl := func(ws *messaging.Workspace, name string, p *messaging.TemplateCreateParams) {
		p.Name = name
		tp, err := ws.Templates.Create(ctx, p)
		must(err)
		e.vars[name] = tp.ID
	}
	tpl(acme, "order_update", &messaging.TemplateCreateParams{Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{
			{Type: "HEADER", Format: "TEXT", Text: "Order {{1}}"},
			{Type: "BODY", Text: "Hi {{1}}, your order {{2}} has shipped."},
			{Type: "FOOTER", Text: "Thank you"},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{
				{Type: "URL", Text: "Track", URL: "https://example.com/track/{{1}}"},
				{Type: "QUICK_REPLY", Text: "Stop"},
				{Type: "COPY_CODE", Example: "SAVE10"},
			}},
		}})
	tpl(acme, "karibu", &messaging.TemplateCreateParams{Category: record.CategoryMarketing, Language: "sw", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Karibu sana!"}}})
	tpl(acme, "invoice_doc", &messaging.TemplateCreateParams{Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{{Type: "HEADER", Format: "DOCUMENT"}, {Type: "BODY", Text: "Your invoice {{1}} is attached."}}})
	tpl(acme, "promo_pending", &messaging.TemplateCreateParams{Category: record.CategoryMarketing, Language: "en",
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Big sale today"}}})
	tpl(svc.Workspace("narrow"), "narrow_hello", &messaging.TemplateCreateParams{Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello"}}})

	// Webhook endpoints: one that answers 500 (its deliveries fail and are
	// retried), one disabled, and one of the other workspace.
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusInternalServerError) }))
	t.Cleanup(rcv.Close)
	hook := func(ws, name string) string {
		ep, _, err := svc.Workspace(ws).Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: rcv.URL + "/" + name})
		must(err)
		e.vars[name] = ep.ID
		return ep.ID
	}
	hook("acme", "hook")
	off := hook("acme", "hook_off")
	hook("narrow", "narrow_hook")
	for name, st := range map[string]string{"failed": messaging.StatusFailed, "read": messaging.StatusRead} {
		res, err := acme.Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254722000111", Type: "text", Text: "status " + name})
		must(err)
		u := &messaging.StatusUpdate{WorkspaceID: "acme", MessageID: res.MessageID, Status: st}
		if st == messaging.StatusFailed {
			u.ProviderCode, u.ProviderText = "131008", "Required parameter is missing"
		}
		_, err = svc.UpdateStatus(ctx, u)
		must(err)
		e.vars["msg_"+name] = res.MessageID
	}
	_, err = svc.DeliverWebhooksDue(ctx)
	must(err)
	for name, id := range map[string]string{"delivery": e.vars["hook"], "delivery_off": off} {
		ds, _, err := svc.Workspace("acme").Webhooks.Deliveries(ctx, id, "", 1)
		must(err)
		if len(ds) == 0 {
			t.Fatal("no webhook delivery to redeliver")
		}
		e.vars[name] = messaging.WebhookDeliveryID(ds[0])
	}
	disabled := false
	_, err = svc.Workspace("acme").Webhooks.Update(ctx, off, &messaging.WebhookUpdateParams{Enabled: &disabled})
	must(err)
	in, err := fp.Receive(ctx, &messaging.InboundMessage{WorkspaceID: "acme", Channel: "whatsapp", From: "+254712345678",
		ProviderMessageID: "wamid.oa.in", Type: "document", Content: &messaging.InboundContent{
			Media:   &record.InboundMedia{ProviderMediaID: "777", MimeType: "application/pdf", SHA256: "h", Caption: "Invoice", Filename: "invoice.pdf"},
			Context: &messaging.ReplyContext{ProviderMessageID: "wamid.elsewhere"}}})
	must(err)
	e.vars["msg_in"] = in.ID
	// The service's clock is the real one here: a send_at a day ahead,
	// written with an offset.
	e.vars["tomorrow"] = time.Now().Add(24 * time.Hour).In(time.FixedZone("EAT", 3*3600)).Format(time.RFC3339)
	nc, err := svc.Workspace("narrow").Contacts.Create(ctx, &messaging.ContactCreateParams{FirstName: "Nuru", Phone: "+254733000111"})
	must(err)
	e.vars["narrow_contact"] = nc.ID

	smsSvc, err := sms.New(st, fakegateway.New(nil), &sms.Options{Callbacks: &sms.CallbackOptions{Service: svc, WorkspaceID: "sms-callbacks"}})
	must(err)
	_, _, err = smsSvc.CreateAccount(ctx, &sms.CreateAccountParams{PartnerID: "p-oa", Senders: []string{"ACME"}, Credit: sms.Credits(10)})
	must(err)
	e.main = httptest.NewServer(httpapi.New(svc, &httpapi.Options{SMS: smsSvc, OperatorToken: oaOpToken}))
	t.Cleanup(e.main.Close)
	limits := map[string]int{"GET /v1/templates": 1}
	for _, rt := range append(httpapi.Routes(), httpapi.OperatorRoutes()...) {
		limits[rt.Name()] = 1
	}
	e.limited = httptest.NewServer(httpapi.New(svc, &httpapi.Options{RateLimits: limits, SMS: smsSvc, OperatorToken: oaOpToken}))
	t.Cleanup(e.limited.Close)

	fsvc, err := messaging.New(oaFailingStore{memstore.New()}, fakeprovider.New(), nil)
	must(err)
	_, err = fsvc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: "acme", Channels: fsvc.Channels()})
	must(err)
	_, plain, err := fsvc.Workspace("acme").APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
	must(err)
	e.vars["failing"] = plain
	e.failing = httptest.NewServer(httpapi.New(fsvc, nil))
	t.Cleanup(e.failing.Close)

	// A provider that lists templates, for POST /v1/templates/sync: acme
	// has a WhatsApp connection with a WABA id, bare has none.
	lp := &listingProvider{Provider: fakeprovider.New(), list: []*messaging.ProviderTemplate{
		{ID: "9001", Name: "listed_hello", Language: "en", Category: record.CategoryUtility, Status: "APPROVED",
			Components: []messaging.TemplateComponent{{Type: "BODY", Text: "Hello {{1}}"}}}}}
	lsvc, err := messaging.New(memstore.New(), lp, &messaging.Options{SecretKey: sealKey})
	must(err)
	for _, ws := range []string{"acme", "bare"} {
		_, err = lsvc.CreateWorkspace(ctx, &messaging.CreateWorkspaceParams{ID: ws})
		must(err)
		_, plain, err := lsvc.Workspace(ws).APIKeys.Create(ctx, &messaging.KeyCreateParams{Scopes: record.AllScopes()})
		must(err)
		e.vars["lister_"+ws] = plain
	}
	_, err = lsvc.Workspace("acme").Channels.Connect(ctx, messaging.ChannelWhatsApp, &messaging.ChannelCredentials{
		Fields: map[string]string{"phone_number_id": "5550001", "waba_id": "5550002"}, AccessToken: "EAAGlistertoken1234"})
	must(err)
	e.lister = httptest.NewServer(httpapi.New(lsvc, nil))
	t.Cleanup(e.lister.Close)
	return e
}

func (e *oaEnv) expand(s string) string {
	for k, v := range e.vars {
		s = strings.ReplaceAll(s, "${"+k+"}", v)
	}
	return s
}

// oaCase is one real request and what it must produce.
type oaCase struct {
	name   string
	server string // "" (main), "limited", "failing" or "lister"
	method string
	path   string // may hold ${var}
	key    string // name of the key in vars; "" sends none
	header http.Header
	body   string // may hold ${var}
	ctype  string // Content-Type: default application/json when body != "", "-" for none
	status int    // status wanted; 0 takes any status the document declares
	code   string // error code wanted for errors (when status != 0)
	// bodyInvalid says the request body must fail the request schema too.
	bodyInvalid bool
	// wantHeader lists response header values wanted.
	wantHeader map[string]string
	// save stores the "id" or "message_id" of the response in vars.
	save string
	// saveField, when set, is the member saved instead.
	saveField string
}

// oaChecker validates real responses against the document.
type oaChecker struct {
	doc   map[string]any
	v     *oaValidator
	paths map[string]any
	seen  map[string]bool // "METHOD template status"
}

// match returns the document path template serving a concrete path, the
// most literal one when several match (as http.ServeMux does).
func (c *oaChecker) match(path string) string {
	segs := strings.Split(path, "/")
	best, bestParams := "", 1<<30
	for tmpl := range c.paths {
		ts := strings.Split(tmpl, "/")
		if len(ts) != len(segs) {
			continue
		}
		params, ok := 0, true
		for i := range ts {
			if strings.HasPrefix(ts[i], "{") {
				params++
				ok = ok && segs[i] != ""
			} else {
				ok = ok && ts[i] == segs[i]
			}
		}
		if ok && params < bestParams {
			best, bestParams = tmpl, params
		}
	}
	return best
}

// check validates one exchange and returns the decoded body.
func (c *oaChecker) check(t *testing.T, req *http.Request, reqBody []byte, resp *http.Response, body []byte) any {
	t.Helper()
	tmpl := c.match(req.URL.Path)
	var respObj any
	switch item, _ := c.paths[tmpl].(map[string]any); {
	case item == nil:
		if resp.StatusCode != 404 {
			t.Fatalf("%s %s: path not in the document, status %d, want 404", req.Method, req.URL.Path, resp.StatusCode)
		}
		respObj = map[string]any{"$ref": "#/components/responses/NotFound"}
		c.seen["* * 404"] = true
	case item[strings.ToLower(req.Method)] == nil:
		var allow []string
		for m := range item {
			allow = append(allow, strings.ToUpper(m))
		}
		got := strings.Split(resp.Header.Get("Allow"), ", ")
		slices.Sort(allow)
		slices.Sort(got)
		if resp.StatusCode != 405 || !slices.Equal(got, allow) {
			t.Errorf("%s %s: undeclared method: status %d, Allow %v; want 405 with Allow %v", req.Method, tmpl, resp.StatusCode, got, allow)
		}
		respObj = map[string]any{"$ref": "#/components/responses/MethodNotAllowed"}
		c.seen["* * 405"] = true
	default:
		op := item[strings.ToLower(req.Method)].(map[string]any)
		responses := op["responses"].(map[string]any)
		st := strconv.Itoa(resp.StatusCode)
		if respObj = responses[st]; respObj == nil {
			t.Fatalf("%s %s: status %d is not declared (declared: %v); body %s", req.Method, tmpl, resp.StatusCode, slices.Sorted(maps.Keys(responses)), body)
		}
		c.seen[req.Method+" "+tmpl+" "+st] = true
		if resp.StatusCode < 300 {
			c.checkRequest(t, op, req, reqBody)
		}
	}
	ro, err := c.v.deref(respObj)
	if err != nil {
		t.Fatalf("response object: %v", err)
	}
	// Headers.
	if resp.Header.Get("X-Correlation-ID") == "" {
		t.Errorf("no X-Correlation-ID")
	}
	for _, h := range []string{"X-RateLimit-Limit", "X-RateLimit-Remaining"} {
		if resp.Header.Get(h) == "" { // present with the default options
			t.Errorf("no %s header", h)
		}
	}
	declared := map[string]bool{}
	for name, h := range ro["headers"].(map[string]any) {
		hm, err := c.v.deref(h)
		if err != nil {
			t.Fatalf("header %s: %v", name, err)
		}
		declared[http.CanonicalHeaderKey(name)] = true
		vals := resp.Header.Values(name)
		if len(vals) == 0 {
			if hm["required"] == true {
				t.Errorf("required header %s is missing", name)
			}
			continue
		}
		var val any = vals[0]
		if sch, _ := hm["schema"].(map[string]any); sch["type"] == "integer" {
			n, err := strconv.Atoi(vals[0])
			if err != nil {
				t.Errorf("header %s = %q, want an integer", name, vals[0])
				continue
			}
			val = float64(n)
		}
		for _, e := range c.v.Validate(hm["schema"], val, "header "+name) {
			t.Error(e)
		}
	}
	for _, h := range []string{"Allow", "Retry-After", "Idempotent-Replayed"} {
		if resp.Header.Get(h) != "" && !declared[h] {
			t.Errorf("header %s = %q is sent but not declared for status %d", h, resp.Header.Get(h), resp.StatusCode)
		}
	}
	// Body.
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		t.Fatalf("Content-Type %q: %v", resp.Header.Get("Content-Type"), err)
	}
	content, _ := ro["content"].(map[string]any)
	media, _ := content[mt].(map[string]any)
	if _, binary := content["*/*"]; media == nil && binary && mt != "application/json" {
		return nil // bytes of any type (the media of a message)
	}
	if media == nil {
		t.Fatalf("content type %s is not declared (declared: %v)", mt, slices.Sorted(maps.Keys(content)))
	}
	var val any
	if err := json.Unmarshal(body, &val); err != nil {
		t.Fatalf("body is not JSON: %v: %s", err, body)
	}
	for _, e := range c.v.Validate(media["schema"], val, "body") {
		t.Errorf("%s %s -> %d: %s\nbody: %s", req.Method, tmpl, resp.StatusCode, e, body)
	}
	return val
}

// checkRequest validates the body and query of a request that succeeded
// against what the operation declares.
func (c *oaChecker) checkRequest(t *testing.T, op map[string]any, req *http.Request, reqBody []byte) {
	t.Helper()
	params := map[string]map[string]any{}
	if ps, ok := op["parameters"].([]any); ok {
		for _, p := range ps {
			pm, err := c.v.deref(p)
			if err != nil {
				t.Fatal(err)
			}
			params[pm["in"].(string)+":"+pm["name"].(string)] = pm
		}
	}
	for name, vals := range req.URL.Query() {
		pm := params["query:"+name]
		if pm == nil {
			t.Errorf("query parameter %q succeeded but is not declared", name)
			continue
		}
		var val any = vals[0]
		if sch, _ := pm["schema"].(map[string]any); sch["type"] == "integer" {
			n, _ := strconv.Atoi(vals[0])
			val = float64(n)
		}
		for _, e := range c.v.Validate(pm["schema"], val, "query "+name) {
			t.Errorf("accepted query: %s", e)
		}
	}
	if len(reqBody) == 0 {
		return
	}
	if mt, _, _ := mime.ParseMediaType(req.Header.Get("Content-Type")); mt == "multipart/form-data" {
		// The parts of an upload: the document must declare the type.
		oaAt(t, op, "requestBody", "content", "multipart/form-data", "schema")
		return
	}
	schema := oaAt(t, op, "requestBody", "content", "application/json", "schema")
	var v any
	if err := json.Unmarshal(reqBody, &v); err != nil {
		t.Fatalf("request body: %v", err)
	}
	for _, e := range c.v.Validate(schema, v, "request") {
		t.Errorf("the server accepted a request body that the document rejects: %s\nbody: %s", e, reqBody)
	}
}

func TestOpenAPIResponses(t *testing.T) {
	e := oaSetup(t)
	doc := oaDoc(t)
	c := &oaChecker{doc: doc, v: newOAValidator(doc), paths: doc["paths"].(map[string]any), seen: map[string]bool{}}

	big := `{"firstName":"` + strings.Repeat("a", httpapi.DefaultMaxBodyBytes) + `","email":"big@example.com"}`
	bigMsg := `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"` + strings.Repeat("a", httpapi.DefaultMaxBodyBytes) + `"}`
	text := func(channel, to, msg string) string {
		return fmt.Sprintf(`{"channel":%q,"to":%q,"type":"text","text":%q}`, channel, to, msg)
	}
	orderSend := `{"to":"+254712345678","template_name":"order_update","language":"en","components":[
		{"type":"header","parameters":[{"type":"text","text":"A-42"}]},
		{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-42"}]},
		{"type":"button","sub_type":"url","index":0,"parameters":[{"type":"text","text":"A-42"}]},
		{"type":"button","sub_type":"copy_code","index":2,"parameters":[{"type":"coupon_code","coupon_code":"SAVE10"}]}]}`
	twoKeys := http.Header{"X-Api-Key": {"first-key-1234567890", "second-key-1234567890"}}
	opH := http.Header{"Authorization": {"Bearer " + oaOpToken}}
	cases := []oaCase{
		// Public documents.
		{name: "openapi", method: "GET", path: "/v1/openapi.json", status: 200},
		{name: "openapi ignores a bad key", method: "GET", path: "/v1/openapi.json", header: http.Header{"X-Api-Key": {"nonsense"}}, status: 200},
		{name: "error doc unknown", method: "GET", path: "/v1/errors/no_such_code", status: 404, code: "not_found"},
		{name: "openapi POST", method: "POST", path: "/v1/openapi.json", body: `{}`, status: 405, code: "method_not_allowed"},

		// POST /v1/messages.
		{name: "send text", method: "POST", path: "/v1/messages", key: "full", body: text("whatsapp", "+254712345678", "Hello"), status: 201, save: "msg"},
		{name: "send image", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"instagram","to":"ig_user_1","type":"image","media_url":"https://example.com/a.jpg","caption":"Look"}`, status: 201},
		{name: "send document", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"messenger","to":"+254712345678","type":"document","media_url":"https://example.com/a.pdf","filename":"invoice.pdf"}`, status: 201},
		{name: "send audio", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"audio","media_url":"https://example.com/a.ogg"}`, status: 201},
		{name: "send idempotent", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Once","idempotency_key":"order-42"}`, status: 201, save: "msg_idem"},
		{name: "send replayed", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Once","idempotency_key":"order-42"}`, status: 201, wantHeader: map[string]string{"Idempotent-Replayed": "true"}},
		{name: "send key reused", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Twice","idempotency_key":"order-42"}`, status: 409, code: "conflict"},
		{name: "send missing type", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","text":"Hi"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send extra field", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Hi","priority":"high"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send template fields", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"Hi","template_name":"order_update"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send text without text", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send media without url", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"image"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send unknown channel", method: "POST", path: "/v1/messages", key: "full", body: text("sms", "+254712345678", "Hi"), status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send bad recipient", method: "POST", path: "/v1/messages", key: "full", body: text("whatsapp", "0712 345 678", "Hi"), status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send text too long for instagram", method: "POST", path: "/v1/messages", key: "full", body: text("instagram", "ig_user_1", strings.Repeat("x", 1001)), status: 400, code: "validation_error"},
		{name: "send wrong content type", method: "POST", path: "/v1/messages", key: "full", body: text("whatsapp", "+254712345678", "Hi"), ctype: "text/plain", status: 400, code: "validation_error"},
		{name: "send malformed JSON", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":`, status: 400, code: "validation_error"},
		{name: "send array body", method: "POST", path: "/v1/messages", key: "full", body: `[]`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send with query", method: "POST", path: "/v1/messages?dry_run=1", key: "full", body: text("whatsapp", "+254712345678", "Hi"), status: 400, code: "validation_error"},
		{name: "send no key", method: "POST", path: "/v1/messages", body: text("whatsapp", "+254712345678", "Hi"), status: 401, code: "unauthorized"},
		{name: "send two keys", method: "POST", path: "/v1/messages", header: twoKeys, body: text("whatsapp", "+254712345678", "Hi"), status: 401, code: "unauthorized"},
		{name: "send invalid key", method: "POST", path: "/v1/messages", header: http.Header{"X-Api-Key": {"mk_nope_0000000000000000000000"}}, body: text("whatsapp", "+254712345678", "Hi"), status: 401, code: "invalid_api_key"},
		{name: "send revoked key", method: "POST", path: "/v1/messages", key: "revoked", body: text("whatsapp", "+254712345678", "Hi"), status: 401, code: "invalid_api_key"},
		{name: "send without scope", method: "POST", path: "/v1/messages", key: "readContacts", body: text("whatsapp", "+254712345678", "Hi"), status: 403, code: "forbidden"},
		{name: "send too large", method: "POST", path: "/v1/messages", key: "full", body: bigMsg, status: 413, code: "payload_too_large"},
		{name: "send channel not connected", method: "POST", path: "/v1/messages", key: "narrow", body: text("whatsapp", "+254712345678", "Hi"), status: 422, code: "channel_unavailable"},
		{name: "DELETE /v1/messages", method: "DELETE", path: "/v1/messages", key: "full", status: 405, code: "method_not_allowed"},
		// Uploads, rich sends and read marks.
		{name: "upload image", method: "POST", path: "/v1/media", key: "full", ctype: oaMultipart, body: oaUpload("image.jpg", oaJPEG, "type", "image/jpeg"), status: 201, save: "media"},
		{name: "upload document", method: "POST", path: "/v1/media", key: "full", ctype: oaMultipart, body: oaUpload("terms.pdf", "%PDF-1.7 terms", "channel", "whatsapp", "purpose", "message", "kind", "document", "type", "application/pdf"), status: 201},
		{name: "upload sample", method: "POST", path: "/v1/media", key: "full", ctype: oaMultipart, body: oaUpload("", oaJPEG, "purpose", "template_sample", "type", "image/jpeg"), status: 201, save: "sample"},
		{name: "upload without file", method: "POST", path: "/v1/media", key: "full", ctype: oaMultipart, body: oaUpload("-", "", "type", "image/jpeg"), status: 400, code: "validation_error"},
		{name: "upload png as video", method: "POST", path: "/v1/media", key: "full", ctype: oaMultipart, body: oaUpload("a.png", "\x89PNG\r\n\x1a\n", "kind", "video", "type", "image/png"), status: 400, code: "validation_error"},
		{name: "upload JSON", method: "POST", path: "/v1/media", key: "full", body: `{"type":"image/jpeg"}`, status: 400, code: "validation_error"},
		{name: "upload without scope", method: "POST", path: "/v1/media", key: "readContacts", ctype: oaMultipart, body: oaUpload("image.jpg", oaJPEG, "type", "image/jpeg"), status: 403, code: "forbidden"},
		{name: "media", method: "GET", path: "/v1/media/${media}", key: "full", status: 200},
		{name: "media unknown", method: "GET", path: "/v1/media/med_nope", key: "full", status: 404, code: "not_found"},
		{name: "media other workspace", method: "GET", path: "/v1/media/${media}", key: "narrow", status: 404, code: "not_found"},
		{name: "media query", method: "GET", path: "/v1/media/${media}?x=1", key: "full", status: 400, code: "validation_error"},
		{name: "send uploaded image", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"image","media_id":"${media}","caption":"Look"}`, status: 201, save: "msg_media"},
		{name: "message uploaded image", method: "GET", path: "/v1/messages/${msg_media}", key: "full", status: 200},
		{name: "send buttons", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"interactive","interactive":{"type":"button","header":{"type":"image","media_id":"${media}"},"body":"Pick one","footer":"Acme","buttons":[{"id":"yes","title":"Yes"},{"id":"no","title":"No"}]},"context":{"message_id":"${msg_in}"}}`, status: 201, save: "msg_buttons"},
		{name: "message buttons", method: "GET", path: "/v1/messages/${msg_buttons}", key: "full", status: 200},
		{name: "send list", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"interactive","interactive":{"type":"list","header":{"type":"text","text":"Menu"},"body":"Choose","list":{"button":"Open","sections":[{"title":"Drinks","rows":[{"id":"tea","title":"Tea","description":"Hot"}]},{"title":"Food","rows":[{"id":"ugali","title":"Ugali"}]}]}}}`, status: 201, save: "msg_list"},
		{name: "message list", method: "GET", path: "/v1/messages/${msg_list}", key: "full", status: 200},
		{name: "send cta_url", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"interactive","interactive":{"type":"cta_url","body":"Track it","cta_url":{"display_text":"Track","url":"https://example.com/t/1"}}}`, status: 201, save: "msg_cta"},
		{name: "message cta_url", method: "GET", path: "/v1/messages/${msg_cta}", key: "full", status: 200},
		{name: "send location", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"location","location":{"latitude":-1.2864,"longitude":36.8172,"name":"Office","address":"Moi Avenue, Nairobi"}}`, status: 201, save: "msg_loc"},
		{name: "message location", method: "GET", path: "/v1/messages/${msg_loc}", key: "full", status: 200},
		{name: "send contacts", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"contacts","contacts":[{"formatted_name":"Amina Odhiambo","first_name":"Amina","organization":"Ujumbe","phones":[{"phone":"+254712345678","type":"CELL","wa_id":"254712345678"}],"emails":[{"email":"amina@example.com","type":"WORK"}]}]}`, status: 201, save: "msg_cards"},
		{name: "message contacts", method: "GET", path: "/v1/messages/${msg_cards}", key: "full", status: 200},
		{name: "send reaction", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"reaction","reaction":{"message_id":"${msg_in}","emoji":"👍"}}`, status: 201, save: "msg_react"},
		{name: "message reaction", method: "GET", path: "/v1/messages/${msg_react}", key: "full", status: 200},
		{name: "send reaction removed", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"reaction","reaction":{"message_id":"${msg_in}","emoji":""}}`, status: 201},
		{name: "send reaction unknown message", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"reaction","reaction":{"message_id":"msg_nope","emoji":"👍"}}`, status: 404, code: "not_found"},
		{name: "send location without latitude", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"location","location":{"longitude":36.8}}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send latitude 91", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"location","location":{"latitude":91,"longitude":36.8}}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send four buttons", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"interactive","interactive":{"type":"button","body":"Pick","buttons":[{"id":"a","title":"A"},{"id":"b","title":"B"},{"id":"c","title":"C"},{"id":"d","title":"D"}]}}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send empty card", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"contacts","contacts":[{}]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send unknown media", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"image","media_id":"med_nope"}`, status: 404, code: "not_found"},
		{name: "send scheduled", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"later","send_at":"${tomorrow}"}`, status: 201, save: "msg_sched"},
		{name: "send template scheduled", method: "POST", path: "/v1/messages/templates", key: "full", body: strings.TrimSuffix(orderSend, "}") + `,"send_at":"${tomorrow}"}`, status: 201},
		{name: "send send_at without offset", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"later","send_at":"2026-03-02T09:00:00"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "send send_at past", method: "POST", path: "/v1/messages", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"later","send_at":"2026-02-01T09:00:00Z"}`, status: 400, code: "validation_error"},
		{name: "get scheduled message", method: "GET", path: "/v1/messages/${msg_sched}", key: "full", status: 200},
		{name: "cancel without scope", method: "POST", path: "/v1/messages/${msg_sched}/cancel", key: "readContacts", status: 403, code: "forbidden"},
		{name: "cancel unknown member", method: "POST", path: "/v1/messages/${msg_sched}/cancel", key: "full", body: `{"now":true}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "cancel scheduled", method: "POST", path: "/v1/messages/${msg_sched}/cancel", key: "full", status: 200},
		{name: "cancel twice", method: "POST", path: "/v1/messages/${msg_sched}/cancel", key: "full", body: `{}`, status: 409, code: "conflict"},
		{name: "cancel unknown", method: "POST", path: "/v1/messages/msg_nope/cancel", key: "full", status: 404, code: "not_found"},
		{name: "mark read", method: "POST", path: "/v1/messages/${msg_in}/read", key: "full", status: 200},
		{name: "mark read typing", method: "POST", path: "/v1/messages/${msg_in}/read", key: "full", body: `{"typing":true}`, status: 200},
		{name: "mark read outbound", method: "POST", path: "/v1/messages/${msg}/read", key: "full", body: `{}`, status: 400, code: "validation_error"},
		{name: "mark read unknown member", method: "POST", path: "/v1/messages/${msg_in}/read", key: "full", body: `{"typing":true,"seen":true}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "mark read unknown", method: "POST", path: "/v1/messages/msg_nope/read", key: "full", status: 404, code: "not_found"},
		{name: "mark read without scope", method: "POST", path: "/v1/messages/${msg_in}/read", key: "readContacts", status: 403, code: "forbidden"},
		{name: "template with sample", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"sale_banner","category":"MARKETING","language":"en","components":[{"type":"HEADER","format":"IMAGE","example_media":"${sample}"},{"type":"BODY","text":"Big sale"}]}`, status: 201, save: "tpl_sample"},
		{name: "template with sample read", method: "GET", path: "/v1/templates/${tpl_sample}", key: "full", status: 200},
		// Listing (issue 16).
		{name: "list messages", method: "GET", path: "/v1/messages", key: "full", status: 200},
		{name: "list messages page", method: "GET", path: "/v1/messages?limit=1&direction=outbound&channel=whatsapp&status=queued&to=%2B254712345678&created_after=2000-01-01T00:00:00Z&created_before=2100-01-01T00:00:00.5%2B03:00", key: "full", status: 200, save: "msgcursor"},
		{name: "list messages next page", method: "GET", path: "/v1/messages?limit=1&cursor=${msgcursor}", key: "full", status: 200},
		{name: "list messages bad cursor", method: "GET", path: "/v1/messages?cursor=abc", key: "full", status: 400, code: "validation_error"},
		{name: "list messages bad direction", method: "GET", path: "/v1/messages?direction=sideways", key: "full", status: 400, code: "validation_error"},
		{name: "list messages bad time", method: "GET", path: "/v1/messages?created_after=yesterday", key: "full", status: 400, code: "validation_error"},
		{name: "list messages limit 101", method: "GET", path: "/v1/messages?limit=101", key: "full", status: 400, code: "validation_error"},
		{name: "list messages without scope", method: "GET", path: "/v1/messages", key: "readContacts", status: 403, code: "forbidden"},
		{name: "send for conversation", method: "POST", path: "/v1/messages", key: "full", body: text("whatsapp", "+254712345678", "Hello again"), status: 201, save: "conv", saveField: "conversation_id"},
		{name: "list conversations", method: "GET", path: "/v1/conversations?limit=1", key: "full", status: 200},
		{name: "get inbound message", method: "GET", path: "/v1/messages/${msg_in}", key: "full", status: 200},
		{name: "inbound media", method: "GET", path: "/v1/messages/${msg_in}/media", key: "full", status: 200},
		{name: "media of an outbound message", method: "GET", path: "/v1/messages/${msg}/media", key: "full", status: 404, code: "not_found"},
		{name: "media with query", method: "GET", path: "/v1/messages/${msg_in}/media?x=1", key: "full", status: 400, code: "validation_error"},
		{name: "media without scope", method: "GET", path: "/v1/messages/${msg_in}/media", key: "readContacts", status: 403, code: "forbidden"},
		{name: "list conversations bad limit", method: "GET", path: "/v1/conversations?limit=x", key: "full", status: 400, code: "validation_error"},
		{name: "list conversation messages", method: "GET", path: "/v1/conversations/${conv}/messages?limit=2", key: "full", status: 200},
		{name: "list conversation messages unknown", method: "GET", path: "/v1/conversations/conv_nope/messages", key: "full", status: 404, code: "not_found"},
		{name: "list conversation messages conversation filter", method: "GET", path: "/v1/conversations/${conv}/messages?conversation_id=x", key: "full", status: 400, code: "validation_error"},

		// POST /v1/messages/templates.
		{name: "template send", method: "POST", path: "/v1/messages/templates", key: "full", body: orderSend, status: 201, save: "msg_tpl"},
		{name: "template send no variables", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"karibu","language":"sw"}`, status: 201},
		{name: "template send document header", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"invoice_doc","components":[{"type":"header","parameters":[{"type":"document","link":"https://example.com/inv.pdf","filename":"inv.pdf"}]},{"type":"body","parameters":[{"type":"text","text":"INV-1"}]}]}`, status: 201},
		{name: "template idempotent", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"karibu","language":"sw","idempotency_key":"tpl-1"}`, status: 201},
		{name: "template replayed", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"karibu","language":"sw","idempotency_key":"tpl-1"}`, status: 201, wantHeader: map[string]string{"Idempotent-Replayed": "true"}},
		{name: "template key reused", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254722000111","template_name":"karibu","language":"sw","idempotency_key":"tpl-1"}`, status: 409, code: "conflict"},
		{name: "template unknown", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"no_such_template","language":"en"}`, status: 404, code: "template_not_found"},
		{name: "template wrong language", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"karibu","language":"en_US"}`, status: 404, code: "template_not_found"},
		{name: "template not approved", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"promo_pending","language":"en"}`, status: 404, code: "template_not_found"},
		{name: "template missing components", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"order_update","language":"en"}`, status: 400, code: "validation_error"},
		{name: "template channel field", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"channel":"whatsapp","to":"+254712345678","template_name":"karibu","language":"sw"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template missing to", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"template_name":"karibu","language":"sw"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template bad component", method: "POST", path: "/v1/messages/templates", key: "full", body: `{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"footer","parameters":[]}]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template without read:templates", method: "POST", path: "/v1/messages/templates", key: "writeMessages", body: `{"to":"+254712345678","template_name":"karibu","language":"sw"}`, status: 403, code: "forbidden"},
		{name: "template no key", method: "POST", path: "/v1/messages/templates", body: `{"to":"+254712345678","template_name":"karibu","language":"sw"}`, status: 401, code: "unauthorized"},
		{name: "template channel not connected", method: "POST", path: "/v1/messages/templates", key: "narrow", body: `{"to":"+254712345678","template_name":"narrow_hello","language":"en"}`, status: 422, code: "channel_unavailable"},
		{name: "template too large", method: "POST", path: "/v1/messages/templates", key: "full", body: bigMsg, status: 413, code: "payload_too_large"},
		{name: "GET /v1/messages/templates", method: "GET", path: "/v1/messages/templates", key: "full", status: 405, code: "method_not_allowed"},

		// GET /v1/messages/{id}.
		{name: "message", method: "GET", path: "/v1/messages/${msg}", key: "full", status: 200},
		{name: "message failed", method: "GET", path: "/v1/messages/${msg_failed}", key: "full", status: 200},
		{name: "message read", method: "GET", path: "/v1/messages/${msg_read}", key: "full", status: 200},
		{name: "message template", method: "GET", path: "/v1/messages/${msg_tpl}", key: "full", status: 200},
		{name: "message unknown", method: "GET", path: "/v1/messages/msg_nope", key: "full", status: 404, code: "not_found"},
		{name: "message other workspace", method: "GET", path: "/v1/messages/${msg}", key: "narrow", status: 404, code: "not_found"},
		{name: "message query", method: "GET", path: "/v1/messages/${msg}?fields=all", key: "full", status: 400, code: "validation_error"},
		{name: "message without scope", method: "GET", path: "/v1/messages/${msg}", key: "readContacts", status: 403, code: "forbidden"},
		{name: "message no key", method: "GET", path: "/v1/messages/${msg}", status: 401, code: "unauthorized"},
		{name: "message DELETE", method: "DELETE", path: "/v1/messages/${msg}", key: "full", status: 405, code: "method_not_allowed"},

		// GET /v1/templates and /v1/templates/{id}.
		{name: "templates", method: "GET", path: "/v1/templates", key: "full", status: 200},
		{name: "templates by category", method: "GET", path: "/v1/templates?category=UTILITY", key: "full", status: 200},
		{name: "templates by language", method: "GET", path: "/v1/templates?language=sw&category=MARKETING", key: "full", status: 200},
		{name: "templates none", method: "GET", path: "/v1/templates?category=AUTHENTICATION", key: "full", status: 200},
		{name: "templates bad category", method: "GET", path: "/v1/templates?category=PROMO", key: "full", status: 400, code: "validation_error"},
		{name: "templates bad language", method: "GET", path: "/v1/templates?language=english", key: "full", status: 400, code: "validation_error"},
		{name: "templates unknown query", method: "GET", path: "/v1/templates?sort=name", key: "full", status: 400, code: "validation_error"},
		{name: "templates repeated query", method: "GET", path: "/v1/templates?category=UTILITY&category=MARKETING", key: "full", status: 400, code: "validation_error"},
		{name: "templates without scope", method: "GET", path: "/v1/templates", key: "readContacts", status: 403, code: "forbidden"},
		{name: "templates no key", method: "GET", path: "/v1/templates", status: 401, code: "unauthorized"},
		{name: "templates PUT", method: "PUT", path: "/v1/templates", key: "full", body: `{}`, status: 405, code: "method_not_allowed"},
		{name: "templates rate limit 1", server: "limited", method: "GET", path: "/v1/templates", key: "full", status: 200, wantHeader: map[string]string{"X-RateLimit-Limit": "1", "X-RateLimit-Remaining": "0"}},
		{name: "templates rate limit 2", server: "limited", method: "GET", path: "/v1/templates", key: "full", status: 429, code: "rate_limit_exceeded", wantHeader: map[string]string{"X-RateLimit-Limit": "1"}},
		{name: "template", method: "GET", path: "/v1/templates/${order_update}", key: "full", status: 200},
		{name: "template media header", method: "GET", path: "/v1/templates/${invoice_doc}", key: "full", status: 200},
		{name: "template pending", method: "GET", path: "/v1/templates/${promo_pending}", key: "full", status: 200},
		{name: "template unknown id", method: "GET", path: "/v1/templates/tpl_nope", key: "full", status: 404, code: "not_found"},
		{name: "template other workspace", method: "GET", path: "/v1/templates/${order_update}", key: "narrow", status: 404, code: "not_found"},
		{name: "template query", method: "GET", path: "/v1/templates/${order_update}?x=1", key: "full", status: 400, code: "validation_error"},
		{name: "template without scope", method: "GET", path: "/v1/templates/${order_update}", key: "readContacts", status: 403, code: "forbidden"},

		// Template management (manage:templates).
		{name: "templates any", method: "GET", path: "/v1/templates?status=any", key: "full", status: 200},
		{name: "templates pending", method: "GET", path: "/v1/templates?status=pending&category=MARKETING", key: "full", status: 200},
		{name: "templates approved by a read key", method: "GET", path: "/v1/templates?status=approved", key: "readTemplates", status: 200},
		{name: "templates any by a read key", method: "GET", path: "/v1/templates?status=any", key: "readTemplates", status: 403, code: "forbidden"},
		{name: "templates bad status", method: "GET", path: "/v1/templates?status=archived", key: "full", status: 400, code: "validation_error"},
		{name: "template create", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"welcome_note","category":"UTILITY","language":"en","components":[{"type":"HEADER","format":"TEXT","text":"Welcome"},{"type":"BODY","text":"Hi {{1}}, welcome aboard."},{"type":"FOOTER","text":"Acme"},{"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"Thanks"}]}]}`, status: 201, save: "draft"},
		{name: "template create second", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"to_delete","category":"MARKETING","language":"sw","components":[{"type":"BODY","text":"Habari"}]}`, status: 201, save: "draft2"},
		{name: "templates drafts", method: "GET", path: "/v1/templates?status=draft", key: "full", status: 200},
		{name: "template create duplicate", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"welcome_note","category":"UTILITY","language":"en","components":[{"type":"HEADER","format":"TEXT","text":"Welcome"},{"type":"BODY","text":"Hi {{1}}, welcome aboard."},{"type":"FOOTER","text":"Acme"},{"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"Thanks"}]}]}`, status: 409, code: "conflict"},
		{name: "template create with status", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"x","category":"UTILITY","language":"en","status":"approved","components":[{"type":"BODY","text":"Hi"}]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template create missing components", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"x","category":"UTILITY","language":"en"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template create bad name", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"Hello World","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hi"}]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template create variable gap", method: "POST", path: "/v1/templates", key: "full", body: `{"name":"gap","category":"UTILITY","language":"en","components":[{"type":"BODY","text":"Hi {{2}}"}]}`, status: 400, code: "validation_error"},
		{name: "template create without scope", method: "POST", path: "/v1/templates", key: "readTemplates", body: `{"name":"welcome_note","category":"UTILITY","language":"en","components":[{"type":"HEADER","format":"TEXT","text":"Welcome"},{"type":"BODY","text":"Hi {{1}}, welcome aboard."},{"type":"FOOTER","text":"Acme"},{"type":"BUTTONS","buttons":[{"type":"QUICK_REPLY","text":"Thanks"}]}]}`, status: 403, code: "forbidden"},
		{name: "template create too large", method: "POST", path: "/v1/templates", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "template patch", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: `{"category":"MARKETING"}`, status: 200},
		{name: "template patch components", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: `{"name":"welcome_note_v2","components":[{"type":"BODY","text":"Hi {{1}}, welcome to {{2}}."}]}`, status: 200},
		{name: "template patch null", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: `{"name":null}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template patch empty", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: `{}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template patch unknown field", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: `{"status":"approved"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template patch breaks a rule", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: `{"components":[{"type":"FOOTER","text":"Bye"}]}`, status: 400, code: "validation_error"},
		{name: "template patch approved", method: "PATCH", path: "/v1/templates/${order_update}", key: "full", body: `{"category":"MARKETING"}`, status: 409, code: "conflict"},
		{name: "template patch unknown", method: "PATCH", path: "/v1/templates/tpl_nope", key: "full", body: `{"category":"MARKETING"}`, status: 404, code: "not_found"},
		{name: "template patch other workspace", method: "PATCH", path: "/v1/templates/${draft}", key: "narrow", body: `{"category":"MARKETING"}`, status: 404, code: "not_found"},
		{name: "template patch without scope", method: "PATCH", path: "/v1/templates/${draft}", key: "readTemplates", body: `{"category":"MARKETING"}`, status: 403, code: "forbidden"},
		{name: "template patch too large", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "template submit other workspace", method: "POST", path: "/v1/templates/${draft}/submit", key: "narrow", status: 404, code: "not_found"},
		{name: "template submit with arguments", method: "POST", path: "/v1/templates/${draft}/submit", key: "full", body: `{"status":"approved"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "template submit too large", method: "POST", path: "/v1/templates/${draft}/submit", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "template submit without scope", method: "POST", path: "/v1/templates/${draft}/submit", key: "readTemplates", status: 403, code: "forbidden"},
		{name: "template submit", method: "POST", path: "/v1/templates/${draft}/submit", key: "full", status: 200},
		{name: "template submit empty object", method: "POST", path: "/v1/templates/${draft2}/submit", key: "full", body: `{}`, status: 200},
		{name: "template submit again", method: "POST", path: "/v1/templates/${draft}/submit", key: "full", status: 409, code: "conflict"},
		{name: "template patch after submit", method: "PATCH", path: "/v1/templates/${draft}", key: "full", body: `{"category":"UTILITY"}`, status: 409, code: "conflict"},
		{name: "template submit unknown", method: "POST", path: "/v1/templates/tpl_nope/submit", key: "full", status: 404, code: "not_found"},
		{name: "template delete other workspace", method: "DELETE", path: "/v1/templates/${draft2}", key: "narrow", status: 404, code: "not_found"},
		{name: "template delete query", method: "DELETE", path: "/v1/templates/${draft2}?force=1", key: "full", status: 400, code: "validation_error"},
		{name: "template delete without scope", method: "DELETE", path: "/v1/templates/${draft2}", key: "readTemplates", status: 403, code: "forbidden"},
		{name: "template delete", method: "DELETE", path: "/v1/templates/${draft2}", key: "full", status: 200},
		{name: "template delete again", method: "DELETE", path: "/v1/templates/${draft2}", key: "full", status: 404, code: "not_found"},
		{name: "templates sync", server: "lister", method: "POST", path: "/v1/templates/sync", key: "lister_acme", status: 202},
		{name: "templates sync without a connection", server: "lister", method: "POST", path: "/v1/templates/sync", key: "lister_bare", status: 422, code: "channel_unavailable"},
		{name: "templates sync provider does not list", method: "POST", path: "/v1/templates/sync", key: "full", status: 409, code: "conflict"},
		{name: "templates sync with arguments", method: "POST", path: "/v1/templates/sync", key: "full", body: `{"force":true}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "templates sync too large", method: "POST", path: "/v1/templates/sync", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "templates sync without scope", method: "POST", path: "/v1/templates/sync", key: "readTemplates", status: 403, code: "forbidden"},
		{name: "templates sync GET", method: "GET", path: "/v1/templates/sync", key: "full", status: 405, code: "method_not_allowed"},

		// Channels (manage:channels).
		{name: "channels", method: "GET", path: "/v1/channels", key: "full", status: 200},
		{name: "channels query", method: "GET", path: "/v1/channels?channel=whatsapp", key: "full", status: 400, code: "validation_error"},
		{name: "channels without scope", method: "GET", path: "/v1/channels", key: "readTemplates", status: 403, code: "forbidden"},
		{name: "channel put whatsapp", method: "PUT", path: "/v1/channels/whatsapp", key: "full", body: `{"phone_number_id":"106540352242922","waba_id":"102290129340398","display_phone_number":"+254712345678","access_token":"EAAGoaTestToken0123456789wxyz"}`, status: 200},
		{name: "channel put messenger", method: "PUT", path: "/v1/channels/messenger", key: "full", body: `{"page_id":"1234567890","access_token":"EAAGoaPageToken0123456789"}`, status: 200},
		{name: "channels connected", method: "GET", path: "/v1/channels", key: "full", status: 200},
		{name: "channel verify", method: "POST", path: "/v1/channels/messenger/verify", key: "full", status: 200},
		{name: "channel verify without credentials", method: "POST", path: "/v1/channels/instagram/verify", key: "full", status: 404, code: "not_found"},
		{name: "channel verify unknown channel", method: "POST", path: "/v1/channels/sms/verify", key: "full", status: 404, code: "not_found"},
		{name: "channel verify with a body", method: "POST", path: "/v1/channels/messenger/verify", key: "full", body: `{"now":true}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "channel verify without scope", method: "POST", path: "/v1/channels/messenger/verify", key: "readTemplates", status: 403, code: "forbidden"},
		{name: "channel put another channel's field", method: "PUT", path: "/v1/channels/instagram", key: "full", body: `{"page_id":"1234567890","access_token":"EAAGoaPageToken0123456789"}`, status: 400, code: "validation_error"},
		{name: "channel put no token", method: "PUT", path: "/v1/channels/whatsapp", key: "full", body: `{"phone_number_id":"106540352242922","waba_id":"102290129340398"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "channel put bad id", method: "PUT", path: "/v1/channels/whatsapp", key: "full", body: `{"phone_number_id":"+254712345678","waba_id":"102290129340398","access_token":"EAAGoaTestToken0123456789wxyz"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "channel put unknown field", method: "PUT", path: "/v1/channels/whatsapp", key: "full", body: `{"account_id":"1","access_token":"EAAGoaTestToken0123456789wxyz"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "channel put account of another workspace", method: "PUT", path: "/v1/channels/whatsapp", key: "narrow", body: `{"phone_number_id":"106540352242922","waba_id":"102290129340398","access_token":"EAAGoaOtherToken0123456789"}`, status: 409, code: "conflict"},
		{name: "channel put unknown channel", method: "PUT", path: "/v1/channels/sms", key: "full", body: `{"access_token":"EAAGoaTestToken0123456789wxyz"}`, status: 404, code: "not_found"},
		{name: "channel put too large", method: "PUT", path: "/v1/channels/whatsapp", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "channel put without scope", method: "PUT", path: "/v1/channels/whatsapp", key: "readTemplates", body: `{"phone_number_id":"1","waba_id":"2","access_token":"EAAGoaTestToken0123456789wxyz"}`, status: 403, code: "forbidden"},
		{name: "channel throughput", method: "PATCH", path: "/v1/channels/messenger", key: "full", body: `{"throughput":500}`, status: 200},
		{name: "channel throughput 0", method: "PATCH", path: "/v1/channels/messenger", key: "full", body: `{"throughput":0}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "channel throughput 1001", method: "PATCH", path: "/v1/channels/messenger", key: "full", body: `{"throughput":1001}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "channel throughput fast", method: "PATCH", path: "/v1/channels/messenger", key: "full", body: `{"throughput":"fast"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "channel throughput without credentials", method: "PATCH", path: "/v1/channels/instagram", key: "full", body: `{"throughput":5}`, status: 404, code: "not_found"},
		{name: "channel delete", method: "DELETE", path: "/v1/channels/messenger", key: "full", status: 200},
		{name: "channel delete unknown channel", method: "DELETE", path: "/v1/channels/telegram", key: "full", status: 404, code: "not_found"},
		{name: "channel delete query", method: "DELETE", path: "/v1/channels/messenger?x=1", key: "full", status: 400, code: "validation_error"},
		{name: "channel delete without scope", method: "DELETE", path: "/v1/channels/messenger", key: "readTemplates", status: 403, code: "forbidden"},
		{name: "channel GET", method: "GET", path: "/v1/channels/whatsapp", key: "full", status: 405, code: "method_not_allowed"},

		// Contacts.
		{name: "contact create", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Amina","lastName":"Njoroge","phone":"+254712345678","email":"amina@example.com","company":"Acme","jobTitle":"CTO","website":"https://amina.example.com","notes":"met at expo","tags":["vip","vip","kenya"],"lifecycle":"lead"}`, status: 201, save: "contact"},
		{name: "contact create minimal", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Baraka","email":"baraka@example.com"}`, status: 201, save: "contact2"},
		{name: "contact duplicate phone", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Other","phone":"+254712345678"}`, status: 409, code: "conflict"},
		{name: "contact duplicate email", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Other","email":"AMINA@example.com"}`, status: 409, code: "conflict"},
		{name: "contact missing firstName", method: "POST", path: "/v1/contacts", key: "full", body: `{"email":"x@example.com"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact blank firstName", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"   ","email":"x@example.com"}`, status: 400, code: "validation_error"},
		{name: "contact no phone or email", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Zawadi"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact extra field", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Zawadi","email":"z@example.com","address":"Nairobi"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact bad lifecycle", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Zawadi","email":"z@example.com","lifecycle":"vip"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact bad phone", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Zawadi","phone":"0712345678"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact bad email", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Zawadi","email":"zawadi"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact tags not array", method: "POST", path: "/v1/contacts", key: "full", body: `{"firstName":"Zawadi","email":"z@example.com","tags":"vip"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact too large", method: "POST", path: "/v1/contacts", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "contact create without scope", method: "POST", path: "/v1/contacts", key: "readContacts", body: `{"firstName":"Zawadi","email":"z@example.com"}`, status: 403, code: "forbidden"},
		{name: "contacts", method: "GET", path: "/v1/contacts", key: "full", status: 200, header: http.Header{"X-Correlation-Id": {"trace-123"}}, wantHeader: map[string]string{"X-Correlation-ID": "trace-123"}},
		{name: "contacts page", method: "GET", path: "/v1/contacts?page=2&limit=1", key: "full", status: 200},
		{name: "contacts search", method: "GET", path: "/v1/contacts?search=amina", key: "full", status: 200},
		{name: "contacts search phone", method: "GET", path: "/v1/contacts?search=%2B2547", key: "full", status: 200},
		{name: "contacts past the end", method: "GET", path: "/v1/contacts?page=99", key: "full", status: 200},
		{name: "contacts limit too big", method: "GET", path: "/v1/contacts?limit=101", key: "full", status: 400, code: "validation_error"},
		{name: "contacts page 0", method: "GET", path: "/v1/contacts?page=0", key: "full", status: 400, code: "validation_error"},
		{name: "contacts limit not a number", method: "GET", path: "/v1/contacts?limit=ten", key: "full", status: 400, code: "validation_error"},
		{name: "contacts unknown query", method: "GET", path: "/v1/contacts?sort=name", key: "full", status: 400, code: "validation_error"},
		{name: "contacts without scope", method: "GET", path: "/v1/contacts", key: "writeMessages", status: 403, code: "forbidden"},
		{name: "contacts no key", method: "GET", path: "/v1/contacts", status: 401, code: "unauthorized"},
		{name: "contacts internal error", server: "failing", method: "GET", path: "/v1/contacts", key: "failing", status: 500, code: "internal_error"},
		{name: "contacts DELETE", method: "DELETE", path: "/v1/contacts", key: "full", status: 405, code: "method_not_allowed"},
		{name: "contact", method: "GET", path: "/v1/contacts/${contact}", key: "full", status: 200},
		{name: "contact unknown", method: "GET", path: "/v1/contacts/ct_nope", key: "full", status: 404, code: "not_found"},
		{name: "contact other workspace", method: "GET", path: "/v1/contacts/${narrow_contact}", key: "full", status: 404, code: "not_found"},
		{name: "contact query", method: "GET", path: "/v1/contacts/${contact}?expand=1", key: "full", status: 400, code: "validation_error"},
		{name: "contact without scope", method: "GET", path: "/v1/contacts/${contact}", key: "writeMessages", status: 403, code: "forbidden"},
		{name: "contact patch", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: `{"company":"Acme Kenya","tags":["vip","nairobi"],"lifecycle":"customer"}`, status: 200},
		{name: "contact patch clears", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: `{"lastName":null,"notes":"","tags":null,"lifecycle":null,"website":null}`, status: 200},
		{name: "contact patch empty", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: `{}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact patch unknown field", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: `{"nickname":"Ami"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact patch firstName null", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: `{"firstName":null}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact patch tags wrong type", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: `{"tags":"vip"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "contact patch clears last address", method: "PATCH", path: "/v1/contacts/${contact2}", key: "full", body: `{"email":null}`, status: 400, code: "validation_error"},
		{name: "contact patch duplicate", method: "PATCH", path: "/v1/contacts/${contact2}", key: "full", body: `{"phone":"+254712345678"}`, status: 409, code: "conflict"},
		{name: "contact patch unknown", method: "PATCH", path: "/v1/contacts/ct_nope", key: "full", body: `{"company":"X"}`, status: 404, code: "not_found"},
		{name: "contact patch no content type", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: `{"company":"X"}`, ctype: "-", status: 400, code: "validation_error"},
		{name: "contact patch too large", method: "PATCH", path: "/v1/contacts/${contact}", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "contact patch by a write-only key", method: "PATCH", path: "/v1/contacts/${contact}", key: "writeContacts", body: `{"tags":null}`, status: 200},
		{name: "contact patch without scope", method: "PATCH", path: "/v1/contacts/${contact}", key: "readContacts", body: `{"company":"X"}`, status: 403, code: "forbidden"},
		{name: "contact PUT", method: "PUT", path: "/v1/contacts/${contact}", key: "full", body: `{"firstName":"X"}`, status: 405, code: "method_not_allowed"},

		// API keys and audit events.
		{name: "api key create", method: "POST", path: "/v1/api-keys", key: "full", body: `{"name":"Billing service","scopes":["write:messages","read:messages"],"expires_at":"2099-01-01T00:00:00Z"}`, status: 201, save: "newkey"},
		{name: "api key create without expiry", method: "POST", path: "/v1/api-keys", key: "manageKeys", body: `{"name":"ci","scopes":["write:messages"],"expires_at":null}`, status: 201},
		{name: "api key create escalation", method: "POST", path: "/v1/api-keys", key: "manageKeys", body: `{"name":"ci","scopes":["write:messages","write:contacts"]}`, status: 403, code: "forbidden"},
		{name: "api key create unknown scope", method: "POST", path: "/v1/api-keys", key: "full", body: `{"name":"ci","scopes":["write:everything"]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "api key create no scopes", method: "POST", path: "/v1/api-keys", key: "full", body: `{"name":"ci","scopes":[]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "api key create past expiry", method: "POST", path: "/v1/api-keys", key: "full", body: `{"name":"ci","scopes":["read:messages"],"expires_at":"2020-01-01T00:00:00Z"}`, status: 400, code: "validation_error"},
		{name: "api key create bad expiry", method: "POST", path: "/v1/api-keys", key: "full", body: `{"name":"ci","scopes":["read:messages"],"expires_at":"tomorrow"}`, status: 400, code: "validation_error"},
		{name: "api key create missing name", method: "POST", path: "/v1/api-keys", key: "full", body: `{"scopes":["read:messages"]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "api key create long name", method: "POST", path: "/v1/api-keys", key: "full", body: `{"name":"` + strings.Repeat("n", 101) + `","scopes":["read:messages"]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "api key create extra field", method: "POST", path: "/v1/api-keys", key: "full", body: `{"name":"ci","scopes":["read:messages"],"key":"my-own-key-0123456789"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "api key create too large", method: "POST", path: "/v1/api-keys", key: "full", body: big, status: 413, code: "payload_too_large"},
		{name: "api key create without scope", method: "POST", path: "/v1/api-keys", key: "readContacts", body: `{"name":"ci","scopes":["read:contacts"]}`, status: 403, code: "forbidden"},
		{name: "api keys", method: "GET", path: "/v1/api-keys", key: "full", status: 200},
		{name: "api keys query", method: "GET", path: "/v1/api-keys?limit=1", key: "full", status: 400, code: "validation_error"},
		{name: "api keys without scope", method: "GET", path: "/v1/api-keys", key: "readContacts", status: 403, code: "forbidden"},
		{name: "api keys PUT", method: "PUT", path: "/v1/api-keys", key: "full", body: `{}`, status: 405, code: "method_not_allowed"},
		{name: "api key", method: "GET", path: "/v1/api-keys/${newkey}", key: "full", status: 200},
		{name: "api key revoked", method: "GET", path: "/v1/api-keys/${revoked_id}", key: "full", status: 200},
		{name: "api key unknown", method: "GET", path: "/v1/api-keys/key_nope", key: "full", status: 404, code: "not_found"},
		{name: "api key other workspace", method: "GET", path: "/v1/api-keys/${newkey}", key: "narrow", status: 404, code: "not_found"},
		{name: "api key query", method: "GET", path: "/v1/api-keys/${newkey}?x=1", key: "full", status: 400, code: "validation_error"},
		{name: "api key without scope", method: "GET", path: "/v1/api-keys/${newkey}", key: "readContacts", status: 403, code: "forbidden"},
		{name: "api key revoke other workspace", method: "DELETE", path: "/v1/api-keys/${newkey}", key: "narrow", status: 404, code: "not_found"},
		{name: "api key revoke without scope", method: "DELETE", path: "/v1/api-keys/${newkey}", key: "readContacts", status: 403, code: "forbidden"},
		{name: "api key revoke", method: "DELETE", path: "/v1/api-keys/${newkey}", key: "full", status: 200},
		{name: "api key revoke again", method: "DELETE", path: "/v1/api-keys/${newkey}", key: "full", status: 200},
		{name: "api key revoke unknown", method: "DELETE", path: "/v1/api-keys/key_nope", key: "full", status: 404, code: "not_found"},
		{name: "api key revoke query", method: "DELETE", path: "/v1/api-keys/${newkey}?force=1", key: "full", status: 400, code: "validation_error"},
		{name: "audit events", method: "GET", path: "/v1/audit-events", key: "full", status: 200},
		{name: "audit events page", method: "GET", path: "/v1/audit-events?limit=1", key: "full", status: 200, save: "cursor"},
		{name: "audit events next page", method: "GET", path: "/v1/audit-events?limit=1&cursor=${cursor}", key: "full", status: 200},
		{name: "audit events limit 0", method: "GET", path: "/v1/audit-events?limit=0", key: "full", status: 400, code: "validation_error"},
		{name: "audit events limit too big", method: "GET", path: "/v1/audit-events?limit=101", key: "full", status: 400, code: "validation_error"},
		{name: "audit events bad cursor", method: "GET", path: "/v1/audit-events?cursor=abc", key: "full", status: 400, code: "validation_error"},
		{name: "audit events unknown query", method: "GET", path: "/v1/audit-events?action=api_key.created", key: "full", status: 400, code: "validation_error"},
		{name: "audit events without scope", method: "GET", path: "/v1/audit-events", key: "readContacts", status: 403, code: "forbidden"},
		// Operator routes.
		{name: "op workspace create", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"oa_ws","name":"OA"}`, status: 201},
		{name: "op workspace create generated id", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"name":"Generated"}`, status: 201},
		{name: "op workspace duplicate", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"oa_ws"}`, status: 409, code: "conflict"},
		{name: "op workspace bad id", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"-x"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op workspace extra field", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"x","plan":"gold"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op workspace too large", method: "POST", path: "/admin/v1/workspaces", header: opH, body: big, status: 413, code: "payload_too_large"},
		{name: "op workspace with an API key", method: "POST", path: "/admin/v1/workspaces", key: "full", body: `{"id":"x"}`, status: 401, code: "unauthorized"},
		{name: "op workspace create rejecting", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"oa_strict","outside_window":"reject"}`, status: 201},
		{name: "op workspace create bad policy", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"oa_x","outside_window":"never"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op workspace update", method: "PATCH", path: "/admin/v1/workspaces/oa_ws", header: opH, body: `{"outside_window":"reject"}`, status: 200},
		{name: "op workspace update bad policy", method: "PATCH", path: "/admin/v1/workspaces/oa_ws", header: opH, body: `{"outside_window":"sometimes"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op workspace create failing unconfirmed", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"oa_careful","unconfirmed_sends":"fail"}`, status: 201},
		{name: "op workspace create bad unconfirmed", method: "POST", path: "/admin/v1/workspaces", header: opH, body: `{"id":"oa_y","unconfirmed_sends":"twice"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op workspace update unconfirmed", method: "PATCH", path: "/admin/v1/workspaces/oa_ws", header: opH, body: `{"unconfirmed_sends":"fail"}`, status: 200},
		{name: "op workspace update bad unconfirmed", method: "PATCH", path: "/admin/v1/workspaces/oa_ws", header: opH, body: `{"unconfirmed_sends":"sometimes"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op workspace update empty", method: "PATCH", path: "/admin/v1/workspaces/oa_ws", header: opH, body: `{}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op workspace update unknown", method: "PATCH", path: "/admin/v1/workspaces/nope", header: opH, body: `{"outside_window":"provider"}`, status: 404, code: "not_found"},
		{name: "op workspaces", method: "GET", path: "/admin/v1/workspaces", header: opH, status: 200},
		{name: "op workspaces page", method: "GET", path: "/admin/v1/workspaces?limit=1&cursor=acme", header: opH, status: 200},
		{name: "op workspaces bad limit", method: "GET", path: "/admin/v1/workspaces?limit=1000", header: opH, status: 400, code: "validation_error"},
		{name: "op workspaces wrong token", method: "GET", path: "/admin/v1/workspaces", header: http.Header{"Authorization": {"Bearer nope-nope-nope"}}, status: 401, code: "unauthorized"},
		{name: "op workspaces DELETE", method: "DELETE", path: "/admin/v1/workspaces", header: opH, status: 405, code: "method_not_allowed"},
		{name: "op workspace", method: "GET", path: "/admin/v1/workspaces/acme", header: opH, status: 200},
		{name: "op workspace unknown", method: "GET", path: "/admin/v1/workspaces/nope", header: opH, status: 404, code: "not_found"},
		{name: "op workspace query", method: "GET", path: "/admin/v1/workspaces/acme?x=1", header: opH, status: 400, code: "validation_error"},
		{name: "op key", method: "POST", path: "/admin/v1/workspaces/oa_ws/api-keys", header: opH, body: `{"name":"first","scopes":["manage:keys"],"expires_at":"2030-01-01T00:00:00Z"}`, status: 201},
		{name: "op opt-in", method: "POST", path: "/admin/v1/workspaces/acme/opt-ins", header: opH, body: `{"channel":"whatsapp","to":"+254712345678"}`, status: 200},
		{name: "op opt-in bad recipient", method: "POST", path: "/admin/v1/workspaces/acme/opt-ins", header: opH, body: `{"channel":"whatsapp","to":"hello"}`, status: 400, code: "validation_error"},
		{name: "op opt-in unknown workspace", method: "POST", path: "/admin/v1/workspaces/nope/opt-ins", header: opH, body: `{"channel":"whatsapp","to":"+254712345678"}`, status: 404, code: "not_found"},
		{name: "op key bad scope", method: "POST", path: "/admin/v1/workspaces/oa_ws/api-keys", header: opH, body: `{"scopes":["root"]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op key no scopes", method: "POST", path: "/admin/v1/workspaces/oa_ws/api-keys", header: opH, body: `{"name":"x"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op key unknown workspace", method: "POST", path: "/admin/v1/workspaces/nope/api-keys", header: opH, body: `{"scopes":["read:messages"]}`, status: 404, code: "not_found"},
		{name: "op key too large", method: "POST", path: "/admin/v1/workspaces/oa_ws/api-keys", header: opH, body: big, status: 413, code: "payload_too_large"},
		{name: "op SMS account generated key", method: "POST", path: "/admin/v1/sms/accounts", header: opH, body: `{"partnerID":"oa1","shortcodes":["ACME"],"credit":"10.50","timezone":"Africa/Nairobi","cost_per_segment":0.8}`, status: 201},
		{name: "op SMS account given key", method: "POST", path: "/admin/v1/sms/accounts", header: opH, body: `{"partnerID":"oa2","apikey":"given-apikey-0123456789abcdef"}`, status: 201},
		{name: "op SMS account duplicate", method: "POST", path: "/admin/v1/sms/accounts", header: opH, body: `{"partnerID":"oa1"}`, status: 409, code: "conflict"},
		{name: "op SMS callback none", method: "GET", path: "/admin/v1/sms/accounts/oa1/callback", header: opH, status: 404, code: "not_found"},
		{name: "op SMS callback set", method: "PUT", path: "/admin/v1/sms/accounts/oa1/callback", header: opH, body: `{"url":"https://hooks.example.com/sms"}`, status: 200},
		{name: "op SMS callback get", method: "GET", path: "/admin/v1/sms/accounts/oa1/callback", header: opH, status: 200},
		{name: "op SMS callback bad url", method: "PUT", path: "/admin/v1/sms/accounts/oa1/callback", header: opH, body: `{"url":"ftp://hooks.example.com/sms"}`, status: 400, code: "validation_error"},
		{name: "op SMS callback no url", method: "PUT", path: "/admin/v1/sms/accounts/oa1/callback", header: opH, body: `{}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op SMS callback unknown account", method: "PUT", path: "/admin/v1/sms/accounts/nope/callback", header: opH, body: `{"url":"https://hooks.example.com/sms"}`, status: 404, code: "not_found"},
		{name: "op SMS account bad partnerID", method: "POST", path: "/admin/v1/sms/accounts", header: opH, body: `{"partnerID":"a b"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op SMS account no partnerID", method: "POST", path: "/admin/v1/sms/accounts", header: opH, body: `{"credit":1}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op SMS account short apikey", method: "POST", path: "/admin/v1/sms/accounts", header: opH, body: `{"partnerID":"oa3","apikey":"short"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op SMS account too large", method: "POST", path: "/admin/v1/sms/accounts", header: opH, body: big, status: 413, code: "payload_too_large"},
		{name: "op SMS account", method: "GET", path: "/admin/v1/sms/accounts/oa1", header: opH, status: 200},
		{name: "op SMS account unknown", method: "GET", path: "/admin/v1/sms/accounts/nope", header: opH, status: 404, code: "not_found"},
		{name: "op SMS account query", method: "GET", path: "/admin/v1/sms/accounts/oa1?x=1", header: opH, status: 400, code: "validation_error"},
		{name: "op sender", method: "POST", path: "/admin/v1/sms/accounts/oa1/senders", header: opH, body: `{"shortcode":"NEWCO"}`, status: 200},
		{name: "op sender bad", method: "POST", path: "/admin/v1/sms/accounts/oa1/senders", header: opH, body: `{"shortcode":"WAY-TOO-LONG-SENDER"}`, status: 400, code: "validation_error"},
		{name: "op sender missing", method: "POST", path: "/admin/v1/sms/accounts/oa1/senders", header: opH, body: `{}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op sender unknown account", method: "POST", path: "/admin/v1/sms/accounts/nope/senders", header: opH, body: `{"shortcode":"X"}`, status: 404, code: "not_found"},
		{name: "op sender too large", method: "POST", path: "/admin/v1/sms/accounts/oa1/senders", header: opH, body: big, status: 413, code: "payload_too_large"},
		{name: "op top-up", method: "POST", path: "/admin/v1/sms/accounts/oa1/top-ups", header: opH, body: `{"amount":"100","reference":"inv-1"}`, status: 201},
		{name: "op top-up replayed", method: "POST", path: "/admin/v1/sms/accounts/oa1/top-ups", header: opH, body: `{"amount":100,"reference":"inv-1"}`, status: 201, wantHeader: map[string]string{"Idempotent-Replayed": "true"}},
		{name: "op top-up other amount", method: "POST", path: "/admin/v1/sms/accounts/oa1/top-ups", header: opH, body: `{"amount":"99","reference":"inv-1"}`, status: 409, code: "conflict"},
		{name: "op top-up overflow", method: "POST", path: "/admin/v1/sms/accounts/oa1/top-ups", header: opH, body: `{"amount":"1000000000000","reference":"big"}`, status: 400, code: "validation_error"},
		{name: "op top-up no reference", method: "POST", path: "/admin/v1/sms/accounts/oa1/top-ups", header: opH, body: `{"amount":1}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "op top-up unknown account", method: "POST", path: "/admin/v1/sms/accounts/nope/top-ups", header: opH, body: `{"amount":1,"reference":"r"}`, status: 404, code: "not_found"},
		{name: "op top-up too large", method: "POST", path: "/admin/v1/sms/accounts/oa1/top-ups", header: opH, body: big, status: 413, code: "payload_too_large"},
		{name: "op ledger", method: "GET", path: "/admin/v1/sms/accounts/oa1/ledger", header: opH, status: 200},
		{name: "op ledger page", method: "GET", path: "/admin/v1/sms/accounts/oa1/ledger?limit=1", header: opH, status: 200},
		{name: "op ledger bad cursor", method: "GET", path: "/admin/v1/sms/accounts/oa1/ledger?cursor=x", header: opH, status: 400, code: "validation_error"},
		{name: "op ledger unknown", method: "GET", path: "/admin/v1/sms/accounts/nope/ledger", header: opH, status: 404, code: "not_found"},
		{name: "operator token on a workspace route", method: "GET", path: "/v1/contacts", header: opH, status: 401, code: "unauthorized"},
		// Webhooks.
		{name: "webhooks", method: "GET", path: "/v1/webhooks", key: "full", status: 200},
		{name: "webhooks query", method: "GET", path: "/v1/webhooks?all=1", key: "full", status: 400, code: "validation_error"},
		{name: "webhooks without scope", method: "GET", path: "/v1/webhooks", key: "readContacts", status: 403, code: "forbidden"},
		{name: "webhook create", method: "POST", path: "/v1/webhooks", key: "full", body: `{"url":"https://hooks.example.com/in","events":["message.status_updated"],"description":"orders"}`, status: 201, save: "hook2"},
		{name: "webhook create minimal", method: "POST", path: "/v1/webhooks", key: "full", body: `{"url":"https://hooks.example.com/min"}`, status: 201},
		{name: "webhook create private url", method: "POST", path: "/v1/webhooks", key: "full", body: `{"url":"http://10.0.0.7/in"}`, status: 400, code: "validation_error"},
		{name: "webhook create unknown event", method: "POST", path: "/v1/webhooks", key: "full", body: `{"url":"https://hooks.example.com/in","events":["message.deleted"]}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "webhook create with a secret", method: "POST", path: "/v1/webhooks", key: "full", body: `{"url":"https://hooks.example.com/in","secret":"whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "webhook create no url", method: "POST", path: "/v1/webhooks", key: "full", body: `{"description":"x"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "webhook create too large", method: "POST", path: "/v1/webhooks", key: "full", body: `{"url":"https://hooks.example.com/in","description":"` + strings.Repeat("a", httpapi.DefaultMaxBodyBytes) + `"}`, status: 413, code: "payload_too_large"},
		{name: "webhook create without scope", method: "POST", path: "/v1/webhooks", key: "writeMessages", body: `{"url":"https://hooks.example.com/in"}`, status: 403, code: "forbidden"},
		{name: "webhook", method: "GET", path: "/v1/webhooks/${hook}", key: "full", status: 200},
		{name: "webhook other workspace", method: "GET", path: "/v1/webhooks/${narrow_hook}", key: "full", status: 404, code: "not_found"},
		{name: "webhook unknown", method: "GET", path: "/v1/webhooks/we_nope", key: "full", status: 404, code: "not_found"},
		{name: "webhook query", method: "GET", path: "/v1/webhooks/${hook}?x=1", key: "full", status: 400, code: "validation_error"},
		{name: "webhook without scope", method: "GET", path: "/v1/webhooks/${hook}", key: "readContacts", status: 403, code: "forbidden"},
		{name: "webhook patch", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "full", body: `{"description":"orders v2","events":[],"url":"https://hooks.example.com/v2"}`, status: 200},
		{name: "webhook patch disable", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "full", body: `{"enabled":false}`, status: 200},
		{name: "webhook patch empty", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "full", body: `{}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "webhook patch loopback url", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "full", body: `{"url":"http://169.254.169.254/latest"}`, status: 400, code: "validation_error"},
		{name: "webhook patch unknown field", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "full", body: `{"secret":"whsec_x"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "webhook patch long description", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "full", body: `{"description":"` + strings.Repeat("d", 501) + `"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "webhook patch other workspace", method: "PATCH", path: "/v1/webhooks/${narrow_hook}", key: "full", body: `{"enabled":false}`, status: 404, code: "not_found"},
		{name: "webhook patch too large", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "full", body: `{"description":"` + strings.Repeat("a", httpapi.DefaultMaxBodyBytes) + `"}`, status: 413, code: "payload_too_large"},
		{name: "webhook patch without scope", method: "PATCH", path: "/v1/webhooks/${hook2}", key: "writeContacts", body: `{"enabled":true}`, status: 403, code: "forbidden"},
		{name: "webhook rotate", method: "POST", path: "/v1/webhooks/${hook}/rotate-secret", key: "full", status: 200},
		{name: "webhook rotate empty object", method: "POST", path: "/v1/webhooks/${hook}/rotate-secret", key: "full", body: `{}`, status: 200},
		{name: "webhook rotate with a field", method: "POST", path: "/v1/webhooks/${hook}/rotate-secret", key: "full", body: `{"secret":"whsec_x"}`, status: 400, code: "validation_error", bodyInvalid: true},
		{name: "webhook rotate other workspace", method: "POST", path: "/v1/webhooks/${narrow_hook}/rotate-secret", key: "full", status: 404, code: "not_found"},
		{name: "webhook rotate without scope", method: "POST", path: "/v1/webhooks/${hook}/rotate-secret", key: "writeMessages", status: 403, code: "forbidden"},
		{name: "webhook test", method: "POST", path: "/v1/webhooks/${hook}/test", key: "full", status: 200},
		{name: "webhook test other workspace", method: "POST", path: "/v1/webhooks/${narrow_hook}/test", key: "full", status: 404, code: "not_found"},
		{name: "webhook test query", method: "POST", path: "/v1/webhooks/${hook}/test?now=1", key: "full", status: 400, code: "validation_error"},
		{name: "webhook deliveries", method: "GET", path: "/v1/webhooks/${hook}/deliveries", key: "full", status: 200},
		{name: "webhook deliveries page", method: "GET", path: "/v1/webhooks/${hook}/deliveries?limit=1", key: "full", status: 200},
		{name: "webhook deliveries bad cursor", method: "GET", path: "/v1/webhooks/${hook}/deliveries?cursor=abc", key: "full", status: 400, code: "validation_error"},
		{name: "webhook deliveries limit 0", method: "GET", path: "/v1/webhooks/${hook}/deliveries?limit=0", key: "full", status: 400, code: "validation_error"},
		{name: "webhook deliveries other workspace", method: "GET", path: "/v1/webhooks/${narrow_hook}/deliveries", key: "full", status: 404, code: "not_found"},
		{name: "webhook deliveries without scope", method: "GET", path: "/v1/webhooks/${hook}/deliveries", key: "readContacts", status: 403, code: "forbidden"},
		{name: "webhook redeliver", method: "POST", path: "/v1/webhooks/${hook}/deliveries/${delivery}/redeliver", key: "full", status: 202},
		{name: "webhook redeliver disabled", method: "POST", path: "/v1/webhooks/${hook_off}/deliveries/${delivery_off}/redeliver", key: "full", status: 409, code: "conflict"},
		{name: "webhook redeliver unknown", method: "POST", path: "/v1/webhooks/${hook}/deliveries/whd_999999/redeliver", key: "full", status: 404, code: "not_found"},
		{name: "webhook redeliver other endpoint", method: "POST", path: "/v1/webhooks/${hook2}/deliveries/${delivery}/redeliver", key: "full", status: 404, code: "not_found"},
		{name: "webhook redeliver other workspace", method: "POST", path: "/v1/webhooks/${narrow_hook}/deliveries/${delivery}/redeliver", key: "full", status: 404, code: "not_found"},
		{name: "webhook redeliver without scope", method: "POST", path: "/v1/webhooks/${hook}/deliveries/${delivery}/redeliver", key: "writeMessages", status: 403, code: "forbidden"},
		{name: "webhook delete", method: "DELETE", path: "/v1/webhooks/${hook2}", key: "full", status: 200},
		{name: "webhook delete again", method: "DELETE", path: "/v1/webhooks/${hook2}", key: "full", status: 404, code: "not_found"},
		{name: "webhook delete without scope", method: "DELETE", path: "/v1/webhooks/${hook}", key: "readContacts", status: 403, code: "forbidden"},
		{name: "webhooks PUT", method: "PUT", path: "/v1/webhooks/${hook}", key: "full", body: `{}`, status: 405, code: "method_not_allowed"},

		// Sign out everywhere.
		{name: "end all sessions", method: "DELETE", path: "/admin/v1/sessions", header: opH, status: 200},
		{name: "end all sessions with a query", method: "DELETE", path: "/admin/v1/sessions?all=1", header: opH, status: 400, code: "validation_error"},

		// Paths the document does not have.
		{name: "unknown path", method: "GET", path: "/v1/nope", key: "full", status: 404, code: "not_found"},
		{name: "root", method: "GET", path: "/", status: 404, code: "not_found"},
	}
	// Every route is rate limited: on the server whose limits are all 1 a
	// second request is refused (the first may succeed or fail, status 0).
	for _, rt := range httpapi.Routes() {
		if rt.Name() == "GET /v1/templates" {
			continue // above
		}
		path := strings.NewReplacer("{id}", "x", "{code}", "x", "{channel}", "whatsapp", "{delivery_id}", "x").Replace(rt.Pattern)
		body := ""
		if rt.Method != "GET" && rt.Method != "DELETE" {
			body = "{}"
		}
		for i, st := range []int{0, 429} {
			cases = append(cases, oaCase{name: fmt.Sprintf("%s rate limit %d", rt.Name(), i+1), server: "limited",
				method: rt.Method, path: path, key: "full", body: body, status: st, code: "rate_limit_exceeded"})
		}
	}
	// Every operator route is rate limited, and refuses a missing token.
	for _, rt := range httpapi.OperatorRoutes() {
		path := strings.NewReplacer("{id}", "acme", "{partnerID}", "p-oa").Replace(rt.Pattern)
		body := map[bool]string{true: "{}"}[rt.Method != "GET" && rt.Method != "DELETE"]
		for i, st := range []int{0, 429} {
			cases = append(cases, oaCase{name: fmt.Sprintf("%s rate limit %d", rt.Name(), i+1), server: "limited",
				method: rt.Method, path: path, header: opH, body: body, status: st, code: "rate_limit_exceeded"})
		}
		cases = append(cases, oaCase{name: rt.Name() + " no token (all)", method: rt.Method, path: path, body: body, status: 401, code: "unauthorized"})
	}
	// 401 on every route that needs a key.
	for _, rt := range httpapi.Routes() {
		if rt.Scopes != nil {
			path := strings.NewReplacer("{id}", "x", "{channel}", "whatsapp", "{delivery_id}", "x").Replace(rt.Pattern)
			cases = append(cases, oaCase{name: rt.Name() + " no key (all)", method: rt.Method, path: path, body: map[bool]string{true: "{}"}[rt.Method != "GET"], status: 401, code: "unauthorized"})
		}
	}
	// Every error code has a docs page.
	for _, code := range oaStrings(oaAt(t, doc, "components", "schemas", "ErrorCode", "enum")) {
		cases = append(cases, oaCase{name: "error doc " + code, method: "GET", path: "/v1/errors/" + code, status: 200})
	}

	client := &http.Client{Timeout: 30 * time.Second}
	docsLinks := map[string]bool{}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := map[string]*httptest.Server{"": e.main, "limited": e.limited, "failing": e.failing, "lister": e.lister}[tc.server]
			reqBody := []byte(e.expand(tc.body))
			req, err := http.NewRequest(tc.method, srv.URL+e.expand(tc.path), bytes.NewReader(reqBody))
			if err != nil {
				t.Fatal(err)
			}
			for k, vs := range tc.header {
				for _, v := range vs {
					req.Header.Add(k, v)
				}
			}
			if tc.key != "" {
				req.Header.Set("X-API-Key", e.vars[tc.key])
			}
			switch {
			case tc.ctype == "-":
			case tc.ctype != "":
				req.Header.Set("Content-Type", tc.ctype)
			case tc.body != "":
				req.Header.Set("Content-Type", "application/json")
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			if tc.status != 0 && resp.StatusCode != tc.status {
				t.Fatalf("status %d, want %d; body %s", resp.StatusCode, tc.status, body)
			}
			if testing.Verbose() && len(body) < 4000 {
				t.Logf("%s %s -> %d %v\n%s", tc.method, req.URL.Path, resp.StatusCode, resp.Header, body)
			}
			val := c.check(t, req, reqBody, resp, body)
			obj, _ := val.(map[string]any)
			for h, want := range tc.wantHeader {
				if got := resp.Header.Get(h); got != want {
					t.Errorf("header %s = %q, want %q", h, got, want)
				}
			}
			if resp.StatusCode == 201 && tc.wantHeader["Idempotent-Replayed"] == "" && resp.Header.Get("Idempotent-Replayed") != "" {
				t.Errorf("Idempotent-Replayed = %q on a first send", resp.Header.Get("Idempotent-Replayed"))
			}
			if resp.StatusCode >= 400 {
				env, _ := obj["error"].(map[string]any)
				if tc.status != 0 && env["code"] != tc.code {
					t.Errorf("error.code = %v, want %s", env["code"], tc.code)
				}
				if env["statusCode"] != float64(resp.StatusCode) {
					t.Errorf("error.statusCode = %v, want %d", env["statusCode"], resp.StatusCode)
				}
				if env["request_id"] != resp.Header.Get("X-Correlation-ID") {
					t.Errorf("error.request_id = %v, X-Correlation-ID = %q", env["request_id"], resp.Header.Get("X-Correlation-ID"))
				}
				if d, _ := env["docs"].(string); d != "" {
					docsLinks[d] = true
				}
				if msg, _ := env["message"].(string); strings.Contains(msg, "disk on fire") {
					t.Errorf("error.message leaks an internal error: %q", msg)
				}
			}
			if tc.bodyInvalid {
				item, _ := c.paths[c.match(req.URL.Path)].(map[string]any)
				op, _ := item[strings.ToLower(tc.method)].(map[string]any)
				schema := oaAt(t, op, "requestBody", "content", "application/json", "schema")
				var v any
				if err := json.Unmarshal(reqBody, &v); err != nil {
					t.Fatal(err)
				}
				if errs := c.v.Validate(schema, v, "request"); len(errs) == 0 {
					t.Errorf("the server refuses this body (%d) but the document's request schema accepts it: %s", resp.StatusCode, reqBody)
				}
			}
			if resp.StatusCode == 200 && tc.path == "/v1/openapi.json" && !bytes.Equal(body, httpapi.OpenAPI()) {
				t.Errorf("GET /v1/openapi.json body differs from the embedded document")
			}
			if tc.save != "" {
				id, _ := obj["id"].(string)
				if tc.saveField != "" {
					id, _ = obj[tc.saveField].(string)
				}
				if id == "" {
					id, _ = obj["message_id"].(string)
				}
				if id == "" {
					id, _ = obj["next_cursor"].(string)
				}
				if id == "" {
					t.Fatalf("no id to save in %s", body)
				}
				e.vars[tc.save] = id
			}
		})
	}

	// The docs links of errors resolve.
	for link := range docsLinks {
		resp, err := client.Get(e.main.URL + link)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("GET %s (error.docs) = %d, want 200", link, resp.StatusCode)
		}
	}

	// Every operation's success status was exercised, and every status the
	// task names was seen.
	statuses := map[string]bool{}
	for k := range c.seen {
		statuses[k[strings.LastIndex(k, " ")+1:]] = true
	}
	for _, st := range []string{"200", "201", "400", "401", "403", "404", "405", "409", "413", "422", "429", "500"} {
		if !statuses[st] {
			t.Errorf("no response with status %s was validated", st)
		}
	}
	var unexercised []string
	for p, item := range c.paths {
		for m, op := range item.(map[string]any) {
			for st := range op.(map[string]any)["responses"].(map[string]any) {
				key := strings.ToUpper(m) + " " + p + " " + st
				if !c.seen[key] {
					if strings.HasPrefix(st, "2") {
						t.Errorf("the success response of %s %s was never validated", strings.ToUpper(m), p)
					}
					unexercised = append(unexercised, key)
				}
			}
		}
	}
	sort.Strings(unexercised)
	t.Logf("declared but not exercised here: %v", unexercised)
}

func TestOpenAPIServed(t *testing.T) {
	svc, err := messaging.New(memstore.New(), fakeprovider.New(), nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(httpapi.New(svc, nil))
	defer srv.Close()
	resp, err := http.Get(srv.URL + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != 200 {
		t.Fatalf("status %d, want 200 without a key", resp.StatusCode)
	}
	if mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type")); err != nil || mt != "application/json" {
		t.Errorf("Content-Type = %q, want application/json", resp.Header.Get("Content-Type"))
	}
	if !bytes.Equal(body, httpapi.OpenAPI()) {
		t.Errorf("served document differs from the embedded one (%d bytes, want %d)", len(body), len(httpapi.OpenAPI()))
	}
	if !json.Valid(body) {
		t.Errorf("served document is not JSON")
	}
	// OpenAPI returns a copy.
	d := httpapi.OpenAPI()
	d[0] = 'X'
	if httpapi.OpenAPI()[0] == 'X' {
		t.Errorf("OpenAPI() returns the embedded bytes, not a copy")
	}
}
