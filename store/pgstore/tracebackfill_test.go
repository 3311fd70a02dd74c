package pgstore_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"
	"github.com/ujumbe/messaging"
)

// TestDeliveryTraceParentBackfill: the statement of migration 0033 gives
// the status deliveries queued before it (with no trace parent) the trace
// context of their message, and leaves the others alone.
func TestDeliveryTraceParentBackfill(t *testing.T) {
	ctx := context.Background()
	url := testURL(t)
	schema := newSchema(t, url)
	s := open(t, url, schema, 0)
	at := time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC)
	workspaceWithEndpoint(t, s, at)
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
	b, err := os.ReadFile("migrations/0033_delivery_trace_parent.sql")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	start := strings.Index(src, "UPDATE webhook_deliveries")
	if start < 0 {
		t.Fatal("backfill statement not found")
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `SET search_path TO `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, src[start:]); err != nil {
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
