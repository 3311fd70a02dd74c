package storetest

import (
	"context"
	"slices"
	"testing"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
)

// testMessageReceive: an inbound message is inserted with its event
// queued for the endpoints that subscribe to it; the same message again
// (same idempotency key) is returned as stored, queues nothing, and
// another workspace's endpoints never get it.
func testMessageReceive(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	all, received, status, other := endpoint("a", "we_all", 1), endpoint("a", "we_received", 2), endpoint("a", "we_status", 3), endpoint("b", "we_b", 4)
	received.Events = []string{messaging.EventMessageReceived}
	status.Events = []string{messaging.EventMessageStatusUpdated}
	for _, e := range []*messaging.WebhookEndpoint{all, received, status, other} {
		if err := s.WebhookEndpointCreate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	in := func(id string) *driver.MessageReceiveParams {
		m := message("a", id, "\x1finbound:whatsapp:wamid.1", "")
		m.Direction, m.Status, m.Type, m.Text, m.TemplateName, m.Language, m.Components = "inbound", "delivered", "text", "STOP", "", "", nil
		return &driver.MessageReceiveParams{Message: m, Event: &driver.EventRecord{ID: "evt_" + id, WorkspaceID: "a", MessageID: id,
			Type: messaging.EventMessageReceived, Payload: []byte(`{"id":"evt_` + id + `"}`), CreatedAt: at(1)}}
	}
	first := in("msg_1")
	stored, created, err := s.MessageReceive(ctx, first)
	if err != nil || !created {
		t.Fatalf("MessageReceive: created %v, err %v", created, err)
	}
	if d := cmp.Diff(first.Message, stored); d != "" {
		t.Errorf("stored message (-want +got):\n%s", d)
	}
	again, created, err := s.MessageReceive(ctx, in("msg_2"))
	if err != nil || created || again.ID != "msg_1" {
		t.Fatalf("repeated MessageReceive: %v created %v, err %v; want msg_1, not created", again, created, err)
	}
	if _, err := s.MessageGet(ctx, "a", "msg_2"); err == nil {
		t.Error("the repeated message was stored")
	}
	got := eventIDs(claimAll(t, s, "h1", at(20)))
	want := []string{"we_all/evt_msg_1", "we_received/evt_msg_1"}
	if d := cmp.Diff(want, slices.Sorted(slices.Values(got))); d != "" {
		t.Errorf("deliveries (-want +got):\n%s", d)
	}
	for _, d := range listDeliveries(t, s, "a", "we_all", 0, 10) {
		if d.MessageID != "msg_1" || d.EventType != messaging.EventMessageReceived {
			t.Errorf("delivery %+v; want message msg_1, type message.received", d)
		}
	}
	// Without an event, nothing is queued; a missing workspace is
	// ErrNotFound.
	noEvent := in("msg_3")
	noEvent.Message.IdempotencyKey, noEvent.Event = "other", nil
	if _, created, err := s.MessageReceive(ctx, noEvent); err != nil || !created {
		t.Fatalf("without event: created %v, err %v", created, err)
	}
	if got := claimAll(t, s, "h1", at(40)); len(got) != 0 {
		t.Errorf("queued %v without an event", eventIDs(got))
	}
	missing := in("msg_4")
	missing.Message.WorkspaceID, missing.Message.IdempotencyKey = "nope", "k4"
	_, _, err = s.MessageReceive(ctx, missing)
	wantErr(t, "MessageReceive in a missing workspace", err, messaging.ErrNotFound)
}

// testMessageContent: the rich content of an inbound message (media,
// location, contacts, reply, reaction, context, raw type) reads back as
// stored, through MessageGet, MessageList and ConversationList, and a
// message without content reads back with none.
func testMessageContent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	content := &messaging.InboundContent{
		Media:    &record.InboundMedia{ProviderMediaID: "m1", MimeType: "image/jpeg", SHA256: "abc", Caption: "cap", Filename: "f.jpg", Animated: true},
		Location: &record.Location{Latitude: -1.2921, Longitude: 36.8219, Name: "Nairobi", Address: "CBD", URL: "https://example.com"},
		Contacts: []record.SharedContact{{FormattedName: "Amina W", FirstName: "Amina", LastName: "W", Organization: "Acme",
			Phones: []record.ContactPhone{{Phone: "+254712345678", WaID: "254712345678", Type: "CELL"}},
			Emails: []record.ContactEmail{{Email: "a@example.com", Type: "WORK"}}}},
		Reply:    &record.InteractiveReply{Kind: record.ReplyList, ID: "row1", Title: "Row", Description: "d"},
		Reaction: &record.Reaction{MessageID: "msg_0", ProviderMessageID: "wamid.0", Emoji: "👍"},
		Context:  &messaging.ReplyContext{MessageID: "msg_0", ProviderMessageID: "wamid.0"},
		RawType:  "order",
	}
	for i, c := range []*messaging.InboundContent{content, nil} {
		id := "msg_" + string(rune('1'+i))
		m := message("a", id, "\x1finbound:whatsapp:"+id, "")
		m.Direction, m.Status, m.Type, m.TemplateName, m.Language, m.Components = "inbound", "delivered", "image", "", "", nil
		m.Content = c
		if _, created, err := s.MessageReceive(ctx, &driver.MessageReceiveParams{Message: m}); err != nil || !created {
			t.Fatalf("MessageReceive %s: created %v, err %v", id, created, err)
		}
		got, err := s.MessageGet(ctx, "a", id)
		if err != nil {
			t.Fatal(err)
		}
		if d := cmp.Diff(c, got.Content); d != "" {
			t.Errorf("%s: content (-want +got):\n%s", id, d)
		}
	}
	list, err := s.MessageList(ctx, &driver.MessageListParams{WorkspaceID: "a", Limit: 10})
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range list {
		if want := map[string]*messaging.InboundContent{"msg_1": content}[m.ID]; !cmp.Equal(want, m.Content) {
			t.Errorf("MessageList %s: content %+v; want %+v", m.ID, m.Content, want)
		}
	}
}

