package httpapi_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// diffJSON compares want (any JSON-marshalable value) with got (a decoded
// JSON value) after putting want through JSON too.
func diffJSON(t *testing.T, what string, want, got any) {
	t.Helper()
	b, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var w any
	if err := json.Unmarshal(b, &w); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(w, got); d != "" {
		t.Errorf("%s mismatch (-want +got):\n%s", what, d)
	}
}

func decodeInto(t *testing.T, b []byte, v any) {
	t.Helper()
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("decode %s: %v", b, err)
	}
}

func iso(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// fullContact is the JSON of GET /v1/contacts/:id for c.
func fullContact(c *messaging.Contact) map[string]any {
	m := listContact(c)
	m["website"] = c.Website
	m["notes"] = c.Notes
	m["opted_out"] = map[string]any{} // none of the fixtures opted out
	return m
}

// listContact is the JSON of an item of GET /v1/contacts for c: exactly
// the fields of the spec's Contact table.
func listContact(c *messaging.Contact) map[string]any {
	tags := []any{}
	for _, s := range c.Tags {
		tags = append(tags, s)
	}
	return map[string]any{
		"id": c.ID, "firstName": c.FirstName, "lastName": c.LastName, "fullName": c.FullName,
		"phone": c.Phone, "email": c.Email, "company": c.Company, "jobTitle": c.JobTitle,
		"source": c.Source, "tags": tags, "lifecycle": c.Lifecycle,
		"createdAt": iso(c.CreatedAt), "updatedAt": iso(c.UpdatedAt),
	}
}

// templateJSON is the JSON of a template of A or B as listed and read.
func templateJSON(tp *messaging.Template) map[string]any {
	return map[string]any{
		"id": tp.ID, "name": tp.Name, "category": tp.Category, "language": tp.Language, "status": tp.Status,
		"components": tp.Components, "send_example": messaging.SendExample(tp),
		"created_at": iso(tp.CreatedAt), "updated_at": iso(tp.UpdatedAt),
	}
}

var msgIDRe = regexp.MustCompile(`^msg_[0-9a-f]{32}$`)

// TestSendShapes: both send endpoints answer 201 with exactly the five
// fields of the spec, and the message reads back in status form.
func TestSendShapes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, path, body   string
		channel, to, typ   string
		wantTemplateFields bool
	}{
		{"text whatsapp", "/v1/messages", okText, "whatsapp", "+254712345678", "text", false},
		{"image messenger psid", "/v1/messages", `{"channel":"messenger","to":"psid_42","type":"image","media_url":"https://example.com/a.jpg","caption":"hi"}`, "messenger", "psid_42", "image", false},
		{"document instagram phone", "/v1/messages", `{"channel":"instagram","to":"+254722000111","type":"document","media_url":"https://example.com/a.pdf","filename":"a.pdf"}`, "instagram", "+254722000111", "document", false},
		{"audio", "/v1/messages", `{"channel":"whatsapp","to":"+14155550123","type":"audio","media_url":"https://example.com/a.ogg"}`, "whatsapp", "+14155550123", "audio", false},
		{"template", "/v1/messages/templates", `{"to":"+254712345678","template_name":"order_update","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-1"}]}]}`, "whatsapp", "+254712345678", "template", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			e.clock.Advance(90 * time.Second)
			r := e.call(t, "POST", c.path, "A", c.body)
			expect(t, r, 201, "", "")
			got := r.object(t)
			id, _ := got["message_id"].(string)
			if !msgIDRe.MatchString(id) {
				t.Errorf("message_id %q", id)
			}
			conv := record.ConversationID(e.A.ID, c.channel, c.to)
			diffJSON(t, "send response", map[string]any{
				"message_id": id, "conversation_id": conv, "status": "queued", "channel": c.channel, "to": c.to,
			}, got)
			at := iso(t0.Add(90 * time.Second))
			r = e.call(t, "GET", "/v1/messages/"+id, "A", nil)
			expect(t, r, 200, "", "")
			diffJSON(t, "GET message", map[string]any{
				"message_id": id, "conversation_id": conv, "channel": c.channel, "direction": "outbound",
				"status": "queued", "type": c.typ, "created_at": at, "updated_at": at,
			}, r.object(t))
			// A second message to the same recipient shares the conversation.
			r = e.call(t, "POST", c.path, "A", c.body)
			if r.object(t)["conversation_id"] != conv || r.object(t)["message_id"] == id {
				t.Errorf("second send: %s", r.body)
			}
		})
	}
}

