package record

import (
	"log/slog"
	"slices"
	"time"
)

// Connection states.
const (
	// ConnectionConnected: the provider proved that the credentials
	// control the account (VerifiedAt), and they are in use.
	ConnectionConnected = "connected"
	// ConnectionPending ("pending_verification"): the credentials are
	// stored but the provider has not yet proved that they control the
	// account (it could not be reached when they were put). The
	// connection reserves nothing, receives nothing and sends nothing; the
	// service verifies it again until the provider answers.
	ConnectionPending = "pending_verification"
	// ConnectionError: the provider refused the credentials (for example
	// Meta's code 190, an invalid or expired token), or another
	// workspace proved control of the account (ReasonSuperseded);
	// StatusReason says why. A connection in error that was verified
	// before (VerifiedAt set) keeps its account: inbound events still
	// reach it, and sends are still handed to the provider, which refuses
	// them, until the credentials are replaced.
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
	// AccountID is the account the provider sends from and reports about
	// (messaging.ChannelSpec.Account: the WhatsApp phone-number id, the Facebook
	// page id or the Instagram account id).
	AccountID string
	// WABAID is the id of the account's owner, on a channel that has one
	// (messaging.ChannelSpec.Owner: the WhatsApp Business Account id, the owner of
	// the templates).
	WABAID string
	// DisplayPhoneNumber is the WhatsApp number as customers see it
	// (optional, informative).
	DisplayPhoneNumber string
	// TokenSealed is the access token, sealed.
	TokenSealed []byte
	// TokenHint is the last 4 characters of the access token.
	TokenHint string
	// Status is ConnectionConnected, ConnectionPending, ConnectionError
	// or ConnectionDisconnected; StatusReason explains an error or a
	// pending verification.
	Status       string
	StatusReason string
	// VerifiedAt is when the provider last proved that these credentials
	// (this Generation) control the account; nil until it has. Only a
	// connection that Holds its account reserves it and receives its
	// inbound events.
	VerifiedAt *time.Time
	// Generation counts the times credentials were put; a verdict on old
	// credentials does not mark new ones.
	Generation int64
	// TemplatesSyncedAt is when the account's templates were last
	// synchronised from the provider; TemplateSyncError is the error of
	// the last sync when it failed.
	TemplatesSyncedAt *time.Time
	TemplateSyncError string
	// Throughput is how many messages per second the service may send
	// through the connection (DefaultThroughput unless set, from
	// MinThroughput to MaxThroughput); zero on a connection stored before
	// it was kept, which reads as DefaultThroughput.
	Throughput int
	// MessagingTier is the provider's messaging limit of the account: how
	// many customers it may start conversations with in 24 hours
	// (TierLimited250 ... TierUnlimited, as Meta names them); empty when
	// unknown. TierChangedAt is when the service last saw it change.
	MessagingTier string
	TierChangedAt *time.Time
	// QualityRating is the provider's quality rating of the account
	// (QualityGreen, QualityYellow, QualityRed or QualityUnknown); empty
	// when the provider never reported one. QualityChangedAt is when the
	// service last saw it change.
	QualityRating    string
	QualityChangedAt *time.Time
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// Throughput bounds of a connection, in messages per second.
const (
	DefaultThroughput = 80
	MinThroughput     = 1
	MaxThroughput     = 1000
)

// Messaging limit tiers, as Meta names them (the messaging_limit_tier of a
// WhatsApp phone number, the current_limit of a phone_number_quality_update
// webhook): how many unique customers the account may start conversations
// with in a rolling 24 hours.
const (
	Tier250       = "TIER_250"
	Tier1K        = "TIER_1K"
	Tier10K       = "TIER_10K"
	Tier100K      = "TIER_100K"
	TierUnlimited = "TIER_UNLIMITED"
)

// Quality ratings of an account (and of a template), as Meta names them.
const (
	QualityGreen   = "GREEN"
	QualityYellow  = "YELLOW"
	QualityRed     = "RED"
	QualityUnknown = "UNKNOWN"
)

// MessagingTiers lists the messaging limit tiers, lowest first.
func MessagingTiers() []string {
	return []string{Tier250, Tier1K, Tier10K, Tier100K, TierUnlimited}
}

// QualityRatings lists the quality ratings.
func QualityRatings() []string {
	return []string{QualityGreen, QualityYellow, QualityRed, QualityUnknown}
}

// EffectiveThroughput is c's Throughput, or DefaultThroughput when it was
// never set.
func (c *ChannelConnection) EffectiveThroughput() int {
	if c.Throughput <= 0 {
		return DefaultThroughput
	}
	return c.Throughput
}

// ReasonSuperseded is the StatusReason of a connection in error because
// another workspace proved control of its account.
const ReasonSuperseded = "another workspace proved control of this account with the provider"

// Holds reports whether the connection holds its account: it is not
// disconnected and the provider proved its credentials. At most one
// connection holds a channel's account id (and a WABA id).
func (c *ChannelConnection) Holds() bool {
	return c.Status != ConnectionDisconnected && c.VerifiedAt != nil
}

// LogValue logs the connection without its sealed token.
func (c *ChannelConnection) LogValue() slog.Value {
	return slog.GroupValue(slog.String("workspace", c.WorkspaceID), slog.String("channel", c.Channel),
		slog.String("account_id", c.AccountID), slog.String("waba_id", c.WABAID), slog.String("status", c.Status))
}

// Clone returns a deep copy of c: changing the copy never changes c.
func (c *ChannelConnection) Clone() *ChannelConnection {
	d := *c
	d.TokenSealed = slices.Clone(c.TokenSealed)
	d.VerifiedAt, d.TemplatesSyncedAt = clonePtr(c.VerifiedAt), clonePtr(c.TemplatesSyncedAt)
	d.TierChangedAt, d.QualityChangedAt = clonePtr(c.TierChangedAt), clonePtr(c.QualityChangedAt)
	return &d
}