// testWebhookQueueEvent: an event queued for one endpoint reaches that
// endpoint only, whatever events it subscribes to, with its payload, type
// and subject; a disabled, missing or other workspace's endpoint queues
// nothing.
func testWebhookQueueEvent(t *testing.T, s driver.Store) {
	ctx := context.Background()
	mustWorkspace(t, s, "a")
	mustWorkspace(t, s, "b")
	target, other, off := endpoint("a", "we_target", 1), endpoint("a", "we_other", 2), endpoint("a", "we_off", 3)
	target.Events = []string{messaging.EventMessageReceived}
	for _, e := range []*messaging.WebhookEndpoint{target, other, off, endpoint("b", "we_b", 4)} {
		if err := s.WebhookEndpointCreate(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	disabled := false
	if _, err := s.WebhookEndpointUpdate(ctx, &driver.WebhookEndpointUpdateParams{WorkspaceID: "a", ID: "we_off", Enabled: &disabled, At: at(5)}); err != nil {
		t.Fatal(err)
	}
	ev := func(id, ws string) *driver.EventRecord {
		return &driver.EventRecord{ID: id, WorkspaceID: ws, MessageID: "sms_1", Type: "sms.delivery_report", Payload: []byte(`{"id":"` + id + `"}`), CreatedAt: at(10)}
	}
	for _, c := range []struct {
		endpoint string
		ev       *driver.EventRecord
		want     bool
	}{
		{"we_target", ev("evt_1", "a"), true},
		{"we_off", ev("evt_2", "a"), false},
		{"we_nope", ev("evt_3", "a"), false},
		{"we_b", ev("evt_4", "a"), false},
	} {
		queued, err := s.WebhookQueueEvent(ctx, &driver.WebhookQueueParams{EndpointID: c.endpoint, Event: c.ev})
		if err != nil || queued != c.want {
			t.Errorf("WebhookQueueEvent to %s: queued %v, err %v; want %v", c.endpoint, queued, err, c.want)
		}
	}
	got := claimAll(t, s, "h1", at(20))
	if d := cmp.Diff([]string{"we_target/evt_1"}, eventIDs(got)); d != "" {
		t.Fatalf("deliveries (-want +got):\n%s", d)
	}
	if d := got[0]; d.EventType != "sms.delivery_report" || d.MessageID != "sms_1" || string(d.Payload) != `{"id":"evt_1"}` || d.URL != target.URL {
		t.Errorf("delivery %+v", d)
	}
}
