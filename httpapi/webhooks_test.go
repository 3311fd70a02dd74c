package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestWebhookSecretOnlyInCreateAndRotate: the secret of an endpoint is in
// the answer of POST /v1/webhooks and the new one in that of rotate-secret,
// and in no other answer, log line or audit event.
func TestWebhookSecretOnlyInCreateAndRotate(t *testing.T) {
	t.Parallel()
	logs := &syncBuffer{}
	e := setupOn(t, memstore.New(), &messaging.Options{Logger: slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))},
		func(o *httpapi.Options) {
			o.Logger = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
		})
	r := e.call(t, "POST", "/v1/webhooks", "A", `{"url":"`+e.hookURL+`/new","events":["message.status_updated"],"description":"orders"}`)
	expect(t, r, 201, "", "")
	created := r.object(t)
	secret, _ := created["secret"].(string)
	id, _ := created["id"].(string)
	if !strings.HasPrefix(secret, "whsec_") || id == "" || created["enabled"] != true || created["description"] != "orders" {
		t.Fatalf("created %s", r.body)
	}
	r = e.call(t, "POST", "/v1/webhooks/"+id+"/rotate-secret", "A", nil)
	expect(t, r, 200, "", "")
	rotated := r.object(t)
	newSecret, _ := rotated["secret"].(string)
	if !strings.HasPrefix(newSecret, "whsec_") || newSecret == secret || rotated["previous_secret_expires_at"] != record.FormatTime(t0.Add(24*time.Hour)) {
		t.Fatalf("rotated %s", r.body)
	}
	var others [][]byte
	for _, rq := range []struct{ method, path, body string }{
		{"GET", "/v1/webhooks", ""},
		{"GET", "/v1/webhooks/" + id, ""},
		{"PATCH", "/v1/webhooks/" + id, `{"enabled":false}`},
		{"POST", "/v1/webhooks/" + id + "/test", ""},
		{"GET", "/v1/webhooks/" + id + "/deliveries", ""},
		{"DELETE", "/v1/webhooks/" + id, ""},
	} {
		var body any
		if rq.body != "" {
			body = rq.body
		}
		r := e.call(t, rq.method, rq.path, "A", body)
		if r.status >= 300 {
			t.Fatalf("%s %s: %d %s", rq.method, rq.path, r.status, r.body)
		}
		others = append(others, r.body)
	}
	evs, _, err := e.svc.AuditEvents(context.Background(), e.A.ID, "", 100)
	if err != nil {
		t.Fatal(err)
	}
	audit, _ := json.Marshal(evs)
	others = append(others, audit, []byte(logs.String()))
	if !strings.Contains(logs.String(), "/v1/webhooks/"+id) {
		t.Fatalf("the logs lack the requests:\n%s", logs.String())
	}
	for i, b := range others {
		for _, s := range []string{secret, newSecret, secret[len("whsec_"):], newSecret[len("whsec_"):], "whsec_"} {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("answer, audit or log %d holds a secret (%q): %s", i, s, b)
			}
		}
	}
	var actions []string
	for _, ev := range evs {
		if ev.Target == id {
			actions = append(actions, ev.Action)
		}
	}
	if want := []string{record.AuditWebhookDeleted, record.AuditWebhookUpdated, record.AuditWebhookRotated, record.AuditWebhookCreated}; strings.Join(actions, " ") != strings.Join(want, " ") {
		t.Errorf("audit actions %v, want %v", actions, want)
	}
}

// TestWebhookBadInput: each bad input is a validation error naming its
// field, and the URL error says why the address is refused.
func TestWebhookBadInput(t *testing.T) {
	t.Parallel()
	e := setup(t)
	hook := "/v1/webhooks/" + e.A.Hook.ID
	for _, tc := range []struct {
		name, method, path, body, field, says string
	}{
		{"unknown event", "POST", "/v1/webhooks", `{"url":"https://hooks.example.com/x","events":["message.created"]}`, "events", "message.created"},
		{"no url", "POST", "/v1/webhooks", `{"events":[]}`, "url", "http"},
		{"private url", "POST", "/v1/webhooks", `{"url":"http://192.168.1.10/x"}`, "url", "private"},
		{"metadata url", "PATCH", hook, `{"url":"http://169.254.169.254/"}`, "url", "private"},
		{"url not http", "PATCH", hook, `{"url":"ftp://hooks.example.com/x"}`, "url", "http"},
		{"description too long", "PATCH", hook, `{"description":"` + strings.Repeat("x", 501) + `"}`, "description", "500"},
		{"secret in body", "POST", "/v1/webhooks", `{"url":"https://hooks.example.com/x","secret":"whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}`, "secret", "unknown"},
		{"empty patch", "PATCH", hook, `{}`, "body", "at least one"},
		{"enabled not a boolean", "PATCH", hook, `{"enabled":"no"}`, "enabled", "boolean"},
		{"rotate with a field", "POST", hook + "/rotate-secret", `{"keep":true}`, "keep", "unknown"},
		{"bad cursor", "GET", hook + "/deliveries?cursor=x", "", "cursor", "cursor"},
		{"bad limit", "GET", hook + "/deliveries?limit=500", "", "limit", "100"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var body any
			if tc.body != "" {
				body = tc.body
			}
			r := e.call(t, tc.method, tc.path, "A", body)
			expect(t, r, 400, "validation_error", tc.field)
			if !strings.Contains(r.env.Error.Message, tc.says) {
				t.Errorf("message %q does not say %q", r.env.Error.Message, tc.says)
			}
		})
	}
}

