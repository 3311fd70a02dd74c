package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

// openSQLite opens a SQLite store in a temporary directory, closed when
// the test ends.
func openSQLite(t testing.TB) *sqlitestore.Store {
	t.Helper()
	st, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "messaging.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// hostile is one row of TestHostileInputs: a request a hostile or broken
// client sends over the network, and the documented answer.
type hostile struct {
	name    string
	method  string
	path    string // placeholders: see env.expand
	headers http.Header
	body    func() io.Reader // nil: no body
	// chunked sends the body without Content-Length.
	chunked bool
	// raw, when set, is written to the connection as the whole request
	// ({host} is replaced); method, path, headers and body are ignored.
	raw string
	// wantStatus, and for /v1 errors the envelope's code and field; for
	// /sms/v1 the response-code.
	wantStatus int
	wantCode   string
	wantField  string
	wantSMS    int
	check      func(t *testing.T, e *env, status int, header http.Header, body []byte)
}

func repeatBody(parts ...string) func() io.Reader {
	return func() io.Reader { return strings.NewReader(strings.Join(parts, "")) }
}

// jsonArray is a JSON array of n copies of elem.
func jsonArray(elem string, n int) string {
	return "[" + strings.TrimSuffix(strings.Repeat(elem+",", n), ",") + "]"
}

// hostileStore is a store of both APIs.
type hostileStore interface {
	driver.Store
	sms.Store
}

// TestHostileInputs sends hostile requests to the handler over a real TCP
// server on SQLite, one after the other: each gets its documented 4xx (or,
// where the input is harmless, its ordinary answer), never a 5xx, and
// after each the server still reads and writes normally. A refused write
// stores nothing.
func TestHostileInputs(t *testing.T) {
	t.Parallel()
	runHostile(t, openSQLite(t))
}

// TestHostileInputsPostgres is TestHostileInputs on PostgreSQL: every
// answer is the same as on SQLite.
func TestHostileInputsPostgres(t *testing.T) {
	t.Parallel()
	runHostile(t, openPostgres(t))
}

// hostileEnv is setupOn(st) with no rate limits reached, serving the SMS
// API too (account 1234 with 100 credits and sender ACME), and two more
// templates of A: coupon_nul (body {{1}}; URL, quick reply and copy code
// buttons) and invoice_nul (document header, body {{1}}).
func hostileEnv(t *testing.T, st hostileStore) (*env, *sms.SMS) {
	t.Helper()
	e := setupOn(t, st, nil, unlimited)
	smsSvc, err := sms.New(st, fakegateway.New(nil), &sms.Options{Clock: e.clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := smsSvc.CreateAccount(context.Background(), &sms.CreateAccountParams{
		PartnerID: smsPartner, APIKey: smsKey, Senders: []string{"ACME"}, Credit: sms.Credits(100),
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Workspace(e.A.ID).Templates.Create(context.Background(), &messaging.TemplateCreateParams{
		Name: "coupon_nul", Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{
			{Type: "BODY", Text: "Hi {{1}}, here is your code."},
			{Type: "BUTTONS", Buttons: []messaging.TemplateButton{
				{Type: "URL", Text: "Track", URL: "https://example.com/track/{{1}}"},
				{Type: "QUICK_REPLY", Text: "Stop"},
				{Type: "COPY_CODE", Example: "SAVE10"},
			}},
		}}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Workspace(e.A.ID).Templates.Create(context.Background(), &messaging.TemplateCreateParams{
		Name: "invoice_nul", Category: record.CategoryUtility, Language: "en", Status: record.TemplateApproved,
		Components: []messaging.TemplateComponent{{Type: "HEADER", Format: "DOCUMENT"}, {Type: "BODY", Text: "Your invoice {{1}} is attached."}}}); err != nil {
		t.Fatal(err)
	}
	o := &httpapi.Options{Clock: e.clock.Now, SMS: smsSvc}
	unlimited(o)
	e.h = httpapi.New(e.svc, o)
	return e, smsSvc
}

func runHostile(t *testing.T, st hostileStore) {
	e, smsSvc := hostileEnv(t, st)
	srv := httptest.NewServer(e.h)
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 30 * time.Second}

	const mib = 1 << 20
	text := func(field, value string) func() io.Reader {
		return repeatBody(`{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi",`, fmt.Sprintf("%q:%s", field, value), "}")
	}
	smsSend := func(extra string) func() io.Reader {
		return repeatBody(`{"apikey":"`+smsKey+`","partnerID":"1234","mobile":"254712345678","message":"hi","shortcode":"ACME"`, extra, "}")
	}
	// contactNames lists the full names a search answers.
	contactNames := func(t *testing.T, body []byte) []string {
		var page struct{ Items []struct{ FullName string } }
		if err := json.Unmarshal(body, &page); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, it := range page.Items {
			out = append(out, it.FullName)
		}
		return out
	}
	searchFinds := func(want ...string) func(t *testing.T, e *env, status int, h http.Header, body []byte) {
		return func(t *testing.T, e *env, status int, h http.Header, body []byte) {
			got := contactNames(t, body)
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("search found %q, want %q", got, want)
			}
		}
	}
	generatedID := func(t *testing.T, e *env, status int, h http.Header, body []byte) {
		id := h.Get("X-Correlation-ID")
		if !strings.HasPrefix(id, "req_") || !saneID(id) {
			t.Errorf("X-Correlation-ID %q: want a generated req_ id", id)
		}
		for k := range h {
			if strings.Contains(strings.ToLower(k), "inject") || strings.EqualFold(k, "Set-Cookie") {
				t.Errorf("response header %s: %q was injected", k, h[k])
			}
		}
	}

	rows := []hostile{
		// Sizes.
		{name: "10 MiB body", method: "POST", path: "/v1/messages", body: repeatBody(`{"text":"`, strings.Repeat("a", 10*mib), `"}`),
			wantStatus: 413, wantCode: "payload_too_large"},
		{name: "10 MiB chunked body", method: "POST", path: "/v1/contacts", chunked: true, body: repeatBody(`{"notes":"`, strings.Repeat("n", 10*mib), `"}`),
			wantStatus: 413, wantCode: "payload_too_large"},
		{name: "10 MiB SMS body", method: "POST", path: "/sms/v1/messages/bulk", body: repeatBody(`{"smslist":`, jsonArray(`{"message":"x"}`, 700_000), `}`),
			wantStatus: 413, wantSMS: 1010},
		{name: "8 KiB id", method: "GET", path: "/v1/contacts/ct_" + strings.Repeat("x", 8<<10), wantStatus: 404, wantCode: "not_found"},
		{name: "10 KiB search", method: "GET", path: "/v1/contacts?search=" + strings.Repeat("a", 10<<10), wantStatus: 400, wantCode: "validation_error", wantField: "search"},
		{name: "20,000 query parameters", method: "GET", path: "/v1/contacts?" + strings.Repeat("page=1&", 20_000), wantStatus: 400, wantCode: "validation_error", wantField: "query"},
		{name: "2 MiB header", method: "GET", path: "/v1/contacts", headers: hdr("X-Padding", strings.Repeat("p", 2*mib)), wantStatus: 431},
		// Deep nesting, in every decoder.
		{name: "deep nesting in a message", method: "POST", path: "/v1/messages", body: text("text", strings.Repeat("[", 100_000)+strings.Repeat("]", 100_000)),
			wantStatus: 400, wantCode: "validation_error"},
		{name: "deep nesting in a template send", method: "POST", path: "/v1/messages/templates",
			body:       repeatBody(`{"to":"+254712345678","template_name":"welcome","language":"en_US","components":`, strings.Repeat(`[{"parameters":`, 20_000), "[]", strings.Repeat("}]", 20_000), "}"),
			wantStatus: 400, wantCode: "validation_error"},
		{name: "deep nesting in a contact", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"D","email":"d@example.com","tags":`, strings.Repeat("[", 50_000), strings.Repeat("]", 50_000), "}"),
			wantStatus: 400, wantCode: "validation_error"},
		{name: "deep nesting in a patch", method: "PATCH", path: "/v1/contacts/<A.contact>", body: repeatBody(`{"tags":`, strings.Repeat(`{"a":`, 50_000), "1", strings.Repeat("}", 50_000), "}"),
			wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "deep nesting in an SMS bulk item", method: "POST", path: "/sms/v1/messages/bulk",
			body: repeatBody(`{"count":1,"smslist":[{"clientsmsid":`, strings.Repeat("[", 50_000), strings.Repeat("]", 50_000), "}]}"), wantStatus: 400, wantSMS: 1010},
		// Invalid UTF-8, in every decoder.
		{name: "invalid UTF-8 in a template send", method: "POST", path: "/v1/messages/templates",
			body: repeatBody(`{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"body","parameters":[{"type":"text","text":"`, "\xc3\x28", `"}]}]}`), wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "invalid UTF-8 in a contact", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"\xed\xa0\x80","email":"u@example.com"}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "invalid UTF-8 in an SMS", method: "POST", path: "/sms/v1/messages", body: smsSend(`,"clientsmsid":"\xff"`), wantStatus: 400, wantSMS: 1010},
		{name: "invalid UTF-8 in search", method: "GET", path: "/v1/contacts?search=am%FFina", wantStatus: 400, wantCode: "validation_error", wantField: "search"},
		{name: "overlong UTF-8 slash in an id", method: "GET", path: "/v1/contacts/%C0%AF..%C0%AFetc", wantStatus: 404, wantCode: "not_found"},
		// NUL bytes.
		{name: "raw NUL between members", method: "POST", path: "/v1/messages", body: repeatBody(`{"channel":"whatsapp",`, "\x00", `"to":"+254712345678","type":"text","text":"hi"}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "body"},
		{name: "escaped NUL in firstName", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"A\u0000B","email":"nul@example.com"}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "firstName"},
		{name: "escaped NUL in a patch", method: "PATCH", path: "/v1/contacts/<A.contact>", body: repeatBody(`{"notes":"x\u0000y"}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "notes"},
		{name: "NUL in search", method: "GET", path: "/v1/contacts?search=am%00", wantStatus: 400, wantCode: "validation_error", wantField: "search"},
		{name: "NUL in an id", method: "GET", path: "/v1/messages/msg_%00", wantStatus: 404, wantCode: "not_found"},
		{name: "escaped NUL in a coupon_code", method: "POST", path: "/v1/messages/templates",
			body:       repeatBody(`{"to":"+254712345678","template_name":"coupon_nul","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"}]},{"type":"button","sub_type":"copy_code","index":2,"parameters":[{"type":"coupon_code","coupon_code":"SAVE\u000010"}]}]}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "components[1].parameters[0].coupon_code"},
		{name: "escaped NUL in a member name", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"N","email":"nk@example.com","\u0000":"x"}`),
			wantStatus: 400, wantCode: "validation_error"},
		{name: "escaped backslash before u0000 is no NUL", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"back\\u0000slash","email":"bs@example.com"}`),
			wantStatus: 201},
		{name: "NUL in a template category", method: "GET", path: "/v1/templates?category=%00", wantStatus: 400, wantCode: "validation_error", wantField: "category"},
		{name: "invalid UTF-8 in a template language", method: "GET", path: "/v1/templates?language=%C3%28", wantStatus: 400, wantCode: "validation_error", wantField: "language"},
		{name: "NUL in a contact id", method: "GET", path: "/v1/contacts/ct_%00", wantStatus: 404, wantCode: "not_found"},
		{name: "NUL in a template id", method: "GET", path: "/v1/templates/tpl%00", wantStatus: 404, wantCode: "not_found"},
		{name: "NUL in a patched contact id", method: "PATCH", path: "/v1/contacts/ct_%00", body: repeatBody(`{"company":"X"}`), wantStatus: 404, wantCode: "not_found"},
		{name: "NUL in a bulk clientsmsid fails that item alone", method: "POST", path: "/sms/v1/messages/bulk",
			body: repeatBody(`{"count":2,"smslist":[{"partnerID":"1234","apikey":"` + smsKey + `","clientsmsid":"a\u0000b","mobile":"254712345678","message":"x","shortcode":"ACME"},` +
				`{"partnerID":"1234","apikey":"` + smsKey + `","clientsmsid":"ok","mobile":"254712345678","message":"x","shortcode":"ACME"}]}`),
			wantStatus: 200, check: bulkCodes(1009, 200)},
		{name: "NUL in an SMS partnerID", method: "POST", path: "/sms/v1/account/balance", body: repeatBody(`{"apikey":"` + smsKey + `","partnerID":"12\u000034"}`), wantStatus: 400, wantSMS: 1009},
		{name: "NUL in an SMS message", method: "POST", path: "/sms/v1/messages", body: repeatBody(`{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345678","message":"a\u0000b","shortcode":"ACME"}`),
			wantStatus: 400, wantSMS: 1009},
		// Numbers (and other types) where strings belong.
		{name: "number for to", method: "POST", path: "/v1/messages", body: repeatBody(`{"channel":"whatsapp","to":254712345678,"type":"text","text":"hi"}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "to"},
		{name: "number for a template parameter", method: "POST", path: "/v1/messages/templates",
			body: repeatBody(`{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"body","parameters":[{"type":"text","text":42}]}]}`), wantStatus: 400, wantCode: "validation_error", wantField: "components.parameters.text"},
		{name: "number for email", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"N","email":1e3}`), wantStatus: 400, wantCode: "validation_error", wantField: "email"},
		{name: "number for a patched field", method: "PATCH", path: "/v1/contacts/<A.contact>", body: repeatBody(`{"jobTitle":-0.5}`), wantStatus: 400, wantCode: "validation_error", wantField: "jobTitle"},
		{name: "number for an SMS message", method: "POST", path: "/sms/v1/messages", body: repeatBody(`{"apikey":"` + smsKey + `","partnerID":"1234","mobile":"254712345678","message":12,"shortcode":"ACME"}`),
			wantStatus: 400, wantSMS: 1009},
		{name: "number for an SMS apikey", method: "POST", path: "/sms/v1/account/balance", body: repeatBody(`{"apikey":123456789012345678901234567890,"partnerID":"1234"}`), wantStatus: 400, wantSMS: 1009},
		// 10,000-element arrays.
		{name: "10,000 tags", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"T","email":"tags@example.com","tags":`, jsonArray(`"t"`, 10_000), `}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "tags"},
		{name: "10,000 tags in a patch", method: "PATCH", path: "/v1/contacts/<A.contact>", body: repeatBody(`{"tags":`, jsonArray(`"t"`, 10_000), `}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "tags"},
		{name: "10,000 components", method: "POST", path: "/v1/messages/templates",
			body: repeatBody(`{"to":"+254712345678","template_name":"welcome","language":"en_US","components":`, jsonArray(`{"type":"body","parameters":[]}`, 10_000), `}`), wantStatus: 400, wantCode: "validation_error", wantField: "components"},
		{name: "10,000 parameters", method: "POST", path: "/v1/messages/templates",
			body:       repeatBody(`{"to":"+254712345678","template_name":"karibu","language":"sw","components":[{"type":"body","parameters":`, jsonArray(`{"type":"text","text":"x"}`, 10_000), `}]}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "components[0].parameters"},
		{name: "10,000 unknown elements", method: "POST", path: "/v1/messages", body: text("extra", jsonArray("0", 10_000)), wantStatus: 400, wantCode: "validation_error", wantField: "extra"},
		{name: "10,000 SMS", method: "POST", path: "/sms/v1/messages/bulk", body: repeatBody(`{"count":10000,"smslist":`, jsonArray(`{"partnerID":"1234"}`, 10_000), `}`),
			wantStatus: 400, wantSMS: 1012},
		// SQL metacharacters and LIKE wildcards.
		{name: "contact with a percent sign", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"100%","lastName":"Juice","email":"juice@example.com"}`), wantStatus: 201},
		{name: "contact with an underscore", method: "POST", path: "/v1/contacts", body: repeatBody(`{"firstName":"a_b","email":"under@example.com"}`), wantStatus: 201},
		{name: "search %", method: "GET", path: "/v1/contacts?search=%25", wantStatus: 200, check: searchFinds()},
		{name: "search 100%", method: "GET", path: "/v1/contacts?search=100%25", wantStatus: 200, check: searchFinds("100% Juice")},
		{name: "search _", method: "GET", path: "/v1/contacts?search=_", wantStatus: 200, check: searchFinds()},
		{name: "search a_", method: "GET", path: "/v1/contacts?search=a_", wantStatus: 200, check: searchFinds("a_b")},
		{name: "search a%", method: "GET", path: "/v1/contacts?search=a%25", wantStatus: 200, check: searchFinds()},
		{name: "search backslash-escaped %", method: "GET", path: "/v1/contacts?search=100%5C%25", wantStatus: 200, check: searchFinds()},
		{name: "search quote OR 1=1", method: "GET", path: "/v1/contacts?search=" + url.QueryEscape(`' OR '1'='1`), wantStatus: 200, check: searchFinds()},
		{name: "search DROP TABLE", method: "GET", path: "/v1/contacts?search=" + url.QueryEscape(`x'); DROP TABLE contacts;--`), wantStatus: 200, check: searchFinds()},
		{name: "search UNION SELECT", method: "GET", path: "/v1/contacts?search=" + url.QueryEscape(`" UNION SELECT id, hash FROM api_keys --`), wantStatus: 200, check: searchFinds()},
		{name: "search amina still works", method: "GET", path: "/v1/contacts?search=AMI", wantStatus: 200, check: searchFinds("Amina Odhiambo")},
		{name: "SQL in an id", method: "GET", path: "/v1/contacts/" + url.PathEscape(`' OR 1=1--`), wantStatus: 404, wantCode: "not_found"},
		{name: "LIKE wildcard as an id", method: "GET", path: "/v1/messages/%25", wantStatus: 404, wantCode: "not_found"},
		{name: "SQL in a template name", method: "POST", path: "/v1/messages/templates", body: repeatBody(`{"to":"+254712345678","template_name":"x' OR '1'='1","language":"en"}`),
			wantStatus: 404, wantCode: "template_not_found", wantField: "template_name"},
		{name: "SQL in an SMS partnerID", method: "POST", path: "/sms/v1/account/balance", body: repeatBody(`{"apikey":"` + smsKey + `","partnerID":"1234' OR '1'='1"}`), wantStatus: 401, wantSMS: 1006},
		{name: "SQL in an idempotency_key", method: "POST", path: "/v1/messages", body: text("idempotency_key", `"'; DROP TABLE messages;--"`), wantStatus: 201},
		{name: "the same SQL key replays", method: "POST", path: "/v1/messages", body: text("idempotency_key", `"'; DROP TABLE messages;--"`), wantStatus: 201,
			check: func(t *testing.T, e *env, status int, h http.Header, body []byte) {
				if h.Get("Idempotent-Replayed") != "true" {
					t.Errorf("the second send with the key was not a replay")
				}
			}},
		// Header injection in X-Correlation-ID.
		{name: "encoded CRLF in X-Correlation-ID", method: "GET", path: "/v1/contacts", headers: hdr("X-Correlation-ID", "abc%0d%0aX-Injected:%201"), wantStatus: 200, check: generatedID},
		{name: "HTML in X-Correlation-ID", method: "GET", path: "/v1/nope", headers: hdr("X-Correlation-ID", `<script>alert(1)</script>`), wantStatus: 404, wantCode: "not_found", check: generatedID},
		{name: "obs-text in X-Correlation-ID", method: "GET", path: "/v1/contacts", headers: hdr("X-Correlation-ID", "\xc3\xb1\xff"), wantStatus: 200, check: generatedID},
		{name: "raw CRLF in X-Correlation-ID is a second header", raw: "GET /v1/contacts HTTP/1.1\r\nHost: {host}\r\nX-API-Key: {key}\r\nX-Correlation-ID: abc\r\nX-Injected: 1\r\nConnection: close\r\n\r\n",
			wantStatus: 200, check: func(t *testing.T, e *env, status int, h http.Header, body []byte) {
				if h.Get("X-Correlation-ID") != "abc" || h.Get("X-Injected") != "" {
					t.Errorf("headers %v", h)
				}
			}},
		{name: "bare CR in X-Correlation-ID", raw: "GET /v1/contacts HTTP/1.1\r\nHost: {host}\r\nX-API-Key: {key}\r\nX-Correlation-ID: abc\rSet-Cookie: session=evil\r\nConnection: close\r\n\r\n",
			wantStatus: 400, check: generatedOrNone},
		{name: "NUL in X-Correlation-ID", raw: "GET /v1/contacts HTTP/1.1\r\nHost: {host}\r\nX-API-Key: {key}\r\nX-Correlation-ID: a\x00b\r\nConnection: close\r\n\r\n",
			wantStatus: 400, check: generatedOrNone},
		{name: "long X-Correlation-ID", method: "GET", path: "/v1/contacts", headers: hdr("X-Correlation-ID", strings.Repeat("a", 60_000)), wantStatus: 200, check: generatedID},
		// Idempotency keys.
		{name: "idempotency_key of 255", method: "POST", path: "/v1/messages", body: text("idempotency_key", `"`+strings.Repeat("k", 255)+`"`), wantStatus: 201},
		{name: "idempotency_key of 256", method: "POST", path: "/v1/messages", body: text("idempotency_key", `"`+strings.Repeat("k", 256)+`"`), wantStatus: 400, wantCode: "validation_error", wantField: "idempotency_key"},
		{name: "idempotency_key of 1,000,000", method: "POST", path: "/v1/messages/templates",
			body:       repeatBody(`{"to":"+254712345678","template_name":"welcome","language":"en_US","idempotency_key":"`, strings.Repeat("k", 1_000_000), `"}`),
			wantStatus: 400, wantCode: "validation_error", wantField: "idempotency_key"},
		{name: "idempotency_key with a newline", method: "POST", path: "/v1/messages", body: text("idempotency_key", `"a\nb"`), wantStatus: 400, wantCode: "validation_error", wantField: "idempotency_key"},
	}
	healthy := 0
	for _, row := range rows {
		msgs, contacts := e.store.messages.Load(), e.store.contacts.Load()
		status, header, body := sendHostile(t, client, srv, e, row)
		if status != row.wantStatus {
			t.Errorf("%s: status %d, want %d: %.300s", row.name, status, row.wantStatus, body)
		}
		switch {
		case row.wantCode != "":
			var env envelope
			if err := json.Unmarshal(body, &env); err != nil || env.Error.Code != row.wantCode || (row.wantField != "" && env.Error.Field != row.wantField) {
				t.Errorf("%s: error %s/%s, want %s/%s: %.300s", row.name, env.Error.Code, env.Error.Field, row.wantCode, row.wantField, body)
			}
		case row.wantSMS != 0:
			var flat struct {
				Code int `json:"response-code"`
			}
			if err := json.Unmarshal(body, &flat); err != nil || flat.Code != row.wantSMS {
				t.Errorf("%s: response-code %d, want %d: %.300s", row.name, flat.Code, row.wantSMS, body)
			}
		}
		if status >= 500 {
			t.Errorf("%s: status %d", row.name, status)
		}
		if status >= 400 && (e.store.messages.Load() != msgs || e.store.contacts.Load() != contacts) {
			t.Errorf("%s: refused with %d but stored something", row.name, status)
		}
		if row.check != nil {
			row.check(t, e, status, header, body)
		}
		// The server still reads and writes.
		healthy++
		for _, rq := range []struct {
			method, path, body string
			want               int
		}{
			{"GET", "/v1/contacts/" + e.A.Contact.ID, "", 200},
			{"POST", "/v1/messages", fmt.Sprintf(`{"channel":"whatsapp","to":"+254712345678","type":"text","text":"healthy %d"}`, healthy), 201},
		} {
			st, _, b := sendHostile(t, client, srv, e, hostile{method: rq.method, path: rq.path, body: repeatBody(rq.body)})
			if st != rq.want {
				t.Fatalf("after %s: %s %s = %d, want %d: %s", row.name, rq.method, rq.path, st, rq.want, b)
			}
		}
	}
	nulSweep(t, e, smsSvc, func(method, path, body string) (int, []byte) {
		status, _, b := sendHostile(t, client, srv, e, hostile{name: method + " " + path, method: method, path: path, body: repeatBody(body)})
		if status >= 500 {
			t.Errorf("%s %s %s: %d %s", method, path, body, status, b)
		}
		return status, b
	})
}

