package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
)

// scenario is one row of a scenario table. Each row runs on its own setup.
type scenario struct {
	name    string
	method  string
	path    string // placeholders: see env.expand
	key     string // key name: see env.keyOf; "A" is A's full key
	headers http.Header
	body    any // nil, string (placeholders expanded) or []byte
	// before runs after setup, before the request.
	before           func(t *testing.T, e *env)
	wantStatus       int
	wantCode         string
	wantField        string
	wantBodyContains []string
	check            func(t *testing.T, e *env, r *response)
}

// runScenarios runs each row on a fresh setup. Beyond the row's own
// expectations, every refused write must leave the store unchanged.
func runScenarios(t *testing.T, rows []scenario) {
	t.Helper()
	seen := map[string]bool{}
	for _, sc := range rows {
		if seen[sc.name] {
			t.Fatalf("duplicate scenario name %q", sc.name)
		}
		seen[sc.name] = true
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			if sc.before != nil {
				sc.before(t, e)
			}
			msgs, contacts := e.store.messages.Load(), e.store.contacts.Load()
			before, err := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
			if err != nil {
				t.Fatal(err)
			}
			r := e.do(t, request{method: sc.method, path: sc.path, key: e.keyOf(t, sc.key), headers: sc.headers, body: sc.body})
			expect(t, r, sc.wantStatus, sc.wantCode, sc.wantField)
			for _, s := range sc.wantBodyContains {
				if !strings.Contains(string(r.body), e.expand(s)) {
					t.Errorf("body lacks %q: %s", s, r.body)
				}
			}
			if r.status >= 400 {
				if e.store.messages.Load() != msgs || e.store.contacts.Load() != contacts {
					t.Errorf("a refused request stored a message or contact")
				}
				after, _ := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
				if after.Version != before.Version || !after.UpdatedAt.Equal(before.UpdatedAt) {
					t.Errorf("a refused request changed A's contact: %+v", after)
				}
			}
			if sc.check != nil {
				sc.check(t, e, r)
			}
		})
	}
}

const (
	okText     = `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi"}`
	okTemplate = `{"to":"+254712345678","template_name":"welcome","language":"en_US"}`
	okContact  = `{"firstName":"Wanjiru","email":"wanjiru@example.com"}`
)

