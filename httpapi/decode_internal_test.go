package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"
)

func TestInexactName(t *testing.T) {
	t.Parallel()
	type withMap struct {
		Meta map[string]any  `json:"meta"`
		Raw  json.RawMessage `json:"raw"`
		N    []int           `json:"n"`
	}
	h := &Handler{}
	for _, tc := range []struct {
		name string
		typ  reflect.Type
		body string
		want string
	}{
		{"exact", reflect.TypeFor[sendRequest](), `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi"}`, ""},
		{"case differs", reflect.TypeFor[sendRequest](), `{"channel":"whatsapp","Text":"hi"}`, "Text"},
		{"escaped exact name", reflect.TypeFor[sendRequest](), `{"\u0074ext":"hi"}`, ""},
		{"escaped inexact name", reflect.TypeFor[sendRequest](), `{"T\u0065xt":"hi"}`, "Text"},
		{"braces and quotes in strings", reflect.TypeFor[sendRequest](), `{"text":"a}\"{b[","Type":"x"}`, "Type"},
		{"nested in an array", reflect.TypeFor[sendTemplateRequest](),
			`{"to":"+1","components":[{"type":"body","parameters":[{"type":"text","text":"A"},{"type":"text","Text":"B"}]}]}`, "Text"},
		{"whitespace everywhere", reflect.TypeFor[sendRequest](), " {\n\t\"text\" :\r \"hi\" , \"To\" : null }", "To"},
		{"maps and raw values take any name", reflect.TypeFor[withMap](), `{"meta":{"Any":1,"x":[{"Y":2}]},"raw":{"Z":true},"n":[1,2,-3.5e2]}`, ""},
		{"after a map", reflect.TypeFor[withMap](), `{"meta":{"a":{}},"N":[]}`, "N"},
		// An empty name that is no field's is found like any other, and
		// the scan stops there instead of reading on from its colon.
		{"empty name nested", reflect.TypeFor[sendTemplateRequest](), `{"to":"+1","components":[{"":1,"type":"body"}],"Language":"en"}`, "\x00empty"},
		{"empty name after an inexact one", reflect.TypeFor[sendTemplateRequest](), `{"To":"+1","":2}`, "To"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !json.Valid([]byte(tc.body)) {
				t.Fatalf("invalid JSON %s", tc.body)
			}
			got, found := h.inexactName([]byte(tc.body), reflect.PointerTo(tc.typ))
			if found && got == "" {
				got = "\x00empty" // an empty name, told apart from none
			}
			if found != (got != "") || got != tc.want {
				t.Errorf("inexactName(%s) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}

func TestNulString(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		body   string
		opaque []string
		want   string
	}{
		{"none", `{"a":"x","b":[1,"y",{"c":null}]}`, nil, ""},
		{"top-level value", `{"a":"x","firstName":"A\u0000B"}`, nil, "firstName"},
		{"nested in arrays", `{"components":[{"parameters":[]},{"parameters":[{"text":"ok"},{"coupon_code":"S\u0000"}]}]}`, nil, "components[1].parameters[1].coupon_code"},
		{"array of strings", `{"tags":["a","\u0000"]}`, nil, "tags[1]"},
		{"member name", `{"meta":{"k\u0000":1}}`, nil, "meta.k\x00"},
		{"escaped backslash is no NUL", `{"a":"\\u0000"}`, nil, ""},
		{"escaped backslash then NUL", `{"a":"\\\u0000"}`, nil, "a"},
		{"opaque member skipped", `{"smslist":[{"clientsmsid":"\u0000"}],"count":1}`, []string{"smslist"}, ""},
		{"opaque matches any case", `{"SMSList":[{"x":"\u0000"}]}`, []string{"smslist"}, ""},
		{"only top-level members are opaque", `{"a":{"smslist":"\u0000"}}`, []string{"smslist"}, "a.smslist"},
		{"after an opaque member", `{"smslist":[],"count":"\u0000"}`, []string{"smslist"}, "count"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if !json.Valid([]byte(tc.body)) {
				t.Fatalf("invalid JSON %s", tc.body)
			}
			if got := nulString([]byte(tc.body), tc.opaque...); got != tc.want {
				t.Errorf("nulString(%s) = %q, want %q", tc.body, got, tc.want)
			}
		})
	}
}