// TestGetMessageShape: the fixture message, and a failed one with its
// failure_reason.
func TestGetMessageShape(t *testing.T) {
	t.Parallel()
	e := setup(t)
	m := e.A.Message
	want := map[string]any{
		"message_id": m.MessageID, "conversation_id": m.ConversationID, "channel": "whatsapp", "direction": "outbound",
		"status": "queued", "type": "text", "created_at": ts0, "updated_at": ts0,
	}
	diffJSON(t, "GET message", want, e.call(t, "GET", "/v1/messages/<A.message>", "A.only:read:messages", nil).object(t))

	e.clock.Advance(5 * time.Second)
	if _, err := e.svc.UpdateStatus(t.Context(), &messaging.StatusUpdate{WorkspaceID: e.A.ID, MessageID: m.MessageID,
		Status: "failed", ProviderCode: "132001", ProviderText: "Template name does not exist in the translation"}); err != nil {
		t.Fatal(err)
	}
	want["status"] = "failed"
	want["failure_reason"] = "[132001] Template name does not exist in the translation"
	want["updated_at"] = "2026-03-01T09:00:05.000Z"
	diffJSON(t, "GET failed message", want, e.call(t, "GET", "/v1/messages/<A.message>", "A", nil).object(t))
}

// TestTemplateShapes: list (approved only, sorted, filtered), read by id
// with send_example, and each send_example is a ready request.
func TestTemplateShapes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	a := e.A
	approved := []*messaging.Template{a.Own, a.Swahili, a.Approved, a.Welcome} // by name
	all := func(ts ...*messaging.Template) []any {
		out := []any{}
		for _, tp := range ts {
			out = append(out, templateJSON(tp))
		}
		return out
	}
	for _, c := range []struct {
		query string
		want  []any
	}{
		{"", all(approved...)},
		{"?category=UTILITY", all(a.Own, a.Approved)},
		{"?category=MARKETING", all(a.Swahili, a.Welcome)},
		{"?category=AUTHENTICATION", all()},
		{"?language=sw", all(a.Swahili)},
		{"?language=en_US", all(a.Welcome)},
		{"?language=en", all(a.Own, a.Approved)},
		{"?language=en&category=MARKETING", all()},
		{"?language=fr", all()},
	} {
		r := e.call(t, "GET", "/v1/templates"+c.query, "A.only:read:templates", nil)
		expect(t, r, 200, "", "")
		diffJSON(t, "GET /v1/templates"+c.query, c.want, r.array(t))
	}
	// The order_update example in full, pinned.
	diffJSON(t, "order_update send_example", map[string]any{
		"to": "+14155550123", "template_name": "order_update", "language": "en",
		"components": []any{map[string]any{"type": "body", "parameters": []any{
			map[string]any{"type": "text", "text": "example 1"}, map[string]any{"type": "text", "text": "example 2"}}}},
	}, e.call(t, "GET", "/v1/templates/<A.template>", "A", nil).object(t)["send_example"])

	for _, tp := range append(approved, a.Pending) {
		r := e.call(t, "GET", "/v1/templates/"+tp.ID, "A", nil)
		expect(t, r, 200, "", "")
		got := r.object(t)
		diffJSON(t, "GET /v1/templates/"+tp.Name, templateJSON(tp), got)
		// send_example is ready to use as is (for approved templates).
		ex, err := json.Marshal(got["send_example"])
		if err != nil {
			t.Fatal(err)
		}
		sr := e.call(t, "POST", "/v1/messages/templates", "A", string(ex))
		if tp.Status == record.TemplateApproved {
			expect(t, sr, 201, "", "")
		} else {
			expect(t, sr, 404, "template_not_found", "template_name")
		}
	}
}