// TestWebhookRoutes: a session on the routes: list, get, change, test,
// deliveries (the test among them, marked test), redeliver, delete; B's
// ids are not found with A's key.
func TestWebhookRoutes(t *testing.T) {
	t.Parallel()
	e := setup(t)
	hook := "/v1/webhooks/" + e.A.Hook.ID
	r := e.call(t, "GET", "/v1/webhooks", "A", nil)
	expect(t, r, 200, "", "")
	var list struct {
		Data []map[string]any `json:"data"`
	}
	if err := json.Unmarshal(r.body, &list); err != nil || len(list.Data) != 1 || list.Data[0]["id"] != e.A.Hook.ID {
		t.Fatalf("list %s", r.body)
	}

	r = e.call(t, "PATCH", hook, "A", `{"events":["webhook.test","message.status_updated"],"description":"v2","enabled":false}`)
	expect(t, r, 200, "", "")
	got := r.object(t)
	if got["enabled"] != false || got["disabled_reason"] != "operator" || got["description"] != "v2" || len(got["events"].([]any)) != 2 {
		t.Errorf("patched %s", r.body)
	}
	expect(t, e.call(t, "POST", hook+"/deliveries/"+e.A.Delivery+"/redeliver", "A", nil), 409, "conflict", "")
	expect(t, e.call(t, "PATCH", hook, "A", `{"enabled":true}`), 200, "", "")

	r = e.call(t, "POST", hook+"/test", "A", `{}`)
	expect(t, r, 200, "", "")
	if res := r.object(t); res["status_code"] != 500.0 || res["latency_ms"] != 0.0 || res["error"] != nil {
		t.Errorf("test %s; want the receiver's 500 and the fake clock's 0 ms", r.body)
	}

	r = e.call(t, "GET", hook+"/deliveries", "A", nil)
	expect(t, r, 200, "", "")
	var page struct {
		Data       []map[string]any `json:"data"`
		NextCursor *string          `json:"next_cursor"`
	}
	if err := json.Unmarshal(r.body, &page); err != nil || len(page.Data) != 2 || page.NextCursor != nil {
		t.Fatalf("deliveries %s; want the test and the fixture's", r.body)
	}
	if d := page.Data[0]; d["test"] != true || d["event_type"] != "webhook.test" || d["state"] != "failed" || d["last_status_code"] != 500.0 ||
		d["last_error"] != "endpoint answered 500" || d["attempts"] != 1.0 {
		t.Errorf("test delivery %v; want test: true, failed with the receiver's 500", d)
	}
	d := page.Data[1]
	if d["id"] != e.A.Delivery || d["event_type"] != "message.status_updated" || d["state"] != "failed" || d["last_error"] != "endpoint disabled" || d["test"] != false {
		t.Errorf("delivery %v; want the fixture's, failed when the endpoint was disabled, test: false", d)
	}
	r = e.call(t, "POST", hook+"/deliveries/"+e.A.Delivery+"/redeliver", "A", nil)
	expect(t, r, 202, "", "")
	if rd := r.object(t); rd["state"] != "pending" || rd["next_attempt_at"] != record.FormatTime(t0) || rd["delivered_at"] != nil {
		t.Errorf("redelivered %s", r.body)
	}

	// B's endpoint and delivery with A's key; A's delivery under B's
	// endpoint id.
	bHook := "/v1/webhooks/" + e.B.Hook.ID
	for _, rq := range []struct{ method, path, body string }{
		{"GET", bHook, ""},
		{"PATCH", bHook, `{"enabled":false}`},
		{"DELETE", bHook, ""},
		{"POST", bHook + "/rotate-secret", ""},
		{"POST", bHook + "/test", ""},
		{"GET", bHook + "/deliveries", ""},
		{"POST", bHook + "/deliveries/" + e.B.Delivery + "/redeliver", ""},
		{"POST", hook + "/deliveries/" + e.B.Delivery + "/redeliver", ""},
	} {
		var body any
		if rq.body != "" {
			body = rq.body
		}
		expect(t, e.call(t, rq.method, rq.path, "A", body), 404, "not_found", "")
	}
	if b, err := e.svc.Workspace(e.B.ID).Webhooks.Get(context.Background(), e.B.Hook.ID); err != nil || b.DisabledAt != nil {
		t.Errorf("B's endpoint after A's attempts: %+v, %v", b, err)
	}

	expect(t, e.call(t, "DELETE", hook, "A", nil), 200, "", "")
	expect(t, e.call(t, "GET", hook, "A", nil), 404, "not_found", "")
	expect(t, e.call(t, "GET", hook+"/deliveries", "A", nil), 404, "not_found", "")
}
