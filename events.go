package messaging

import (
	"context"
	"encoding/json"
	"sync"
	"time"

	"github.com/ujumbe/messaging/record"
	"github.com/ujumbe/messaging/store/driver"
)

// statusEvent builds the message.status_updated event of a change.
func statusEvent(before, after *Message, now time.Time) *Event {
	return &Event{
		ID: record.NewID("evt"), Type: EventMessageStatusUpdated, CreatedAt: now,
		WorkspaceID: after.WorkspaceID, MessageID: after.ID,
		Data: StatusEventData{
			MessageID: after.ID, ConversationID: after.ConversationID, Channel: after.Channel,
			To: after.To, Status: after.Status, PreviousStatus: before.Status,
			FailureReason: after.FailureReason, UpdatedAt: after.UpdatedAt,
		},
	}
}

// record returns the event as stored for webhook delivery.
func (e *Event) record() (*driver.EventRecord, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return &driver.EventRecord{ID: e.ID, WorkspaceID: e.WorkspaceID, MessageID: e.MessageID, Type: e.Type, Payload: b, CreatedAt: e.CreatedAt}, nil
}

// MarshalJSON implements json.Marshaler: the event as delivered to webhook
// endpoints, its times written with FormatTime.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID        string    `json:"id"`
		Type      string    `json:"type"`
		CreatedAt jsonTime  `json:"created_at"`
		Data      EventData `json:"data"`
	}{ID: e.ID, Type: e.Type, CreatedAt: jsonTime(e.CreatedAt), Data: e.Data})
}

// MarshalJSON implements json.Marshaler: UpdatedAt is written with
// FormatTime. It stays the last member, as the field is the last one.
func (d StatusEventData) MarshalJSON() ([]byte, error) {
	type fields StatusEventData
	return json.Marshal(struct {
		fields
		UpdatedAt jsonTime `json:"updated_at"`
	}{fields(d), jsonTime(d.UpdatedAt)})
}

// Event kinds.
const (
	// EventMessageStatusUpdated is announced on every message status change.
	EventMessageStatusUpdated = "message.status_updated"
	// EventMessageReceived is announced once per inbound message, when it
	// is first recorded; its Data is a MessageEventData.
	EventMessageReceived = "message.received"
)

// Event is an event announced to subscribers. Its JSON form (the body of
// a webhook delivery) writes times with FormatTime, like the REST API.
type Event struct {
	ID          string    `json:"id"`
	Type        string    `json:"type"`
	CreatedAt   time.Time `json:"created_at"`
	WorkspaceID string    `json:"-"`
	// MessageID is the message the event is about: the events of one
	// message reach each webhook endpoint in order.
	MessageID string `json:"-"`
	// Data is the payload of the event, of the type its Type names:
	// StatusEventData (message.status_updated), MessageEventData
	// (message.received), ContactEventData (contact.opted_out and
	// contact.opted_in), ChannelEventData (channel.status_updated),
	// ChannelQualityEventData (channel.quality_updated) or
	// TemplateEventData (template.status_updated).
	Data EventData `json:"data"`
}

// EventData is the payload of an Event: StatusEventData,
// MessageEventData or ContactEventData. Subscribers tell them apart by
// the event's Type or a type switch.
type EventData interface {
	eventData()
}

func (StatusEventData) eventData()  {}
func (MessageEventData) eventData() {}

// MessageEventData is the payload of a message.received event: the
// inbound message.
type MessageEventData struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Channel        string `json:"channel"`
	// From is the sender: E.164 on WhatsApp, a scoped id elsewhere.
	From     string `json:"from"`
	Type     string `json:"type"`
	Text     string `json:"text,omitempty"`
	MediaURL string `json:"media_url,omitempty"`
	Caption  string `json:"caption,omitempty"`
	// InboundContent is the rich content of the message, its members
	// inlined (media, location, contacts, interactive, reaction, context,
	// unsupported_type).
	InboundContent
	CreatedAt time.Time `json:"created_at"`
}

// MarshalJSON implements json.Marshaler: CreatedAt is written with
// FormatTime.
func (d MessageEventData) MarshalJSON() ([]byte, error) {
	type fields MessageEventData
	return json.Marshal(struct {
		fields
		CreatedAt jsonTime `json:"created_at"`
	}{fields(d), jsonTime(d.CreatedAt)})
}

// receivedEvent builds the message.received event of an inbound message.
func receivedEvent(m *Message, now time.Time) *Event {
	d := MessageEventData{
		MessageID: m.ID, ConversationID: m.ConversationID, Channel: m.Channel, From: m.From(),
		Type: m.Type, Text: m.Text, MediaURL: m.MediaURL, Caption: m.Caption, CreatedAt: m.CreatedAt,
	}
	if m.Content != nil {
		d.InboundContent = *m.Content.Clone()
	}
	return &Event{
		ID: record.NewID("evt"), Type: EventMessageReceived, CreatedAt: now,
		WorkspaceID: m.WorkspaceID, MessageID: m.ID, Data: d,
	}
}

// StatusEventData is the payload of a message.status_updated event. Status
// is sent, delivered, read, failed or canceled (Messages.Cancel, from
// queued).
type StatusEventData struct {
	MessageID      string    `json:"message_id"`
	ConversationID string    `json:"conversation_id"`
	Channel        string    `json:"channel"`
	To             string    `json:"to"`
	Status         string    `json:"status"`
	PreviousStatus string    `json:"previous_status"`
	FailureReason  string    `json:"failure_reason,omitempty"`
	UpdatedAt      time.Time `json:"updated_at"`
}

// eventBus fans events out to in-process subscribers.
type eventBus struct {
	mu   sync.RWMutex
	next int
	subs map[int]func(context.Context, *Event)
}

func (b *eventBus) publish(ctx context.Context, e *Event) {
	b.mu.RLock()
	fns := make([]func(context.Context, *Event), 0, len(b.subs))
	for _, f := range b.subs {
		fns = append(fns, f)
	}
	b.mu.RUnlock()
	for _, f := range fns {
		f(ctx, e)
	}
}

// Subscribe registers fn to receive every event of the service, in the
// goroutine that caused it, after the change is stored. fn must not block
// for long. The returned function unsubscribes.
func (s *Service) Subscribe(fn func(context.Context, *Event)) (unsubscribe func()) {
	b := s.events
	b.mu.Lock()
	if b.subs == nil {
		b.subs = map[int]func(context.Context, *Event){}
	}
	id := b.next
	b.next++
	b.subs[id] = fn
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.subs, id)
		b.mu.Unlock()
	}
}