// bulkCodes checks the response-code of each entry of a bulk answer.
func bulkCodes(codes ...int) func(t *testing.T, e *env, status int, h http.Header, body []byte) {
	return func(t *testing.T, e *env, status int, h http.Header, body []byte) {
		var out struct {
			Responses []struct {
				Code int `json:"response-code"`
			} `json:"responses"`
		}
		if err := json.Unmarshal(body, &out); err != nil || len(out.Responses) != len(codes) {
			t.Errorf("bulk answer %s: %v, want %d entries", body, err, len(codes))
			return
		}
		for i, c := range codes {
			if out.Responses[i].Code != c {
				t.Errorf("bulk entry %d: response-code %d, want %d: %s", i, out.Responses[i].Code, c, body)
			}
		}
	}
}

// generatedOrNone accepts net/http's own refusal of a malformed header
// (no correlation id at all) or a generated id, never the sent value, and
// no injected header.
func generatedOrNone(t *testing.T, e *env, status int, h http.Header, body []byte) {
	if id := h.Get("X-Correlation-ID"); id != "" && !strings.HasPrefix(id, "req_") {
		t.Errorf("X-Correlation-ID %q echoed", id)
	}
	if h.Get("Set-Cookie") != "" {
		t.Errorf("Set-Cookie injected: %q", h.Get("Set-Cookie"))
	}
}

