package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/httpapi"
	"github.com/ujumbe/messaging/store/memstore"
	"github.com/ujumbe/messaging/store/sqlitestore"
)

type listPage struct {
	Data []struct {
		MessageID string `json:"message_id"`
		CreatedAt string `json:"created_at"`
	} `json:"data"`
	NextCursor *string `json:"next_cursor"`
}

// TestListMessagesPagingUnderInserts reads GET /v1/messages page by page
// while other messages are sent: every message that existed before the
// first page is listed exactly once, no message is listed twice, and the
// pages are in order, on memstore and on SQLite.
func TestListMessagesPagingUnderInserts(t *testing.T) {
	t.Parallel()
	lite, err := sqlitestore.Open(context.Background(), filepath.Join(t.TempDir(), "list.db"), nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lite.Close() })
	for name, store := range map[string]driver.Store{"memstore": memstore.New(), "sqlitestore": lite} {
		t.Run(name, func(t *testing.T) {
			// The inserts run while the pages are read, so a slow machine
			// may page through more than GET /v1/messages' 60 a minute: the
			// limits are not what this test is about.
			e := setupOn(t, store, nil, func(o *httpapi.Options) { o.RateLimits = map[string]int{"GET /v1/messages": 100000} })
			ctx := context.Background()
			msgs := e.svc.Workspace("ws_a").Messages
			send := func(i int) string {
				r, err := msgs.Send(ctx, &messaging.SendParams{Channel: "whatsapp", To: fmt.Sprintf("+2547120000%02d", i%7), Type: "text", Text: fmt.Sprint("m", i)})
				if err != nil {
					t.Error(err)
					return ""
				}
				return r.MessageID
			}
			before := map[string]bool{}
			for _, m := range mustList(t, msgs) {
				before[m] = true
			}
			for i := range 40 {
				before[send(i)] = true
				if i%5 == 0 {
					e.clock.Advance(time.Millisecond)
				}
			}
			var wg sync.WaitGroup
			wg.Add(1)
			stop := make(chan struct{})
			// At most 300 inserts run beside the listing: on a busy machine
			// the first page may come after all of them, and the listing
			// then pages through them too (at most 48 pages of 7).
			go func() {
				defer wg.Done()
				for i := 40; i < 340; i++ {
					select {
					case <-stop:
						return
					default:
					}
					send(i)
					if i%3 == 0 {
						e.clock.Advance(time.Millisecond)
					}
				}
			}()
			seen := map[string]int{}
			var order []string
			cursor := ""
			for pages := 0; ; pages++ {
				if pages > 100 {
					t.Fatal("more than 100 pages")
				}
				path := "/v1/messages?limit=7"
				if cursor != "" {
					path += "&cursor=" + url.QueryEscape(cursor)
				}
				res := e.do(t, request{method: "GET", path: path, key: e.A.Full})
				if res.status != 200 {
					t.Fatalf("GET %s: %d %s", path, res.status, res.body)
				}
				var page listPage
				if err := json.Unmarshal(res.body, &page); err != nil {
					t.Fatal(err)
				}
				for _, m := range page.Data {
					seen[m.MessageID]++
					order = append(order, m.CreatedAt)
				}
				if page.NextCursor == nil {
					break
				}
				cursor = *page.NextCursor
			}
			close(stop)
			wg.Wait()
			for id, n := range seen {
				if n != 1 {
					t.Errorf("message %s listed %d times", id, n)
				}
			}
			for id := range before {
				if seen[id] == 0 {
					t.Errorf("message %s, created before the listing, is missing", id)
				}
			}
			if !slices.IsSortedFunc(order, func(a, b string) int { return -compareStrings(a, b) }) {
				t.Errorf("pages not newest first: %v", order)
			}
		})
	}
}