// TestContactShapes: list items carry exactly the spec's Contact fields;
// GET and PATCH carry those plus website and notes (PATCH by a key without
// read:contacts only id and updatedAt).
func TestContactShapes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	r := e.call(t, "GET", "/v1/contacts", "A.only:read:contacts", nil)
	expect(t, r, 200, "", "")
	diffJSON(t, "GET /v1/contacts", map[string]any{
		"items": []any{listContact(e.A.Contact2), listContact(e.A.Contact)},
		"total": 2, "page": 1, "limit": 25, "totalPages": 1,
	}, r.object(t))
	r = e.call(t, "GET", "/v1/contacts/<A.contact>", "A.only:read:contacts", nil)
	expect(t, r, 200, "", "")
	diffJSON(t, "GET /v1/contacts/:id", fullContact(e.A.Contact), r.object(t))
	r = e.call(t, "GET", "/v1/contacts/<A.contact2>", "A", nil)
	diffJSON(t, "GET /v1/contacts/:id (sparse)", fullContact(e.A.Contact2), r.object(t))
	// The spec's field lists, by name.
	specList := []string{"id", "firstName", "lastName", "fullName", "phone", "email", "company", "jobTitle", "source", "tags", "lifecycle", "createdAt", "updatedAt"}
	if got := keys(listContact(e.A.Contact)); !slices.Equal(got, sorted(specList)) {
		t.Errorf("list item fields %v, want the spec's %v", got, specList)
	}
	full := keys(e.call(t, "PATCH", "/v1/contacts/<A.contact>", "A", `{"jobTitle":"CEO"}`).object(t))
	if !slices.Equal(full, sorted(append(specList, "website", "notes", "opted_out"))) {
		t.Errorf("PATCH response fields %v", full)
	}
	receipt := keys(e.call(t, "PATCH", "/v1/contacts/<A.contact>", "A.only:write:contacts", `{"jobTitle":"CTO"}`).object(t))
	if !slices.Equal(receipt, []string{"id", "updatedAt"}) {
		t.Errorf("PATCH response fields to a write-only key %v, want [id updatedAt]", receipt)
	}
	created := keys(e.call(t, "POST", "/v1/contacts", "A", okContact).object(t))
	for _, f := range []string{"id", "firstName", "lastName", "fullName", "phone", "email", "company", "source", "createdAt"} {
		if !slices.Contains(created, f) {
			t.Errorf("POST /v1/contacts response lacks %s: %v", f, created)
		}
	}
}

func keys(m map[string]any) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return sorted(out)
}

func sorted(s []string) []string {
	s = slices.Clone(s)
	slices.Sort(s)
	return s
}

// TestMountedUnderParentMux: the handler works under a parent mux and a
// real server, next to the parent's own routes.
func TestMountedUnderParentMux(t *testing.T) {
	t.Parallel()
	e := setup(t)
	mux := http.NewServeMux()
	mux.Handle("/v1/", e.h)
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)

	do := func(method, path, key, body string, h ...string) (*http.Response, []byte) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(e.expand(body))
		}
		req, err := http.NewRequest(method, srv.URL+e.expand(path), rd)
		if err != nil {
			t.Fatal(err)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if key != "" {
			req.Header.Set("X-API-Key", key)
		}
		for i := 0; i+1 < len(h); i += 2 {
			req.Header.Set(h[i], h[i+1])
		}
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		checkInvariants(t, method+" "+path, &response{status: res.StatusCode, header: res.Header, body: b})
		return res, b
	}
	res, b := do("GET", "/v1/contacts", e.A.Full, "", "X-Correlation-ID", "trace-42")
	if res.StatusCode != 200 || !strings.Contains(string(b), e.A.Contact.ID) || res.Header.Get("X-Correlation-ID") != "trace-42" {
		t.Errorf("GET /v1/contacts: %d %s %v", res.StatusCode, b, res.Header)
	}
	res, _ = do("POST", "/v1/messages", e.A.Full, okText)
	if res.StatusCode != 201 {
		t.Errorf("POST /v1/messages: %d", res.StatusCode)
	}
	res, _ = do("PATCH", "/v1/contacts/<A.contact>", e.A.Full, `{"lastName":null}`)
	if res.StatusCode != 200 {
		t.Errorf("PATCH: %d", res.StatusCode)
	}
	res, b = do("GET", "/v1/nope", "", "")
	if res.StatusCode != 404 || !strings.Contains(string(b), `"not_found"`) {
		t.Errorf("GET /v1/nope: %d %s", res.StatusCode, b)
	}
	res, _ = do("DELETE", "/v1/contacts/x", e.A.Full, "")
	if res.StatusCode != 405 || res.Header.Get("Allow") == "" {
		t.Errorf("DELETE: %d Allow %q", res.StatusCode, res.Header.Get("Allow"))
	}
	res, b = do("POST", "/v1/messages", e.A.Full, string(sizedBody(1<<20+1)))
	if res.StatusCode != 413 || !strings.Contains(string(b), "payload_too_large") {
		t.Errorf("1 MiB + 1 over a real connection: %d %s", res.StatusCode, b)
	}
	res, b = do("GET", "/v1/errors/payload_too_large", "", "")
	if res.StatusCode != 200 || !strings.Contains(string(b), "413") {
		t.Errorf("docs: %d %s", res.StatusCode, b)
	}
	// The parent's own route is untouched.
	hr, err := srv.Client().Get(srv.URL + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	hb, _ := io.ReadAll(hr.Body)
	hr.Body.Close()
	if hr.StatusCode != 200 || string(hb) != "ok" {
		t.Errorf("/healthz: %d %q", hr.StatusCode, hb)
	}
}
