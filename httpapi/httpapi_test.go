package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
)

// TestEveryRouteSucceeds runs a valid request on every route of Routes()
// with A's full key. It also fails when a route is added without a valid
// request in the test table.
func TestEveryRouteSucceeds(t *testing.T) {
	t.Parallel()
	for _, rt := range httpapi.Routes() {
		t.Run(rt.Name(), func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			rq, want := validRequest(t, rt, e.A, 1)
			if rt.Scopes != nil {
				rq.key = e.A.Full
			}
			r := e.do(t, rq)
			expect(t, r, want, "", "")
			if r.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("Idempotent-Replayed %q on a first request", r.header.Get("Idempotent-Replayed"))
			}
		})
	}
}

// TestAuth drives every keyed route through the authentication failures.
func TestAuth(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		headers  func(e *env) http.Header
		wantCode string
	}{
		{"no header", func(e *env) http.Header { return nil }, "unauthorized"},
		{"empty header", func(e *env) http.Header { return hdr("X-API-Key", "") }, "unauthorized"},
		{"blank header", func(e *env) http.Header { return hdr("X-API-Key", "   ") }, "unauthorized"},
		{"two headers", func(e *env) http.Header { return hdr("X-API-Key", e.A.Full, "X-API-Key", e.A.Full) }, "unauthorized"},
		{"two different headers", func(e *env) http.Header { return hdr("X-API-Key", e.A.Full, "X-API-Key", e.B.Full) }, "unauthorized"},
		{"unknown key", func(e *env) http.Header {
			return hdr("X-API-Key", "mk_unknown0_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA")
		}, "invalid_api_key"},
		{"right prefix wrong secret", func(e *env) http.Header {
			return hdr("X-API-Key", e.A.Full[:record.KeyPrefixLen]+strings.Repeat("x", len(e.A.Full)-record.KeyPrefixLen))
		}, "invalid_api_key"},
		{"key with a suffix", func(e *env) http.Header { return hdr("X-API-Key", e.A.Full+"x") }, "invalid_api_key"},
		{"revoked", func(e *env) http.Header { return hdr("X-API-Key", e.A.Revoked) }, "invalid_api_key"},
		{"expired", func(e *env) http.Header { return hdr("X-API-Key", e.A.Expired) }, "invalid_api_key"},
		{"malformed short", func(e *env) http.Header { return hdr("X-API-Key", "abc") }, "invalid_api_key"},
		{"malformed inner space", func(e *env) http.Header { return hdr("X-API-Key", "mk_abcdefgh_ abcdefghijklmnopqrstuvwxyz") }, "invalid_api_key"},
		{"malformed too long", func(e *env) http.Header { return hdr("X-API-Key", strings.Repeat("k", 300)) }, "invalid_api_key"},
		{"malformed non-ASCII", func(e *env) http.Header { return hdr("X-API-Key", "mk_ñññññññ_abcdefghijklmnopqrstuvwxyz") }, "invalid_api_key"},
		{"bearer prefix", func(e *env) http.Header { return hdr("X-API-Key", "Bearer "+e.A.Full) }, "invalid_api_key"},
		{"key in Authorization only", func(e *env) http.Header { return hdr("Authorization", "Bearer "+e.A.Full) }, "unauthorized"},
	}
	for _, rt := range scopedRoutes() {
		for _, c := range cases {
			t.Run(rt.Name()+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				e := setup(t)
				rq, _ := validRequest(t, rt, e.A, 1)
				rq.headers = c.headers(e)
				msgs, contacts := e.store.messages.Load(), e.store.contacts.Load()
				before, _ := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
				r := e.do(t, rq)
				expect(t, r, 401, c.wantCode, "")
				if strings.Contains(string(r.body), e.A.Full) {
					t.Errorf("the error echoes the key: %s", r.body)
				}
				if e.store.messages.Load() != msgs || e.store.contacts.Load() != contacts {
					t.Errorf("a refused request stored something")
				}
				after, _ := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
				if after.Company != before.Company {
					t.Errorf("a refused PATCH changed the contact")
				}
			})
		}
	}
}

