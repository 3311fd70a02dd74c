package record

import "time"

// MessageQueueStats describes the dispatch queue (see
// driver.Store.MessageQueueStats).
type MessageQueueStats struct {
	// Queued counts the queued outbound messages: due, waiting for a
	// retry, or leased by a dispatcher.
	Queued int64
	// Due counts the queued messages due at Now (a running lease holds
	// DueAt at its end, so leased messages are not due).
	Due int64
	// OldestDueAt is the earliest DueAt of the due messages; nil when
	// none is due.
	OldestDueAt *time.Time
}

// WebhookEndpoint is a webhook subscription of a workspace. The secrets
// are stored encrypted (SecretSealed, PreviousSecretSealed); they are
// needed in clear to sign.
type WebhookEndpoint struct {
	ID          string
	WorkspaceID string
	URL         string
	// Events are the event types the endpoint receives, sorted; empty
	// means every type.
	Events []string
	// Description is the operator's note, at most MaxWebhookDescription
	// characters.
	Description  string
	SecretSealed []byte
	// PreviousSecretSealed is the secret replaced by the last rotation; it
	// keeps signing, beside the new one, until PreviousSecretExpiresAt.
	PreviousSecretSealed    []byte
	PreviousSecretExpiresAt *time.Time
	// DisabledAt is set while the endpoint receives nothing: it answered
	// 410 Gone (DisabledReason DisabledGone) or its operator disabled it
	// (DisabledByOperator).
	DisabledAt     *time.Time
	DisabledReason string
	CreatedAt      time.Time
}

// Why a webhook endpoint is disabled (WebhookEndpoint.DisabledReason).
const (
	// DisabledGone: the endpoint answered 410 Gone.
	DisabledGone = "gone"
	// DisabledByOperator: its operator disabled it.
	DisabledByOperator = "operator"
)

// Webhook delivery states.
const (
	DeliveryPending   = "pending"
	DeliveryDelivered = "delivered"
	DeliveryFailed    = "failed"
)

// WebhookDelivery is one event to deliver to one endpoint.
type WebhookDelivery struct {
	ID          int64
	EndpointID  string
	WorkspaceID string
	MessageID   string
	EventID     string
	EventType   string
	// Seq orders the deliveries of an endpoint; later events have larger
	// Seq.
	Seq    int64
	URL    string
	Secret []byte // sealed, as stored on the endpoint
	// PreviousSecret is the endpoint's previous sealed secret, which
	// signs too until PreviousSecretExpiresAt (nil when none).
	PreviousSecret          []byte
	PreviousSecretExpiresAt *time.Time
	Payload                 []byte
	State                   string
	Attempts                int
	// DueAt is the next attempt of a pending delivery (the end of its
	// lease while it is leased).
	DueAt      time.Time
	LeaseOwner string
	LastStatus int
	LastError  string
	// LastAttemptAt is when the outcome of the last attempt was recorded.
	LastAttemptAt *time.Time
	// DeliveredAt is when a delivered delivery reached its endpoint.
	DeliveredAt *time.Time
	CreatedAt   time.Time
	// Test marks the record of a test event (driver.Store.WebhookRecordTest).
	Test bool
	// TraceParent is its event's driver.EventRecord.TraceParent: the delivery
	// continues the trace of the message it is about without reading the
	// message.
	TraceParent string
}

// WorkspaceKeywords are a workspace's stored keyword lists (folded; empty
// means the defaults).
type WorkspaceKeywords struct {
	OptOut, OptIn []string
}
