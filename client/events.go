package client

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/ujumbe/messaging/webhooksig"
)

// VerifyWebhook checks a received webhook delivery: its headers
// webhook-id, webhook-timestamp and webhook-signature (Standard Webhooks),
// its raw body and the endpoint's secret ("whsec_..."). The timestamp must
// be within tolerance of now (5 minutes when tolerance is 0). A delivery
// that does not verify is webhooksig.ErrSignature. It is webhooksig.Verify; a receiver that
// needs nothing else of the client imports package webhooksig alone, which
// links only the standard library.
func VerifyWebhook(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	return webhooksig.Verify(secret, h, body, now, tolerance)
}

// The event types the service delivers to webhook endpoints.
const (
	// EventMessageStatusUpdated: a message changed status
	// (Event.StatusUpdated).
	EventMessageStatusUpdated = "message.status_updated"
	// EventMessageReceived: an inbound message was recorded
	// (Event.MessageReceived).
	EventMessageReceived = "message.received"
	// EventContactOptedOut and EventContactOptedIn: a recipient opted
	// out of a channel (replied an opt-out keyword, STOP by default) or
	// back in (Event.Contact).
	EventContactOptedOut = "contact.opted_out"
	EventContactOptedIn  = "contact.opted_in"
	// EventChannelStatusUpdated: the provider's verdict changed a channel
	// connection's state (Event.Channel).
	EventChannelStatusUpdated = "channel.status_updated"
	// EventChannelQualityUpdated: the provider reported a change of a
	// channel connection's quality rating or messaging limit tier
	// (Event.ChannelQuality).
	EventChannelQualityUpdated = "channel.quality_updated"
	// EventTemplateStatusUpdated: a template changed review state,
	// status reason or quality rating (Event.Template).
	EventTemplateStatusUpdated = "template.status_updated"
	// EventWebhookTest: a test delivery (Event.WebhookTest).
	EventWebhookTest = "webhook.test"
)

// StatusEventData is the data of a message.status_updated event.
type StatusEventData struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Channel        string `json:"channel"`
	To             string `json:"to"`
	// Status is the message's new status, PreviousStatus the one before.
	Status         string `json:"status"`
	PreviousStatus string `json:"previous_status"`
	// FailureReason is "[<provider_code>] <text>" when Status is failed.
	FailureReason string    `json:"failure_reason,omitempty"`
	UpdatedAt     time.Time `json:"updated_at"`
}

// MessageEventData is the data of a message.received event.
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
	// Media, Location, Contacts, Reply, Reaction, Context and RawType are
	// the rich content of the message, as on Message: the member of its
	// type, nil or empty on others.
	Media    *InboundMedia     `json:"media,omitempty"`
	Location *Location         `json:"location,omitempty"`
	Contacts []SharedContact   `json:"contacts,omitempty"`
	Reply    *InteractiveReply `json:"interactive,omitempty"`
	Reaction *Reaction         `json:"reaction,omitempty"`
	Context  *ReplyContext     `json:"context,omitempty"`
	// RawType is the provider's type name of an unsupported message.
	RawType   string    `json:"unsupported_type,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// ContactEventData is the data of the contact.opted_out and
// contact.opted_in events.
type ContactEventData struct {
	Channel string `json:"channel"`
	// To is the recipient's address on the channel.
	To string `json:"to"`
	// ContactID is the contact whose phone is To, if any.
	ContactID string `json:"contact_id,omitempty"`
	OptedOut  bool   `json:"opted_out"`
	// Source is "keyword" or "operator".
	Source string `json:"source"`
	// MessageID is the inbound message that carried the keyword.
	MessageID string    `json:"message_id,omitempty"`
	At        time.Time `json:"at"`
}

// ChannelEventData is the data of a channel.status_updated event.
type ChannelEventData struct {
	Channel   string `json:"channel"`
	AccountID string `json:"account_id"`
	// Status is the connection's new status, PreviousStatus the one
	// before; Reason says why it is in error or pending.
	Status         string    `json:"status"`
	PreviousStatus string    `json:"previous_status"`
	Reason         string    `json:"reason,omitempty"`
	At             time.Time `json:"at"`
}

// ChannelQualityEventData is the data of a channel.quality_updated event.
type ChannelQualityEventData struct {
	Channel   string `json:"channel"`
	AccountID string `json:"account_id"`
	// QualityRating (GREEN, YELLOW, RED, UNKNOWN) and MessagingTier
	// (TIER_250, TIER_1K, TIER_10K, TIER_100K, TIER_UNLIMITED) are the
	// connection's values after the report, the Previous ones before;
	// empty when unknown.
	QualityRating         string `json:"quality_rating"`
	MessagingTier         string `json:"messaging_tier"`
	PreviousQualityRating string `json:"previous_quality_rating"`
	PreviousMessagingTier string `json:"previous_messaging_tier"`
	// Event is the provider's event (Meta's FLAGGED, UNFLAGGED, UPGRADE,
	// DOWNGRADE, ONBOARDING, ...).
	Event string    `json:"event"`
	At    time.Time `json:"at"`
}

// TemplateEventData is the data of a template.status_updated event.
type TemplateEventData struct {
	TemplateID string `json:"template_id"`
	Name       string `json:"name"`
	Language   string `json:"language"`
	// Status is the template's review state after the change,
	// PreviousStatus the one before (equal when only the reason or the
	// quality changed).
	Status         string `json:"status"`
	PreviousStatus string `json:"previous_status"`
	// Reason is the provider's reason for a rejection, pause, disablement
	// or flag.
	Reason string `json:"reason,omitempty"`
	// Quality is the template's quality rating (GREEN, YELLOW, RED,
	// UNKNOWN), PreviousQuality the one before; empty when none.
	Quality         string    `json:"quality,omitempty"`
	PreviousQuality string    `json:"previous_quality,omitempty"`
	At              time.Time `json:"at"`
}

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
	StatusUpdated *StatusEventData `json:"-"`
	// MessageReceived is the data of message.received.
	MessageReceived *MessageEventData `json:"-"`
	// Contact is the data of contact.opted_out and contact.opted_in.
	Contact *ContactEventData `json:"-"`
	// Channel is the data of channel.status_updated.
	Channel *ChannelEventData `json:"-"`
	// ChannelQuality is the data of channel.quality_updated.
	ChannelQuality *ChannelQualityEventData `json:"-"`
	// Template is the data of template.status_updated.
	Template *TemplateEventData `json:"-"`
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
		dst = newData(&e.StatusUpdated)
	case EventMessageReceived:
		dst = newData(&e.MessageReceived)
	case EventContactOptedOut, EventContactOptedIn:
		dst = newData(&e.Contact)
	case EventChannelStatusUpdated:
		dst = newData(&e.Channel)
	case EventChannelQualityUpdated:
		dst = newData(&e.ChannelQuality)
	case EventTemplateStatusUpdated:
		dst = newData(&e.Template)
	case EventWebhookTest:
		dst = newData(&e.WebhookTest)
	default:
		return &e, nil
	}
	if err := json.Unmarshal(e.Data, dst); err != nil {
		return nil, fmt.Errorf("client: the data of the %s event %s: %w", e.Type, e.ID, err)
	}
	return &e, nil
}

// newData points field at a new T, the data of an event to decode, and
// returns it.
func newData[T any](field **T) *T {
	*field = new(T)
	return *field
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
	return []string{EventMessageStatusUpdated, EventMessageReceived, EventContactOptedOut, EventContactOptedIn, EventChannelStatusUpdated,
		EventChannelQualityUpdated, EventTemplateStatusUpdated, EventWebhookTest}
}