// TestAuthExpiryFollowsClock: a key expiring in an hour works until the
// clock reaches its expiry.
func TestAuthExpiryFollowsClock(t *testing.T) {
	t.Parallel()
	e := setup(t)
	exp := t0.Add(time.Hour)
	_, key, err := e.svc.Workspace(e.A.ID).APIKeys.Create(context.Background(), &messaging.KeyCreateParams{Scopes: record.AllScopes(), ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	r := e.do(t, request{method: "GET", path: "/v1/contacts", key: key})
	expect(t, r, 200, "", "")
	e.clock.Advance(time.Hour - time.Second)
	expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", key: key}), 200, "", "")
	e.clock.Advance(time.Second)
	expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", key: key}), 401, "invalid_api_key", "")
}

// TestPublicRoutesNeedNoKey: the OpenAPI document and the error docs are
// served without a key, and a bad key does not break them.
func TestPublicRoutesNeedNoKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for _, rt := range httpapi.Routes() {
		if rt.Scopes != nil {
			continue
		}
		for _, key := range []string{"", "raw:not-a-key"} {
			rq, want := validRequest(t, rt, e.A, 1)
			rq.key = e.keyOf(t, key)
			expect(t, e.do(t, rq), want, "", "")
		}
	}
}

// TestScopes: a key lacking a scope a route needs gets 403 forbidden on
// every route; a key holding exactly the needed scopes succeeds.
func TestScopes(t *testing.T) {
	t.Parallel()
	for _, rt := range scopedRoutes() {
		for _, s := range record.AllScopes() {
			needs := slices.Contains(rt.Scopes, s)
			// A key with every scope but s.
			t.Run(rt.Name()+"/without "+s, func(t *testing.T) {
				t.Parallel()
				e := setup(t)
				rq, ok := validRequest(t, rt, e.A, 1)
				rq.key = e.A.Without[s]
				msgs := e.store.messages.Load()
				r := e.do(t, rq)
				if needs {
					expect(t, r, 403, "forbidden", "")
					if !strings.Contains(r.env.Error.Message, s) {
						t.Errorf("403 message %q does not name the missing scope %s", r.env.Error.Message, s)
					}
					if e.store.messages.Load() != msgs {
						t.Errorf("a forbidden request stored a message")
					}
				} else {
					expect(t, r, ok, "", "")
				}
			})
			// A key with only s.
			t.Run(rt.Name()+"/only "+s, func(t *testing.T) {
				t.Parallel()
				e := setup(t)
				rq, ok := validRequest(t, rt, e.A, 1)
				rq.key = e.A.Only[s]
				r := e.do(t, rq)
				if len(rt.Scopes) == 1 && needs {
					expect(t, r, ok, "", "")
				} else {
					expect(t, r, 403, "forbidden", "")
				}
			})
		}
	}
}

// TestPatchByWriteOnlyKeyReadsNothing: PATCH /v1/contacts/{id} with a key
// that may write contacts but not read them applies the change and
// answers only the contact's id and updatedAt, never a field GET refuses
// that key; a key that may read contacts gets the whole contact.
func TestPatchByWriteOnlyKeyReadsNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	id := e.A.Contact.ID
	writeOnly := "A.only:" + record.ScopeWriteContacts
	expect(t, e.call(t, "GET", "/v1/contacts/"+id, writeOnly, nil), 403, "forbidden", "")
	e.clock.Advance(time.Second)
	r := e.call(t, "PATCH", "/v1/contacts/"+id, writeOnly, `{"tags":null}`)
	expect(t, r, 200, "", "")
	want := map[string]any{"id": id, "updatedAt": "2026-03-01T09:00:01.000Z"}
	if d := cmp.Diff(want, r.object(t)); d != "" {
		t.Errorf("PATCH by a write-only key answered more than id and updatedAt (-want +got):\n%s", d)
	}
	got := e.call(t, "GET", "/v1/contacts/"+id, "A", nil).object(t)
	if tags, _ := got["tags"].([]any); len(tags) != 0 || got["updatedAt"] != want["updatedAt"] {
		t.Errorf("the write-only PATCH was not applied: %v", got)
	}
	full := e.call(t, "PATCH", "/v1/contacts/"+id, "A.without:"+record.ScopeReadMessages, `{"company":"Acme"}`).object(t)
	if full["company"] != "Acme" || full["phone"] != e.A.Contact.Phone || full["notes"] != e.A.Contact.Notes {
		t.Errorf("PATCH by a key with read:contacts answered %v, want the whole contact", full)
	}
}

// TestScopesOfSpec pins the scopes of Routes() to the spec and the issue.
func TestScopesOfSpec(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		"POST /v1/messages":           {"write:messages"},
		"POST /v1/messages/templates": {"write:messages", "read:templates"},
		"GET /v1/messages/{id}":       {"read:messages"},
		// Listing (issue 16).
		"GET /v1/messages":                    {"read:messages"},
		"GET /v1/conversations":               {"read:messages"},
		"GET /v1/conversations/{id}/messages": {"read:messages"},
		"GET /v1/templates":                   {"read:templates"},
		"GET /v1/templates/{id}":              {"read:templates"},
		"GET /v1/contacts":                    {"read:contacts"},
		"POST /v1/contacts":                   {"write:contacts"},
		"GET /v1/contacts/{id}":               {"read:contacts"},
		"PATCH /v1/contacts/{id}":             {"write:contacts"},
		"GET /v1/api-keys":                    {"manage:keys"},
		"POST /v1/api-keys":                   {"manage:keys"},
		"GET /v1/api-keys/{id}":               {"manage:keys"},
		"DELETE /v1/api-keys/{id}":            {"manage:keys"},
		"GET /v1/audit-events":                {"manage:keys"},
		// The management routes of issue 14.
		"POST /v1/templates":                 {"manage:templates"},
		"PATCH /v1/templates/{id}":           {"manage:templates"},
		"DELETE /v1/templates/{id}":          {"manage:templates"},
		"POST /v1/templates/{id}/submit":     {"manage:templates"},
		"POST /v1/templates/sync":            {"manage:templates"},
		"GET /v1/channels":                   {"manage:channels"},
		"PUT /v1/channels/{channel}":         {"manage:channels"},
		"PATCH /v1/channels/{channel}":       {"manage:channels"},
		"DELETE /v1/channels/{channel}":      {"manage:channels"},
		"POST /v1/channels/{channel}/verify": {"manage:channels"},
		// Webhook management (issue 14): manage:webhooks covers reading
		// and changing.
		"GET /v1/webhooks":                                          {"manage:webhooks"},
		"POST /v1/webhooks":                                         {"manage:webhooks"},
		"GET /v1/webhooks/{id}":                                     {"manage:webhooks"},
		"PATCH /v1/webhooks/{id}":                                   {"manage:webhooks"},
		"DELETE /v1/webhooks/{id}":                                  {"manage:webhooks"},
		"POST /v1/webhooks/{id}/rotate-secret":                      {"manage:webhooks"},
		"POST /v1/webhooks/{id}/test":                               {"manage:webhooks"},
		"GET /v1/webhooks/{id}/deliveries":                          {"manage:webhooks"},
		"POST /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver": {"manage:webhooks"},
		// The media of an inbound message (issue 16).
		"GET /v1/messages/{id}/media": {"read:messages"},
		// Rich outbound messages: read marks and uploads.
		"POST /v1/messages/{id}/read": {"write:messages"},
		"POST /v1/media":              {"write:messages"},
		"GET /v1/media/{id}":          {"read:messages"},
		// Scheduled sends and cancelling.
		"POST /v1/messages/{id}/cancel": {"write:messages"},
	}
	got := map[string][]string{}
	for _, rt := range scopedRoutes() {
		got[rt.Name()] = slices.Sorted(slices.Values(rt.Scopes))
	}
	for k, v := range want {
		slices.Sort(v)
		if !slices.Equal(got[k], v) {
			t.Errorf("%s: scopes %v, want %v", k, got[k], v)
		}
	}
	if len(got) != len(want) {
		t.Errorf("keyed routes %v, want exactly %d", got, len(want))
	}
}

