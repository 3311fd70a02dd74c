package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/store/memstore"
)

// TestWebhookAndAPITimestampsAgree: a message's updated_at reads the same,
// byte for byte, in the webhook payload of its status change and in GET
// /v1/messages/{id}, even when the clock has digits below the millisecond.
func TestWebhookAndAPITimestampsAgree(t *testing.T) {
	ctx := context.Background()
	var mu sync.Mutex
	var bodies [][]byte
	rcv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		mu.Lock()
		bodies = append(bodies, b)
		mu.Unlock()
	}))
	t.Cleanup(rcv.Close)
	e := setupOn(t, memstore.New(), &messaging.Options{SecretKey: make([]byte, 32),
		Dispatch: messaging.DispatchOptions{PerSenderRate: -1}, Webhooks: messaging.WebhookOptions{AllowLoopback: true}})
	if _, _, err := e.svc.Workspace(e.A.ID).Webhooks.Create(ctx, &messaging.WebhookCreateParams{URL: rcv.URL + "/hook"}); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(1500*time.Millisecond + 188088780) // ...:01.688088780Z
	if _, err := e.svc.DispatchDue(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.DeliverWebhooksDue(ctx); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	var hookAt string
	for _, b := range bodies {
		var ev struct {
			CreatedAt string `json:"created_at"`
			Data      struct {
				MessageID string `json:"message_id"`
				Status    string `json:"status"`
				UpdatedAt string `json:"updated_at"`
			} `json:"data"`
		}
		if err := json.Unmarshal(b, &ev); err != nil {
			t.Fatalf("payload %s: %v", b, err)
		}
		if ev.Data.MessageID == e.A.Message.MessageID && ev.Data.Status == messaging.StatusSent {
			hookAt = ev.Data.UpdatedAt
			if ev.CreatedAt != hookAt {
				t.Errorf("event created_at %q, data.updated_at %q: want the same text", ev.CreatedAt, hookAt)
			}
		}
	}
	if hookAt == "" {
		t.Fatalf("no webhook for the sent message among %d payloads", len(bodies))
	}
	var got struct {
		UpdatedAt string `json:"updated_at"`
	}
	if err := json.Unmarshal(e.call(t, "GET", "/v1/messages/<A.message>", "A", nil).body, &got); err != nil {
		t.Fatal(err)
	}
	if want := "2026-03-01T09:00:01.688Z"; got.UpdatedAt != want || hookAt != want {
		t.Errorf("updated_at: API %q, webhook %q; want both %q", got.UpdatedAt, hookAt, want)
	}
}
