package httpapi_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/internal/testclock"
	"github.com/ujumbe/messaging/sms"
	"github.com/ujumbe/messaging/sms/fakegateway"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestCursorListEnvelope: every cursor-paged list the spec leaves open, on
// /v1 and /admin/v1 alike, answers {"data": [...], "next_cursor": ...}
// and nothing else; walked a few items a page, every page but the last has a
// non-empty string cursor and the last has null (never "", which a client
// would send back as a cursor or mistake for one).
func TestCursorListEnvelope(t *testing.T) {
	t.Parallel()
	st := memstore.New()
	smsAPI, err := sms.New(st, fakegateway.New(nil), &sms.Options{Clock: testclock.New(t0).Now})
	if err != nil {
		t.Fatal(err)
	}
	e := setupOn(t, st, nil, func(o *httpapi.Options) { o.SMS, o.OperatorToken = smsAPI, opToken })
	ctx := context.Background()
	// Workspace A has audit events (its keys), a conversation of two
	// messages and one delivery of its webhook; add a second conversation
	// and a second delivery (a test); p1's ledger gets its opening and a
	// top-up; the workspaces are ws_a and ws_b.
	if _, err := e.svc.Workspace(e.A.ID).Messages.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: "+254722000111", Type: "text", Text: "hello"}); err != nil {
		t.Fatal(err)
	}
	call := func(method, path, body string, op bool) (int, []byte) {
		t.Helper()
		rq := request{method: method, path: path, key: e.A.Full}
		if body != "" {
			rq.body = body
		}
		if op {
			rq = request{method: method, path: path, headers: http.Header{"Authorization": {"Bearer " + opToken}}}
			if body != "" {
				rq.body = body
			}
		}
		r := e.do(t, rq)
		return r.status, r.body
	}
	if st, b := call("POST", "/v1/webhooks/"+e.A.Hook.ID+"/test", `{}`, false); st != http.StatusOK {
		t.Fatalf("webhook test: %d %s", st, b)
	}
	if st, b := call("POST", "/admin/v1/sms/accounts", `{"partnerID":"p1","shortcodes":["ACME"],"credit":"10"}`, true); st != http.StatusCreated {
		t.Fatalf("sms account: %d %s", st, b)
	}
	if st, b := call("POST", "/admin/v1/sms/accounts/p1/top-ups", `{"amount":"5","reference":"inv-1"}`, true); st != http.StatusCreated {
		t.Fatalf("top-up: %d %s", st, b)
	}
	conv := e.A.Message.ConversationID
	hook := e.A.Hook

	lists := []struct {
		path  string
		op    bool
		limit int
	}{
		{"/v1/messages", false, 1},
		{"/v1/conversations", false, 1},
		{"/v1/conversations/" + conv + "/messages", false, 1},
		{"/v1/audit-events", false, 10},
		{"/v1/webhooks/" + hook.ID + "/deliveries", false, 1},
		{"/admin/v1/workspaces", true, 1},
		{"/admin/v1/sms/accounts/p1/ledger", true, 1},
	}
	// The table holds every list the OpenAPI document pages by cursor.
	var covered []string
	for _, tc := range lists {
		covered = append(covered, strings.NewReplacer(conv, "{id}", hook.ID, "{id}", "p1", "{partnerID}").Replace(tc.path))
	}
	for _, path := range cursorPaths(t) {
		if !slices.Contains(covered, path) {
			t.Errorf("GET %s takes a cursor but is not in the table", path)
		}
	}
	for _, tc := range lists {
		t.Run(tc.path, func(t *testing.T) {
			cursor, pages := "", 0
			for {
				q := url.Values{"limit": {strconv.Itoa(tc.limit)}}
				if cursor != "" {
					q.Set("cursor", cursor)
				}
				st, b := call("GET", tc.path+"?"+q.Encode(), "", tc.op)
				if st != http.StatusOK {
					t.Fatalf("page %d: %d %s", pages+1, st, b)
				}
				pages++
				var v map[string]json.RawMessage
				if err := json.Unmarshal(b, &v); err != nil {
					t.Fatalf("page %d is not an object: %s", pages, b)
				}
				var keys []string
				for k := range v {
					keys = append(keys, k)
				}
				slices.Sort(keys)
				if !slices.Equal(keys, []string{"data", "next_cursor"}) {
					t.Fatalf("page %d has members %v, want [data next_cursor]: %s", pages, keys, b)
				}
				var data []json.RawMessage
				if err := json.Unmarshal(v["data"], &data); err != nil || data == nil || len(data) < 1 || len(data) > tc.limit {
					t.Fatalf("page %d: data %s, want an array of 1 to %d items", pages, v["data"], tc.limit)
				}
				var next *string
				if err := json.Unmarshal(v["next_cursor"], &next); err != nil {
					t.Fatalf("page %d: next_cursor %s is neither a string nor null", pages, v["next_cursor"])
				}
				if next == nil {
					break
				}
				if *next == "" {
					t.Fatalf("page %d: next_cursor is \"\"; the last page's is null, the others' a cursor", pages)
				}
				if pages > 20 {
					t.Fatalf("more than 20 pages; cursor %q", *next)
				}
				cursor = *next
			}
			if pages < 2 {
				t.Errorf("%d page(s), want at least 2 (a cursor, then null)", pages)
			}
		})
	}
}

// cursorPaths returns the paths whose GET takes a cursor parameter in the
// OpenAPI document.
func cursorPaths(t *testing.T) []string {
	t.Helper()
	type param struct {
		Ref  string `json:"$ref"`
		Name string `json:"name"`
		In   string `json:"in"`
	}
	var doc struct {
		Paths map[string]struct {
			Parameters []param `json:"parameters"`
			Get        *struct {
				Parameters []param `json:"parameters"`
			} `json:"get"`
		} `json:"paths"`
		Components struct {
			Parameters map[string]param `json:"parameters"`
		} `json:"components"`
	}
	if err := json.Unmarshal(httpapi.OpenAPI(), &doc); err != nil {
		t.Fatal(err)
	}
	var out []string
	for path, item := range doc.Paths {
		if item.Get == nil {
			continue
		}
		for _, p := range append(item.Parameters, item.Get.Parameters...) {
			if name, ok := strings.CutPrefix(p.Ref, "#/components/parameters/"); ok {
				p = doc.Components.Parameters[name]
			}
			if p.Name == "cursor" && p.In == "query" {
				out = append(out, path)
			}
		}
	}
	slices.Sort(out)
	if len(out) == 0 {
		t.Fatal("no GET takes a cursor in the OpenAPI document")
	}
	return out
}