// TestCrossWorkspaceNotFound: B's key on A's ids gives 404 on every :id
// route, changes nothing, and A's key on the same ids works.
func TestCrossWorkspaceNotFound(t *testing.T) {
	t.Parallel()
	cases := []struct {
		method, path string
		body         any
	}{
		{"GET", "/v1/messages/<A.message>", nil},
		{"GET", "/v1/templates/<A.template>", nil},
		{"GET", "/v1/templates/<A.pending>", nil},
		{"GET", "/v1/templates/<A.own>", nil},
		{"GET", "/v1/contacts/<A.contact>", nil},
		{"PATCH", "/v1/contacts/<A.contact>", `{"company":"Hijacked"}`},
		{"PATCH", "/v1/contacts/<A.contact2>", `{"firstName":"Hijacked"}`},
		{"GET", "/v1/api-keys/<A.key>", nil},
		{"DELETE", "/v1/api-keys/<A.key>", nil},
	}
	for _, c := range cases {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			r := e.call(t, c.method, c.path, "B", c.body)
			expect(t, r, 404, "not_found", "")
			if strings.Contains(string(r.body), "Hijacked") {
				t.Errorf("404 echoes the body: %s", r.body)
			}
			got, err := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact.ID)
			if err != nil || got.Company != "Ujumbe Ltd" {
				t.Errorf("A's contact changed by B: %+v, %v", got, err)
			}
			got2, _ := e.svc.Workspace(e.A.ID).Contacts.Get(context.Background(), e.A.Contact2.ID)
			if got2.FirstName != "Brian" {
				t.Errorf("A's contact2 changed by B: %+v", got2)
			}
			// The owner still reaches the record.
			r = e.call(t, "GET", c.path, "A", nil)
			expect(t, r, 200, "", "")
		})
	}
	t.Run("lists", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		r := e.call(t, "GET", "/v1/contacts?limit=100", "B", nil)
		expect(t, r, 200, "", "")
		for _, id := range []string{e.A.Contact.ID, e.A.Contact2.ID} {
			if strings.Contains(string(r.body), id) {
				t.Errorf("B's contact list holds A's contact %s", id)
			}
		}
		if !strings.Contains(string(r.body), e.B.Contact.ID) {
			t.Errorf("B's contact list lacks B's contact")
		}
		r = e.call(t, "GET", "/v1/templates", "B", nil)
		expect(t, r, 200, "", "")
		if strings.Contains(string(r.body), "a_only") || strings.Contains(string(r.body), e.A.Approved.ID) {
			t.Errorf("B's templates list A's: %s", r.body)
		}
		if !strings.Contains(string(r.body), "b_only") {
			t.Errorf("B's templates lack b_only: %s", r.body)
		}
		// A's template name cannot be sent from B.
		r = e.call(t, "POST", "/v1/messages/templates", "B", `{"to":"+254712345678","template_name":"a_only","language":"en"}`)
		expect(t, r, 404, "template_not_found", "template_name")
	})
}

