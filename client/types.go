package client

import (
	"time"
)

// The answers of the Messaging API, mirroring the schemas of
// httpapi/openapi.json member for member. The requests and the answers of
// sends, templates, contacts and channels are beside their services
// (messages.go, templates.go, contacts.go, channels.go).

// Message is the status form of a message (schema Message), the answer
// of GET /v1/messages/{id}.
type Message struct {
	MessageID      string `json:"message_id"`
	ConversationID string `json:"conversation_id"`
	Channel        string `json:"channel"`
	// Direction is "outbound" for sent messages, "inbound" for received
	// ones.
	Direction string `json:"direction"`
	// From is, on inbound messages only, the sender: an E.164 number on
	// WhatsApp, the channel's scoped user id on Instagram and Messenger.
	From string `json:"from,omitempty"`
	// Status is queued, sent, delivered, read, failed or canceled
	// (Messages.Cancel).
	Status string `json:"status"`
	// FailureReason is "[<provider_code>] <text>" when Status is failed.
	FailureReason string `json:"failure_reason,omitempty"`
	// Type is text, image, video, document, audio or template; inbound
	// messages may also be sticker, location, contacts, interactive,
	// button, reaction or unsupported.
	Type string `json:"type"`
	// Text is, on inbound messages only, the text of a text message or
	// the title of the button or list row chosen.
	Text string `json:"text,omitempty"`
	// Media, Location, Contacts, Interactive and Reaction: on an inbound
	// message, the member of its type (nil on others); Media's bytes are
	// streamed by Messages.Media. An outbound message carries Location,
	// Contacts or Reaction as it was sent (a Reaction without its
	// ProviderMessageID), and its interactive message in SentInteractive.
	Media *InboundMedia `json:"media,omitempty"`
	// MediaID is, on an outbound media message sent by upload, the
	// upload's id.
	MediaID     string            `json:"media_id,omitempty"`
	Location    *Location         `json:"location,omitempty"`
	Contacts    []SharedContact   `json:"contacts,omitempty"`
	Interactive *InteractiveReply `json:"interactive,omitempty"`
	// SentInteractive is the interactive message an outbound message sent
	// (the member interactive of an outbound message; see UnmarshalJSON).
	SentInteractive *Interactive `json:"-"`
	Reaction        *Reaction    `json:"reaction,omitempty"`
	// Context is the message an inbound message replies to, or an
	// outbound one quotes; nil when it quotes none.
	Context *ReplyContext `json:"context,omitempty"`
	// UnsupportedType is, on an inbound message of type unsupported, the
	// provider's type name (for example "order").
	UnsupportedType string `json:"unsupported_type,omitempty"`
	// ReadAt is, on inbound messages only, when it was marked read
	// (Messages.MarkRead); nil until then.
	ReadAt *time.Time `json:"read_at,omitempty"`
	// WindowExpiresAt is, on inbound messages only, the end of the
	// customer-service window the message opened (CreatedAt plus 24
	// hours); nil on outbound messages.
	WindowExpiresAt *time.Time `json:"window_expires_at,omitempty"`
	// SendAt is, on a scheduled outbound message, when it is to be handed
	// over (SendParams.SendAt); nil on others.
	SendAt *time.Time `json:"send_at,omitempty"`
	// Fallback is, on a template send with an SMS fallback, what became
	// of it.
	Fallback  *MessageFallback `json:"fallback,omitempty"`
	CreatedAt time.Time        `json:"created_at"`
	UpdatedAt time.Time        `json:"updated_at"`
}

// InboundMedia is the media of an inbound image, video, audio, document
// or sticker (schema InboundMedia). The provider keeps the bytes:
// Messages.Media streams them.
type InboundMedia struct {
	// ProviderMediaID is the provider's id of the media (WhatsApp's media
	// id).
	ProviderMediaID string `json:"provider_media_id"`
	MimeType        string `json:"mime_type,omitempty"`
	// SHA256 is the provider's checksum of the media, when given.
	SHA256   string `json:"sha256,omitempty"`
	Caption  string `json:"caption,omitempty"`
	Filename string `json:"filename,omitempty"`
	// Animated reports an animated sticker.
	Animated bool `json:"animated,omitempty"`
}