// sizedBody returns a POST /v1/messages body of exactly n bytes.
func sizedBody(n int) []byte {
	head, tail := `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"`, `"}`
	return []byte(head + strings.Repeat("a", n-len(head)-len(tail)) + tail)
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	rows := []scenario{
		// Unknown fields name the field.
		{name: "unknown field", method: "POST", path: "/v1/messages", key: "A",
			body:       `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi","priority":"high"}`,
			wantStatus: 400, wantCode: "validation_error", wantField: "priority", wantBodyContains: []string{"priority"}},
		{name: "unknown field on contacts", method: "POST", path: "/v1/contacts", key: "A",
			body: `{"firstName":"W","email":"w@example.com","nickname":"w"}`, wantStatus: 400, wantCode: "validation_error", wantField: "nickname"},
		{name: "unknown nested field", method: "POST", path: "/v1/messages/templates", key: "A",
			body:       `{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"body","parameters":[{"type":"text","text":"A","bold":true}]}]}`,
			wantStatus: 400, wantCode: "validation_error", wantField: "bold"},
		// encoding/json would match these case-insensitively.
		{name: "field name in another case", method: "POST", path: "/v1/messages", key: "A",
			body: `{"channel":"whatsapp","to":"+254712345678","type":"text","Text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "Text"},
		{name: "field twice in two cases", method: "POST", path: "/v1/messages", key: "A",
			body: `{"channel":"whatsapp","CHANNEL":"instagram","to":"+254712345678","type":"text","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "CHANNEL"},
		{name: "nested field name in another case", method: "POST", path: "/v1/messages/templates", key: "A",
			body:       `{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"body","parameters":[{"type":"text","Text":"A"}]}]}`,
			wantStatus: 400, wantCode: "validation_error", wantField: "Text"},
		{name: "contact field in another case", method: "POST", path: "/v1/contacts", key: "A",
			body: `{"firstname":"W","email":"w@example.com"}`, wantStatus: 400, wantCode: "validation_error", wantField: "firstname"},
		{name: "PATCH field in another case", method: "PATCH", path: "/v1/contacts/<A.contact>", key: "A",
			body: `{"Company":"X"}`, wantStatus: 400, wantCode: "validation_error", wantField: "Company"},
		{name: "channel on the template endpoint", method: "POST", path: "/v1/messages/templates", key: "A",
			body: `{"channel":"whatsapp","to":"+254712345678","template_name":"welcome","language":"en_US"}`, wantStatus: 400, wantCode: "validation_error", wantField: "channel"},
		{name: "template fields on /v1/messages", method: "POST", path: "/v1/messages", key: "A",
			body:       `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi","template_name":"welcome"}`,
			wantStatus: 400, wantCode: "validation_error", wantField: "template_name", wantBodyContains: []string{"/v1/messages/templates"}},
		{name: "language on /v1/messages", method: "POST", path: "/v1/messages", key: "A",
			body:       `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi","language":"en"}`,
			wantStatus: 400, wantCode: "validation_error", wantField: "language", wantBodyContains: []string{"POST /v1/messages/templates"}},
		{name: "components on /v1/messages", method: "POST", path: "/v1/messages", key: "A",
			body:       `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi","components":[{"type":"body","parameters":[{"type":"text","text":"x"}]}]}`,
			wantStatus: 400, wantCode: "validation_error", wantField: "components", wantBodyContains: []string{"POST /v1/messages/templates"}},
		{name: "template fields without anything else on /v1/messages", method: "POST", path: "/v1/messages", key: "A",
			body:       `{"template_name":"order_update","language":"en"}`,
			wantStatus: 400, wantCode: "validation_error", wantField: "template_name", wantBodyContains: []string{"template fields are not accepted by POST /v1/messages; send templates with POST /v1/messages/templates"}},
		// Malformed JSON.
		{name: "truncated JSON", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":`, wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "unquoted keys", method: "POST", path: "/v1/messages", key: "A", body: `{channel:"whatsapp"}`, wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "single quotes", method: "POST", path: "/v1/contacts", key: "A", body: `{'firstName':'W'}`, wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "trailing comma", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","email":"w@example.com",}`, wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "deep nesting", method: "POST", path: "/v1/messages", key: "A", body: strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000), wantStatus: 400, wantCode: "validation_error"},
		// Content-Type.
		{name: "text/plain", method: "POST", path: "/v1/messages", key: "A", body: okText, headers: hdr("Content-Type", "text/plain"), wantStatus: 400, wantCode: "validation_error", wantField: "Content-Type"},
		{name: "no Content-Type", method: "POST", path: "/v1/messages", key: "A", body: okText, headers: hdr("Content-Type", "-"), wantStatus: 400, wantCode: "validation_error", wantField: "Content-Type"},
		{name: "form Content-Type", method: "POST", path: "/v1/contacts", key: "A", body: okContact, headers: hdr("Content-Type", "application/x-www-form-urlencoded"), wantStatus: 400, wantCode: "validation_error", wantField: "Content-Type"},
		{name: "latin1 charset", method: "POST", path: "/v1/messages/templates", key: "A", body: okTemplate, headers: hdr("Content-Type", "application/json; charset=latin1"), wantStatus: 400, wantCode: "validation_error", wantField: "Content-Type"},
		{name: "garbage Content-Type", method: "PATCH", path: "/v1/contacts/<A.contact>", key: "A", body: `{"company":"X"}`, headers: hdr("Content-Type", ";;;"), wantStatus: 400, wantCode: "validation_error", wantField: "Content-Type"},
		{name: "utf-8 charset accepted", method: "POST", path: "/v1/messages", key: "A", body: okText, headers: hdr("Content-Type", "application/json; charset=UTF-8"), wantStatus: 201},
		// Wrong types.
		{name: "number for string", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":1,"to":"+254712345678","type":"text","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "channel"},
		{name: "bool for string", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":true,"type":"text","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "to"},
		{name: "object for string", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":{"body":"hi"}}`, wantStatus: 400, wantCode: "validation_error", wantField: "text"},
		{name: "number for idempotency_key", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi","idempotency_key":5}`, wantStatus: 400, wantCode: "validation_error", wantField: "idempotency_key"},
		{name: "string for components", method: "POST", path: "/v1/messages/templates", key: "A", body: `{"to":"+254712345678","template_name":"welcome","language":"en_US","components":"none"}`, wantStatus: 400, wantCode: "validation_error", wantField: "components"},
		{name: "array for firstName", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":["W"],"email":"w@example.com"}`, wantStatus: 400, wantCode: "validation_error", wantField: "firstName"},
		{name: "string for array", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","email":"w@example.com","tags":"vip"}`, wantStatus: 400, wantCode: "validation_error", wantField: "tags"},
		{name: "index neither number nor digits", method: "POST", path: "/v1/messages/templates", key: "A", body: `{"to":"+254712345678","template_name":"welcome","language":"en_US","components":[{"type":"button","sub_type":"url","index":"first","parameters":[]}]}`, wantStatus: 400, wantCode: "validation_error", wantField: "components.index"},
		{name: "number for object", method: "POST", path: "/v1/messages/templates", key: "A", body: `{"to":"+254712345678","template_name":"welcome","language":"en_US","components":[7]}`, wantStatus: 400, wantCode: "validation_error", wantField: "components"},
		{name: "huge number", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":1e999}`, wantStatus: 400, wantCode: "validation_error"},
		// Size.
		{name: "1 MiB + 1", method: "POST", path: "/v1/messages", key: "A", body: sizedBody(mib + 1), wantStatus: 413, wantCode: "payload_too_large"},
		{name: "1 MiB + 1 on contacts", method: "POST", path: "/v1/contacts", key: "A", body: append([]byte(`{"firstName":"`), make([]byte, mib)...), wantStatus: 413, wantCode: "payload_too_large"},
		{name: "1 MiB + 1 on PATCH", method: "PATCH", path: "/v1/contacts/<A.contact>", key: "A", body: []byte(`{"notes":"` + strings.Repeat("n", mib) + `"}`), wantStatus: 413, wantCode: "payload_too_large"},
		{name: "exactly 1 MiB is read", method: "POST", path: "/v1/messages", key: "A", body: sizedBody(mib), wantStatus: 400, wantCode: "validation_error", wantField: "text"},
		// Not one JSON object.
		{name: "empty body", method: "POST", path: "/v1/messages", key: "A", body: "", wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "blank body", method: "POST", path: "/v1/contacts", key: "A", body: " \n\t ", wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "no body at all", method: "POST", path: "/v1/messages", key: "A", headers: hdr("Content-Type", "application/json"), wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "JSON array", method: "POST", path: "/v1/messages", key: "A", body: "[" + okText + "]", wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "JSON null", method: "POST", path: "/v1/messages", key: "A", body: "null", wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "JSON string", method: "POST", path: "/v1/contacts", key: "A", body: `"hello"`, wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "JSON number", method: "PATCH", path: "/v1/contacts/<A.contact>", key: "A", body: `42`, wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "trailing garbage", method: "POST", path: "/v1/messages", key: "A", body: okText + "x", wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "two objects", method: "POST", path: "/v1/messages", key: "A", body: okText + okText, wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "trailing brace", method: "POST", path: "/v1/contacts", key: "A", body: okContact + "}", wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "trailing whitespace is fine", method: "POST", path: "/v1/contacts", key: "A", body: " " + okContact + "\n\n", wantStatus: 201},
		{name: "invalid UTF-8", method: "POST", path: "/v1/messages", key: "A", body: []byte("{\"channel\":\"whatsapp\",\"to\":\"+254712345678\",\"type\":\"text\",\"text\":\"\xff\xfe\"}"), wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "invalid UTF-8 in PATCH", method: "PATCH", path: "/v1/contacts/<A.contact>", key: "A", body: []byte("{\"company\":\"\xc3\x28\"}"), wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "NUL in text", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"a\u0000b"}`, wantStatus: 400, wantCode: "validation_error", wantField: "text"},
		// Query parameters.
		{name: "unknown query param on POST", method: "POST", path: "/v1/messages?debug=1", key: "A", body: okText, wantStatus: 400, wantCode: "validation_error", wantField: "debug"},
		{name: "unknown query param on list", method: "GET", path: "/v1/contacts?sort=name", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "sort"},
		{name: "unknown query param on templates", method: "GET", path: "/v1/templates?sort=name", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "sort"},
		{name: "query param on GET message", method: "GET", path: "/v1/messages/<A.message>?expand=1", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "expand"},
		{name: "query param on GET template", method: "GET", path: "/v1/templates/<A.template>?x=1", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "x"},
		{name: "query param on GET contact", method: "GET", path: "/v1/contacts/<A.contact>?fields=all", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "fields"},
		{name: "query param on PATCH", method: "PATCH", path: "/v1/contacts/<A.contact>?dry=1", key: "A", body: `{"company":"X"}`, wantStatus: 400, wantCode: "validation_error", wantField: "dry"},
		{name: "repeated query param", method: "GET", path: "/v1/contacts?limit=1&limit=2", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "limit"},
		{name: "repeated template filter", method: "GET", path: "/v1/templates?language=en&language=sw", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "language"},
		{name: "malformed query", method: "GET", path: "/v1/contacts?search=%zz", key: "A", wantStatus: 400, wantCode: "validation_error"},
		{name: "semicolon query", method: "GET", path: "/v1/contacts?page=1;limit=2", key: "A", wantStatus: 400, wantCode: "validation_error"},
		{name: "page=0", method: "GET", path: "/v1/contacts?page=0", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "page"},
		{name: "page=-1", method: "GET", path: "/v1/contacts?page=-1", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "page"},
		{name: "page=1.5", method: "GET", path: "/v1/contacts?page=1.5", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "page"},
		{name: "page overflow", method: "GET", path: "/v1/contacts?page=99999999999999999999999", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "page"},
		{name: "page empty", method: "GET", path: "/v1/contacts?page=", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "page"},
		{name: "limit=0", method: "GET", path: "/v1/contacts?limit=0", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "limit"},
		{name: "limit=101", method: "GET", path: "/v1/contacts?limit=101", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "limit", wantBodyContains: []string{"100"}},
		{name: "limit=abc", method: "GET", path: "/v1/contacts?limit=abc", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "limit"},
		{name: "limit=100", method: "GET", path: "/v1/contacts?limit=100&page=1", key: "A", wantStatus: 200, wantBodyContains: []string{`"limit":100`}},
		{name: "search too long", method: "GET", path: "/v1/contacts?search=" + strings.Repeat("a", 101), key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "search"},
		{name: "search invalid UTF-8", method: "GET", path: "/v1/contacts?search=%ff", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "search"},
		{name: "unknown category", method: "GET", path: "/v1/templates?category=PROMO", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "category"},
		{name: "bad language filter", method: "GET", path: "/v1/templates?language=EN", key: "A", wantStatus: 400, wantCode: "validation_error", wantField: "language"},
		// Field validation of POST /v1/messages.
		{name: "missing channel", method: "POST", path: "/v1/messages", key: "A", body: `{"to":"+254712345678","type":"text","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "channel"},
		{name: "unknown channel", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"sms","to":"+254712345678","type":"text","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "channel"},
		{name: "missing to", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","type":"text","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "to"},
		{name: "to not E.164", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"0712345678","type":"text","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "to"},
		{name: "missing type", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","text":"hi"}`, wantStatus: 400, wantCode: "validation_error", wantField: "type"},
		{name: "unknown type", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"hologram"}`, wantStatus: 400, wantCode: "validation_error", wantField: "type"},
		{name: "text type without text", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"text"}`, wantStatus: 400, wantCode: "validation_error", wantField: "text"},
		{name: "image without media_url", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"image"}`, wantStatus: 400, wantCode: "validation_error", wantField: "media_url"},
		{name: "media_url not http", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"image","media_url":"ftp://x/y.jpg"}`, wantStatus: 400, wantCode: "validation_error", wantField: "media_url"},
		{name: "caption on document", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"whatsapp","to":"+254712345678","type":"document","media_url":"https://example.com/a.pdf","caption":"x"}`, wantStatus: 400, wantCode: "validation_error", wantField: "caption"},
		{name: "instagram text too long", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"instagram","to":"ig_1","type":"text","text":"` + strings.Repeat("x", 1001) + `"}`, wantStatus: 400, wantCode: "validation_error", wantField: "text"},
		{name: "image with caption", method: "POST", path: "/v1/messages", key: "A", body: `{"channel":"messenger","to":"psid_1","type":"image","media_url":"https://example.com/a.jpg","caption":"look"}`, wantStatus: 201},
		// Field validation of POST /v1/contacts.
		{name: "contact without firstName", method: "POST", path: "/v1/contacts", key: "A", body: `{"email":"w@example.com"}`, wantStatus: 400, wantCode: "validation_error", wantField: "firstName"},
		{name: "contact without phone or email", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W"}`, wantStatus: 400, wantCode: "validation_error", wantField: "phone"},
		{name: "contact bad phone", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","phone":"0712 345 678"}`, wantStatus: 400, wantCode: "validation_error", wantField: "phone"},
		{name: "contact bad email", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","email":"not-an-email"}`, wantStatus: 400, wantCode: "validation_error", wantField: "email"},
		{name: "contact bad website", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","email":"w@example.com","website":"javascript:alert(1)"}`, wantStatus: 400, wantCode: "validation_error", wantField: "website"},
		{name: "contact duplicate phone", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","phone":"<A.phone>"}`, wantStatus: 409, wantCode: "conflict", wantField: "phone"},
		{name: "contact duplicate email other case", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","email":"AMINA@Example.com"}`, wantStatus: 409, wantCode: "conflict", wantField: "email"},
		{name: "contact phone of another workspace", method: "POST", path: "/v1/contacts", key: "A", body: `{"firstName":"W","phone":"<B.phone>"}`, wantStatus: 201},
	}
	runScenarios(t, rows)
}

// TestRouting: unknown paths give 404 not_found and wrong methods 405 with
// Allow, with or without a key, and never 401.
func TestRouting(t *testing.T) {
	t.Parallel()
	allow := func(want ...string) func(t *testing.T, e *env, r *response) {
		return func(t *testing.T, e *env, r *response) {
			got := strings.Split(r.header.Get("Allow"), ", ")
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("Allow %q, want %v", r.header.Get("Allow"), want)
			}
			if !strings.Contains(r.env.Error.Message, "allowed") {
				t.Errorf("405 message %q does not list the allowed methods", r.env.Error.Message)
			}
		}
	}
	var rows []scenario
	for _, key := range []string{"", "A", "A.revoked"} {
		kn := key
		if kn == "" {
			kn = "no key"
		}
		rows = append(rows,
			scenario{name: kn + "/DELETE contact", method: "DELETE", path: "/v1/contacts/x", key: key, wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET", "PATCH")},
			scenario{name: kn + "/DELETE messages", method: "DELETE", path: "/v1/messages", key: key, wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET", "POST")},
			scenario{name: kn + "/PUT contacts", method: "PUT", path: "/v1/contacts", key: key, body: okContact, wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET", "POST")},
			scenario{name: kn + "/DELETE templates", method: "DELETE", path: "/v1/templates", key: key, wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET", "POST")},
			scenario{name: kn + "/POST template", method: "POST", path: "/v1/templates/<A.template>", key: key, body: "{}", wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET", "PATCH", "DELETE")},
			scenario{name: kn + "/PATCH message", method: "PATCH", path: "/v1/messages/<A.message>", key: key, body: "{}", wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET")},
			scenario{name: kn + "/DELETE message", method: "DELETE", path: "/v1/messages/<A.message>", key: key, wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET")},
			scenario{name: kn + "/GET send templates", method: "GET", path: "/v1/messages/templates", key: key, wantStatus: 405, wantCode: "method_not_allowed", check: allow("POST")},
			scenario{name: kn + "/POST openapi", method: "POST", path: "/v1/openapi.json", key: key, body: "{}", wantStatus: 405, wantCode: "method_not_allowed", check: allow("GET")},
			scenario{name: kn + "/unknown path", method: "GET", path: "/v1/nope", key: key, wantStatus: 404, wantCode: "not_found", wantBodyContains: []string{"/v1/nope"}},
			scenario{name: kn + "/v1 root", method: "GET", path: "/v1", key: key, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/v1 slash", method: "GET", path: "/v1/", key: key, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/root", method: "GET", path: "/", key: key, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/v2", method: "POST", path: "/v2/messages", key: key, body: okText, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/trailing slash", method: "GET", path: "/v1/contacts/", key: key, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/too deep", method: "GET", path: "/v1/contacts/<A.contact>/notes", key: key, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/prefix lookalike", method: "POST", path: "/v1/messagesx", key: key, body: okText, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/case", method: "GET", path: "/V1/contacts", key: key, wantStatus: 404, wantCode: "not_found"},
			// ServeMux would answer these with a bare 307 redirect.
			scenario{name: kn + "/double slash", method: "GET", path: "/v1//contacts", key: key, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/leading double slash", method: "POST", path: "//v1/messages", key: key, body: okText, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/dot dot", method: "GET", path: "/v1/contacts/../messages/<A.message>", key: key, wantStatus: 404, wantCode: "not_found"},
			scenario{name: kn + "/dot", method: "PATCH", path: "/v1/./contacts/<A.contact>", key: key, body: `{"company":"X"}`, wantStatus: 404, wantCode: "not_found"},
		)
	}
	// Unknown ids of the workspace.
	rows = append(rows,
		scenario{name: "unknown message", method: "GET", path: "/v1/messages/msg_00000000000000000000000000000000", key: "A", wantStatus: 404, wantCode: "not_found"},
		scenario{name: "unknown template", method: "GET", path: "/v1/templates/tpl_nope", key: "A", wantStatus: 404, wantCode: "not_found"},
		scenario{name: "unknown contact", method: "GET", path: "/v1/contacts/ct_nope", key: "A", wantStatus: 404, wantCode: "not_found"},
		scenario{name: "unknown contact PATCH", method: "PATCH", path: "/v1/contacts/ct_nope", key: "A", body: `{"company":"X"}`, wantStatus: 404, wantCode: "not_found"},
		scenario{name: "escaped id", method: "GET", path: "/v1/contacts/%2e%2e", key: "A", wantStatus: 404, wantCode: "not_found"},
		scenario{name: "long id", method: "GET", path: "/v1/messages/" + strings.Repeat("m", 5000), key: "A", wantStatus: 404, wantCode: "not_found"},
		scenario{name: "message id as template id", method: "GET", path: "/v1/templates/<A.message>", key: "A", wantStatus: 404, wantCode: "not_found"},
	)
	runScenarios(t, rows)
}

// TestChannelUnavailable: a disconnected channel refuses sends with 422,
// and only in that workspace and on that channel.
func TestChannelUnavailable(t *testing.T) {
	t.Parallel()
	disconnect := func(ws, ch string) func(t *testing.T, e *env) {
		return func(t *testing.T, e *env) {
			if _, err := e.svc.Workspace(e.ws(ws).ID).Channels.Disconnect(context.Background(), ch); err != nil {
				t.Fatal(err)
			}
		}
	}
	runScenarios(t, []scenario{
		{name: "instagram disconnected", before: disconnect("A", "instagram"), method: "POST", path: "/v1/messages", key: "A",
			body: `{"channel":"instagram","to":"ig_user_1","type":"text","text":"hi"}`, wantStatus: 422, wantCode: "channel_unavailable", wantField: "channel", wantBodyContains: []string{"instagram"}},
		{name: "messenger disconnected, media", before: disconnect("A", "messenger"), method: "POST", path: "/v1/messages", key: "A",
			body: `{"channel":"messenger","to":"psid_1","type":"image","media_url":"https://example.com/a.jpg"}`, wantStatus: 422, wantCode: "channel_unavailable"},
		{name: "other channel still works", before: disconnect("A", "instagram"), method: "POST", path: "/v1/messages", key: "A",
			body: okText, wantStatus: 201},
		{name: "whatsapp disconnected, template", before: disconnect("A", "whatsapp"), method: "POST", path: "/v1/messages/templates", key: "A",
			body: okTemplate, wantStatus: 422, wantCode: "channel_unavailable"},
		{name: "whatsapp disconnected, text", before: disconnect("A", "whatsapp"), method: "POST", path: "/v1/messages", key: "A",
			body: okText, wantStatus: 422, wantCode: "channel_unavailable"},
		{name: "other workspace unaffected", before: disconnect("A", "whatsapp"), method: "POST", path: "/v1/messages/templates", key: "B",
			body: okTemplate, wantStatus: 201},
		{name: "reads still work", before: disconnect("A", "whatsapp"), method: "GET", path: "/v1/messages/<A.message>", key: "A", wantStatus: 200},
		{name: "reconnected", before: func(t *testing.T, e *env) {
			disconnect("A", "whatsapp")(t, e)
			if _, err := e.svc.Workspace(e.A.ID).Channels.Connect(context.Background(), "whatsapp", nil); err != nil {
				t.Fatal(err)
			}
		}, method: "POST", path: "/v1/messages", key: "A", body: okText, wantStatus: 201},
		{name: "validation before channel check", before: disconnect("A", "instagram"), method: "POST", path: "/v1/messages", key: "A",
			body: `{"channel":"instagram","to":"ig_user_1","type":"text"}`, wantStatus: 400, wantCode: "validation_error", wantField: "text"},
	})
}

// TestTemplateSend covers template_not_found and the template endpoint's
// validation.
func TestTemplateSend(t *testing.T) {
	t.Parallel()
	send := func(body string) scenario {
		return scenario{method: "POST", path: "/v1/messages/templates", key: "A", body: body}
	}
	row := func(name, body string, status int, code, field string) scenario {
		s := send(body)
		s.name, s.wantStatus, s.wantCode, s.wantField = name, status, code, field
		return s
	}
	// withTemplate is row, run on A with the approved English template
	// name of components cs.
	withTemplate := func(tplName string, cs []messaging.TemplateComponent) func(name, body string, status int, code, field string) scenario {
		return func(name, body string, status int, code, field string) scenario {
			s := row(name, body, status, code, field)
			s.before = func(t *testing.T, e *env) {
				t.Helper()
				_, err := e.svc.Workspace(e.A.ID).Templates.Create(context.Background(), &messaging.TemplateCreateParams{
					Name: tplName, Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved, Components: cs})
				if err != nil {
					t.Fatal(err)
				}
			}
			return s
		}
	}
	// trackRow runs on a template whose URL button has a dynamic suffix.
	trackRow := withTemplate("track_order", []messaging.TemplateComponent{
		{Type: "BODY", Text: "Your order has shipped."},
		{Type: "BUTTONS", Buttons: []messaging.TemplateButton{{Type: "URL", Text: "Track", URL: "https://shop.example.com/track/{{1}}"}}},
	})
	// apptRow runs on appointment_reminder, two body variables.
	apptRow := withTemplate("appointment_reminder", []messaging.TemplateComponent{{Type: "BODY", Text: "Hi {{1}}, your appointment is on {{2}}."}})
	runScenarios(t, []scenario{
		row("unknown name", `{"to":"+254712345678","template_name":"nope","language":"en"}`, 404, "template_not_found", "template_name"),
		row("en_US template sent as en", `{"to":"+254712345678","template_name":"welcome","language":"en"}`, 404, "template_not_found", "template_name"),
		row("en_US template without language", `{"to":"+254712345678","template_name":"welcome"}`, 404, "template_not_found", "template_name"),
		row("en template sent as en_US", `{"to":"+254712345678","template_name":"order_update","language":"en_US","components":[{"type":"body","parameters":[{"type":"text","text":"a"},{"type":"text","text":"b"}]}]}`, 404, "template_not_found", "template_name"),
		row("sw template sent as en", `{"to":"+254712345678","template_name":"karibu","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"a"}]}]}`, 404, "template_not_found", "template_name"),
		row("pending template", `{"to":"+254712345678","template_name":"spring_sale","language":"en"}`, 404, "template_not_found", "template_name"),
		row("other workspace's template", `{"to":"+254712345678","template_name":"b_only","language":"en"}`, 404, "template_not_found", "template_name"),
		row("name in upper case", `{"to":"+254712345678","template_name":"WELCOME","language":"en_US"}`, 404, "template_not_found", "template_name"),
		row("exact match", okTemplate, 201, "", ""),
		row("en is the default language", `{"to":"+254712345678","template_name":"a_only"}`, 201, "", ""),
		row("variables", `{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"}]}]}`, 201, "", ""),
		row("variables without components", `{"to":"+254712345678","template_name":"order_update","language":"en"}`, 400, "validation_error", "components"),
		row("missing template_name", `{"to":"+254712345678","language":"en"}`, 400, "validation_error", "template_name"),
		row("missing to", `{"template_name":"welcome","language":"en_US"}`, 400, "validation_error", "to"),
		row("to not E.164", `{"to":"254712345678","template_name":"welcome","language":"en_US"}`, 400, "validation_error", "to"),
		row("scoped id as to", `{"to":"psid_1","template_name":"welcome","language":"en_US"}`, 400, "validation_error", "to"),
		row("BCP-47 hyphen", `{"to":"+254712345678","template_name":"welcome","language":"en-US"}`, 400, "validation_error", "language"),
		trackRow("button index as Meta's string \"0\"", `{"to":"+254712345678","template_name":"track_order","language":"en","components":[{"type":"button","sub_type":"url","index":"0","parameters":[{"type":"text","text":"A-42"}]}]}`, 201, "", ""),
		trackRow("button index as a number", `{"to":"+254712345678","template_name":"track_order","language":"en","components":[{"type":"button","sub_type":"url","index":0,"parameters":[{"type":"text","text":"A-42"}]}]}`, 201, "", ""),
		trackRow("button index as a word", `{"to":"+254712345678","template_name":"track_order","language":"en","components":[{"type":"button","sub_type":"url","index":"zero","parameters":[{"type":"text","text":"A-42"}]}]}`, 400, "validation_error", "components.index"),
		trackRow("button index a string out of range", `{"to":"+254712345678","template_name":"track_order","language":"en","components":[{"type":"button","sub_type":"url","index":"12","parameters":[{"type":"text","text":"A-42"}]}]}`, 400, "validation_error", "components[0].index"),
		apptRow("two variables, two parameters", `{"to":"+254712345678","template_name":"appointment_reminder","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"Monday"}]}]}`, 201, "", ""),
		apptRow("two variables, one parameter", `{"to":"+254712345678","template_name":"appointment_reminder","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"}]}]}`, 400, "validation_error", "components[0].parameters"),
		apptRow("two variables, three parameters", `{"to":"+254712345678","template_name":"appointment_reminder","components":[{"type":"body","parameters":[{"type":"text","text":"a"},{"type":"text","text":"b"},{"type":"text","text":"c"}]}]}`, 400, "validation_error", "components[0].parameters"),
		trackRow("URL button without its parameter", `{"to":"+254712345678","template_name":"track_order","language":"en","components":[{"type":"button","sub_type":"url","index":"0","parameters":[]}]}`, 400, "validation_error", "components[0].parameters"),
		row("unknown parameter type", `{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"body","parameters":[{"type":"sticker"}]}]}`, 400, "validation_error", ""),
	})
}

// TestPatchContact covers the partial update semantics.
func TestPatchContact(t *testing.T) {
	t.Parallel()
	// advance moves the clock a minute so updatedAt must move.
	advance := func(t *testing.T, e *env) { e.clock.Advance(time.Minute) }
	const later = "2026-03-01T09:01:00.000Z"
	// changed checks that the response is A's contact with exactly the
	// given fields changed (and updatedAt moved), and that GET agrees.
	changed := func(want map[string]any) func(t *testing.T, e *env, r *response) {
		return func(t *testing.T, e *env, r *response) {
			t.Helper()
			exp := fullContact(e.A.Contact)
			for k, v := range want {
				exp[k] = v
			}
			exp["updatedAt"] = later
			diffJSON(t, "PATCH response", exp, r.object(t))
			diffJSON(t, "GET after PATCH", exp, e.call(t, "GET", "/v1/contacts/<A.contact>", "A", nil).object(t))
		}
	}
	patch := func(name, body string, status int, code, field string, check func(*testing.T, *env, *response)) scenario {
		return scenario{name: name, method: "PATCH", path: "/v1/contacts/<A.contact>", key: "A", body: body, before: advance,
			wantStatus: status, wantCode: code, wantField: field, check: check}
	}
	runScenarios(t, []scenario{
		patch("one field", `{"company":"NewCo"}`, 200, "", "", changed(map[string]any{"company": "NewCo"})),
		patch("null clears lastName", `{"lastName":null}`, 200, "", "", changed(map[string]any{"lastName": "", "fullName": "Amina"})),
		patch("empty string clears lastName", `{"lastName":""}`, 200, "", "", changed(map[string]any{"lastName": "", "fullName": "Amina"})),
		patch("names trimmed, fullName derived", `{"firstName":"  Neema ","lastName":"Mwangi"}`, 200, "", "", changed(map[string]any{"firstName": "Neema", "lastName": "Mwangi", "fullName": "Neema Mwangi"})),
		patch("every field", `{"firstName":"N","lastName":"M","phone":"+255754123456","email":"n@example.org","company":"C","jobTitle":"J","website":"https://n.example.org","notes":"x","tags":["b","a"],"lifecycle":"lead"}`, 200, "", "",
			changed(map[string]any{"firstName": "N", "lastName": "M", "fullName": "N M", "phone": "+255754123456", "email": "n@example.org", "company": "C",
				"jobTitle": "J", "website": "https://n.example.org", "notes": "x", "tags": []any{"b", "a"}, "lifecycle": "lead"})),
		patch("tags null clears", `{"tags":null}`, 200, "", "", changed(map[string]any{"tags": []any{}})),
		patch("tags deduplicated", `{"tags":["x"," x ","y"]}`, 200, "", "", changed(map[string]any{"tags": []any{"x", "y"}})),
		patch("clear phone keeps email", `{"phone":null}`, 200, "", "", changed(map[string]any{"phone": ""})),
		patch("another workspace's phone", `{"phone":"<B.phone>"}`, 200, "", "", nil),
		patch("own phone again", `{"phone":"<A.phone>"}`, 200, "", "", changed(map[string]any{})),
		patch("own email in another case", `{"email":"AMINA@example.com"}`, 200, "", "", changed(map[string]any{"email": "AMINA@example.com"})),
		patch("same value again", `{"company":"Ujumbe Ltd"}`, 200, "", "", changed(map[string]any{})),
		patch("firstName null", `{"firstName":null}`, 400, "validation_error", "firstName", nil),
		patch("firstName empty", `{"firstName":""}`, 400, "validation_error", "firstName", nil),
		patch("firstName blank", `{"firstName":"   "}`, 400, "validation_error", "firstName", nil),
		patch("unknown field", `{"nickname":"Mimi"}`, 400, "validation_error", "nickname", nil),
		patch("unknown with known field", `{"company":"X","nickname":"Mimi"}`, 400, "validation_error", "nickname", nil),
		patch("read-only id", `{"id":"ct_other"}`, 400, "validation_error", "id", nil),
		patch("read-only source", `{"source":"import"}`, 400, "validation_error", "source", nil),
		patch("read-only fullName", `{"fullName":"X Y"}`, 400, "validation_error", "fullName", nil),
		patch("read-only createdAt", `{"createdAt":"2020-01-01T00:00:00Z"}`, 400, "validation_error", "createdAt", nil),
		patch("empty object", `{}`, 400, "validation_error", "body", nil),
		patch("array body", `[{"company":"X"}]`, 400, "validation_error", "body", nil),
		patch("null body", `null`, 400, "validation_error", "body", nil),
		patch("number for company", `{"company":5}`, 400, "validation_error", "company", nil),
		patch("bool for lastName", `{"lastName":false}`, 400, "validation_error", "lastName", nil),
		patch("string for tags", `{"tags":"vip"}`, 400, "validation_error", "tags", nil),
		patch("numbers in tags", `{"tags":[1,2]}`, 400, "validation_error", "tags", nil),
		patch("bad phone", `{"phone":"0712345678"}`, 400, "validation_error", "phone", nil),
		patch("bad email", `{"email":"nope"}`, 400, "validation_error", "email", nil),
		patch("bad website", `{"website":"ftp://example.com"}`, 400, "validation_error", "website", nil),
		patch("bad lifecycle", `{"lifecycle":"vip"}`, 400, "validation_error", "lifecycle", nil),
		patch("opted_out false", `{"opted_out":false}`, 400, "validation_error", "opted_out", nil),
		patch("opted_out true", `{"opted_out":true,"company":"X"}`, 400, "validation_error", "opted_out", nil),
		patch("opted_out not a boolean", `{"opted_out":"no"}`, 400, "validation_error", "opted_out", nil),
		patch("clear phone and email", `{"phone":null,"email":null}`, 400, "validation_error", "phone", nil),
		patch("email of another contact", `{"email":"BRIAN.amina@example.com"}`, 409, "conflict", "email", nil),
		patch("trailing garbage", `{"company":"X"} x`, 400, "validation_error", "body", nil),
		{name: "phone of another contact", method: "PATCH", path: "/v1/contacts/<A.contact2>", key: "A", body: `{"phone":"<A.phone>"}`,
			wantStatus: 409, wantCode: "conflict", wantField: "phone"},
	})
}

// TestPatchUpdatedAtMoves: updatedAt follows the clock across patches and
// createdAt stays.
func TestPatchUpdatedAtMoves(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for i, want := range []string{"2026-03-01T09:00:30.000Z", "2026-03-01T10:00:30.000Z"} {
		e.clock.Advance([]time.Duration{30 * time.Second, time.Hour}[i])
		r := e.call(t, "PATCH", "/v1/contacts/<A.contact>", "A", `{"notes":"call back"}`)
		expect(t, r, 200, "", "")
		m := r.object(t)
		if m["updatedAt"] != want || m["createdAt"] != ts0 || m["notes"] != "call back" {
			t.Errorf("patch %d: updatedAt %v createdAt %v notes %v, want %s %s", i+1, m["updatedAt"], m["createdAt"], m["notes"], want, ts0)
		}
	}
}

// TestContactsListPaginationAndSearch drives listing and search over HTTP.
func TestContactsListPaginationAndSearch(t *testing.T) {
	t.Parallel()
	e := setup(t)
	// 30 contacts, one a second, each through the API.
	for i := 1; i <= 30; i++ {
		e.clock.Advance(time.Second)
		body := `{"firstName":"Person","lastName":"` + two(i) + `","email":"person` + two(i) + `@example.com"}`
		expect(t, e.call(t, "POST", "/v1/contacts", "A", body), 201, "", "")
	}
	type page struct {
		Items []struct {
			ID, FullName, Email string
		} `json:"items"`
		Total, Page, Limit, TotalPages int
	}
	list := func(query string) page {
		t.Helper()
		r := e.call(t, "GET", "/v1/contacts"+query, "A", nil)
		expect(t, r, 200, "", "")
		if !strings.Contains(string(r.body), `"items":[`) {
			t.Errorf("%s: items is not an array: %s", query, r.body)
		}
		var p page
		decodeInto(t, r.body, &p)
		return p
	}
	names := func(p page) []string {
		var out []string
		for _, it := range p.Items {
			out = append(out, it.FullName)
		}
		return out
	}
	cases := []struct {
		query                          string
		total, page, limit, totalPages int
		first, last                    string
		count                          int
	}{
		{"", 32, 1, 25, 2, "Person 30", "Person 06", 25},
		{"?page=2", 32, 2, 25, 2, "Person 05", "Amina Odhiambo", 7},
		{"?page=3", 32, 3, 25, 2, "", "", 0},
		{"?limit=10&page=4", 32, 4, 10, 4, "Brian", "Amina Odhiambo", 2},
		{"?limit=100", 32, 1, 100, 1, "Person 30", "Amina Odhiambo", 32},
		{"?limit=1", 32, 1, 1, 32, "Person 30", "Person 30", 1},
		{"?search=person+0", 9, 1, 25, 1, "Person 09", "Person 01", 9},
		{"?search=PERSON&limit=5&page=2", 30, 2, 5, 6, "Person 25", "Person 21", 5},
		{"?search=%20%20odhiambo%20", 1, 1, 25, 1, "Amina Odhiambo", "Amina Odhiambo", 1},
		{"?search=amina", 1, 1, 25, 1, "Amina Odhiambo", "Amina Odhiambo", 1},
		{"?search=%2B2547", 1, 1, 25, 1, "Amina Odhiambo", "Amina Odhiambo", 1},
		{"?search=254+712", 1, 1, 25, 1, "Amina Odhiambo", "Amina Odhiambo", 1},
		{"?search=brian.amina%40", 1, 1, 25, 1, "Brian", "Brian", 1},
		{"?search=person17%40example.com", 1, 1, 25, 1, "Person 17", "Person 17", 1},
		{"?search=zawadi", 0, 1, 25, 0, "", "", 0},
		{"?search=%2B2547220", 0, 1, 25, 0, "", "", 0},
		{"?search=", 32, 1, 25, 2, "Person 30", "Person 06", 25},
	}
	for _, c := range cases {
		p := list(c.query)
		if p.Total != c.total || p.Page != c.page || p.Limit != c.limit || p.TotalPages != c.totalPages || len(p.Items) != c.count {
			t.Errorf("%q: total %d page %d limit %d totalPages %d items %d; want %d %d %d %d %d",
				c.query, p.Total, p.Page, p.Limit, p.TotalPages, len(p.Items), c.total, c.page, c.limit, c.totalPages, c.count)
			continue
		}
		if c.count > 0 && (p.Items[0].FullName != c.first || p.Items[len(p.Items)-1].FullName != c.last) {
			t.Errorf("%q: items %v, want %s ... %s", c.query, names(p), c.first, c.last)
		}
	}
	// The pages partition the list: no contact twice, none missing.
	seen := map[string]bool{}
	for pg := 1; pg <= 4; pg++ {
		for _, it := range list("?limit=10&page=" + two(pg)).Items {
			if seen[it.ID] {
				t.Errorf("contact %s on two pages", it.ID)
			}
			seen[it.ID] = true
		}
	}
	if len(seen) != 32 {
		t.Errorf("pages hold %d contacts, want 32", len(seen))
	}
}

func two(i int) string {
	return string([]byte{byte('0' + i/10), byte('0' + i%10)})
}

// TestContactCreateRoundTrip: a created contact is read back identically
// and appears first in the list.
func TestContactCreateRoundTrip(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.call(t, "POST", "/v1/contacts", "A", `{"firstName":" Neema ","lastName":"Mwangi","phone":"+255754123456","email":"Neema@Example.org","company":"Duka","jobTitle":"Owner","website":"https://duka.example.org","notes":"prefers sw"}`)
	expect(t, r, 201, "", "")
	created := r.object(t)
	id, _ := created["id"].(string)
	if !strings.HasPrefix(id, "ct_") {
		t.Fatalf("id %q", id)
	}
	want := map[string]any{
		"id": id, "firstName": "Neema", "lastName": "Mwangi", "fullName": "Neema Mwangi", "phone": "+255754123456",
		"email": "Neema@Example.org", "company": "Duka", "jobTitle": "Owner", "website": "https://duka.example.org",
		"notes": "prefers sw", "source": "api", "tags": []any{}, "lifecycle": "", "createdAt": ts0, "updatedAt": ts0,
		"opted_out": map[string]any{},
	}
	diffJSON(t, "POST /v1/contacts", want, created)
	diffJSON(t, "GET /v1/contacts/:id", want, e.call(t, "GET", "/v1/contacts/"+id, "A", nil).object(t))
	r = e.call(t, "GET", "/v1/contacts?limit=1", "A", nil)
	var p struct{ Items []map[string]any }
	decodeInto(t, r.body, &p)
	if len(p.Items) != 1 || p.Items[0]["id"] != id {
		t.Errorf("newest contact not first: %s", r.body)
	}
	// B does not see it.
	expect(t, e.call(t, "GET", "/v1/contacts/"+id, "B", nil), 404, "not_found", "")
	// The same email in B is no conflict.
	expect(t, e.call(t, "POST", "/v1/contacts", "B", `{"firstName":"Neema","email":"neema@example.org"}`), 201, "", "")
	// Idempotent creation is not a thing: the same body again conflicts.
	r = e.call(t, "POST", "/v1/contacts", "A", `{"firstName":"Neema","phone":"+255754123456"}`)
	expect(t, r, 409, "conflict", "phone")
	if e.store.contacts.Load() != 6 { // 4 fixtures + 2
		t.Errorf("%d contacts stored, want 6", e.store.contacts.Load())
	}
}

// TestPatchConcurrent: concurrent PATCHes of one contact all succeed (no
// 500 when optimistic retries race) and lose no field's update.
func TestPatchConcurrent(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.DisableRateLimits = true })
	// Four writers of their own field, and many writers of notes to make
	// the optimistic retries race hard.
	fields := []struct{ name, prefix string }{
		{"company", "C"}, {"jobTitle", "J"}, {"lastName", "L"}, {"website", "https://example.com/"},
	}
	for range 36 {
		fields = append(fields, struct{ name, prefix string }{"notes", "N"})
	}
	const rounds = 20
	var wg sync.WaitGroup
	var mu sync.Mutex
	codes := map[int]int{}
	for _, f := range fields {
		wg.Go(func() {
			for i := range rounds {
				r := e.doRaw(request{method: "PATCH", path: "/v1/contacts/<A.contact>", key: e.A.Full,
					body: fmt.Sprintf(`{%q:%q}`, f.name, f.prefix+strconv.Itoa(i))})
				mu.Lock()
				codes[r.status]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if codes[200] != len(fields)*rounds {
		t.Errorf("statuses %v, want %d x 200", codes, len(fields)*rounds)
	}
	got, err := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := strconv.Itoa(rounds - 1)
	if got.Company != "C"+last || got.JobTitle != "J"+last || got.LastName != "L"+last || got.Website != "https://example.com/"+last {
		t.Errorf("lost update: %+v", got)
	}
	if got.Version != e.A.Contact.Version+int64(len(fields)*rounds) {
		t.Errorf("version %d, want %d", got.Version, e.A.Contact.Version+int64(len(fields)*rounds))
	}
}