// TestRateLimitEveryRoute exhausts each keyed route's bucket (limit 2),
// checks 429 with Retry-After and X-RateLimit-Remaining 0, that another
// key of the same workspace is limited too, that B and A's other routes are
// not, and that advancing the clock by Retry-After recovers.
func TestRateLimitEveryRoute(t *testing.T) {
	t.Parallel()
	for _, rt := range scopedRoutes() {
		t.Run(rt.Name(), func(t *testing.T) {
			t.Parallel()
			e := setup(t, func(o *httpapi.Options) { o.RateLimits = map[string]int{rt.Name(): 2} })
			n := 0
			_, ok := validRequest(t, rt, e.A, 0)
			send := func(f *wsFixture, key string) *response {
				n++
				rq, _ := validRequest(t, rt, f, n)
				rq.key = key
				return e.do(t, rq)
			}
			for i, wantRemaining := range []string{"1", "0"} {
				r := send(e.A, e.A.Full)
				if r.status != ok {
					t.Fatalf("request %d: status %d: %s", i+1, r.status, r.body)
				}
				if r.header.Get("X-RateLimit-Limit") != "2" || r.header.Get("X-RateLimit-Remaining") != wantRemaining {
					t.Errorf("request %d: limit %q remaining %q, want 2 and %s", i+1,
						r.header.Get("X-RateLimit-Limit"), r.header.Get("X-RateLimit-Remaining"), wantRemaining)
				}
			}
			// The request's setup (a scheduled message to cancel) is made
			// before the count.
			n++
			limited, _ := validRequest(t, rt, e.A, n)
			limited.key = e.A.Full
			msgs := e.store.messages.Load()
			r := e.do(t, limited)
			expect(t, r, 429, "rate_limit_exceeded", "")
			if e.store.messages.Load() != msgs {
				t.Errorf("a rate limited send stored a message")
			}
			retry, _ := strconv.Atoi(r.header.Get("Retry-After"))
			if retry < 1 || retry > 60 {
				t.Errorf("Retry-After %d, want 1..60 for 2 per minute", retry)
			}
			// The limit is per workspace: another key of A with the route's
			// scopes is limited too.
			expect(t, send(e.A, otherKey(t, e.A, rt)), 429, "rate_limit_exceeded", "")
			// B has its own bucket.
			if r := send(e.B, e.B.Full); r.status != ok {
				t.Errorf("B limited by A's requests: %d %s", r.status, r.body)
			}
			// A's other routes have their own buckets.
			for _, other := range scopedRoutes() {
				if other.Name() == rt.Name() {
					continue
				}
				n++
				rq, _ := validRequest(t, other, e.A, n)
				rq.key = e.A.Full
				if r := e.do(t, rq); r.status == 429 {
					t.Errorf("%s limited by %s's bucket", other.Name(), rt.Name())
				}
			}
			// Just before Retry-After it is still limited; at Retry-After it
			// recovers.
			e.clock.Advance(time.Duration(retry)*time.Second - 100*time.Millisecond)
			expect(t, send(e.A, e.A.Full), 429, "rate_limit_exceeded", "")
			e.clock.Advance(100 * time.Millisecond)
			if r := send(e.A, e.A.Full); r.status != ok {
				t.Errorf("after Retry-After: %d %s", r.status, r.body)
			}
		})
	}
}

// otherKey returns a key of f other than f.Full that holds every scope of
// rt.
func otherKey(t *testing.T, f *wsFixture, rt httpapi.Route) string {
	t.Helper()
	for _, s := range record.AllScopes() {
		if !slices.Contains(rt.Scopes, s) {
			return f.Without[s]
		}
	}
	t.Fatalf("%s needs every scope", rt.Name())
	return ""
}

// TestRefusedKeysSpendNoWorkspaceLimit: requests refused with 403 (a key
// without the route's scope) or 401 (a revoked, expired or unknown key)
// never take a token of the workspace's bucket of the route, so they
// cannot block the keys that may call it; they spend the client address's
// unauthenticated bucket instead, which limits them.
func TestRefusedKeysSpendNoWorkspaceLimit(t *testing.T) {
	t.Parallel()
	for _, rt := range scopedRoutes() {
		t.Run(rt.Name(), func(t *testing.T) {
			t.Parallel()
			e := setup(t, func(o *httpapi.Options) { o.RateLimits = map[string]int{rt.Name(): 2, "unauthenticated": 8} })
			n := 0
			_, ok := validRequest(t, rt, e.A, 0)
			send := func(key string) *response {
				n++
				rq, _ := validRequest(t, rt, e.A, n)
				rq.key = key
				return e.do(t, rq)
			}
			for range 2 {
				expect(t, send(e.A.Without[rt.Scopes[0]]), 403, "forbidden", "")
			}
			for _, k := range []string{e.A.Revoked, e.A.Expired, "wrong-key-wrong-key-wrong"} {
				if r := send(k); r.status != 401 {
					t.Fatalf("key %q: status %d: %s", k, r.status, r.body)
				}
			}
			for i, want := range []string{"1", "0"} {
				r := send(e.A.Full)
				if r.status != ok {
					t.Fatalf("allowed request %d after the refusals: %d %s", i+1, r.status, r.body)
				}
				if got := r.header.Get("X-RateLimit-Remaining"); got != want {
					t.Errorf("allowed request %d: X-RateLimit-Remaining %s, want %s", i+1, got, want)
				}
			}
			// The refusals counted against the address: 5 taken, 3 left.
			for range 3 {
				expect(t, send(e.A.Without[rt.Scopes[0]]), 403, "forbidden", "")
			}
			expect(t, send(e.A.Without[rt.Scopes[0]]), 429, "rate_limit_exceeded", "")
		})
	}
}