// Location is a shared location (schema Location).
type Location struct {
	Latitude  float64 `json:"latitude"`
	Longitude float64 `json:"longitude"`
	Name      string  `json:"name,omitempty"`
	Address   string  `json:"address,omitempty"`
	URL       string  `json:"url,omitempty"`
}

// SharedContact is a contact card sent by a customer (schema
// SharedContact).
type SharedContact struct {
	FormattedName string         `json:"formatted_name,omitempty"`
	FirstName     string         `json:"first_name,omitempty"`
	LastName      string         `json:"last_name,omitempty"`
	Organization  string         `json:"organization,omitempty"`
	Phones        []ContactPhone `json:"phones,omitempty"`
	Emails        []ContactEmail `json:"emails,omitempty"`
}

// ContactPhone is a phone number of a SharedContact.
type ContactPhone struct {
	Phone string `json:"phone,omitempty"`
	// WaID is the WhatsApp id of the number, when it has one.
	WaID string `json:"wa_id,omitempty"`
	Type string `json:"type,omitempty"`
}

// ContactEmail is an email address of a SharedContact.
type ContactEmail struct {
	Email string `json:"email,omitempty"`
	Type  string `json:"type,omitempty"`
}

// InteractiveReply is the customer's choice (schema InteractiveReply): a
// reply button or list row of an interactive message, or a template's
// quick-reply button.
type InteractiveReply struct {
	// Kind is button_reply, list_reply or quick_reply (the payload of a
	// template's quick-reply button is its ID).
	Kind        string `json:"type"`
	ID          string `json:"id,omitempty"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
}

// Reaction is an emoji reaction to a message (schema Reaction); an empty
// Emoji removes the sender's reaction.
type Reaction struct {
	// MessageID is the workspace's id of the message reacted to; empty
	// when the provider id names no message of the workspace.
	MessageID string `json:"message_id,omitempty"`
	// ProviderMessageID is the provider's id of the message reacted to.
	ProviderMessageID string `json:"provider_message_id"`
	Emoji             string `json:"emoji"`
}

// ReplyContext is the message an inbound message replies to (schema
// ReplyContext).
type ReplyContext struct {
	// MessageID is the workspace's id of the message replied to; empty
	// when the provider id names no message of the workspace.
	MessageID string `json:"message_id,omitempty"`
	// ProviderMessageID is the provider's id of the message replied to.
	ProviderMessageID string `json:"provider_message_id"`
}

// MessagePage is a page of GET /v1/messages and GET
// /v1/conversations/{id}/messages (schema MessagePage). NextCursor is nil
// on the last page.
type MessagePage struct {
	Data       []*Message `json:"data"`
	NextCursor *string    `json:"next_cursor"`
}

// Conversation is a conversation of the workspace with its last message
// (schema Conversation).
type Conversation struct {
	ConversationID string  `json:"conversation_id"`
	Channel        string  `json:"channel"`
	To             string  `json:"to"`
	LastMessage    Message `json:"last_message"`
	// LastActivityAt is when the last message was created.
	LastActivityAt time.Time `json:"last_activity_at"`
	// LastInboundAt is when the recipient last wrote; nil when never.
	LastInboundAt *time.Time `json:"last_inbound_at"`
	// WindowExpiresAt is when the customer-service window closes (after
	// it, WhatsApp takes templates only); nil without an inbound message.
	WindowExpiresAt *time.Time `json:"window_expires_at"`
	// Contact is the contact whose phone is To; nil when there is none.
	Contact *Contact `json:"contact"`
}

// ConversationPage is a page of GET /v1/conversations (schema
// ConversationPage). NextCursor is nil on the last page.
type ConversationPage struct {
	Data       []*Conversation `json:"data"`
	NextCursor *string         `json:"next_cursor"`
}

// ContactListItem is a contact as GET /v1/contacts lists it (schema
// ContactListItem).
type ContactListItem struct {
	ID        string    `json:"id"`
	FirstName string    `json:"firstName"`
	LastName  string    `json:"lastName"`
	FullName  string    `json:"fullName"`
	Phone     string    `json:"phone"`
	Email     string    `json:"email"`
	Company   string    `json:"company"`
	JobTitle  string    `json:"jobTitle"`
	Source    string    `json:"source"`
	Tags      []string  `json:"tags"`
	Lifecycle string    `json:"lifecycle"`
	CreatedAt time.Time `json:"createdAt"`
	UpdatedAt time.Time `json:"updatedAt"`
}

// Contact is a full contact (schema Contact): the answer of POST, GET and
// PATCH on contacts.
type Contact struct {
	ContactListItem
	Website string `json:"website"`
	Notes   string `json:"notes"`
	// OptedOut maps each channel the contact's phone opted out of (by
	// replying an opt-out keyword, STOP by default) to when it did; sends
	// to it there are refused with recipient_opted_out.
	OptedOut map[string]time.Time `json:"opted_out"`
}

// ContactPage is a page of GET /v1/contacts (schema ContactPage).
type ContactPage struct {
	Items      []*ContactListItem `json:"items"`
	Total      int                `json:"total"`
	Page       int                `json:"page"`
	Limit      int                `json:"limit"`
	TotalPages int                `json:"totalPages"`
}

// Template is a template as listed and read (schema Template).
type Template struct {
	ID         string              `json:"id"`
	Name       string              `json:"name"`
	Category   string              `json:"category"`
	Language   string              `json:"language"`
	Status     string              `json:"status"`
	Components []TemplateComponent `json:"components"`
	// SendExample is a ready-to-use request of Messages.SendTemplate:
	// set its To (and replace the example values) and send it.
	SendExample *SendTemplateParams `json:"send_example"`
	// StatusReason, Quality and ProviderTemplateID: why a template was
	// rejected, paused or disabled, the provider's quality rating and the
	// provider's id; empty when not known.
	StatusReason       string    `json:"status_reason,omitempty"`
	Quality            string    `json:"quality,omitempty"`
	ProviderTemplateID string    `json:"provider_template_id,omitempty"`
	CreatedAt          time.Time `json:"created_at"`
	UpdatedAt          time.Time `json:"updated_at"`
}

// Deleted is the answer to the deletion of a record (schema Deleted).
type Deleted struct {
	ID      string `json:"id"`
	Deleted bool   `json:"deleted"`
}

// Channel is a channel of the workspace (schema Channel). It never holds
// the access token, only its last characters (CredentialHint).
type Channel struct {
	Channel        string     `json:"channel"`
	Status         string     `json:"status"`
	SenderID       *string    `json:"sender_id"`
	Display        *string    `json:"display"`
	CredentialHint *string    `json:"credential_hint"`
	Error          *string    `json:"error"`
	ConnectedAt    *time.Time `json:"connected_at"`
	// Throughput is the messages per second the service may send through
	// the connection (default 80; Channels.Update sets it); nil without
	// credentials.
	Throughput *int `json:"throughput"`
	// MessagingTier (TIER_250, TIER_1K, TIER_10K, TIER_100K,
	// TIER_UNLIMITED) and QualityRating (GREEN, YELLOW, RED, UNKNOWN) are
	// the provider's last report of the account, with when each changed;
	// nil when unknown.
	MessagingTier    *string    `json:"messaging_tier"`
	TierChangedAt    *time.Time `json:"tier_changed_at"`
	QualityRating    *string    `json:"quality_rating"`
	QualityChangedAt *time.Time `json:"quality_changed_at"`
}

// ChannelPatch is the body of PATCH /v1/channels/{channel} (schema
// ChannelPatch).
type ChannelPatch struct {
	// Throughput is the messages per second the service may send through
	// the connection: 1 to 1000.
	Throughput int `json:"throughput"`
}

// APIKey is an API key of the workspace (schema APIKey); the key itself is
// shown once, by APIKeys.Create.
type APIKey struct {
	ID         string     `json:"id"`
	Name       string     `json:"name"`
	Prefix     string     `json:"prefix"`
	Scopes     []string   `json:"scopes"`
	CreatedAt  time.Time  `json:"created_at"`
	ExpiresAt  *time.Time `json:"expires_at"`
	LastUsedAt *time.Time `json:"last_used_at"`
	RevokedAt  *time.Time `json:"revoked_at"`
}

// APIKeyCreated is a new API key with its secret (schema APIKeyCreated):
// Key is shown this once.
type APIKeyCreated struct {
	APIKey
	Key string `json:"key"`
}

// APIKeyCreateParams is the body of POST /v1/api-keys (schema
// APIKeyCreate).
type APIKeyCreateParams struct {
	Name   string   `json:"name"`
	Scopes []string `json:"scopes"`
	// ExpiresAt, optional, is when the key stops working.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// AuditEvent is a management change of the workspace (schema AuditEvent).
type AuditEvent struct {
	ID        string    `json:"id"`
	Actor     string    `json:"actor"`
	Action    string    `json:"action"`
	Target    string    `json:"target"`
	CreatedAt time.Time `json:"created_at"`
}

// AuditPage is a page of GET /v1/audit-events (schema AuditPage).
// NextCursor is nil on the last page.
type AuditPage struct {
	Data       []*AuditEvent `json:"data"`
	NextCursor *string       `json:"next_cursor"`
}

// Webhook is a webhook endpoint (schema Webhook).
type Webhook struct {
	ID          string   `json:"id"`
	URL         string   `json:"url"`
	Events      []string `json:"events"`
	Description string   `json:"description"`
	Enabled     bool     `json:"enabled"`
	// DisabledAt and DisabledReason say when and why the endpoint was
	// disabled; nil and empty while it is enabled.
	DisabledAt     *time.Time `json:"disabled_at"`
	DisabledReason string     `json:"disabled_reason,omitempty"`
	// PreviousSecretExpiresAt is when the secret before the last rotation
	// stops signing deliveries; nil when there is none.
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
	CreatedAt               time.Time  `json:"created_at"`
}

// WebhookCreated is a new webhook endpoint with its signing secret
// (schema WebhookCreated): Secret is shown this once.
type WebhookCreated struct {
	Webhook
	Secret string `json:"secret"`
}

// WebhookSecret is the answer of a secret rotation (schema WebhookSecret).
type WebhookSecret struct {
	ID                      string     `json:"id"`
	Secret                  string     `json:"secret"`
	PreviousSecretExpiresAt *time.Time `json:"previous_secret_expires_at"`
}

// WebhookTestResult is the answer of a test delivery (schema
// WebhookTestResult): StatusCode is nil when the receiver did not answer,
// and Error says why.
type WebhookTestResult struct {
	StatusCode *int   `json:"status_code"`
	LatencyMS  int64  `json:"latency_ms"`
	Error      string `json:"error,omitempty"`
}

// WebhookDelivery is a delivery of an event to an endpoint (schema
// WebhookDelivery).
type WebhookDelivery struct {
	ID             string     `json:"id"`
	EventID        string     `json:"event_id"`
	EventType      string     `json:"event_type"`
	State          string     `json:"state"`
	Attempts       int        `json:"attempts"`
	LastStatusCode *int       `json:"last_status_code"`
	LastError      string     `json:"last_error"`
	NextAttemptAt  *time.Time `json:"next_attempt_at"`
	LastAttemptAt  *time.Time `json:"last_attempt_at"`
	DeliveredAt    *time.Time `json:"delivered_at"`
	CreatedAt      time.Time  `json:"created_at"`
	// Test marks the record of a test event (Webhooks.Test).
	Test bool `json:"test"`
}

// WebhookDeliveryPage is a page of GET /v1/webhooks/{id}/deliveries
// (schema WebhookDeliveryPage). NextCursor is nil on the last page.
type WebhookDeliveryPage struct {
	Data       []*WebhookDelivery `json:"data"`
	NextCursor *string            `json:"next_cursor"`
}

// WebhookCreateParams is the body of POST /v1/webhooks (schema
// WebhookCreate). Events empty means every event type.
type WebhookCreateParams struct {
	URL         string   `json:"url"`
	Events      []string `json:"events,omitempty"`
	Description string   `json:"description,omitempty"`
}

// WebhookUpdateParams is the body of PATCH /v1/webhooks/{id} (schema
// WebhookPatch): nil fields are left unchanged.
type WebhookUpdateParams struct {
	URL         *string   `json:"url,omitempty"`
	Events      *[]string `json:"events,omitempty"`
	Description *string   `json:"description,omitempty"`
	Enabled     *bool     `json:"enabled,omitempty"`
}

// CursorParams page a cursor listing: Cursor is the NextCursor of the
// previous page ("" for the first); Limit 0 means the server's default.
type CursorParams struct {
	Cursor string
	Limit  int
}
