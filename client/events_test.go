package client_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"testing"
	"time"

	"github.com/ujumbe/messaging/record"

	"github.com/google/go-cmp/cmp"
	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/client"
	"github.com/ujumbe/messaging/webhooksig"
)

// TestWebhookDeliveries: deliveries made by the service verify with the
// endpoint's secret and decode into their typed data: a test delivery, a
// status change, an inbound message and an opt-out and opt-in.
func TestWebhookDeliveries(t *testing.T) {
	e := setup(t)
	ctx := context.Background()
	c := e.client(t, e.A.Key, nil)
	now := func() time.Time { return e.clock.Now() }

	if _, err := c.Webhooks.Test(ctx, e.A.Hook.ID); err != nil {
		t.Fatal(err)
	}
	d := e.hooks.last(t)
	ev, err := client.ParseWebhook(e.A.HookSecret, d.header, d.body, now())
	if err != nil {
		t.Fatal(err)
	}
	if ev.Type != client.EventWebhookTest || ev.WebhookTest == nil || ev.WebhookTest.EndpointID != e.A.Hook.ID || ev.StatusUpdated != nil {
		t.Errorf("test event: %+v", ev)
	}

	// The status change of the setup, an inbound STOP (message.received
	// and contact.opted_out) and START (contact.opted_in).
	for _, text := range []string{"STOP", "START"} {
		if _, err := e.svc.RecordInbound(ctx, &messaging.InboundMessage{WorkspaceID: e.A.ID, Channel: "whatsapp", From: e.A.Contact.Phone,
			ProviderMessageID: "wamid." + text, Type: "text", Text: text}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.svc.DeliverWebhooksDue(ctx); err != nil {
		t.Fatal(err)
	}
	type seen struct{ Type, Detail string }
	var got []seen
	e.hooks.mu.Lock()
	var ds []delivery
	for _, d := range e.hooks.got[1:] {
		if d.path == "/a" {
			ds = append(ds, d)
		}
	}
	e.hooks.mu.Unlock()
	for _, d := range ds {
		ev, err := client.ParseWebhook(e.A.HookSecret, d.header, d.body, now())
		if err != nil {
			t.Fatal(err)
		}
		s := seen{Type: ev.Type}
		switch {
		case ev.StatusUpdated != nil:
			s.Detail = ev.StatusUpdated.PreviousStatus + ">" + ev.StatusUpdated.Status + " " + ev.StatusUpdated.MessageID
		case ev.MessageReceived != nil:
			s.Detail = ev.MessageReceived.From + " " + ev.MessageReceived.Text
		case ev.Contact != nil:
			s.Detail = ev.Contact.ContactID + " " + strconv.FormatBool(ev.Contact.OptedOut) + " " + ev.Contact.Source
		}
		got = append(got, s)
	}
	want := []seen{
		{client.EventMessageStatusUpdated, "queued>sent " + e.A.Message.MessageID},
		{client.EventMessageReceived, e.A.Contact.Phone + " STOP"},
		{client.EventContactOptedOut, e.A.Contact.ID + " true keyword"},
		{client.EventMessageReceived, e.A.Contact.Phone + " START"},
		{client.EventContactOptedIn, e.A.Contact.ID + " false keyword"},
	}
	sortSeen := cmp.Transformer("sort", func(in []seen) map[seen]int {
		m := map[seen]int{}
		for _, s := range in {
			m[s]++
		}
		return m
	})
	if diff := cmp.Diff(want, got, sortSeen); diff != "" {
		t.Errorf("deliveries (-want +got):\n%s", diff)
	}
	if len(client.WebhookEventTypes()) != len(messaging.WebhookEventTypes()) {
		t.Errorf("the client decodes %v, the service sends %v", client.WebhookEventTypes(), messaging.WebhookEventTypes())
	}

	// Tampering, another secret and an old delivery are refused.
	d = ds[0]
	for name, tc := range map[string]struct {
		secret string
		body   []byte
		at     time.Time
	}{
		"tampered":     {e.A.HookSecret, append([]byte(nil), append(d.body[:len(d.body)-1], ' ', '}')...), now()},
		"other secret": {e.B.HookSecret, d.body, now()},
		"too late":     {e.A.HookSecret, d.body, now().Add(6 * time.Minute)},
	} {
		if _, err := client.ParseWebhook(tc.secret, d.header, tc.body, tc.at); !errors.Is(err, webhooksig.ErrSignature) {
			t.Errorf("%s: %v, want ErrWebhookSignature", name, err)
		}
	}
}

// TestParseEvent decodes each event type the library marshals into the
// client's own data types, which write the library's JSON back byte for
// byte (rich inbound content flattened alike), and keeps an unknown
// type's data raw.
func TestParseEvent(t *testing.T) {
	// Milliseconds, as the library writes times: the bytes compare.
	at := time.Date(2026, 3, 1, 9, 0, 0, 123e6, time.UTC)
	for _, ev := range []*messaging.Event{
		{ID: "evt_1", Type: messaging.EventMessageStatusUpdated, CreatedAt: at, Data: messaging.StatusEventData{
			MessageID: "msg_1", ConversationID: "conv_1", Channel: "whatsapp", To: "+254712345678", Status: "failed",
			PreviousStatus: "sent", FailureReason: "[131008] missing", UpdatedAt: at}},
		{ID: "evt_2", Type: messaging.EventMessageReceived, CreatedAt: at, Data: messaging.MessageEventData{
			MessageID: "msg_2", ConversationID: "conv_1", Channel: "whatsapp", From: "+254712345678", Type: "image",
			MediaURL: "https://example.com/a.jpg", Caption: "look", CreatedAt: at, InboundContent: messaging.InboundContent{
				Media:    &record.InboundMedia{ProviderMediaID: "img-1", MimeType: "image/jpeg", Caption: "look"},
				Location: &record.Location{Latitude: -1.5, Longitude: 36.8, Name: "Office"},
				Contacts: []record.SharedContact{{FormattedName: "Amina", Phones: []record.ContactPhone{{Phone: "+254712345678", WaID: "254712345678"}}, Emails: []record.ContactEmail{{Email: "a@example.com"}}}},
				Reply:    &record.InteractiveReply{Kind: record.ReplyButton, ID: "yes", Title: "Yes"},
				Reaction: &record.Reaction{ProviderMessageID: "wamid.1", Emoji: "👍"},
				Context:  &messaging.ReplyContext{MessageID: "msg_1", ProviderMessageID: "wamid.1"},
				RawType:  "order"}}},
		{ID: "evt_3", Type: messaging.EventContactOptedOut, CreatedAt: at, Data: messaging.ContactEventData{
			Channel: "whatsapp", To: "+254712345678", ContactID: "ct_1", OptedOut: true, Source: "keyword", MessageID: "msg_3", At: at}},
		{ID: "evt_4", Type: messaging.EventContactOptedIn, CreatedAt: at, Data: messaging.ContactEventData{
			Channel: "whatsapp", To: "+254712345678", OptedOut: false, Source: "operator", At: at}},
		{ID: "evt_5", Type: messaging.EventChannelStatusUpdated, CreatedAt: at, Data: messaging.ChannelEventData{
			Channel: "whatsapp", AccountID: "1055", Status: "error", PreviousStatus: "connected", Reason: "token expired", At: at}},
		{ID: "evt_6", Type: messaging.EventChannelQualityUpdated, CreatedAt: at, Data: messaging.ChannelQualityEventData{
			Channel: "whatsapp", AccountID: "1055", QualityRating: "RED", MessagingTier: "TIER_10K", PreviousQualityRating: "GREEN",
			PreviousMessagingTier: "TIER_10K", Event: "FLAGGED", At: at}},
		{ID: "evt_7", Type: messaging.EventTemplateStatusUpdated, CreatedAt: at, Data: messaging.TemplateEventData{
			TemplateID: "tpl_1", Name: "order_update", Language: "en_US", Status: "paused", PreviousStatus: "approved",
			Reason: "FIRST_PAUSE", Quality: "RED", PreviousQuality: "YELLOW", At: at}},
	} {
		t.Run(ev.Type, func(t *testing.T) {
			body, err := json.Marshal(ev)
			if err != nil {
				t.Fatal(err)
			}
			got, err := client.ParseEvent(body)
			if err != nil {
				t.Fatal(err)
			}
			var data any
			switch {
			case got.StatusUpdated != nil:
				data = *got.StatusUpdated
			case got.MessageReceived != nil:
				data = *got.MessageReceived
			case got.Contact != nil:
				data = *got.Contact
			case got.Channel != nil:
				data = *got.Channel
			case got.ChannelQuality != nil:
				data = *got.ChannelQuality
			case got.Template != nil:
				data = *got.Template
			default:
				t.Fatalf("no typed data: %+v", got)
			}
			want, err := json.Marshal(ev.Data)
			if err != nil {
				t.Fatal(err)
			}
			again, err := json.Marshal(data)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(string(want), string(again)); diff != "" || got.ID != ev.ID || !got.CreatedAt.Equal(at) {
				t.Errorf("%s %v: data JSON (-library +client):\n%s", got.ID, got.CreatedAt, diff)
			}
		})
	}
	got, err := client.ParseEvent([]byte(`{"id":"evt_9","type":"invoice.paid","created_at":"2026-03-01T09:00:00Z","data":{"x":1}}`))
	if err != nil || string(got.Data) != `{"x":1}` || got.StatusUpdated != nil || got.Contact != nil {
		t.Errorf("unknown type: %+v, %v", got, err)
	}
	for _, bad := range []string{``, `[]`, `{"type":"message.received"}`, `{"id":"e","type":"message.status_updated","data":{"status":7}}`} {
		if _, err := client.ParseEvent([]byte(bad)); err == nil {
			t.Errorf("ParseEvent(%q): no error", bad)
		}
	}
	// An unsigned body is not parsed by ParseWebhook.
	if _, err := client.ParseWebhook("whsec_"+"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=", http.Header{}, []byte(`{}`), at); !errors.Is(err, webhooksig.ErrSignature) {
		t.Errorf("unsigned: %v", err)
	}
}