// TestRateLimitDefaults pins the default limits of the spec's table, as
// shown by X-RateLimit-Limit.
func TestRateLimitDefaults(t *testing.T) {
	t.Parallel()
	want := map[string]int{
		"POST /v1/messages":           60,
		"POST /v1/messages/templates": 20,
		"GET /v1/contacts":            60,
		"POST /v1/contacts":           30,
		"PATCH /v1/contacts/{id}":     30,
		"GET /v1/templates":           30,
		"GET /v1/templates/{id}":      60,
		// Management routes (issue 14).
		"POST /v1/templates":                 30,
		"PATCH /v1/templates/{id}":           30,
		"DELETE /v1/templates/{id}":          30,
		"POST /v1/templates/{id}/submit":     30,
		"POST /v1/templates/sync":            6,
		"GET /v1/channels":                   60,
		"PATCH /v1/channels/{channel}":       10,
		"PUT /v1/channels/{channel}":         10,
		"DELETE /v1/channels/{channel}":      10,
		"POST /v1/channels/{channel}/verify": 10,
	}
	e := setup(t)
	for _, rt := range scopedRoutes() {
		rq, _ := validRequest(t, rt, e.A, 1)
		rq.key = e.A.Full
		r := e.do(t, rq)
		lim, _ := strconv.Atoi(r.header.Get("X-RateLimit-Limit"))
		if w, ok := want[rt.Name()]; ok && lim != w {
			t.Errorf("%s: X-RateLimit-Limit %d, spec says %d", rt.Name(), lim, w)
		}
		if rt.PerMinute != lim {
			t.Errorf("%s: X-RateLimit-Limit %d, Routes() says %d", rt.Name(), lim, rt.PerMinute)
		}
		if rem, _ := strconv.Atoi(r.header.Get("X-RateLimit-Remaining")); rem != lim-1 {
			t.Errorf("%s: X-RateLimit-Remaining %d after one request, want %d", rt.Name(), rem, lim-1)
		}
	}
}

// TestRateLimitBucketRefills: the bucket refills at the per-minute rate,
// one token at a time, and never above its size.
func TestRateLimitBucketRefills(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.RateLimits = map[string]int{"GET /v1/contacts": 3} })
	get := func() *response { return e.call(t, "GET", "/v1/contacts", "A", nil) }
	for range 3 {
		expect(t, get(), 200, "", "")
	}
	r := get()
	expect(t, r, 429, "rate_limit_exceeded", "")
	if got := r.header.Get("Retry-After"); got != "20" {
		t.Errorf("Retry-After %q, want 20 (one token every 20 s at 3 per minute)", got)
	}
	e.clock.Advance(20 * time.Second)
	expect(t, get(), 200, "", "")
	expect(t, get(), 429, "rate_limit_exceeded", "")
	e.clock.Advance(time.Hour)
	r = get()
	expect(t, r, 200, "", "")
	if got := r.header.Get("X-RateLimit-Remaining"); got != "2" {
		t.Errorf("after an idle hour: remaining %q, want 2 (bucket of 3)", got)
	}
}

// TestRateLimitUnauthenticated: requests without a valid key are limited
// per client address, before the key is checked, and other addresses and
// keyed requests are not affected.
func TestRateLimitUnauthenticated(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) { o.RateLimits = map[string]int{"unauthenticated": 2} })
	expect(t, e.call(t, "GET", "/v1/contacts", "", nil), 401, "unauthorized", "")
	expect(t, e.call(t, "GET", "/v1/nope", "", nil), 404, "not_found", "")
	expect(t, e.call(t, "GET", "/v1/contacts", "raw:wrong-key-wrong-key-wrong", nil), 429, "rate_limit_exceeded", "")
	expect(t, e.call(t, "GET", "/v1/contacts", "A", nil), 200, "", "")
	e.remote = "198.51.100.7:555"
	expect(t, e.call(t, "GET", "/v1/contacts", "", nil), 401, "unauthorized", "")
}

// TestRateLimitsDisabled: with DisableRateLimits nothing is refused.
func TestRateLimitsDisabled(t *testing.T) {
	t.Parallel()
	e := setup(t, func(o *httpapi.Options) {
		o.DisableRateLimits = true
		o.RateLimits = map[string]int{"GET /v1/contacts": 1}
	})
	for range 5 {
		rec := e.doRaw(request{method: "GET", path: "/v1/contacts", key: e.A.Full})
		if rec.status != 200 {
			t.Fatalf("status %d with rate limits disabled: %s", rec.status, rec.body)
		}
	}
}

