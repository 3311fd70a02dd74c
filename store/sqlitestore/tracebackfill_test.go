package sqlitestore

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// TestDeliveryTraceParentBackfill: the statement of migration 0032 gives
// the status deliveries queued before it (with no trace parent) the trace
// context of their message, and leaves the others alone.
func TestDeliveryTraceParentBackfill(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "db.sqlite")
	s, err := Open(ctx, path, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	if err := s.WorkspaceCreate(ctx, &messaging.WorkspaceInfo{ID: "a", Name: "a", Channels: []string{}, CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	if err := s.WebhookEndpointCreate(ctx, &messaging.WebhookEndpoint{ID: "we_1", WorkspaceID: "a", URL: "https://hooks.example/1",
		SecretSealed: []byte("x"), CreatedAt: at}); err != nil {
		t.Fatal(err)
	}
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, id := range []string{"msg_t", "msg_n"} {
		m := &messaging.Message{ID: id, WorkspaceID: "a", ConversationID: "conv", Channel: "whatsapp", To: "+254712345678",
			Direction: "outbound", Status: "queued", Type: "text", Text: "hi", CreatedAt: at, UpdatedAt: at, DueAt: at}
		if id == "msg_t" {
			m.TraceParent = tp
		}
		if _, _, err := s.MessageCreate(ctx, m); err != nil {
			t.Fatal(err)
		}
		ev := &driver.EventRecord{ID: "evt_" + id, WorkspaceID: "a", MessageID: id, Type: messaging.EventMessageStatusUpdated, Payload: []byte("{}"), CreatedAt: at}
		if rs, err := s.MessageUpdateStatuses(ctx, []*driver.MessageStatusParams{{WorkspaceID: "a", ID: id, From: []string{"queued"}, To: "sent", At: at, Event: ev}}); err != nil || !rs[0].Changed {
			t.Fatal(rs, err)
		}
	}
	other := &driver.EventRecord{ID: "evt_other", WorkspaceID: "a", MessageID: "msg_t", Type: "sms.delivery_report", Payload: []byte("{}"), CreatedAt: at}
	if queued, err := s.WebhookQueueEvent(ctx, &driver.WebhookQueueParams{EndpointID: "we_1", Event: other}); err != nil || !queued {
		t.Fatal(queued, err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	m := ms[31]
	start := strings.Index(m.SQL, "UPDATE webhook_deliveries")
	if !strings.HasPrefix(m.Name, "0032_") || start < 0 {
		t.Fatalf("backfill statement not found in %s", m.Name)
	}
	db, err := sql.Open("sqlite3", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(m.SQL[start:]); err != nil {
		t.Fatal(err)
	}
	ds, err := s.WebhookDeliveryList(ctx, &driver.WebhookDeliveryListParams{WorkspaceID: "a", EndpointID: "we_1", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, d := range ds {
		got[d.EventID] = d.TraceParent
	}
	if d := cmp.Diff(map[string]string{"evt_msg_t": tp, "evt_msg_n": "", "evt_other": ""}, got); d != "" {
		t.Errorf("trace parents after the backfill, by event (-want +got):\n%s", d)
	}
}
