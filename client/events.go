package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ujumbe/messaging"
	"github.com/ujumbe/messaging/webhooksig"
)

// VerifyWebhook checks a received webhook delivery: its headers
// webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks),
// its raw body and the endpoint's secret ("whsec_..."). The timestamp must
// be within tolerance of now (5 minutes when tolerance is 0). A delivery
// that does not verify is webhooksig.ErrSignature (also
// messaging.ErrWebhookSignature). It is webhooksig.Verify; a receiver that
// needs nothing else of the client imports package webhooksig alone, which
// links only the standard library.
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	return webhooksig.Verify(secret, h, body, now, tolerance)
}

// The event types the service delivers to webhook endpoints.
const (
	// EventMessageStatusUpdated: a message changed status
	// (Event.StatusUpdated).
	EventMessageStatusUpdated = messaging.EventMessageStatusUpdated
	// EventMessageReceived: an inbound message was recorded
	// (Event.MessageReceived).
	EventMessageReceived = messaging.EventMessageReceived
	// EventContactOptedOut and EventContactOptedIn: a recipient opted
	// out of a channel (replied an opt-out keyword, STOP by default) or
	// back in (Event.Contact).
	EventContactOptedOut = messaging.EventContactOptedOut
	EventContactOptedIn  = messaging.EventContactOptedIn
	// EventChannelStatusUpdated: the provider's verdict changed a channel
	// connection's state (Event.Channel).
	EventChannelStatusUpdated = messaging.EventChannelStatusUpdated
	// EventWebhookTest: a test delivery (Event.WebhookTest).
	EventWebhookTest = messaging.EventWebhookTest
)

// WebhookTestData is the data of a webhook.test event.
type WebhookTestData struct {
	EndpointID string `json:"endpoint_id"`
}

// Event is a decoded webhook delivery. Exactly one of the typed data
// fields is set, the one of Type; an event type this client does not know
// sets none, and its data stays in Data.
type Event struct {
	ID        string    `json:"id"`
	Type      string    `json:"type"`
	CreatedAt time.Time `json:"created_at"`
	// Data is the raw data member.
	Data json.RawMessage `json:"data"`

	// StatusUpdated is the data of message.status_updated.
	StatusUpdated *messaging.StatusEventData `json:"-"`
	// MessageReceived is the data of message.received.
	MessageReceived *messaging.MessageEventData `json:"-"`
	// Contact is the data of contact.opted_out and contact.opted_in.
	Contact *messaging.ContactEventData `json:"-"`
	// Channel is the data of channel.status_updated.
	Channel *messaging.ChannelEventData `json:"-"`
	// WebhookTest is the data of webhook.test.
	WebhookTest *WebhookTestData `json:"-"`
}

// ParseEvent decodes the body of a webhook delivery (verify it first with
// VerifyWebhook, or use ParseWebhook). A body that is not an event, or
// whose data does not have its type's shape, is an error; an unknown type
// is not.
func ParseEvent(body []byte) (*Event, error) {
	var e Event
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, fmt.Errorf("client: the webhook body is not an event: %w", err)
	}
	if e.ID == "" || e.Type == "" {
		return nil, errors.New("client: the webhook body is not an event: id and type are required")
	}
	var dst any
	switch e.Type {
	case EventMessageStatusUpdated:
		e.StatusUpdated = &messaging.StatusEventData{}
		dst = e.StatusUpdated
	case EventMessageReceived:
		e.MessageReceived = &messaging.MessageEventData{}
		dst = e.MessageReceived
	case EventContactOptedOut, EventContactOptedIn:
		e.Contact = &messaging.ContactEventData{}
		dst = e.Contact
	case EventChannelStatusUpdated:
		e.Channel = &messaging.ChannelEventData{}
		dst = e.Channel
	case EventWebhookTest:
		e.WebhookTest = &WebhookTestData{}
		dst = e.WebhookTest
	default:
		return &e, nil
	}
	if err := json.Unmarshal(e.Data, dst); err != nil {
		return nil, fmt.Errorf("client: the data of the %s event %s: %w", e.Type, e.ID, err)
	}
	return &e, nil
}

// ParseWebhook verifies a delivery with VerifyWebhook (tolerance 5
// minutes) and decodes it with ParseEvent.
func ParseWebhook(secret string, h http.Header, body []byte, now time.Time) (*Event, error) {
	if err := VerifyWebhook(secret, h, body, now, 0); err != nil {
		return nil, err
	}
	return ParseEvent(body)
}

// WebhookEventTypes returns the event types ParseEvent decodes into typed
// data: every type the service delivers.
func WebhookEventTypes() []string {
	return []string{EventMessageStatusUpdated, EventMessageReceived, EventContactOptedOut, EventContactOptedIn, EventChannelStatusUpdated, EventWebhookTest}
}