// TestIdempotency covers replay and conflict on both send endpoints.
func TestIdempotency(t *testing.T) {
	t.Parallel()
	cases := []struct {
		path, body, reordered, different, otherPath, otherBody string
	}{
		{
			path:      "/v1/messages",
			body:      `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi","idempotency_key":"k-1"}`,
			reordered: ` { "idempotency_key":"k-1", "text":"hi", "type":"text", "to":"+254712345678", "channel":"whatsapp" } `,
			different: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi again","idempotency_key":"k-1"}`,
			otherPath: "/v1/messages/templates",
			otherBody: `{"to":"+254712345678","template_name":"welcome","language":"en_US","idempotency_key":"k-1"}`,
		},
		{
			path:      "/v1/messages/templates",
			body:      `{"to":"+254712345678","template_name":"order_update","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-1"}]}],"idempotency_key":"k-1"}`,
			reordered: `{"idempotency_key":"k-1","language":"en","template_name":"order_update","to":"+254712345678","components":[{"parameters":[{"text":"Amina","type":"text"},{"text":"A-1","type":"text"}],"type":"body"}]}`,
			different: `{"to":"+254712345678","template_name":"order_update","language":"en","components":[{"type":"body","parameters":[{"type":"text","text":"Amina"},{"type":"text","text":"A-2"}]}],"idempotency_key":"k-1"}`,
			otherPath: "/v1/messages",
			otherBody: `{"channel":"whatsapp","to":"+254712345678","type":"text","text":"hi","idempotency_key":"k-1"}`,
		},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			before := e.store.messages.Load()
			first := e.call(t, "POST", c.path, "A", c.body)
			expect(t, first, 201, "", "")
			if v := first.header.Get("Idempotent-Replayed"); v != "" {
				t.Errorf("first send: Idempotent-Replayed %q", v)
			}
			for _, body := range []string{c.body, c.reordered} {
				again := e.call(t, "POST", c.path, "A", body)
				expect(t, again, 201, "", "")
				if v := again.header.Get("Idempotent-Replayed"); v != "true" {
					t.Errorf("replay: Idempotent-Replayed %q, want true", v)
				}
				if !bytes.Equal(again.body, first.body) {
					t.Errorf("replay body differs:\n%s\n%s", first.body, again.body)
				}
			}
			if got := e.store.messages.Load() - before; got != 1 {
				t.Errorf("%d messages stored, want 1", got)
			}
			id := first.object(t)["message_id"].(string)
			expect(t, e.call(t, "GET", "/v1/messages/"+id, "A", nil), 200, "", "")

			// Same key, different request: conflict, nothing stored.
			r := e.call(t, "POST", c.path, "A", c.different)
			expect(t, r, 409, "conflict", "idempotency_key")
			r = e.call(t, "POST", c.otherPath, "A", c.otherBody)
			expect(t, r, 409, "conflict", "idempotency_key")
			if got := e.store.messages.Load() - before; got != 1 {
				t.Errorf("%d messages stored after conflicts, want 1", got)
			}
			// The key is per workspace: B sends a new message.
			r = e.call(t, "POST", c.path, "B", c.body)
			expect(t, r, 201, "", "")
			if r.header.Get("Idempotent-Replayed") != "" || r.object(t)["message_id"] == id {
				t.Errorf("B's send with A's key replayed A's message: %s", r.body)
			}
			// The replay survives time.
			e.clock.Advance(10 * time.Minute)
			again := e.call(t, "POST", c.path, "A", c.body)
			if again.header.Get("Idempotent-Replayed") != "true" || !bytes.Equal(again.body, first.body) {
				t.Errorf("replay after 10 minutes: %s %s", again.header.Get("Idempotent-Replayed"), again.body)
			}
			// Without a key the same request is a new message every time.
			noKey := strings.Replace(c.body, `,"idempotency_key":"k-1"`, "", 1)
			m1 := e.call(t, "POST", c.path, "A", noKey)
			m2 := e.call(t, "POST", c.path, "A", noKey)
			expect(t, m1, 201, "", "")
			expect(t, m2, 201, "", "")
			if m1.object(t)["message_id"] == m2.object(t)["message_id"] || m2.header.Get("Idempotent-Replayed") != "" {
				t.Errorf("sends without idempotency_key were deduplicated")
			}
		})
	}
}

// TestIdempotencyConcurrent: concurrent identical sends with one key store
// one message; exactly one response is not a replay.
func TestIdempotencyConcurrent(t *testing.T) {
	t.Parallel()
	e := setup(t)
	body := `{"channel":"messenger","to":"psid_123","type":"text","text":"race","idempotency_key":"race-1"}`
	const n = 16
	var wg sync.WaitGroup
	res := make([]*response, n)
	for i := range n {
		wg.Go(func() { res[i] = e.doRaw(request{method: "POST", path: "/v1/messages", key: e.A.Full, body: body}) })
	}
	wg.Wait()
	fresh, ids := 0, map[string]bool{}
	for _, r := range res {
		if r.status != 201 {
			t.Fatalf("status %d: %s", r.status, r.body)
		}
		if r.header.Get("Idempotent-Replayed") == "" {
			fresh++
		}
		ids[string(r.body)] = true
	}
	if fresh != 1 || len(ids) != 1 {
		t.Errorf("%d fresh responses and %d distinct bodies, want 1 and 1", fresh, len(ids))
	}
	if got := e.store.messages.Load(); got != 5 { // 4 fixtures (a message and a webhook event per workspace) + 1
		t.Errorf("%d messages stored, want 5", got)
	}
}

