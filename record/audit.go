package record

import "time"

// Audit actions: every management change of a workspace is recorded as
// an AuditEvent with one of these.
const (
	AuditWorkspaceCreated    = "workspace.created"
	AuditWorkspaceUpdated    = "workspace.updated"
	AuditKeyCreated          = "api_key.created"
	AuditKeyUpdated          = "api_key.updated"
	AuditKeyRevoked          = "api_key.revoked"
	AuditTemplateCreated     = "template.created"
	AuditTemplateUpdated     = "template.updated"
	AuditTemplateSubmitted   = "template.submitted"
	AuditTemplateStatusSet   = "template.status_set"
	AuditTemplateDeleted     = "template.deleted"
	AuditChannelConnected    = "channel.connected"
	AuditChannelDisconnected = "channel.disconnected"
	// AuditChannelVerified: the provider proved a connection that was
	// not verified (actor: the service's check, or who asked for it).
	AuditChannelVerified = "channel.verified"
	// AuditChannelRefused: the provider refused a stored connection's
	// credentials, or another workspace holds its account.
	AuditChannelRefused = "channel.refused"
	// AuditChannelSuperseded: another workspace proved control of the
	// connection's account; the connection is in error
	// (ReasonSuperseded). The actor is "provider".
	AuditChannelSuperseded = "channel.superseded"
	// AuditChannelUpdated: a connection's settings (its throughput) were
	// changed.
	AuditChannelUpdated = "channel.updated"
	AuditWebhookCreated = "webhook.created"
	AuditWebhookUpdated = "webhook.updated"
	AuditWebhookDeleted = "webhook.deleted"
	AuditWebhookRotated = "webhook.secret_rotated"
)

// AuditEvent is one management change of a workspace: who (Actor: an API
// key id, "operator", "bootstrap", or "library" for a Go call without an
// actor), what (Action, one of the Audit* constants), on which record
// (Target: a key, template or webhook id, or a channel) and when. It never
// holds a secret.
type AuditEvent struct {
	// Seq orders the events; the store sets it.
	Seq         int64
	ID          string
	WorkspaceID string
	Actor       string
	Action      string
	Target      string
	At          time.Time
}

// MaxAuditPage is the largest page of AuditEvents.
const MaxAuditPage = 100
