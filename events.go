package messaging

import (
	"context"
	"encoding/json"
	"sync"
	"time"
)

// statusEvent builds the message.status_updated event of a change.
func statusEvent(before, after *Message, now time.Time) *Event {
	return &Event{
		ID: NewID("evt"), Type: EventMessageStatusUpdated, CreatedAt: now,
		WorkspaceID: after.WorkspaceID, MessageID: after.ID,
		Data: StatusEventData{
			MessageID: after.ID, ConversationID: after.ConversationID, Channel: after.Channel,
			To: after.To, Status: after.Status, PreviousStatus: before.Status,
			FailureReason: after.FailureReason, UpdatedAt: after.UpdatedAt,
		},
	}
}

// record returns the event as stored for webhook delivery.
func (e *Event) record() (*EventRecord, error) {
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return &EventRecord{ID: e.ID, WorkspaceID: e.WorkspaceID, MessageID: e.MessageID, Type: e.Type, Payload: b, CreatedAt: e.CreatedAt}, nil
}

// MarshalJSON implements json.Marshaler: the event as delivered to webhook
// endpoints, its times written with FormatTime.
func (e Event) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		ID        string          `json:"id"`
		Type      string          `json:"type"`
		CreatedAt jsonTime        `json:"created_at"`
		Data      StatusEventData `json:"data"`
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
)

// Event is an event announced to subscribers. Its JSON form (the body of
// a webhook delivery) writes times with FormatTime, like the REST API.
type Event struct {
	ID          string          `json:"id"`
	Type        string          `json:"type"`
	CreatedAt   time.Time       `json:"created_at"`
	WorkspaceID string          `json:"-"`
	MessageID   string          `json:"-"`
	Data        StatusEventData `json:"data"`
}

// StatusEventData is the payload of a message.status_updated event.
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
