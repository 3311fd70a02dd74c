package messaging_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/ujumbe/messaging"
)

// TestEventJSON pins the body of a webhook delivery byte for byte: the
// member order, the names and the time format are the contract endpoints
// verify signatures over.
func TestEventJSON(t *testing.T) {
	at := time.Date(2026, 11, 24, 9, 5, 34, 123456789, time.FixedZone("EAT", 3*3600))
	ev := messaging.Event{
		ID: "evt_1", Type: messaging.EventMessageStatusUpdated, CreatedAt: at,
		WorkspaceID: "acme", MessageID: "msg_1",
		Data: messaging.StatusEventData{
			MessageID: "msg_1", ConversationID: "conv_1", Channel: "whatsapp", To: "+14155550123",
			Status: "failed", PreviousStatus: "sent", FailureReason: "[131026] Message undeliverable", UpdatedAt: at.Add(time.Second),
		},
	}
	got, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"id":"evt_1","type":"message.status_updated","created_at":"2026-11-24T06:05:34.123Z",` +
		`"data":{"message_id":"msg_1","conversation_id":"conv_1","channel":"whatsapp","to":"+14155550123",` +
		`"status":"failed","previous_status":"sent","failure_reason":"[131026] Message undeliverable","updated_at":"2026-11-24T06:05:35.123Z"}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("event JSON (-want +got):\n%s", diff)
	}
	data := ev.Data.(messaging.StatusEventData)
	data.FailureReason = ""
	got, _ = json.Marshal(data)
	want = `{"message_id":"msg_1","conversation_id":"conv_1","channel":"whatsapp","to":"+14155550123","status":"failed","previous_status":"sent","updated_at":"2026-11-24T06:05:35.123Z"}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("data without failure_reason (-want +got):\n%s", diff)
	}
	ev.Type, ev.Data = messaging.EventMessageReceived, messaging.MessageEventData{
		MessageID: "msg_2", ConversationID: "conv_1", Channel: "whatsapp", From: "+14155550123", Type: "text", Text: "STOP", CreatedAt: at,
	}
	got, _ = json.Marshal(ev)
	want = `{"id":"evt_1","type":"message.received","created_at":"2026-11-24T06:05:34.123Z",` +
		`"data":{"message_id":"msg_2","conversation_id":"conv_1","channel":"whatsapp","from":"+14155550123","type":"text","text":"STOP","created_at":"2026-11-24T06:05:34.123Z"}}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("message.received JSON (-want +got):\n%s", diff)
	}
}