// TestCorrelationID: a sane caller id is echoed, an insane one is replaced,
// and generated ids are unique.
func TestCorrelationID(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name    string
		headers http.Header
		echo    string // the expected echo, "" when replaced
	}{
		{"sane", hdr("X-Correlation-ID", "abc-123"), "abc-123"},
		{"sane with punctuation", hdr("X-Correlation-ID", "req.01:ab/cd+ef=_z"), "req.01:ab/cd+ef=_z"},
		{"uuid", hdr("X-Correlation-ID", "0192f1c8-a6f4-7c3e-a1d4-b5e2f9a0c3d1"), "0192f1c8-a6f4-7c3e-a1d4-b5e2f9a0c3d1"},
		{"128 chars", hdr("X-Correlation-ID", strings.Repeat("a", 128)), strings.Repeat("a", 128)},
		{"spaces", hdr("X-Correlation-ID", "abc def"), ""},
		{"200 chars", hdr("X-Correlation-ID", strings.Repeat("a", 200)), ""},
		{"empty", hdr("X-Correlation-ID", ""), ""},
		{"html", hdr("X-Correlation-ID", "<script>"), ""},
		{"non-ASCII", hdr("X-Correlation-ID", "ñandú"), ""},
		{"quote", hdr("X-Correlation-ID", `a"b`), ""},
		{"two headers", hdr("X-Correlation-ID", "one", "X-Correlation-ID", "two"), ""},
		{"none", nil, ""},
	}
	for _, c := range cases {
		for _, ok := range []bool{true, false} {
			name := c.name + map[bool]string{true: "/success", false: "/error"}[ok]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e := setup(t)
				rq := request{method: "GET", path: "/v1/contacts/<A.contact>", key: e.A.Full, headers: c.headers}
				if !ok {
					rq.path = "/v1/contacts/ct_missing"
				}
				r := e.do(t, rq)
				got := r.header.Get("X-Correlation-ID")
				if c.echo != "" && got != c.echo {
					t.Errorf("X-Correlation-ID %q, want the caller's %q", got, c.echo)
				}
				if c.echo == "" {
					for _, sent := range c.headers.Values("X-Correlation-ID") {
						if got == sent {
							t.Errorf("insane X-Correlation-ID %q echoed", sent)
						}
					}
					if !saneID(got) {
						t.Errorf("generated X-Correlation-ID %q is not sane", got)
					}
				}
				if !ok {
					expect(t, r, 404, "not_found", "")
				}
			})
		}
	}
	t.Run("unique", func(t *testing.T) {
		t.Parallel()
		e := setup(t)
		seen := map[string]bool{}
		for range 50 {
			id := e.call(t, "GET", "/v1/nope", "", nil).header.Get("X-Correlation-ID")
			if seen[id] {
				t.Fatalf("X-Correlation-ID %q repeated", id)
			}
			seen[id] = true
		}
	})
}

func saneID(s string) bool {
	if s == "" || len(s) > 128 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("._:/+=-", r)) {
			return false
		}
	}
	return true
}

// TestErrorDocs: every code of the spec's table, and the two REST codes,
// has a docs page served by the handler at error.docs.
func TestErrorDocs(t *testing.T) {
	t.Parallel()
	e := setup(t)
	for code, status := range statusOfCode {
		r := e.call(t, "GET", "/v1/errors/"+code, "", nil)
		expect(t, r, 200, "", "")
		m := r.object(t)
		if m["code"] != code || m["statusCode"] != float64(status) || m["description"] == "" {
			t.Errorf("docs of %s: %s", code, r.body)
		}
	}
	expect(t, e.call(t, "GET", "/v1/errors/no_such_code", "", nil), 404, "not_found", "")
	// The docs link of a real error resolves.
	r := e.call(t, "GET", "/v1/contacts", "", nil)
	expect(t, r, 401, "unauthorized", "")
	expect(t, e.call(t, "GET", r.env.Error.Docs, "", nil), 200, "", "")
	// The OpenAPI document is served as JSON.
	r = e.call(t, "GET", "/v1/openapi.json", "", nil)
	expect(t, r, 200, "", "")
	if !bytes.Equal(r.body, httpapi.OpenAPI()) {
		t.Errorf("GET /v1/openapi.json differs from OpenAPI()")
	}
}

// TestStatusCodesOfSpecTable triggers each error code of the spec's table
// (internal_error excepted) over HTTP.
func TestStatusCodesOfSpecTable(t *testing.T) {
	t.Parallel()
	type trigger struct {
		code string
		run  func(t *testing.T, e *env) *response
	}
	triggers := []trigger{
		{"unauthorized", func(t *testing.T, e *env) *response { return e.call(t, "GET", "/v1/contacts", "", nil) }},
		{"invalid_api_key", func(t *testing.T, e *env) *response { return e.call(t, "GET", "/v1/contacts", "A.revoked", nil) }},
		{"forbidden", func(t *testing.T, e *env) *response {
			return e.call(t, "GET", "/v1/contacts", "A.only:read:messages", nil)
		}},
		{"not_found", func(t *testing.T, e *env) *response {
			return e.call(t, "GET", "/v1/messages/msg_doesnotexist", "A", nil)
		}},
		{"conflict", func(t *testing.T, e *env) *response {
			return e.call(t, "POST", "/v1/contacts", "A", `{"firstName":"Dup","phone":"<A.phone>"}`)
		}},
		{"validation_error", func(t *testing.T, e *env) *response {
			return e.call(t, "POST", "/v1/messages", "A", `{"channel":"sms","to":"+254712345678","type":"text","text":"x"}`)
		}},
		{"channel_unavailable", func(t *testing.T, e *env) *response {
			if _, err := e.svc.Workspace(e.A.ID).Channels.Disconnect(context.Background(), "instagram"); err != nil {
				t.Fatal(err)
			}
			return e.call(t, "POST", "/v1/messages", "A", `{"channel":"instagram","to":"ig_123","type":"text","text":"x"}`)
		}},
		{"template_not_found", func(t *testing.T, e *env) *response {
			return e.call(t, "POST", "/v1/messages/templates", "A", `{"to":"+254712345678","template_name":"nope","language":"en"}`)
		}},
		{"rate_limit_exceeded", func(t *testing.T, e *env) *response {
			for range 20 {
				e.call(t, "POST", "/v1/messages/templates", "A", `{"to":"+254712345678","template_name":"welcome","language":"en_US"}`)
			}
			return e.call(t, "POST", "/v1/messages/templates", "A", `{"to":"+254712345678","template_name":"welcome","language":"en_US"}`)
		}},
	}
	for _, tr := range triggers {
		t.Run(tr.code, func(t *testing.T) {
			t.Parallel()
			e := setup(t)
			r := tr.run(t, e)
			expect(t, r, statusOfCode[tr.code], tr.code, "")
		})
	}
}