func compareStrings(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func mustList(t *testing.T, msgs *messaging.Messages) []string {
	t.Helper()
	page, err := msgs.List(context.Background(), &messaging.MessageQuery{Limit: record.MaxPageSize})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range page.Items {
		ids = append(ids, m.ID)
	}
	return ids
}

// TestListMessagesBadQuery: every malformed parameter is a 400
// validation_error naming it.
func TestListMessagesBadQuery(t *testing.T) {
	t.Parallel()
	e := setup(t)
	cases := []struct{ path, field string }{
		{"/v1/messages?limit=0", "limit"},
		{"/v1/messages?limit=101", "limit"},
		{"/v1/messages?limit=ten", "limit"},
		{"/v1/messages?limit=1&limit=2", "limit"},
		{"/v1/messages?cursor=not-a-cursor", "cursor"},
		{"/v1/messages?direction=sideways", "direction"},
		{"/v1/messages?status=lost", "status"},
		{"/v1/messages?channel=sms", "channel"},
		{"/v1/messages?created_after=yesterday", "created_after"},
		{"/v1/messages?created_before=2026-13-01T00:00:00Z", "created_before"},
		{"/v1/messages?created_after=2026-03-02T00:00:00Z&created_before=2026-03-01T00:00:00Z", "created_before"},
		{"/v1/messages?created_after=2026-03-01T00:00:00Z&created_before=2026-03-01T03:00:00%2B03:00", "created_before"},
		{"/v1/messages?sort=asc", "sort"},
		{"/v1/conversations?limit=-1", "limit"},
		{"/v1/conversations?cursor=%FF", "cursor"},
		{"/v1/conversations?channel=whatsapp", "channel"},
		{"/v1/conversations/" + e.A.Message.ConversationID + "/messages?conversation_id=x", "conversation_id"},
		{"/v1/conversations/" + e.A.Message.ConversationID + "/messages?status=lost", "status"},
	}
	for _, c := range cases {
		res := e.do(t, request{method: "GET", path: c.path, key: e.A.Full})
		if res.status != 400 || res.env == nil || res.env.Error.Code != "validation_error" || res.env.Error.Field != c.field {
			t.Errorf("GET %s: %d %s; want 400 validation_error naming %s", c.path, res.status, res.body, c.field)
		}
	}
}

// TestListConversations: newest activity first, the last message, the
// contact whose phone matches, the window's end 24 hours after the last
// inbound message, and the conversation's messages.
func TestListConversations(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ctx := context.Background()
	e.clock.Advance(time.Minute)
	inAt := e.clock.Now()
	in, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: "ws_a", Channel: "whatsapp", From: "254712345678", ProviderMessageID: "wamid.in1", Text: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(time.Minute)
	out, err := e.svc.Workspace("ws_a").Messages.Send(ctx, &messaging.SendParams{Channel: "messenger", To: "psid-42", Type: "text", Text: "hello"})
	if err != nil {
		t.Fatal(err)
	}
	res := e.do(t, request{method: "GET", path: "/v1/conversations", key: e.A.Full})
	if res.status != 200 {
		t.Fatalf("%d %s", res.status, res.body)
	}
	var page struct {
		Data []struct {
			ConversationID string         `json:"conversation_id"`
			Channel        string         `json:"channel"`
			To             string         `json:"to"`
			LastMessage    map[string]any `json:"last_message"`
			LastInboundAt  *string        `json:"last_inbound_at"`
			WindowExpires  *string        `json:"window_expires_at"`
			Contact        map[string]any `json:"contact"`
		} `json:"data"`
	}
	if err := json.Unmarshal(res.body, &page); err != nil {
		t.Fatal(err)
	}
	if len(page.Data) != 2 {
		t.Fatalf("%d conversations, want 2: %s", len(page.Data), res.body)
	}
	first, second := page.Data[0], page.Data[1]
	if first.ConversationID != out.ConversationID || first.Contact != nil || first.LastInboundAt != nil || first.WindowExpires != nil ||
		first.LastMessage["message_id"] != out.MessageID {
		t.Errorf("first conversation %+v; want the messenger one, no contact, no window", first)
	}
	wantWindow := record.FormatTime(inAt.Add(24 * time.Hour))
	if second.ConversationID != in.ConversationID || second.To != "+254712345678" || second.LastMessage["message_id"] != in.ID ||
		second.LastMessage["direction"] != "inbound" || second.Contact == nil || second.Contact["id"] != e.A.Contact.ID ||
		second.LastInboundAt == nil || *second.LastInboundAt != record.FormatTime(inAt) ||
		second.WindowExpires == nil || *second.WindowExpires != wantWindow {
		t.Errorf("second conversation %+v; want the WhatsApp one of %s, window until %s", second, e.A.Contact.ID, wantWindow)
	}
	// The conversation's messages: the inbound one and the two of setup.
	res = e.do(t, request{method: "GET", path: "/v1/conversations/" + in.ConversationID + "/messages?limit=2", key: e.A.Full})
	var msgs listPage
	if err := json.Unmarshal(res.body, &msgs); err != nil || res.status != 200 {
		t.Fatalf("%d %s", res.status, res.body)
	}
	if len(msgs.Data) != 2 || msgs.Data[0].MessageID != in.ID || msgs.NextCursor == nil {
		t.Errorf("conversation messages %s; want the inbound message first, and a next page", res.body)
	}
	// Another workspace's conversation is not found.
	res = e.do(t, request{method: "GET", path: "/v1/conversations/" + in.ConversationID + "/messages", key: e.B.Full})
	if res.status != 404 {
		t.Errorf("B reading A's conversation: %d %s", res.status, res.body)
	}
}