// sendHostile sends row (with A's full key) and returns the answer.
func sendHostile(t *testing.T, client *http.Client, srv *httptest.Server, e *env, row hostile) (int, http.Header, []byte) {
	t.Helper()
	if row.raw != "" {
		conn, err := net.DialTimeout("tcp", srv.Listener.Addr().String(), 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		_ = conn.SetDeadline(time.Now().Add(30 * time.Second))
		raw := strings.NewReplacer("{host}", srv.Listener.Addr().String(), "{key}", e.A.Full).Replace(row.raw)
		if _, err := io.WriteString(conn, raw); err != nil {
			t.Fatal(err)
		}
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatalf("%s: %v", row.name, err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header, b
	}
	var body io.Reader
	if row.body != nil {
		body = row.body()
		if row.chunked {
			body = io.MultiReader(body) // hides the length: sent chunked
		} else if rd, ok := body.(*strings.Reader); ok {
			var buf bytes.Buffer
			_, _ = rd.WriteTo(&buf)
			body = bytes.NewReader(buf.Bytes())
		}
	}
	req, err := http.NewRequest(row.method, srv.URL+e.expand(row.path), body)
	if err != nil {
		t.Fatalf("%s: %v", row.name, err)
	}
	req.Header.Set("X-API-Key", e.A.Full)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, vs := range row.headers {
		req.Header[k] = vs
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", row.name, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s: reading the answer: %v", row.name, err)
	}
	return resp.StatusCode, resp.Header, b
}
