package messaging

import (
	"log/slog"
	"time"
)

// Connection states.
const (
	// ConnectionConnected: the credentials are in use.
	ConnectionConnected = "connected"
	// ConnectionError: the provider refused the credentials (for example
	// Meta's code 190, an invalid or expired token); StatusReason says
	// why. Sends are still handed to the provider, which refuses them,
	// until the credentials are replaced.
	ConnectionError = "error"
	// ConnectionDisconnected: the channel was disconnected; the record is
	// kept as history.
	ConnectionDisconnected = "disconnected"
)

// ChannelConnection is a workspace's connection to a channel at the
// provider, with what the provider needs to send for the workspace. The
// access token is stored sealed with the service's secret key and never
// returned in clear after it was given; TokenHint shows its last 4
// characters.
type ChannelConnection struct {
	WorkspaceID string
	Channel     string
	// AccountID is the WhatsApp phone-number id, the Facebook page id or
	// the Instagram account id: the account the provider sends from and
	// reports about.
	AccountID string
	// WABAID is the WhatsApp Business Account id (WhatsApp only): the
	// owner of the templates.
	WABAID string
	// DisplayPhoneNumber is the WhatsApp number as customers see it
	// (optional, informative).
	DisplayPhoneNumber string
	// TokenSealed is the access token, sealed.
	TokenSealed []byte
	// TokenHint is the last 4 characters of the access token.
	TokenHint string
	// Status is ConnectionConnected, ConnectionError or
	// ConnectionDisconnected; StatusReason explains an error.
	Status       string
	StatusReason string
	// Generation counts the times credentials were put; a verdict on old
	// credentials does not mark new ones.
	Generation int64
	// TemplatesSyncedAt is when the account's templates were last
	// synchronised from the provider; TemplateSyncError is the error of
	// the last sync when it failed.
	TemplatesSyncedAt *time.Time
	TemplateSyncError string
	CreatedAt         time.Time
	UpdatedAt         time.Time
}

// LogValue logs the connection without its sealed token.
func (c *ChannelConnection) LogValue() slog.Value {
	return slog.GroupValue(slog.String("workspace", c.WorkspaceID), slog.String("channel", c.Channel),
		slog.String("account_id", c.AccountID), slog.String("waba_id", c.WABAID), slog.String("status", c.Status))
}
