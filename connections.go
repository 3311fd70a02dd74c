package messaging

import (
	"context"
	"errors"
	"fmt"
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
	// (ChannelSpec.Account: the WhatsApp phone-number id, the Facebook
	// page id or the Instagram account id).
	AccountID string
	// WABAID is the id of the account's owner, on a channel that has one
	// (ChannelSpec.Owner: the WhatsApp Business Account id, the owner of
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
	CreatedAt         time.Time
	UpdatedAt         time.Time
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

// ChannelSender returns the sender of a workspace on a channel, as the
// dispatcher hands it to Provider.Send: the workspace's live connection on
// channel with its token unsealed; nil when the channel is connected
// without credentials; ErrNotFound when it is not connected. A
// connection the provider has not verified is a *SendError with code CodeUnverified, retryable while it is
// ConnectionPending, permanent when it is in error (refused, or superseded
// by another workspace): nothing is sent with credentials that were not
// proven.
func (s *Service) ChannelSender(ctx context.Context, workspaceID, channel string) (*ChannelSender, error) {
	c, err := s.store.ConnectionGet(ctx, workspaceID, channel)
	if err == nil && c.Status != ConnectionDisconnected && c.VerifiedAt == nil {
		if c.Status == ConnectionPending {
			return nil, &SendError{Code: CodeUnverified, Retryable: true,
				Text: fmt.Sprintf("the %s connection's credentials are not verified with the provider yet", channel)}
		}
		// Refused, or superseded by another workspace: waiting cannot help.
		return nil, &SendError{Code: CodeUnverified, Text: fmt.Sprintf("the %s connection does not hold its account: %s", channel, c.StatusReason)}
	}
	if err == nil && c.Status != ConnectionDisconnected {
		tok, err := s.unsealFor(tokenPurpose, c.TokenSealed)
		if err != nil {
			return nil, fmt.Errorf("messaging: the access token of %s/%s cannot be unsealed (was Options.SecretKey changed?): %w", workspaceID, channel, err)
		}
		return &ChannelSender{WorkspaceID: workspaceID, Channel: channel, AccountID: c.AccountID, WABAID: c.WABAID,
			AccessToken: string(tok), Generation: c.Generation}, nil
	}
	if err != nil && !errors.Is(err, ErrNotFound) {
		return nil, err
	}
	w, err := s.store.WorkspaceGet(ctx, workspaceID)
	if err != nil {
		return nil, err
	}
	if slices.Contains(w.Channels, channel) {
		return nil, nil
	}
	return nil, ErrNotFound
}

// senderError is the error of a ChannelSender lookup for channel: a
// connection the provider has not verified is channel_unavailable; a
// store error is wrapped as such.
func senderError(err error, channel string) error {
	var se *SendError
	if errors.As(err, &se) && se.Code == CodeUnverified {
		return &Error{Code: CodeChannelUnavailable, Field: "channel", Path: FieldPath("channel"), Message: "channel: " + se.Text, Err: err}
	}
	return wrapStoreError(err, "connection", channel)
}

// setConnectionState records a verdict on the credentials snd was read
// with; credentials replaced since are left alone.
func (s *Service) setConnectionState(ctx context.Context, snd *ChannelSender, status, reason string) {
	_, err := s.store.ConnectionUpdate(ctx, &ConnectionUpdateParams{WorkspaceID: snd.WorkspaceID, Channel: snd.Channel,
		Generation: snd.Generation, Status: status, StatusReason: reason, At: s.now()})
	if err != nil {
		s.log.ErrorContext(ctx, "recording a connection's state failed", "workspace", snd.WorkspaceID, "channel", snd.Channel, "status", status, "err", err)
	} else if status == ConnectionError {
		s.log.WarnContext(ctx, "the provider refused a connection's credentials", "workspace", snd.WorkspaceID, "channel", snd.Channel, "reason", reason)
	}
}

// credentialsRefused marks the workspace's connection on channel as
// error, when the provider refused its credentials during a call that
// started at started (credentials put since then are left alone).
func (s *Service) credentialsRefused(ctx context.Context, workspaceID, channel string, se *SendError, started time.Time) {
	c, err := s.store.ConnectionGet(ctx, workspaceID, channel)
	if err != nil || c.Status == ConnectionDisconnected || c.UpdatedAt.After(started) {
		return
	}
	s.setConnectionState(ctx, &ChannelSender{WorkspaceID: workspaceID, Channel: channel, Generation: c.Generation}, ConnectionError, FailureReason(se.Code, se.Text))
}