// TestInternalErrors: a store failure or a panic gives 500 internal_error
// in the envelope, never the internal text, and is logged with the
// correlation id.
func TestInternalErrors(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		hook func() error
	}{
		{"store error", func() error { return errors.New("disk on fire at /var/lib/secret.db") }},
		{"panic", func() error { panic("disk on fire at /var/lib/secret.db") }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var logs syncBuffer
			e := setup(t, func(o *httpapi.Options) { o.Logger = slog.New(slog.NewTextHandler(&logs, nil)) })
			e.store.contactGetHook.Store(&c.hook)
			r := e.doRaw(request{method: "GET", path: "/v1/contacts/<A.contact>", key: e.A.Full, headers: hdr("X-Correlation-ID", "trace-500")})
			if r.status != 500 {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			var env envelope
			decodeInto(t, r.body, &env)
			if env.Error.Code != "internal_error" || env.Error.StatusCode != 500 || env.Error.RequestID != "trace-500" || env.Error.Docs != "/v1/errors/internal_error" {
				t.Errorf("envelope %s", r.body)
			}
			if strings.Contains(string(r.body), "disk on fire") {
				t.Errorf("internal error text leaked: %s", r.body)
			}
			if out := logs.String(); !strings.Contains(out, "disk on fire") || !strings.Contains(out, "trace-500") {
				t.Errorf("log lacks the error or the correlation id:\n%s", out)
			}
			// The handler keeps serving.
			e.store.contactGetHook.Store(nil)
			expect(t, e.call(t, "GET", "/v1/contacts/<A.contact>", "A", nil), 200, "", "")
		})
	}
}

// syncBuffer is a bytes.Buffer safe for concurrent writers.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestRateLimitClientAddress: unauthenticated requests are limited per
// client address; X-Forwarded-For counts only from a trusted proxy
// (TrustProxy, TrustedProxies), and only its right-most untrusted entry,
// so it cannot be spoofed to escape the limit. 404 and 405 answers count too.
func TestRateLimitClientAddress(t *testing.T) {
	t.Parallel()
	t.Run("untrusted", func(t *testing.T) {
		t.Parallel()
		e := setup(t, func(o *httpapi.Options) { o.RateLimits = map[string]int{"unauthenticated": 1} })
		expect(t, e.do(t, request{method: "GET", path: "/v1/nope", headers: hdr("X-Forwarded-For", "203.0.113.1")}), 404, "not_found", "")
		expect(t, e.do(t, request{method: "DELETE", path: "/v1/contacts", headers: hdr("X-Forwarded-For", "203.0.113.2")}), 429, "rate_limit_exceeded", "")
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", headers: hdr("X-Forwarded-For", "203.0.113.3")}), 429, "rate_limit_exceeded", "")
		e.clock.Advance(time.Minute)
		r := e.do(t, request{method: "DELETE", path: "/v1/contacts"})
		expect(t, r, 405, "method_not_allowed", "")
	})
	t.Run("trusted", func(t *testing.T) {
		t.Parallel()
		// The peer is the one proxy: the right-most entry, which it
		// appended, counts; entries a client wrote to its left do not.
		e := setup(t, func(o *httpapi.Options) {
			o.RateLimits = map[string]int{"unauthenticated": 1}
			o.TrustProxy = true
		})
		for _, ip := range []string{"203.0.113.1", "6.6.6.6, 203.0.113.2", " 203.0.113.3 "} {
			expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", headers: hdr("X-Forwarded-For", ip)}), 401, "unauthorized", "")
		}
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", headers: hdr("X-Forwarded-For", "203.0.113.2")}), 429, "rate_limit_exceeded", "")
		// A forged left entry does not buy a fresh limit.
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", headers: hdr("X-Forwarded-For", "198.51.100.99, 203.0.113.1")}), 429, "rate_limit_exceeded", "")
		// Without the header the connection's address counts.
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts"}), 401, "unauthorized", "")
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts"}), 429, "rate_limit_exceeded", "")
	})
	t.Run("trusted proxies", func(t *testing.T) {
		t.Parallel()
		// A chain of trusted proxies (the peer 192.0.2.10, then 10/8): the
		// right-most entry that is not a trusted proxy counts.
		e := setup(t, func(o *httpapi.Options) {
			o.RateLimits = map[string]int{"unauthenticated": 1}
			o.TrustedProxies = []netip.Prefix{netip.MustParsePrefix("192.0.2.10/32"), netip.MustParsePrefix("10.0.0.0/8")}
		})
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", headers: hdr("X-Forwarded-For", "6.6.6.6, 203.0.113.2, 10.0.0.1")}), 401, "unauthorized", "")
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", headers: hdr("X-Forwarded-For", "7.7.7.7, 203.0.113.2")}), 429, "rate_limit_exceeded", "")
		expect(t, e.do(t, request{method: "GET", path: "/v1/contacts", headers: hdr("X-Forwarded-For", "203.0.113.3")}), 401, "unauthorized", "")
	})
}
