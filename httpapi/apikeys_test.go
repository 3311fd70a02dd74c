package httpapi_test

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/store/memstore"
)

// setupLogged is setup with the service's and the handler's logs, at
// debug level, written to the returned buffer.
func setupLogged(t *testing.T) (*env, *syncBuffer) {
	t.Helper()
	logs := &syncBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	e := setupOn(t, memstore.New(), &messaging.Options{Logger: log}, func(o *httpapi.Options) { o.Logger = log })
	return e, logs
}

// flushUses waits for the recorded uses of keys (last_used_at) to reach
// the store: Close waits for them, and the service was never started.
func flushUses(t *testing.T, e *env) {
	t.Helper()
	if err := e.svc.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// TestAPIKeyLifecycle: a key creates a key (plaintext once), the new key
// sends, shows up with its last use in the list and by id, a key revokes
// itself and is refused at once, and the audit log records it all; the
// plaintexts appear in the POST answers only: not in GET, lists, audit
// events or logs.
func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	e, logs := setupLogged(t)
	exp := t0.Add(24 * time.Hour)
	r := e.call(t, "POST", "/v1/api-keys", "A", `{"name":"Billing service","scopes":["write:messages"],"expires_at":"`+exp.Format(time.RFC3339)+`"}`)
	expect(t, r, 201, "", "")
	created := r.object(t)
	plain, _ := created["key"].(string)
	id, _ := created["id"].(string)
	if !strings.HasPrefix(plain, "mk_") || !strings.HasPrefix(id, "key_") {
		t.Fatalf("POST answered key %q, id %q", plain, id)
	}
	wantKey := map[string]any{
		"id": id, "name": "Billing service", "prefix": messaging.KeyLookupID(plain), "scopes": []any{"write:messages"},
		"created_at": ts0, "expires_at": "2026-03-02T09:00:00.000Z", "last_used_at": nil, "revoked_at": nil,
	}
	wantCreated := map[string]any{"key": plain}
	for k, v := range wantKey {
		wantCreated[k] = v
	}
	if d := cmp.Diff(wantCreated, created); d != "" {
		t.Errorf("POST /v1/api-keys (-want +got):\n%s", d)
	}

	// The new key works at once; its use is recorded as last_used_at.
	e.clock.Advance(time.Second)
	expect(t, e.do(t, request{method: "POST", path: "/v1/messages", key: plain,
		body: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"from the new key"}`}), 201, "", "")
	flushUses(t, e)
	wantKey["last_used_at"] = "2026-03-01T09:00:01.000Z"
	r = e.call(t, "GET", "/v1/api-keys/"+id, "A", nil)
	expect(t, r, 200, "", "")
	if d := cmp.Diff(wantKey, r.object(t)); d != "" {
		t.Errorf("GET /v1/api-keys/{id} (-want +got):\n%s", d)
	}
	list := e.call(t, "GET", "/v1/api-keys", "A", nil)
	expect(t, list, 200, "", "")
	items, _ := list.object(t)["data"].([]any)
	var found map[string]any
	for _, it := range items {
		m := it.(map[string]any)
		if _, ok := m["key"]; ok {
			t.Errorf("a listed key shows a key field: %v", m)
		}
		if m["id"] == id {
			found = m
		}
		if m["id"] == e.A.RevokedID && m["revoked_at"] != ts0 {
			t.Errorf("the revoked fixture key is listed with revoked_at %v", m["revoked_at"])
		}
	}
	if d := cmp.Diff(wantKey, found); d != "" {
		t.Errorf("the new key in GET /v1/api-keys (-want +got):\n%s", d)
	}
	// 2 + 2 per scope keys of the fixture, the new one.
	if want := 3 + 2*len(record.AllScopes()) + 1; len(items) != want {
		t.Errorf("GET /v1/api-keys lists %d keys, want %d", len(items), want)
	}

	// A key revokes itself: 200 with the revoked record, then 401.
	r = e.call(t, "POST", "/v1/api-keys", "A", `{"name":"self","scopes":["manage:keys","read:messages"]}`)
	expect(t, r, 201, "", "")
	self := r.object(t)
	selfKey, selfID := self["key"].(string), self["id"].(string)
	e.clock.Advance(time.Second)
	r = e.do(t, request{method: "DELETE", path: "/v1/api-keys/" + selfID, key: selfKey})
	expect(t, r, 200, "", "")
	revoked := r.object(t)
	if revoked["id"] != selfID || revoked["revoked_at"] != "2026-03-01T09:00:02.000Z" || revoked["name"] != "self" {
		t.Errorf("DELETE answered %v, want key %s revoked at 09:00:02", revoked, selfID)
	}
	expect(t, e.do(t, request{method: "GET", path: "/v1/api-keys", key: selfKey}), 401, "invalid_api_key", "")
	expect(t, e.do(t, request{method: "GET", path: "/v1/messages/" + e.A.Message.MessageID, key: selfKey}), 401, "invalid_api_key", "")

	// The audit log: who created and revoked what.
	r = e.call(t, "GET", "/v1/audit-events", "A", nil)
	expect(t, r, 200, "", "")
	page := r.object(t)
	if page["next_cursor"] != nil {
		t.Errorf("next_cursor %v on the only page", page["next_cursor"])
	}
	var got []string
	for _, ev := range page["data"].([]any) {
		m := ev.(map[string]any)
		if strings.HasPrefix(m["action"].(string), "api_key.") && m["target"] != e.A.RevokedID {
			got = append(got, fmt.Sprintf("%s %s %s %s", m["created_at"], m["actor"], m["action"], m["target"]))
		}
	}
	want := []string{
		"2026-03-01T09:00:02.000Z " + selfID + " api_key.revoked " + selfID,
		"2026-03-01T09:00:01.000Z " + e.A.FullID + " api_key.created " + selfID,
		ts0 + " " + e.A.FullID + " api_key.created " + id,
	}
	if d := cmp.Diff(want, got[:min(3, len(got))]); d != "" {
		t.Errorf("newest api_key audit events (-want +got):\n%s", d)
	}

	// The plaintexts were in the POST answers only.
	for _, rq := range []request{
		{method: "GET", path: "/v1/api-keys"}, {method: "GET", path: "/v1/api-keys/" + id},
		{method: "GET", path: "/v1/api-keys/" + selfID}, {method: "GET", path: "/v1/audit-events?limit=100"},
	} {
		rq.key = e.A.Full
		body := string(e.do(t, rq).body)
		for _, k := range []string{plain, selfKey} {
			if strings.Contains(body, k) {
				t.Errorf("%s %s shows a key's plaintext: %s", rq.method, rq.path, body)
			}
		}
	}
	flushUses(t, e)
	if l := logs.String(); l == "" || strings.Contains(l, plain) || strings.Contains(l, selfKey) {
		t.Errorf("the logs are empty or hold a key's plaintext:\n%s", l)
	}
}

// TestAPIKeyCreateRefused: the bad inputs of POST /v1/api-keys, each the
// spec's code with the field, creating nothing.
func TestAPIKeyCreateRefused(t *testing.T) {
	t.Parallel()
	past := t0.Add(-time.Second).Format(time.RFC3339)
	cases := []struct {
		name, key, body string
		status          int
		code, field     string
		// says is a text the message must hold.
		says string
	}{
		{"escalation", "A.only:manage:keys", `{"name":"n","scopes":["manage:keys","write:messages"]}`, 403, "forbidden", "scopes", "write:messages"},
		{"escalation to every scope", "A.without:write:contacts", `{"name":"n","scopes":["write:contacts"]}`, 403, "forbidden", "scopes", "write:contacts"},
		{"missing scope", "A.without:manage:keys", `{"name":"n","scopes":["read:messages"]}`, 403, "forbidden", "", "manage:keys"},
		{"unknown scope", "A", `{"name":"n","scopes":["read:everything"]}`, 400, "validation_error", "scopes", "read:everything"},
		{"no scopes", "A", `{"name":"n","scopes":[]}`, 400, "validation_error", "scopes", "at least one"},
		{"scopes absent", "A", `{"name":"n"}`, 400, "validation_error", "scopes", "at least one"},
		{"expiry in the past", "A", `{"name":"n","scopes":["read:messages"],"expires_at":"` + past + `"}`, 400, "validation_error", "expires_at", "future"},
		{"expiry now", "A", `{"name":"n","scopes":["read:messages"],"expires_at":"` + ts0 + `"}`, 400, "validation_error", "expires_at", "future"},
		{"expiry not a time", "A", `{"name":"n","scopes":["read:messages"],"expires_at":"next week"}`, 400, "validation_error", "expires_at", "RFC 3339"},
		{"expiry not a string", "A", `{"name":"n","scopes":["read:messages"],"expires_at":1767225600}`, 400, "validation_error", "expires_at", ""},
		{"name absent", "A", `{"scopes":["read:messages"]}`, 400, "validation_error", "name", "required"},
		{"name empty", "A", `{"name":"","scopes":["read:messages"]}`, 400, "validation_error", "name", "required"},
		{"name too long", "A", `{"name":"` + strings.Repeat("ñ", 101) + `","scopes":["read:messages"]}`, 400, "validation_error", "name", "100"},
		{"name with a newline", "A", `{"name":"a\nb","scopes":["read:messages"]}`, 400, "validation_error", "name", "control"},
		{"name with a NUL", "A", `{"name":"a\u0000b","scopes":["read:messages"]}`, 400, "validation_error", "name", ""},
		{"own key given", "A", `{"name":"n","scopes":["read:messages"],"key":"my-own-key-0123456789"}`, 400, "validation_error", "key", "unknown field"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			before, err := e.svc.Workspace(e.A.ID).APIKeys.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			r := e.call(t, "POST", "/v1/api-keys", c.key, c.body)
			expect(t, r, c.status, c.code, c.field)
			if !strings.Contains(r.env.Error.Message, c.says) {
				t.Errorf("message %q does not say %q", r.env.Error.Message, c.says)
			}
			after, err := e.svc.Workspace(e.A.ID).APIKeys.List(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(after) != len(before) {
				t.Errorf("a refused POST created a key: %d keys, then %d", len(before), len(after))
			}
		})
	}
	// The largest name and exactly the creator's scopes are accepted.
	e := setup(t)
	r := e.call(t, "POST", "/v1/api-keys", "A.only:manage:keys", `{"name":"`+strings.Repeat("ñ", 100)+`","scopes":["manage:keys"]}`)
	expect(t, r, 201, "", "")
}

// TestAPIKeysOfOtherWorkspace: B's key sees only B's keys and events, and
// cannot read or revoke A's key (404); A's key still works.
func TestAPIKeysOfOtherWorkspace(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, path := range []string{"/v1/api-keys", "/v1/audit-events?limit=100"} {
		r := e.call(t, "GET", path, "B", nil)
		expect(t, r, 200, "", "")
		for _, id := range []string{e.A.FullID, e.A.RevokedID} {
			if strings.Contains(string(r.body), id) {
				t.Errorf("B's %s shows A's key %s", path, id)
			}
		}
		if !strings.Contains(string(r.body), e.B.FullID) {
			t.Errorf("B's %s lacks B's key", path)
		}
	}
	for _, m := range []string{"GET", "DELETE"} {
		r := e.call(t, m, "/v1/api-keys/"+e.A.FullID, "B", nil)
		expect(t, r, 404, "not_found", "")
	}
	expect(t, e.call(t, "GET", "/v1/api-keys/"+e.A.FullID, "A", nil), 200, "", "")
	k, err := e.svc.Workspace(e.A.ID).APIKeys.Get(context.Background(), e.A.FullID)
	if err != nil || k.RevokedAt != nil {
		t.Errorf("A's key after B's DELETE: %+v, %v", k, err)
	}
}

// TestAuditEventsPaging: limit and cursor walk every event once, newest
// first, and the last page's next_cursor is null.
func TestAuditEventsPaging(t *testing.T) {
	t.Parallel()
	e := setup(t)
	all, _, err := e.svc.AuditEvents(context.Background(), e.A.ID, "", record.MaxAuditPage)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, ev := range all {
		want = append(want, ev.ID)
	}
	var got []string
	path := "/v1/audit-events?limit=7"
	for pages := 0; ; pages++ {
		if pages > len(want) {
			t.Fatal("paging does not end")
		}
		r := e.call(t, "GET", path, "A", nil)
		expect(t, r, 200, "", "")
		page := r.object(t)
		data := page["data"].([]any)
		if len(data) > 7 {
			t.Errorf("a page of %d events with limit=7", len(data))
		}
		for _, ev := range data {
			got = append(got, ev.(map[string]any)["id"].(string))
		}
		next, ok := page["next_cursor"].(string)
		if !ok {
			if page["next_cursor"] != nil {
				t.Errorf("next_cursor %v", page["next_cursor"])
			}
			break
		}
		path = "/v1/audit-events?limit=7&cursor=" + next
	}
	if len(want) < 15 {
		t.Fatalf("only %d audit events in the fixture", len(want))
	}
	if d := cmp.Diff(want, got, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("events paged (-want +got):\n%s", d)
	}
	for _, q := range []struct{ query, field string }{
		{"limit=0", "limit"}, {"limit=101", "limit"}, {"limit=x", "limit"}, {"cursor=-1", "cursor"}, {"cursor=abc", "cursor"}, {"since=1", "since"},
	} {
		expect(t, e.call(t, "GET", "/v1/audit-events?"+q.query, "A", nil), 400, "validation_error", q.field)
	}
}

// TestAPIKeyChildBounds: a key that expires cannot create a key that
// never expires or expires later (403 naming expires_at), and a
// manage:keys-only key cannot revoke the workspace's all-scope key (403
// naming scopes; the key keeps working).
func TestAPIKeyChildBounds(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	hour := t0.Add(time.Hour)
	_, short, err := e.svc.Workspace(e.A.ID).APIKeys.Create(ctx, &messaging.KeyCreateParams{Name: "short",
		Scopes: []string{record.ScopeManageKeys}, ExpiresAt: &hour})
	if err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{
		`{"name":"child","scopes":["manage:keys"]}`,
		`{"name":"child","scopes":["manage:keys"],"expires_at":"` + t0.Add(2*time.Hour).Format(time.RFC3339) + `"}`,
	} {
		r := e.call(t, "POST", "/v1/api-keys", "raw:"+short, body)
		expect(t, r, 403, "forbidden", "expires_at")
	}
	r := e.call(t, "POST", "/v1/api-keys", "raw:"+short, `{"name":"child","scopes":["manage:keys"],"expires_at":"`+hour.Format(time.RFC3339)+`"}`)
	expect(t, r, 201, "", "")

	r = e.call(t, "DELETE", "/v1/api-keys/"+e.A.FullID, "A.only:manage:keys", nil)
	expect(t, r, 403, "forbidden", "scopes")
	expect(t, e.call(t, "GET", "/v1/api-keys", "A", nil), 200, "", "")
}
