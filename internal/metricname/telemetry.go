package metricname

import "go.opentelemetry.io/otel/attribute"

// InstrumentationName is the name of the meter and the tracer of the
// library's instruments (the OpenTelemetry instrumentation scope).
const InstrumentationName = "github.com/ujumbe/messaging"

// Names of the library's metric instruments. Their attributes never hold
// a secret, a phone number or a message text; see the README's Operations
// section for what each means.
const (
	MetricMessagesAccepted         = "messaging.messages.accepted"
	MetricStatusTransitions        = "messaging.messages.status_transitions"
	MetricAcceptToSent             = "messaging.messages.accept_to_sent.duration"
	MetricSentToDelivered          = "messaging.messages.sent_to_delivered.duration"
	MetricProviderErrors           = "messaging.provider.errors"
	MetricDispatchRetries          = "messaging.dispatch.retries"
	MetricDispatchUnconfirmed      = "messaging.dispatch.unconfirmed"
	MetricQueueDepth               = "messaging.dispatch.queue.depth"
	MetricQueueDue                 = "messaging.dispatch.queue.due"
	MetricQueueOldestAge           = "messaging.dispatch.queue.oldest_age"
	MetricWebhookDeliveries        = "messaging.webhook.deliveries"
	MetricWebhookLag               = "messaging.webhook.delivery.lag"
	MetricWebhookEndpointsDisabled = "messaging.webhook.endpoints.disabled"
)

// Attribute keys of the library's instruments.
const (
	AttrChannel      = attribute.Key("channel")
	AttrType         = attribute.Key("type")
	AttrStatus       = attribute.Key("status")
	AttrProviderCode = attribute.Key("provider_code")
	AttrOutcome      = attribute.Key("outcome")
	AttrReason       = attribute.Key("reason")
	// AttrMessageID is the span attribute naming a message (the
	// OpenTelemetry semantic convention's messaging.message.id).
	AttrMessageID = attribute.Key("messaging.message.id")
)

// Outcomes of a webhook delivery attempt (attribute outcome of
// messaging.webhook.deliveries).
const (
	WebhookOutcomeDelivered        = "delivered"
	WebhookOutcomeRetried          = "retried"
	WebhookOutcomeDropped          = "dropped"
	WebhookOutcomeEndpointDisabled = "endpoint_disabled"
)

// Outcomes of sends whose outcome was unknown (attribute outcome of
// messaging.dispatch.unconfirmed).
const (
	// UnconfirmedOutcomeUnknown counts hand-overs whose outcome became
	// unknown (a timeout or a lost answer): the message waits for
	// confirmation.
	UnconfirmedOutcomeUnknown = "unknown"
	// UnconfirmedOutcomeConfirmed counts such messages confirmed sent by a
	// correlated provider report, with no second request.
	UnconfirmedOutcomeConfirmed = "confirmed"
	// UnconfirmedOutcomeResent counts those sent again after the window
	// (workspace policy resend).
	UnconfirmedOutcomeResent = "resent"
	// UnconfirmedOutcomeFailed counts those failed after the window
	// (workspace policy fail).
	UnconfirmedOutcomeFailed = "failed"
	// UnconfirmedOutcomeLate counts correlated reports that arrived after
	// the message was resent or failed: recorded in the log, never applied
	// as a second message.
	UnconfirmedOutcomeLate = "late"
)
